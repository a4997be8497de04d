//! Task suites (R-GEN): versioned generators, admission, the generation-time
//! null screen, deterministic trimming and the suite hash.
//!
//! The fates of candidates are counted apart: rejected by a named rule
//! (`admission`), deleted by the null screen, trimmed as surplus. `admitted`
//! in the ledger counts every candidate that passed the rules, so the
//! admission rate (admitted / candidates) counts neither the null-screened
//! nor the trimmed surplus as failures.

pub mod act;
pub mod admission;
pub mod call;
pub mod compose;
pub mod destructive;
pub mod generators;
pub mod hashed;
pub mod holdings;
pub mod listing;
pub mod options;
pub mod predicate;
pub mod printed;
pub mod reading;
pub mod schema_args;
pub mod screen;
pub mod spend;
pub mod task;
pub mod written;

use std::collections::{BTreeMap, BTreeSet};

use fitness_shared::record::{
    AimedMix, KindCount, RuleRejection, SuiteLedger, SuiteQuality, ToolTasks,
};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use serde::Serialize;
use serde_json::{Map, Value, json};

pub use admission::Rejection;
pub use destructive::ToolDestructiveness;
pub use generators::GenerationInput;
pub use hashed::{Suite, suite_hash};
pub use options::{DEFAULT_OVERGEN, GenerateOptions, GeneratorId};
pub use spend::PhaseSpend;
use task::{Candidate, Task};

use crate::mcp::connect::Session;
use crate::mcp::tap::Tap;
use crate::model::types::ModelClient;

/// Everything generation produced and counted.
#[derive(Debug, Clone, Serialize)]
pub struct GenerationReport {
    pub suite: Suite,
    pub ledger: SuiteLedger,
    pub rejections: Vec<Rejection>,
    /// Candidate ids the null screen deleted.
    pub screened_out: Vec<String>,
    /// The same candidates, each with the reply that answered it.
    pub screen_deletions: Vec<fitness_shared::record::ListedCandidate>,
    /// Screen calls that failed (their candidates were kept).
    pub screen_errors: u64,
    pub spend: Vec<PhaseSpend>,
    pub destructiveness: Vec<ToolDestructiveness>,
    /// The tools that may write ([`destructive::writers`]): blocked in a
    /// read-only drive.
    pub writers: BTreeSet<String>,
    /// Answer-leak rejections, as found at generation time.
    pub leaks_at_generation: Vec<Value>,
    /// The screen deleted every admitted candidate (`DEGENERATE`,
    /// `all_candidates_null_answerable`).
    pub degenerate: bool,
    /// schema-walk only: the real response each task's answer came from,
    /// by task id.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub observed: BTreeMap<String, String>,
    /// schema-walk only: what the walk called and skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub walk: Option<generators::walk::WalkStats>,
}

