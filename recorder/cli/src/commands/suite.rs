//! `fitness suite TARGET --generator G --out FILE`: generate a task suite
//! against a live server, print its ledger and write it.
//!
//! Exit codes: 0 when a suite was written; 1 when the server could not be
//! reached, generation failed, or the null screen emptied the suite
//! (`DEGENERATE`, reason `all_candidates_null_answerable`; the file is still
//! written so the ledger can be read).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use fitness_shared::record::CredentialContext;

use crate::commands::target::{ConnectFlags, HintFlags, SandboxFlags};
use fitness_recorder::mcp::connect::DEFAULT_REQUEST_TIMEOUT;
use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::pipeline::sandbox::{Sandbox, Server};
use fitness_recorder::suite::{GenerateOptions, GenerationReport, GeneratorId};

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fitness suite --generator schema-walk/2 --tasks 8 --out suite.json -- npx mcp-server-everything\n  \
fitness suite http://127.0.0.1:3001/mcp --generator schema-walk/2 --seed 7 --out suite.json --json\n\n\
schema-walk/2 and schema-walk/1 need no model. judge-synth/1 and judge-walk/1 need --judge PROVIDER/MODEL; --runner PROVIDER/MODEL \
adds the generation-time null screen."
)]
pub struct SuiteArgs {
    /// An http(s) URL; for a stdio server give `-- CMD ARGS...` instead.
    pub url: Option<String>,
    /// The generator: schema-walk/2 (offline, zero spend), judge-walk/1 (the
    /// walk guided by --judge), judge-synth/1 (needs --judge), or schema-walk/1 (rehearsal: the tasks dictate the
    /// calls).
    #[arg(long)]
    pub generator: String,
    /// Tasks in the driven suite (the default is `fitness run`'s, so the two
    /// commands at their defaults generate the same suite).
    #[arg(long, default_value_t = fitness_recorder::pipeline::config::DEFAULT_TASKS as usize)]
    pub tasks: usize,
    /// Candidates asked for per task kept (registered).
    #[arg(long, default_value_t = fitness_recorder::suite::DEFAULT_OVERGEN)]
    pub overgen: f64,
    /// The seed for arguments and trimming.
    #[arg(long, default_value_t = fitness_recorder::pipeline::config::DEFAULT_SEED)]
    pub seed: u64,
    /// The credential context: anonymous, free-key or owner-key (hashed
    /// into the suite; what the suite may write is --sandbox's alone).
    /// Default: anonymous, or owner-key when a credential is given (a
    /// header, a bearer token, --login); anonymous with one is refused.
    #[arg(long, value_parser = parse_credential)]
    pub credential: Option<CredentialContext>,
    /// Task id prefix (`t`; `x1-` for extension batch 1).
    #[arg(long, default_value = "t")]
    pub id_prefix: String,
    /// The judge model (PROVIDER/MODEL) for judge-synth/1, judge-walk/1 and the
    /// destructiveness labels.
    #[arg(long, value_name = "P/M")]
    pub judge: Option<String>,
    /// The runner model (PROVIDER/MODEL): runs the null screen.
    #[arg(long, value_name = "P/M")]
    pub runner: Option<String>,
    /// Where to write the suite (JSON: suite, ledger, rejections, spend…).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Print the ledger as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the wire tape (DIR/mcp.jsonl) and the screen's agent tape
    /// (DIR/agent.jsonl).
    #[arg(long, value_name = "DIR")]
    pub tape: Option<PathBuf>,
    #[command(flatten)]
    pub connect: ConnectFlags,
    #[command(flatten)]
    pub sandbox: SandboxFlags,
    #[command(flatten)]
    pub hints: HintFlags,
    /// Seconds to wait for the handshake and any one request.
    #[arg(long, default_value_t = DEFAULT_REQUEST_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// Seconds to wait for any one model call attempt (the judge, the
    /// screen); a slow local model needs several minutes.
    #[arg(long, default_value_t = fitness_recorder::model::DEFAULT_MODEL_TIMEOUT.as_secs())]
    pub model_timeout: u64,
    /// The stdio server's command line.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

fn parse_credential(s: &str) -> Result<CredentialContext, String> {
    match s {
        "anonymous" => Ok(CredentialContext::Anonymous),
        "free-key" => Ok(CredentialContext::FreeKey),
        "owner-key" => Ok(CredentialContext::OwnerKey),
        other => Err(format!(
            "{other:?} is not a credential context: use anonymous, free-key or owner-key"
        )),
    }
}

pub fn run(args: SuiteArgs) -> anyhow::Result<()> {
    let generator: GeneratorId = args.generator.parse()?;
    let target = args.connect.target(args.url.as_deref(), &args.command)?;
    let sandbox = args.sandbox.settings();
    sandbox.check(&target)?;
    // A credential is the operator's own unless they say otherwise, and
    // never labelled anonymous (exit 2, before anything runs).
    let carried =
        crate::commands::target::credential_of(&target, args.connect.login).map(|c| c.text());
    let credential = match args.credential {
        Some(c) => {
            fitness_recorder::pipeline::config::check_credential_label(c, carried.as_deref())
                .map_err(|e| crate::process::Exit::with_message(2, &format!("error: {e:#}")))?;
            c
        }
        None if carried.is_some() => CredentialContext::OwnerKey,
        None => CredentialContext::Anonymous,
    };
    let (judge, runner) = models(&args, generator)?;
    let (wire, agent) = tapes(&args, &target)?;
    // A sandbox copy stands in for the operator's paths from the start.
    let (copies, target) = Sandbox::prepare(&sandbox, &target)?;
    let opts = GenerateOptions {
        generator,
        n_tasks: args.tasks,
        overgen_factor: args.overgen,
        seed: args.seed,
        credential,
        screen: args.runner.is_some(),
        id_prefix: args.id_prefix.clone(),
        exclude_prompts: Vec::new(),
        seed_handles: target.operator_roots(!sandbox.writes_at_generation()),
        operator_files: target.operator_files(!sandbox.writes_at_generation()),
        watched: target.watched(args.tape.iter().chain([&args.out]).cloned().collect()),
        must_reach: None,
        access: sandbox.mode(),
        writes: sandbox.writes_at_generation(),
        concurrency: 1,
        hints: args.hints.hints()?,
        fresh: Some(target.clone()),
    };
    let runtime = crate::process::runtime()?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let outcome = runtime.block_on(crate::process::until_interrupted(async {
        let server = Server::new(target.clone(), copies, wire.clone(), timeout);
        server.before_generation().await?;
        let session = server.connect().await?;
        let result = async {
            let tools = session.list_tools().await?;
            if !args.json {
                crate::process::errln!(
                    "{}",
                    fitness_recorder::access::announcement(
                        opts.access,
                        &fitness_recorder::access::writers(&tools, &|_| false),
                        sandbox.restore()
                    )
                );
            }
            let instructions = session
                .service
                .peer_info()
                .and_then(|i| i.instructions.clone());
            let report = fitness_recorder::suite::generate(
                &session,
                &tools,
                instructions.as_deref(),
                &opts,
                judge.as_deref(),
                runner.as_deref(),
                &agent,
            )
            .await;
            anyhow::Ok((report?, tools))
        }
        .await;
        drop(session);
        // Changes asked of the server, where the sandbox puts the state back.
        let result = match result {
            Ok((mut report, tools)) => {
                server.generated()?;
                fitness_recorder::suite::add_act_tasks(
                    &mut report,
                    &tools,
                    &opts,
                    sandbox.restore(),
                    &server,
                    timeout,
                    judge.as_deref().map(|j| (j, &agent)),
                )
                .await
                .map(|()| report)
            }
            Err(e) => Err(e),
        };
        server.close().await?;
        result
    }));
    runtime.shutdown_timeout(Duration::from_secs(2));
    // Ctrl-C stops generation wherever it is, and still closes the tapes.
    let Some(outcome) = outcome else {
        return Err(crate::process::interrupted(&[&wire, &agent]));
    };
    wire.end("suite");
    agent.end("suite");
    let report = outcome?;
    write_and_print(&args, &report)?;
    if report.degenerate {
        anyhow::bail!(
            "DEGENERATE all_candidates_null_answerable: the null screen answered every admitted candidate without tools"
        );
    }
    Ok(())
}

type Model = std::sync::Arc<dyn fitness_recorder::model::ModelClient>;

/// The judge and the runner the arguments name, if any.
fn models(
    args: &SuiteArgs,
    generator: GeneratorId,
) -> anyhow::Result<(Option<Model>, Option<Model>)> {
    let parse = |m: &Option<String>| {
        m.as_deref()
            .map(str::parse::<fitness_recorder::model::types::ModelId>)
            .transpose()
    };
    let (judge_id, runner_id) = (parse(&args.judge)?, parse(&args.runner)?);
    if generator.needs_judge() && judge_id.is_none() {
        anyhow::bail!("--generator {generator} needs a --judge PROVIDER/MODEL");
    }
    let client_opts = fitness_recorder::model::ClientOptions {
        seed: args.seed,
        timeout: Duration::from_secs(args.model_timeout.max(1)),
        ..fitness_recorder::model::ClientOptions::default()
    };
    let judge = judge_id
        .as_ref()
        .map(|id| fitness_recorder::model::client_for(id, &client_opts))
        .transpose()?;
    let runner = runner_id
        .as_ref()
        .map(|id| fitness_recorder::model::client_for(id, &client_opts))
        .transpose()?;
    Ok((judge, runner))
}

/// The wire and agent tapes of `--tape DIR`, or none.
fn tapes(
    args: &SuiteArgs,
    target: &fitness_recorder::mcp::target::Target,
) -> anyhow::Result<(Tap, Tap)> {
    Ok(match &args.tape {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("failed to create {}", dir.display()))?;
            Tap::create_pair(
                dir,
                "fitness suite",
                target.describe(),
                fitness_recorder::model::agent::AGENT_TAPE_KIND,
            )?
        }
        None => (Tap::disabled(), Tap::disabled()),
    })
}

