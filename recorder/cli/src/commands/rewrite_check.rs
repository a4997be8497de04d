//! `fitness rewrite-check RUN_DIR --out DIR [--runner P/M]`: re-run the
//! same suite (same suite hash, same registration) against the same server
//! with the before run's proposals substituted into `tools/list` by
//! `fitness rewrite-proxy`, then link the two records both ways with the
//! delta of their stored first-try intervals.
//!
//! The server command comes from the before record, so it is run only when
//! that record carries the operator's own signature (`--key` /
//! `FITNESS_SIGNING_KEY`); otherwise it is printed and refused unless
//! `--trust-command` is given.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use anyhow::Context as _;
use clap::Args;
use fitness_shared::record::{Outcome, RewriteLink, RewriteRole, RunRecord, ServerTarget};
use serde_json::Value;

use crate::process::{Bars, cancel_on_signals, runtime};
use fitness_recorder::mcp::connect::DEFAULT_REQUEST_TIMEOUT;
use fitness_recorder::model::agent::DEFAULT_MAX_TURNS;
use fitness_recorder::pipeline::config::Floors;
use fitness_recorder::pipeline::{self, RunConfig, RunOutput, RunSettings};
use fitness_recorder::rewrite::proxy::Rewrites;

#[derive(Debug, Args)]
#[command(after_help = "Example:\n  \
fitness run --runner sim/diligent --out runs -- fitness demo-server canary\n  \
fitness rewrite-check runs/demo-canary-... --out rewrite-runs --key publisher.key\n\n\
Reads RUN_DIR/{record.json, suite.json}; writes DIR/<after-run-id>/ and\n\
DIR/rewrites-<before-run-id>.json, and adds the `rewrite` link to both records.\n\
The record's server command runs only when the record is signed with your key;\n\
otherwise it is printed and refused (pass --trust-command after reading it).")]
pub struct RewriteCheckArgs {
    /// The before run's directory (record.json, suite.json, tapes).
    pub run_dir: PathBuf,
    /// Where the after run's directory goes.
    #[arg(long)]
    pub out: PathBuf,
    /// The model under test (default: the before run's registered runner).
    #[arg(long, value_name = "P/M")]
    pub runner: Option<String>,
    /// A publisher key; needed when the before record is signed (it is
    /// re-signed after the link is added).
    #[arg(long)]
    pub key: Option<PathBuf>,
    /// Turns per trial, for a before run that did not register them (a
    /// registered value always wins: the after run is the same run).
    #[arg(long, default_value_t = DEFAULT_MAX_TURNS)]
    pub max_turns: u32,
    /// Seconds to wait for any one MCP request, for a before run that did
    /// not register it.
    #[arg(long, default_value_t = DEFAULT_REQUEST_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// An environment variable for the server; repeatable. The before run's
    /// `--env` values are not in its record, so a server that needs them
    /// gets them again here (redacted like any `--env` value).
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Run the before record's server command even when the record is
    /// unsigned or signed by a key other than --key / FITNESS_SIGNING_KEY.
    /// Without it such a command is printed and not run: a record is data
    /// from whoever wrote it, and its `argv` is a program to execute.
    #[arg(long)]
    pub trust_command: bool,
}

/// What a rewrite check produced.
#[derive(Debug)]
pub struct CheckOutput {
    pub before: RunRecord,
    pub after: RunOutput,
    pub link_after: RewriteLink,
}

fn read_record(dir: &Path) -> anyhow::Result<(Value, RunRecord)> {
    let path = dir.join(fitness_shared::site::RECORD_FILE);
    let bytes =
        std::fs::read(&path).with_context(|| format!("failed to read {}", path.display()))?;
    let value: Value = serde_json::from_slice(&bytes)
        .with_context(|| format!("{} is not JSON", path.display()))?;
    let record = RunRecord::from_value(value.clone())
        .map_err(|e| anyhow::anyhow!("{} is not a run record: {e}", path.display()))?;
    Ok((value, record))
}