/// Generate, admit, screen, trim and hash a suite.
pub async fn generate(
    session: &Session,
    tools: &[rmcp::model::Tool],
    instructions: Option<&str>,
    opts: &GenerateOptions,
    judge: Option<&dyn ModelClient>,
    screen_runner: Option<&dyn ModelClient>,
    agent_tape: &Tap,
) -> anyhow::Result<GenerationReport> {
    let screen_runner = check_options(opts, judge, screen_runner)?;
    let want = (opts.n_tasks as f64 * opts.overgen_factor).ceil() as usize;
    let mut spend = Vec::new();

    let (labels, destructive_spend) = destructive::assess(tools, judge, agent_tape).await;
    spend.extend(destructive_spend);
    let writers = destructive::writers(tools, &labels);
    let input = GenerationInput {
        session,
        tools,
        labels: &labels,
        writers: &writers,
        instructions,
        opts,
        want,
        judge,
        tape: agent_tape,
    };
    let generator = generators::generator(opts.generator);
    let mut config = suite_config(opts, want, screen_runner, judge);
    config.extend(generator.config(&input));
    let proposed = generator.propose(&input).await?;
    // The model of what the server holds that questions were composed
    // over changes what is asked: hashed with it.
    if let Some(h) = &proposed.holdings {
        config.insert("holdings".into(), h.clone());
    }
    spend.extend(proposed.synthesis);
    let n_candidates = proposed.candidates.len() as u64;
    let candidate_ids: Vec<String> = proposed.candidates.iter().map(|c| c.id.clone()).collect();
    // A setup step the walk showed changes only the session (a project
    // registered) may be made by the run, read-only or not.
    let setup: Vec<String> = proposed
        .walk
        .as_ref()
        .map(|w| w.setup_steps.clone())
        .unwrap_or_default();
    let writers: BTreeSet<String> = writers
        .iter()
        .filter(|w| !setup.contains(w))
        .cloned()
        .collect();
    let input = GenerationInput {
        writers: &writers,
        ..input
    };
    let (admitted_tasks, rejections) = admit(proposed.candidates, &input);
    let n_admitted = admitted_tasks.len() as u64;
    let skip = screen_skip(
        opts,
        n_candidates,
        n_admitted,
        proposed.judge_calls.as_ref(),
    );
    let screened = screen::screen(
        admitted_tasks,
        screen_runner,
        skip,
        agent_tape,
        opts.concurrency,
    )
    .await;
    spend.extend(screened.spend);
    let degenerate = screen_runner.is_some() && n_admitted > 0 && screened.kept.is_empty();

    // Deterministic trimming by seed; the kept tasks keep candidate order.
    let trimmed = screened.kept.len().saturating_sub(opts.n_tasks);
    let kept = trim(
        screened.kept,
        opts.n_tasks,
        opts.seed,
        opts.generator.aimed_mix().as_ref(),
    );
    let (tasks, observed) = number(kept, &opts.id_prefix, &proposed.observed);

    let config = Value::Object(config);
    let hash = suite_hash(&config, opts.seed, &tasks);
    let ledger = SuiteLedger {
        candidates: Some(n_candidates),
        admitted: Some(n_admitted),
        tasks: Some(tasks.len() as u64),
        rejected_by_rule: rejected_by_rule(&rejections),
        trimmed_surplus: Some(trimmed as u64),
        null_screened: screened.count,
        screen_skipped: screened.skipped,
        candidates_file: None,
        limitation: None,
        quality: Some(quality(&tasks, tools, |t| observed.contains_key(&t.id))),
        judge_calls: proposed.judge_calls,
        discovery: proposed.walk.as_ref().map(|w| w.discovery_ledger(&tasks)),
        act: None,
    };
    debug_assert!(
        rejections
            .iter()
            .all(|r| candidate_ids.contains(&r.candidate))
    );
    Ok(GenerationReport {
        suite: Suite {
            generator: opts.generator.as_str().to_owned(),
            config,
            seed: opts.seed,
            tasks,
            hash,
        },
        ledger,
        leaks_at_generation: leaks(&rejections),
        rejections,
        screened_out: screened.screened_out,
        screen_deletions: screened.deleted,
        screen_errors: screened.errors,
        spend,
        destructiveness: labels,
        writers,
        degenerate,
        observed,
        walk: proposed.walk,
    })
}