/// Where the suite's Markdown listing goes: beside `--out`, as `.md`.
pub fn markdown_path(out: &std::path::Path) -> PathBuf {
    out.with_extension("md")
}

/// Write the report to `--out` and its listing as Markdown beside it, and
/// print its ledger and every task, all in the published (redacted) form.
fn write_and_print(args: &SuiteArgs, report: &GenerationReport) -> anyhow::Result<()> {
    // Written and printed in the published form.
    let mut value = serde_json::to_value(report)?;
    fitness_recorder::secrets::redact_value(&mut value, &mut Default::default());
    let body = serde_json::to_vec_pretty(&value)?;
    std::fs::write(&args.out, body)
        .with_context(|| format!("failed to write {}", args.out.display()))?;
    let md_path = markdown_path(&args.out);
    let md = fitness_recorder::secrets::redact(&fitness_recorder::suite::listing::markdown(
        &report.suite,
        &report.rejections,
        &ledger_text(report),
    ));
    std::fs::write(&md_path, md)
        .with_context(|| format!("failed to write {}", md_path.display()))?;
    let printed = if args.json {
        fitness_recorder::secrets::pretty_json(&serde_json::json!({
            "generator": report.suite.generator,
            "seed": report.suite.seed,
            "suite_hash": report.suite.hash,
            "ledger": report.ledger,
            "screen_errors": report.screen_errors,
            "degenerate": report.degenerate,
            "out": args.out,
            "markdown": md_path,
        }))? + "\n"
    } else {
        fitness_recorder::secrets::redact(&format!(
            "{}{}wrote {} and {}\n",
            ledger_text(report),
            fitness_recorder::suite::listing::tasks_text(&report.suite.tasks),
            args.out.display(),
            md_path.display()
        ))
    };
    crate::process::print(&printed)?;
    Ok(())
}