/// `to` relative to `from` (both directories), `/`-separated; absolute when
/// they share no root.
pub fn relative(from: &Path, to: &Path) -> String {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (from, to) = (canon(from), canon(to));
    let a: Vec<Component> = from.components().collect();
    let b: Vec<Component> = to.components().collect();
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return to.display().to_string();
    }
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_owned(), a.len() - common).collect();
    parts.extend(
        b[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// The after run's server: this binary's rewrite proxy, substituting the
/// proposals into the before run's server command.
fn proxy_command(before: &RunRecord, rewrites: &Path) -> anyhow::Result<Vec<String>> {
    let argv = match &before.server.target {
        ServerTarget::Command { argv } => argv.clone(),
        ServerTarget::Url { url } => anyhow::bail!(
            "rewrite-check does not support HTTP targets yet ({url}): the proxy that substitutes the proposals into tools/list runs over stdio only"
        ),
    };
    anyhow::ensure!(
        !argv.is_empty(),
        "the before record names no server command"
    );
    if let Some(redacted) = argv
        .iter()
        .find(|a| a.contains(fitness_shared::redact::MARKER_PREFIX))
    {
        anyhow::bail!(
            "the before record's server command had a secret redacted ({redacted}), so it cannot be run again as recorded; give the server its secret with --env if it reads one"
        );
    }
    let exe = std::env::current_exe().context("cannot find the fitness binary")?;
    let mut proxy_args = vec![
        "rewrite-proxy".to_owned(),
        "--rewrites".to_owned(),
        rewrites.display().to_string(),
        "--".to_owned(),
    ];
    proxy_args.extend(argv);
    let mut command = vec![exe.display().to_string()];
    command.extend(proxy_args);
    Ok(command)
}

/// The after run's registration: the before run's, through the proxy.
fn after_config(
    args: &RewriteCheckArgs,
    before: &RunRecord,
    rewrites: &Path,
) -> anyhow::Result<RunConfig> {
    let p = &before.preregistration;
    let command = proxy_command(before, rewrites)?;
    let runner = match (&args.runner, &p.runner_model) {
        (Some(r), _) => r.clone(),
        (None, Some(r)) => r.clone(),
        (None, None) => before.run.runner_model.clone(),
    };
    let generator = p
        .generator
        .clone()
        .or_else(|| before.run.generator.clone())
        .context("the before record names no generator")?;
    let suite = fitness_recorder::suite::hashed::load_suite(
        &args.run_dir.join(fitness_shared::site::SUITE_FILE),
    )?;
    anyhow::ensure!(
        suite.hash == before.run.suite_hash,
        "suite.json (hash {}) is not the suite the before record names ({})",
        suite.hash,
        before.run.suite_hash
    );
    // The one target parser: it checks the --env flags and registers them.
    let target = super::target::parse(None, &[], &args.env, &command)?;
    // The before run's registration, field by field; a record older than a
    // field leaves its default.
    let mut run = RunSettings::new(target, runner.parse()?);
    run.judge = p
        .judge_model
        .as_deref()
        .filter(|j| *j != "none")
        .map(str::parse)
        .transpose()?;
    run.generator = Some(generator.parse()?);
    run.tasks = p.n_tasks.unwrap_or(suite.tasks.len() as u64);
    run.reps = p.reps.unwrap_or(1);
    run.extension_size = p.extension_size;
    run.max_extensions = p.max_extensions;
    run.credential = before.server.credential_context;
    run.seed = p.seed.unwrap_or(suite.seed);
    run.floors = Floors::registered(p);
    run.screen = p.null_screen.unwrap_or(false);
    if let Some(overgen) = p
        .overgen_factor
        .or_else(|| suite.config.get("overgen_factor").and_then(Value::as_f64))
    {
        run.overgen_factor = overgen;
    }
    run.out_dir = args.out.clone();
    run.key = args.key.clone();
    run.timeout = p
        .request_timeout_ms
        .map_or_else(|| Duration::from_secs(args.timeout), Duration::from_millis);
    if let Some(ms) = p.model_timeout_ms {
        run.model_timeout = Duration::from_millis(ms);
    }
    run.budget.max_turns = p
        .max_turns
        .and_then(|t| u32::try_from(t).ok())
        .unwrap_or(args.max_turns);
    if let Some(tokens) = p.max_tokens.or(before.run.task_budget) {
        run.budget.max_tokens = tokens;
    }
    run.max_model_calls = p.max_model_calls;
    run.label = Some(before.server.slug.clone());
    run.fixed_suite = Some(args.run_dir.join(fitness_shared::site::SUITE_FILE));
    if let Some(bytes) = p.max_tape_bytes {
        run.max_tape_bytes = bytes;
    }
    RunConfig::from_settings(run)
}

/// Refuse to run the server command of a record the operator did not sign:
/// unsigned, or signed by another key than `key`. The error prints the
/// command so the operator can read it before passing `--trust-command`.
fn trust_command(value: &Value, record: &RunRecord, key: Option<&Path>) -> anyhow::Result<()> {
    // A URL is not run (and HTTP targets are refused on their own).
    let ServerTarget::Command { argv } = &record.server.target else {
        return Ok(());
    };
    let why = match (record.signature.is_some(), key) {
        (false, _) => "the before record is unsigned".to_owned(),
        (true, None) => "the before record is signed, and no key of yours was given (--key or FITNESS_SIGNING_KEY) to check it was you".to_owned(),
        (true, Some(key)) => {
            let seed = fitness_recorder::integrity::read_secret(key)?;
            let mine = fitness_shared::integrity::signing::public_key_b64(&seed);
            match fitness_shared::integrity::verify_record(value, Some(&mine)) {
                Ok(_) => return Ok(()),
                Err(e) => format!("the before record's signature is not yours ({e})"),
            }
        }
    };
    anyhow::bail!(
        "refusing to run the before record's server command, because {why}:\n  {}\nA record's command is run as a program on this machine. Read it, and pass --trust-command to run it anyway.",
        shell_words(argv)
    )
}

/// A command line as a shell would read it back (single-quoted where needed).
fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Put the link into a record file's JSON, re-sign it when a key is given,
/// and write it atomically.
fn write_link(
    dir: &Path,
    mut value: Value,
    link: &RewriteLink,
    key: Option<&Path>,
) -> anyhow::Result<()> {
    let obj = value
        .as_object_mut()
        .context("the record is not a JSON object")?;
    obj.insert("rewrite".into(), serde_json::to_value(link)?);
    obj.remove("signature");
    if let Some(key) = key {
        let seed = fitness_recorder::integrity::read_secret(key)?;
        fitness_recorder::integrity::sign_value(&mut value, &seed)?;
    }
    RunRecord::from_value(value.clone())
        .map_err(|e| anyhow::anyhow!("the linked record does not read back: {e}"))?;
    let bytes = fitness_shared::integrity::record_file_bytes(&value)
        .context("failed to canonicalise the record")?;
    fitness_recorder::integrity::write_atomic(&dir.join(fitness_shared::site::RECORD_FILE), &bytes)
}

/// A run a rewrite check can start from: it has proposals, and it is not
/// itself an after run.
fn checkable(args: &RewriteCheckArgs, before: &RunRecord) -> anyhow::Result<()> {
    anyhow::ensure!(
        !before.proposals.is_empty(),
        "the run in {} has no proposals: nothing to check (its findings: {})",
        args.run_dir.display(),
        before.findings.len()
    );
    anyhow::ensure!(
        before.rewrite.is_none()
            || before
                .rewrite
                .as_ref()
                .is_some_and(|l| l.role == RewriteRole::Before),
        "the run in {} is itself the after run of a rewrite check",
        args.run_dir.display()
    );
    Ok(())
}

/// The delta explained, with what makes the two runs differ beyond the
/// rewrites.
fn explain(
    delta: &fitness_shared::record::RewriteDelta,
    before: &RunRecord,
    after: &RunRecord,
) -> String {
    let mut explain = fitness_shared::compare::explain(delta);
    explain.push_str(
        " The after run drove the kept suite without walking the server to generate it, so a server with state (a call counter, a cache) saw a different call history.",
    );
    if after.run.suite_hash != before.run.suite_hash {
        explain.push_str(&format!(
            " The after run did not drive the same suite (suite hash {} against {}).",
            after.run.suite_hash, before.run.suite_hash
        ));
    }
    if after.outcome != Outcome::Scored {
        explain.push_str(&format!(
            " The after run's outcome: {}.",
            after.outcome.code()
        ));
    }
    // What the rewritten descriptions cost the agent, beside what they did
    // for its success.
    explain.push(' ');
    explain.push_str(&fitness_shared::record::tool_list_change(
        before.tool_list.as_ref(),
        after.tool_list.as_ref(),
    ));
    explain
}

/// The whole check: run the after run and link both records.
pub async fn check(
    args: &RewriteCheckArgs,
    cancel: pipeline::Cancel,
    progress: &dyn pipeline::Progress,
) -> anyhow::Result<CheckOutput> {
    let (before_value, before) = read_record(&args.run_dir)?;
    checkable(args, &before)?;
    let key = args
        .key
        .clone()
        .or_else(|| std::env::var_os("FITNESS_SIGNING_KEY").map(Into::into));
    anyhow::ensure!(
        before.signature.is_none() || key.is_some(),
        "the before record is signed: pass --key (or set FITNESS_SIGNING_KEY) so it can be re-signed after its rewrite link is added"
    );
    // Before anything is written: the command is the record's, not ours.
    if !args.trust_command {
        trust_command(&before_value, &before, key.as_deref())?;
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("failed to create {}", args.out.display()))?;
    let rewrites_path = args.out.join(format!("rewrites-{}.json", before.run.id));
    let rewrites = Rewrites {
        proposals: before.proposals.clone(),
    };
    fitness_recorder::integrity::write_atomic(
        &rewrites_path,
        &serde_json::to_vec_pretty(&rewrites)?,
    )?;
    let rewrites_path = std::fs::canonicalize(&rewrites_path)?;
    let mut cfg = after_config(args, &before, &rewrites_path)?;
    cfg.settings.key = key.clone();
    let after = pipeline::execute(&cfg, cancel, progress).await?;
    // The delta comes from the two records as stored, never from the tapes.
    let (after_value, after_stored) = read_record(&after.dir)?;
    let delta = fitness_shared::compare::delta(
        fitness_shared::compare::stored_interval(&before),
        fitness_shared::compare::stored_interval(&after_stored),
    );
    let explain = explain(&delta, &before, &after_stored);
    let proposals: Vec<String> = before.proposals.iter().map(|p| p.id.clone()).collect();
    let link_after = RewriteLink {
        role: RewriteRole::After,
        other_run: before.run.id.clone(),
        other_dir: Some(relative(&after.dir, &args.run_dir)),
        proposals: proposals.clone(),
        delta,
        explain: explain.clone(),
    };
    let link_before = RewriteLink {
        role: RewriteRole::Before,
        other_run: after_stored.run.id.clone(),
        other_dir: Some(relative(&args.run_dir, &after.dir)),
        proposals,
        delta,
        explain,
    };
    write_link(&after.dir, after_value, &link_after, key.as_deref())?;
    write_link(&args.run_dir, before_value, &link_before, key.as_deref())?;
    let (_, after_record) = read_record(&after.dir)?;
    Ok(CheckOutput {
        before,
        after: RunOutput {
            dir: after.dir,
            record: after_record,
            interrupted: after.interrupted,
        },
        link_after,
    })
}

pub fn run(args: RewriteCheckArgs) -> anyhow::Result<()> {
    let rt = runtime()?;
    let bars = Bars::new(args.json);
    let output = rt.block_on(async {
        let cancel = cancel_on_signals();
        check(&args, cancel, &bars).await
    });
    rt.shutdown_timeout(Duration::from_secs(2));
    let output = output?;
    let link = &output.link_after;
    if args.json {
        let summary = serde_json::json!({
            "before": output.before.run.id,
            "after": output.after.record.run.id,
            "after_dir": output.after.dir,
            "after_outcome": output.after.record.outcome.code(),
            "suite_hash": output.after.record.run.suite_hash,
            "proposals": link.proposals,
            "delta": link.delta,
            "explain": link.explain,
        });
        crate::process::print_line(&fitness_recorder::secrets::pretty_json(&summary)?)?;
    } else {
        crate::process::outln!("before   {}", output.before.run.id);
        crate::process::outln!("after    {}", output.after.record.run.id);
        crate::process::outln!(
            "record   {}",
            output
                .after
                .dir
                .join(fitness_shared::site::RECORD_FILE)
                .display()
        );
        crate::process::outln!("applied  {} proposals", link.proposals.len());
        crate::process::outln!("delta    {}", link.explain);
    }
    if output.after.interrupted.is_some() {
        return Err(crate::process::Exit::code(crate::process::Exit::INCOMPLETE).into());
    }
    Ok(())
}