/// Add act tasks to a generated suite (issue 44): changes made in the
/// sandbox, each checked by the state it leaves, the state put back after
/// each (`state`). Only where the state can be put back (`restore`: a copy
/// or the operator's reset); elsewhere the ledger says why there is none.
/// Act tasks take at most half the suite; the questions are trimmed by the
/// seed to make room, and the suite is hashed again with what it holds.
pub async fn add_act_tasks<S: act::SandboxState>(
    report: &mut GenerationReport,
    tools: &[rmcp::model::Tool],
    opts: &GenerateOptions,
    restore: Option<fitness_shared::record::RestoreKind>,
    state: &S,
    timeout: std::time::Duration,
    judge: Option<(&dyn crate::model::types::ModelClient, &crate::mcp::tap::Tap)>,
) -> anyhow::Result<()> {
    use fitness_shared::record::{ActLedger, RestoreKind};
    let restore = match restore {
        Some(RestoreKind::Copy) => "copy",
        Some(RestoreKind::Reset) => "reset",
        _ => {
            let why = if restore.is_none() {
                "a read-only run asks for no change (write-excluded): add --sandbox with --sandbox-copy PATH or --reset CMD"
            } else {
                "nothing puts the sandbox's state back (no --sandbox-copy, no --reset), so a change could not be checked from the same state twice"
            };
            report.ledger.act = Some(ActLedger {
                restore: None,
                tried: 0,
                admitted: 0,
                tasks: 0,
                judge_proposed: 0,
                judge_admitted: 0,
                notes: vec![why.to_owned()],
            });
            return Ok(());
        }
    };
    // What the questions already give their tools, by argument name.
    let mut known = Map::new();
    for call in report.suite.tasks.iter().flat_map(|t| &t.solution) {
        for (k, v) in &call.arguments {
            if !v.is_object() && !v.is_array() && !known.contains_key(k) {
                known.insert(k.clone(), v.clone());
            }
        }
    }
    // A change is made in the folders on the server's command line, which
    // the sandbox copies or its reset puts back, never in the recorder's
    // working folder, which the operator's values also hold.
    let working = std::env::current_dir()
        .ok()
        .map(|d| d.to_string_lossy().into_owned());
    let roots: Vec<String> = opts
        .seed_handles
        .iter()
        .filter(|r| working.as_ref() != Some(*r))
        .cloned()
        .collect();
    let input = act::ActInput {
        tools,
        writers: &report.writers,
        labels: &report.destructiveness,
        roots: &roots,
        seed: opts.seed,
        timeout,
        known: &known,
    };
    // judge-walk/1's judge proposes each change and the read that shows
    // it; its calls are the suite's synthesis calls, counted with them.
    let mut change_judge = judge
        .filter(|_| opts.generator == GeneratorId::JudgeWalk1)
        .map(|(model, tape)| act::judge::ChangeJudge {
            judge: generators::judge_walk::Judge::new(
                model,
                tape,
                opts.seed,
                &generators::judge_walk::JudgeWalkConfig::default(),
            ),
            seen: known
                .values()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect(),
            context: opts.hints.context.clone(),
            proposed: 0,
        });
    let made = act::generate(state, &input, change_judge.as_mut()).await?;
    let judge_proposed = change_judge.as_ref().map_or(0, |j| j.proposed);
    if let Some(j) = change_judge {
        let calls = &j.judge.calls;
        if calls.made > 0 {
            let total =
                report
                    .ledger
                    .judge_calls
                    .get_or_insert(fitness_shared::record::JudgeCalls {
                        made: 0,
                        failed: 0,
                        last_error: None,
                    });
            total.made += calls.made;
            total.failed += calls.failed;
            if calls.last_error.is_some() {
                total.last_error.clone_from(&calls.last_error);
            }
            match report
                .spend
                .iter_mut()
                .find(|p| p.phase == j.judge.phase.phase && p.model == j.judge.phase.model)
            {
                Some(phase) => phase.absorb(&j.judge.phase),
                None => report.spend.push(j.judge.phase.clone()),
            }
        }
    }
    let admitted = made.tasks.len() as u64;
    let room = (opts.n_tasks / 2).max(1);
    // Changes past the suite's half are trimmed as surplus, counted with
    // the questions trimmed to make room: every candidate has one fate.
    let over = made.tasks.len().saturating_sub(room);
    let acts: Vec<Task> = made.tasks.into_iter().take(room).collect();
    let mut notes = made.skipped;
    if over > 0 {
        notes.push(format!(
            "{over} admitted changes trimmed as surplus: changes take at most half the suite ({room} of {})",
            opts.n_tasks
        ));
    }
    if made.candidates == 0 {
        notes.insert(
            0,
            "no tool that may write and is not destructive could be given arguments".to_owned(),
        );
    }
    report.ledger.act = Some(ActLedger {
        restore: Some(restore.to_owned()),
        tried: made.candidates,
        admitted,
        tasks: acts.len() as u64,
        judge_proposed,
        judge_admitted: made.judge_admitted,
        notes,
    });
    report.rejections.extend(made.rejections);
    report.ledger.rejected_by_rule = rejected_by_rule(&report.rejections);
    report.ledger.candidates = Some(report.ledger.candidates.unwrap_or(0) + made.candidates);
    report.ledger.admitted = Some(report.ledger.admitted.unwrap_or(0) + admitted);
    if acts.is_empty() {
        return Ok(());
    }
    let asks_room = opts.n_tasks.saturating_sub(acts.len());
    let asks = std::mem::take(&mut report.suite.tasks);
    let trimmed = asks.len().saturating_sub(asks_room) + over;
    let mut kept = trim(
        asks,
        asks_room,
        opts.seed,
        opts.generator.aimed_mix().as_ref(),
    );
    kept.extend(acts);
    let (tasks, observed) = number(kept, &opts.id_prefix, &report.observed);
    if let Value::Object(config) = &mut report.suite.config {
        let mut act = json!({"restore": restore});
        if judge_proposed > 0 {
            act["judge"] = json!(act::judge::SYSTEM);
        }
        config.insert("act".into(), act);
    }
    report.suite.hash = suite_hash(&report.suite.config, report.suite.seed, &tasks);
    report.ledger.tasks = Some(tasks.len() as u64);
    report.ledger.trimmed_surplus =
        Some(report.ledger.trimmed_surplus.unwrap_or(0) + trimmed as u64);
    report.ledger.quality = Some(quality(&tasks, tools, |t| observed.contains_key(&t.id)));
    report.observed = observed;
    report.suite.tasks = tasks;
    Ok(())
}