/// The ledger as a reader takes it in.
pub fn ledger_text(r: &GenerationReport) -> String {
    let l = &r.ledger;
    let n = |v: Option<u64>| v.map_or("-".to_owned(), |v| v.to_string());
    let mut out = format!(
        "generator {}  seed {}  suite {}\n",
        r.suite.generator, r.suite.seed, r.suite.hash
    );
    let rate = match (l.admitted, l.candidates) {
        (Some(a), Some(c)) if c > 0 => format!(" ({:.1}%)", 100.0 * a as f64 / c as f64),
        _ => String::new(),
    };
    out.push_str(&format!(
        "candidates {}  admitted {}{rate}  tasks {}  trimmed surplus {}  null-screened {}  screen errors {}\n",
        n(l.candidates),
        n(l.admitted),
        n(l.tasks),
        n(l.trimmed_surplus),
        l.null_screened
            .as_ref()
            .map_or("not run".to_owned(), |s| format!("{} of {}", s.dropped, s.screened)),
        r.screen_errors,
    ));
    rejections(&mut out, l);
    if let Some(q) = &l.quality {
        let aim = r
            .suite
            .generator
            .parse::<GeneratorId>()
            .ok()
            .and_then(GeneratorId::aimed_mix);
        quality(&mut out, q, aim.as_ref());
    }
    if let Some(d) = &l.discovery {
        discovery(&mut out, d);
    }
    if let Some(a) = &l.act {
        out.push_str(&format!("{}\n", a.sentence()));
    }
    for s in &r.spend {
        out.push_str(&format!(
            "spend {}: {} call(s) to {} ({} without usage, {} threw), {} in / {} out tokens\n",
            s.phase,
            s.calls,
            s.model,
            s.calls_without_usage,
            s.calls_that_threw,
            s.usage.input_tokens,
            s.usage.output_tokens
        ));
    }
    if let Some(w) = &r.walk {
        walk(&mut out, w);
    }
    let disagreements: Vec<_> = r
        .destructiveness
        .iter()
        .filter(|d| d.disagreement)
        .collect();
    out.push_str(&format!(
        "destructiveness: {} tool(s), {} disagreement(s)\n",
        r.destructiveness.len(),
        disagreements.len()
    ));
    for d in disagreements {
        out.push_str(&format!("  {}: {}\n", d.tool, d.evidence));
    }
    out
}