/// Admission by the named rules; the tools labelled destructive are the
/// ones a task may not call without an owner's key.
fn admit(candidates: Vec<Candidate>, input: &GenerationInput<'_>) -> (Vec<Task>, Vec<Rejection>) {
    let ctx = admission::AdmissionContext {
        tools: input.tools,
        instructions: input.instructions,
        access: input.opts.access,
        writes: input.opts.writes,
        writers: input.writers,
        exclude_prompts: &input.opts.exclude_prompts,
        answer_rules: input.opts.generator != GeneratorId::SchemaWalk1,
        worded_rules: input.opts.generator == GeneratorId::JudgeWalk1,
    };
    admission::admit(candidates, &ctx)
}

/// Why the screen must not be paid for, when a free check has already
/// decided the run: the admitted candidates cannot fill the suite (the
/// screen can only delete), the admission rate is under its floor, or our
/// own judge's calls failed over the limit.
fn screen_skip(
    opts: &GenerateOptions,
    candidates: u64,
    admitted: u64,
    judge: Option<&fitness_shared::record::JudgeCalls>,
) -> Option<String> {
    let floors = opts.must_reach?;
    if let Some(j) = judge {
        let check = fitness_shared::gates::compromised(
            j.made.saturating_sub(j.failed),
            j.failed,
            floors.max_error_rate,
        );
        if check.compromised {
            return Some(format!(
                "not run: {} of the judge's {} calls failed, over the limit, so the run is refused before any screen call",
                j.failed, j.made
            ));
        }
    }
    if admitted < floors.tasks {
        return Some(format!(
            "not run: {admitted} candidates were admitted where the suite needs {}, and the screen can only delete, so no screen call was paid for a refusal already decided",
            floors.tasks
        ));
    }
    let rate = if candidates == 0 {
        0.0
    } else {
        admitted as f64 / candidates as f64
    };
    (rate < floors.admission_rate).then(|| {
        format!(
            "not run: {admitted} of {candidates} candidates were admitted, under the admission floor of {:.0}%, so no screen call was paid for a refusal already decided",
            floors.admission_rate * 100.0
        )
    })
}

/// The answer-leak rejections, as found at generation time.
fn leaks(rejections: &[Rejection]) -> Vec<Value> {
    rejections
        .iter()
        .filter(|r| r.rule == "answer-leak")
        .map(|r| json!({"candidate": r.candidate, "detail": r.detail}))
        .collect()
}

/// The options a suite cannot be generated with; the screen's runner when
/// the null screen is on.
fn check_options<'a>(
    opts: &GenerateOptions,
    judge: Option<&dyn ModelClient>,
    screen_runner: Option<&'a dyn ModelClient>,
) -> anyhow::Result<Option<&'a dyn ModelClient>> {
    anyhow::ensure!(opts.n_tasks > 0, "a suite needs at least one task");
    anyhow::ensure!(
        !opts.writes || opts.access == fitness_shared::record::AccessMode::Sandbox,
        "a read-only run never writes: writes at generation need --sandbox"
    );
    anyhow::ensure!(
        opts.overgen_factor.is_finite() && opts.overgen_factor >= 1.0,
        "the over-generation factor must be >= 1 (got {})",
        opts.overgen_factor
    );
    let screen_runner = match (opts.screen, screen_runner) {
        (true, None) => {
            anyhow::bail!("the null screen was asked for but no runner model was given")
        }
        (true, Some(r)) => Some(r),
        (false, _) => None,
    };
    if opts.generator.needs_judge() && judge.is_none() {
        anyhow::bail!("{} needs a judge model", opts.generator);
    }
    Ok(screen_runner)
}

/// The suite's config: what it was generated with, hashed with its tasks.
fn suite_config(
    opts: &GenerateOptions,
    want: usize,
    screen_runner: Option<&dyn ModelClient>,
    judge: Option<&dyn ModelClient>,
) -> Map<String, Value> {
    let mut config = Map::new();
    config.insert("generator".into(), json!(opts.generator.as_str()));
    config.insert("n_tasks".into(), json!(opts.n_tasks));
    config.insert("overgen_factor".into(), json!(opts.overgen_factor));
    config.insert("candidates_asked".into(), json!(want));
    config.insert("credential".into(), json!(opts.credential));
    config.insert("access".into(), json!(opts.access));
    config.insert("writes".into(), json!(opts.writes));
    config.insert("id_prefix".into(), json!(opts.id_prefix));
    config.insert("null_screen".into(), json!(screen_runner.is_some()));
    if let Some(r) = screen_runner {
        config.insert("screen_runner".into(), json!(r.id().to_string()));
    }
    if let Some(j) = judge {
        config.insert("judge".into(), json!(j.id().to_string()));
    }
    // The mix trimming aims at changes which tasks are kept: hashed too.
    if let Some(aim) = opts.generator.aimed_mix() {
        config.insert("aimed_mix".into(), json!(aim));
    }
    // The operator's hints change what is generated: hashed with it.
    if !opts.hints.is_empty() {
        config.insert("operator_hints".into(), json!(opts.hints));
    }
    config
}

/// Rejections counted by rule, in the rules' order, each with an example.
fn rejected_by_rule(rejections: &[admission::Rejection]) -> Vec<RuleRejection> {
    let mut by_rule: BTreeMap<&str, u64> = BTreeMap::new();
    for r in rejections {
        *by_rule.entry(r.rule).or_default() += 1;
    }
    admission::RULES
        .iter()
        .filter_map(|rule| {
            by_rule.get(rule).map(|count| RuleRejection {
                rule: (*rule).to_owned(),
                count: *count,
                example: rejections
                    .iter()
                    .find(|r| r.rule == *rule)
                    .map(|r| r.detail.chars().take(240).collect()),
            })
        })
        .collect()
}