/// Discovery: each move with what it tried and found, and where the tasks
/// came from.
fn discovery(out: &mut String, d: &fitness_shared::record::DiscoveryLedger) {
    if d.moves.is_empty() {
        out.push_str(&format!("discovery: {}\n", d.sentence()));
    }
    for m in &d.moves {
        let on = m
            .tool
            .as_deref()
            .map(|t| format!(" `{t}`"))
            .unwrap_or_default();
        out.push_str(&format!(
            "discovery {}{on}: tried {} — {}\n",
            m.name, m.tried, m.found
        ));
    }
    if d.seed_calls > 0 || d.discovered_tasks > 0 {
        out.push_str(&format!(
            "discovery: {} task(s) seeded by the operator ({} seed call(s)), {} from discovery\n",
            d.seeded_tasks, d.seed_calls, d.discovered_tasks
        ));
    }
}

/// The ledger's rejections by rule, each with an example.
fn rejections(out: &mut String, l: &fitness_shared::record::SuiteLedger) {
    if l.rejected_by_rule.is_empty() {
        out.push_str("rejected: none\n");
    } else {
        let parts: Vec<String> = l
            .rejected_by_rule
            .iter()
            .map(|r| format!("{} {}", r.rule, r.count))
            .collect();
        out.push_str(&format!("rejected: {}\n", parts.join(", ")));
        for r in &l.rejected_by_rule {
            if let Some(e) = &r.example {
                out.push_str(&format!("  {}, e.g.: {e}\n", r.rule));
            }
        }
    }
}

/// The suite's quality: tools covered, answers from calls, checks.
fn quality(
    out: &mut String,
    q: &fitness_shared::record::SuiteQuality,
    aim: Option<&fitness_shared::record::AimedMix>,
) {
    let pct = |count: u64| q.percent(count);
    let tools: Vec<String> = q
        .per_tool
        .iter()
        .map(|t| format!("{} {}", t.tool, t.tasks))
        .collect();
    let kinds: Vec<String> = q
        .predicate_kinds
        .iter()
        .map(|k| format!("{} {}", k.kind, k.count))
        .collect();
    if let Some(mix) = q.mix_text() {
        out.push_str(&mix);
        out.push('\n');
        if let Some(aim) = aim {
            out.push_str(&q.against_text(aim));
            out.push('\n');
        }
    }
    out.push_str(&format!(
        "quality: {} of {} listed tool(s) covered ({}); answers from a successful call {} of {} ({}); more than one call {} ({}); checks: {}\n",
        q.tools_covered(),
        q.tools_listed,
        if tools.is_empty() { "none".to_owned() } else { tools.join(", ") },
        q.answered_from_calls,
        q.tasks,
        pct(q.answered_from_calls),
        q.multi_call,
        pct(q.multi_call),
        if kinds.is_empty() { "none".to_owned() } else { kinds.join(", ") },
    ));
}

/// What the schema walk did and skipped.
fn walk(out: &mut String, w: &fitness_recorder::suite::generators::walk::WalkStats) {
    out.push_str(&format!(
        "walk: {} call(s) over {} callable tool(s), {} not called; skipped {} error, {} empty, {} timed out, {} failed, {} sensitive, {} writing by its arguments, {} without an answer, {} unstable\n",
        w.calls,
        w.callable_tools.len(),
        w.not_called.len(),
        w.error_results,
        w.empty_results,
        w.timeouts,
        w.call_failures,
        w.sensitive_results,
        w.writing_arguments,
        w.no_salient_answer,
        w.unstable
    ));
    if !w.changed_state.is_empty() || w.created_state > 0 {
        let mut files: Vec<String> = w
            .files_written
            .iter()
            .take(8)
            .map(|f| format!("`{f}`"))
            .collect();
        if w.files_written.len() > files.len() {
            files.push(format!("{} more", w.files_written.len() - files.len()));
        }
        if w.files_written_unnamed > 0 {
            files.push(format!(
                "{} under a folder given with --env (not named)",
                w.files_written_unnamed
            ));
        }
        out.push_str(&format!(
            "walk: the server's state changed in a walk that only reads, after the first call of {} ({} state check(s)){}; {} task(s) about what appeared passed over\n",
            w.changed_state
                .iter()
                .map(|t| format!("`{t}`"))
                .collect::<Vec<_>>()
                .join(", "),
            w.state_checks,
            if files.is_empty() {
                String::new()
            } else {
                format!("; files written: {}", files.join(", "))
            },
            w.created_state
        ));
    }
    for u in &w.unsatisfiable {
        out.push_str(&format!(
            "walk: dropped `{}`: {}\n",
            u["tool"].as_str().unwrap_or("?"),
            u["why"].as_str().unwrap_or("")
        ));
    }
    if w.state_writes > 0 {
        out.push_str(&format!(
            "walk: {} call(s) to tools that may write: the tasks can rely on server state those calls created\n",
            w.state_writes
        ));
    }
}