/// The kept tasks numbered `<prefix>1, <prefix>2, ...`, and the calls
/// their answers were read from under their new ids.
fn number(
    kept: Vec<Task>,
    prefix: &str,
    observed_by_candidate: &BTreeMap<String, String>,
) -> (Vec<Task>, BTreeMap<String, String>) {
    let mut observed = BTreeMap::new();
    let tasks: Vec<Task> = kept
        .into_iter()
        .enumerate()
        .map(|(i, mut t)| {
            let id = format!("{}{}", prefix, i + 1);
            if let Some(o) = observed_by_candidate.get(&t.id) {
                observed.insert(id.clone(), o.clone());
            }
            t.id = id;
            t
        })
        .collect();
    (tasks, observed)
}

/// What a suite asks of the server (the ledger's `quality`): tasks per
/// tool their solution ends at (else their first expected tool), answers
/// read from a successful call (`from_call`), tasks of more than one call,
/// predicate kinds.
pub fn quality(
    tasks: &[Task],
    tools: &[rmcp::model::Tool],
    from_call: impl Fn(&Task) -> bool,
) -> SuiteQuality {
    let mut per_tool: BTreeMap<String, u64> = BTreeMap::new();
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    for t in tasks {
        let last = t
            .solution
            .last()
            .map(|c| c.tool.clone())
            .or_else(|| t.expected_tools.first().cloned())
            .unwrap_or_default();
        *per_tool.entry(last).or_default() += 1;
        let kind = serde_json::to_value(&t.check)
            .ok()
            .and_then(|v| v.get("kind").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_default();
        *kinds.entry(kind).or_default() += 1;
    }
    let per_shape = fitness_shared::record::TaskShape::ALL
        .into_iter()
        .filter_map(|shape| {
            let count = tasks.iter().filter(|t| t.shape == Some(shape)).count() as u64;
            (count > 0).then(|| KindCount {
                kind: shape.as_str().to_owned(),
                count,
            })
        })
        .collect();
    let mut per_tool: Vec<ToolTasks> = per_tool
        .into_iter()
        .map(|(tool, tasks)| ToolTasks { tool, tasks })
        .collect();
    per_tool.sort_by(|a, b| b.tasks.cmp(&a.tasks).then_with(|| a.tool.cmp(&b.tool)));
    SuiteQuality {
        tasks: tasks.len() as u64,
        tools_listed: tools.len() as u64,
        per_tool,
        answered_from_calls: tasks.iter().filter(|t| from_call(t)).count() as u64,
        multi_call: tasks.iter().filter(|t| t.solution.len() > 1).count() as u64,
        predicate_kinds: kinds
            .into_iter()
            .map(|(kind, count)| KindCount { kind, count })
            .collect(),
        per_shape,
        template_worded: Some(tasks.iter().filter(|t| templated(&t.prompt)).count() as u64),
    }
}

/// Is a prompt worded from a template that echoes a key rather than
/// asked as a person asks? The walk's fallbacks (all open "Using the
/// server's tools, ...": "find the ... of the `members` record whose ...",
/// "find what the server returns ... and quote it"), the older "exactly
/// as the server gives it", or a raw key (`approx_rows`) outside quotes.
pub fn templated(prompt: &str) -> bool {
    static KEY: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|[\s(])[a-z]+_[a-z0-9_]+(?:[\s.,?)]|$)")
            .expect("the key pattern compiles")
    });
    let lower = prompt.to_lowercase();
    let outside_quotes: String = prompt
        .split(['`', '"'])
        .step_by(2)
        .collect::<Vec<_>>()
        .join(" ");
    lower.starts_with("using the server's tools")
        || [
            "exactly as the server gives it",
            "what the server returns",
            "the server report",
            "of the item where",
            "of the record whose",
            "of the item whose",
        ]
        .iter()
        .any(|t| lower.contains(t))
        || KEY.is_match(&outside_quotes)
}

/// Keep `n` of `tasks`, chosen by a seeded shuffle, in their original
/// order. First one task for each tool a task ends at (while there is
/// room), so trimming drops no tool the suite covered for want of room:
/// for each tool the best it has, a question a person would ask that
/// takes two calls or a computation over several records before one that
/// is not composed, and either before one worded from a template
/// ([`templated`]); a tool whose best is templated only within the aim's
/// share of templated tasks, or while fewer than two tools are kept. Then,
/// where the generator aims at a mix ([`AimedMix`]), questions that count,
/// total, rank or compare until its share of them is met; then the other
/// composed questions; then the others a person would ask; last the
/// templated ones. Each pass goes in shuffled order.
pub fn trim(tasks: Vec<Task>, n: usize, seed: u64, aim: Option<&AimedMix>) -> Vec<Task> {
    use fitness_shared::record::TaskShape;
    if tasks.len() <= n {
        return tasks;
    }
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7472_696d); // "trim"
    order.shuffle(&mut rng);
    let last_tool = |t: &Task| t.solution.last().map(|c| c.tool.clone());
    let composed = |t: &Task| t.shape.is_some_and(TaskShape::composed);
    let computes = |t: &Task| t.shape.is_some_and(TaskShape::computes);
    let asked = |t: &Task| !templated(&t.prompt);
    // Lower is better: asked and composed, asked, templated.
    let rank = |t: &Task| match (asked(t), composed(t)) {
        (true, true) => 0,
        (true, false) => 1,
        (false, _) => 2,
    };
    let mut keep: BTreeSet<usize> = BTreeSet::new();
    let mut best: BTreeMap<Option<String>, usize> = BTreeMap::new();
    for &i in &order {
        let slot = best.entry(last_tool(&tasks[i])).or_insert(i);
        if rank(&tasks[i]) < rank(&tasks[*slot]) {
            *slot = i;
        }
    }
    // The tools in the shuffled order of their first task, so which tools
    // fit when there is less room than tools is the seed's choice. A tool
    // whose best is worded from a template is kept for its own sake only
    // within the aim's share of templated tasks, or while fewer than two
    // tools are covered; otherwise it waits for the last pass.
    let templated_budget = aim.map_or(n, |a| (a.templated_at_most * n as f64).floor() as usize);
    let mut templated_kept = 0;
    let mut seen: BTreeSet<Option<String>> = BTreeSet::new();
    for &i in &order {
        let tool = last_tool(&tasks[i]);
        if keep.len() >= n || seen.contains(&tool) {
            continue;
        }
        let b = best[&tool];
        if !asked(&tasks[b]) {
            if templated_kept >= templated_budget && seen.len() >= 2 {
                continue;
            }
            templated_kept += 1;
        }
        seen.insert(tool);
        keep.insert(b);
    }
    let computed_quota = aim.map_or(0, |a| a.computed_of(n));
    let fill = |keep: &mut BTreeSet<usize>, takes: &dyn Fn(&Task) -> bool, up_to: usize| {
        for &i in &order {
            if keep.len() >= n.min(up_to) {
                break;
            }
            if !keep.contains(&i) && takes(&tasks[i]) {
                keep.insert(i);
            }
        }
    };
    // The computing questions, until the aim's share of them is met.
    let have = keep.iter().filter(|&&i| computes(&tasks[i])).count();
    let room = keep.len() + computed_quota.saturating_sub(have);
    fill(&mut keep, &|t| asked(t) && computes(t), room);
    fill(&mut keep, &|t| asked(t) && composed(t), n);
    fill(&mut keep, &asked, n);
    fill(&mut keep, &|_| true, n);
    tasks
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, t)| t)
        .collect()
}
