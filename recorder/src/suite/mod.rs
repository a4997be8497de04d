//! Task suites (R-GEN): versioned generators, admission, the generation-time
//! null screen, deterministic trimming and the suite hash.
//!
//! The fates of candidates are counted apart: rejected by a named rule
//! (`admission`), deleted by the null screen, trimmed as surplus. `admitted`
//! in the ledger counts every candidate that passed the rules, so the
//! admission rate (admitted / candidates) counts neither the null-screened
//! nor the trimmed surplus as failures.

pub mod admission;
pub mod destructive;
pub mod judge_synth;
pub mod predicate;
pub mod schema_args;
pub mod schema_walk;
pub mod schema_walk2;
pub mod task;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::str::FromStr;

use fitness_shared::record::{
    CredentialContext, KindCount, NullScreenCount, RuleRejection, SuiteLedger, SuiteQuality,
    ToolTasks,
};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub use admission::{Candidate, Rejection};
use task::Task;

use crate::mcp::connect::Session;
use crate::mcp::tap::Tap;
use crate::model::agent;
use crate::model::types::{
    ChatRequest, ChatResponse, ContentBlock, Message, ModelClient, Role, Usage, text_of,
};

/// A generator and its version: the chip on every row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GeneratorId {
    SchemaWalk1,
    SchemaWalk2,
    JudgeSynth1,
}

impl GeneratorId {
    pub fn as_str(self) -> &'static str {
        match self {
            GeneratorId::SchemaWalk1 => "schema-walk/1",
            GeneratorId::SchemaWalk2 => "schema-walk/2",
            GeneratorId::JudgeSynth1 => "judge-synth/1",
        }
    }

    /// A rehearsal generator: its prompts name the tool and dictate the
    /// arguments, so a score on its suite measures relaying a call.
    pub fn dictates_calls(self) -> bool {
        fitness_shared::generators::dictates_calls(self.as_str())
    }
}

impl FromStr for GeneratorId {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<Self> {
        match s {
            "schema-walk/1" => Ok(GeneratorId::SchemaWalk1),
            "schema-walk/2" => Ok(GeneratorId::SchemaWalk2),
            "judge-synth/1" => Ok(GeneratorId::JudgeSynth1),
            other => anyhow::bail!(
                "unknown generator {other:?}: use schema-walk/2 (offline, zero spend, tasks that need the server's work), judge-synth/1 (a judge model writes the tasks) or schema-walk/1 (rehearsal: the tasks dictate the calls)"
            ),
        }
    }
}

impl fmt::Display for GeneratorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to generate.
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    pub generator: GeneratorId,
    pub n_tasks: usize,
    /// Candidates asked for = ceil(n_tasks × factor); registered. Default 2.0.
    pub overgen_factor: f64,
    pub seed: u64,
    pub credential: CredentialContext,
    /// Run the generation-time null screen (needs a screen runner).
    pub screen: bool,
    /// `t` for the suite, `x1-` for extension batch 1.
    pub id_prefix: String,
    /// Prompts of earlier tasks: a repeat is a `duplicate`.
    pub exclude_prompts: Vec<String>,
    /// Values the operator gave the server (absolute paths on a stdio
    /// server's command line): schema-walk/2's first handles.
    pub seed_handles: Vec<String>,
}

impl GenerateOptions {
    pub fn new(generator: GeneratorId, n_tasks: usize, seed: u64) -> Self {
        GenerateOptions {
            generator,
            n_tasks,
            overgen_factor: 2.0,
            seed,
            credential: CredentialContext::Anonymous,
            screen: false,
            id_prefix: "t".into(),
            exclude_prompts: Vec::new(),
            seed_handles: Vec::new(),
        }
    }
}

/// The suite that will be driven, and its hash.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Suite {
    pub generator: String,
    pub config: Value,
    pub seed: u64,
    pub tasks: Vec<Task>,
    pub hash: String,
}

/// Everything generation produced and counted.
#[derive(Debug, Clone, Serialize)]
pub struct GenerationReport {
    pub suite: Suite,
    pub ledger: SuiteLedger,
    pub rejections: Vec<Rejection>,
    /// Candidate ids the null screen deleted.
    pub screened_out: Vec<String>,
    /// Screen calls that failed (their candidates were kept).
    pub screen_errors: u64,
    pub spend: Vec<PhaseSpend>,
    pub destructiveness: Vec<ToolDestructiveness>,
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
    pub walk: Option<schema_walk::WalkStats>,
}

/// Model spend of one phase.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpend {
    /// `synthesis`, `screen` or `destructiveness`.
    pub phase: String,
    pub model: String,
    pub calls: u64,
    pub calls_without_usage: u64,
    pub calls_that_threw: u64,
    pub usage: Usage,
}

impl PhaseSpend {
    pub fn new(phase: &str, model: &str) -> Self {
        PhaseSpend {
            phase: phase.into(),
            model: model.into(),
            calls: 0,
            calls_without_usage: 0,
            calls_that_threw: 0,
            usage: Usage::default(),
        }
    }

    /// One call that returned.
    pub fn count(&mut self, usage: Option<&Usage>) {
        self.calls += 1;
        match usage {
            Some(u) => self.usage.add(u),
            None => self.calls_without_usage += 1,
        }
    }

    /// One call that threw (its usage is unknown).
    pub fn threw(&mut self) {
        self.calls += 1;
        self.calls_that_threw += 1;
    }
}

/// One tool's destructiveness, declared and inferred side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDestructiveness {
    pub tool: String,
    pub declared: Option<bool>,
    pub inferred: bool,
    pub disagreement: bool,
    pub evidence: String,
}

/// A tool as a judge model is shown it: its name, description and input
/// schema.
fn tool_for_judge(t: &rmcp::model::Tool) -> Value {
    json!({
        "name": t.name,
        "description": t.description,
        "input_schema": Value::Object((*t.input_schema).clone()),
    })
}

/// sha256 (bare lowercase hex, as the records' `suite_hash`) of the RFC 8785
/// canonical JSON of `{"generator_config", "seed", "tasks"}`. The seed is
/// written as a decimal string: a u64 above 2^53 has no exact JSON number.
pub fn suite_hash(generator_config: &Value, seed: u64, tasks: &[Task]) -> String {
    let doc = json!({
        "generator_config": generator_config,
        "seed": seed.to_string(),
        "tasks": tasks,
    });
    match fitness_shared::integrity::canonical_json(&doc) {
        Ok(bytes) => fitness_shared::integrity::sha256_hex(&bytes),
        // Only an integer beyond 2^53 inside a task can get here; hash the
        // plain serialisation rather than refuse (still deterministic).
        Err(_) => fitness_shared::integrity::sha256_hex(doc.to_string().as_bytes()),
    }
}

/// One verification call of a judge's solution, at most.
const VERIFY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

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
    let mut config = suite_config(opts, want, screen_runner, judge);
    let input = GenerationInput {
        session,
        tools,
        labels: &labels,
        instructions,
        opts,
        want,
    };
    let proposed = candidates(&input, judge, &mut config, agent_tape).await?;
    spend.extend(proposed.synthesis);
    let n_candidates = proposed.candidates.len() as u64;
    let candidate_ids: Vec<String> = proposed.candidates.iter().map(|c| c.id.clone()).collect();
    let (admitted_tasks, rejections) = admit(proposed.candidates, &input);
    let n_admitted = admitted_tasks.len() as u64;
    let screened = screen(admitted_tasks, screen_runner, agent_tape).await;
    spend.extend(screened.spend);
    let degenerate = screen_runner.is_some() && n_admitted > 0 && screened.kept.is_empty();

    // Deterministic trimming by seed; the kept tasks keep candidate order.
    let trimmed = screened.kept.len().saturating_sub(opts.n_tasks);
    let kept = trim(screened.kept, opts.n_tasks, opts.seed);
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
        limitation: None,
        quality: Some(quality(&tasks, tools, |t| observed.contains_key(&t.id))),
        judge_calls: proposed.judge_calls,
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
        screen_errors: screened.errors,
        spend,
        destructiveness: labels,
        degenerate,
        observed,
        walk: proposed.walk,
    })
}

/// What candidates are made from: the live server, its tools with their
/// destructiveness labels, its instructions, the options, and how many
/// candidates are wanted.
pub struct GenerationInput<'a> {
    pub session: &'a Session,
    pub tools: &'a [rmcp::model::Tool],
    pub labels: &'a [ToolDestructiveness],
    pub instructions: Option<&'a str>,
    pub opts: &'a GenerateOptions,
    pub want: usize,
}

/// Admission by the named rules; the tools labelled destructive are the
/// ones a task may not call without an owner's key.
fn admit(candidates: Vec<Candidate>, input: &GenerationInput<'_>) -> (Vec<Task>, Vec<Rejection>) {
    let destructive_tools: BTreeSet<String> = input
        .labels
        .iter()
        .filter(|l| destructive::labelled_destructive(l))
        .map(|l| l.tool.clone())
        .collect();
    let ctx = admission::AdmissionContext {
        tools: input.tools,
        instructions: input.instructions,
        credential: input.opts.credential,
        destructive_tools: &destructive_tools,
        exclude_prompts: &input.opts.exclude_prompts,
        answer_rules: input.opts.generator != GeneratorId::SchemaWalk1,
    };
    admission::admit(candidates, &ctx)
}

/// What the null screen left of the admitted candidates.
struct Screened {
    kept: Vec<Task>,
    screened_out: Vec<String>,
    errors: u64,
    /// The ledger's count, when the screen ran.
    count: Option<NullScreenCount>,
    spend: Option<PhaseSpend>,
}

/// The null screen over every admitted candidate, when there is a runner
/// for it; else every candidate is kept.
async fn screen(
    admitted: Vec<Task>,
    runner: Option<&dyn ModelClient>,
    agent_tape: &Tap,
) -> Screened {
    let Some(runner) = runner else {
        return Screened {
            kept: admitted,
            screened_out: Vec::new(),
            errors: 0,
            count: None,
            spend: None,
        };
    };
    let screened = admitted.len() as u64;
    let outcome = null_screen(admitted, runner, agent_tape).await;
    Screened {
        count: Some(NullScreenCount {
            screened,
            dropped: outcome.screened_out.len() as u64,
        }),
        kept: outcome.kept,
        screened_out: outcome.screened_out,
        errors: outcome.errors,
        spend: Some(outcome.spend),
    }
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
    if opts.generator == GeneratorId::JudgeSynth1 && judge.is_none() {
        anyhow::bail!("judge-synth/1 needs a judge model");
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
    config.insert("id_prefix".into(), json!(opts.id_prefix));
    config.insert("null_screen".into(), json!(screen_runner.is_some()));
    if let Some(r) = screen_runner {
        config.insert("screen_runner".into(), json!(r.id().to_string()));
    }
    if let Some(j) = judge {
        config.insert("judge".into(), json!(j.id().to_string()));
    }
    config
}

/// What a generator proposed, before admission.
struct Candidates {
    candidates: Vec<admission::Candidate>,
    /// Where each candidate's answer was read from, by candidate id.
    observed: BTreeMap<String, String>,
    walk: Option<schema_walk::WalkStats>,
    judge_calls: Option<fitness_shared::record::JudgeCalls>,
    /// The judge's synthesis spend.
    synthesis: Option<PhaseSpend>,
}

impl Candidates {
    /// What a schema walk proposed.
    fn walked(walk: schema_walk::WalkOutcome) -> Candidates {
        Candidates {
            candidates: walk.candidates,
            observed: walk.observed,
            walk: Some(walk.stats),
            judge_calls: None,
            synthesis: None,
        }
    }
}

/// `want` candidates from the suite's generator; what it was run with goes
/// into `config`.
async fn candidates(
    input: &GenerationInput<'_>,
    judge: Option<&dyn ModelClient>,
    config: &mut Map<String, Value>,
    agent_tape: &Tap,
) -> anyhow::Result<Candidates> {
    match input.opts.generator {
        GeneratorId::SchemaWalk1 => {
            let walk_config = schema_walk::WalkConfig::default();
            config.insert("walk".into(), walk_config.to_json());
            Ok(Candidates::walked(
                schema_walk::walk(input, &walk_config).await,
            ))
        }
        GeneratorId::SchemaWalk2 => {
            let walk_config = schema_walk2::WalkConfig2::default();
            config.insert(
                "walk".into(),
                walk_config.to_json(schema_walk2::max_per_tool(input.want)),
            );
            config.insert("seed_handles".into(), json!(input.opts.seed_handles.len()));
            Ok(Candidates::walked(
                schema_walk2::walk(input, &walk_config).await,
            ))
        }
        GeneratorId::JudgeSynth1 => {
            let Some(judge) = judge else {
                anyhow::bail!("judge-synth/1 needs a judge model");
            };
            let judge_config = judge_synth::JudgeConfig::default();
            config.insert("judge_synth".into(), judge_config.to_json());
            Ok(synthesized(input, judge, &judge_config, agent_tape).await)
        }
    }
}

/// The judge's candidates, each with its solution calls verified against
/// the server.
async fn synthesized(
    input: &GenerationInput<'_>,
    judge: &dyn ModelClient,
    judge_config: &judge_synth::JudgeConfig,
    agent_tape: &Tap,
) -> Candidates {
    let synthesis = judge_synth::synthesize(
        judge,
        input.tools,
        input.instructions,
        input.want,
        input.opts,
        judge_config,
        agent_tape,
    )
    .await;
    let mut candidates = synthesis.candidates;
    // The tools the walk would call: not destructive, not
    // open-world, not one whose name says it returns secrets.
    let callable: BTreeSet<String> = schema_walk::callable_tools(
        input.tools,
        input.labels,
        &mut schema_walk::WalkStats::default(),
    )
    .iter()
    .map(|t| t.name.to_string())
    .collect();
    judge_synth::verify(&mut candidates, input.session, &callable, VERIFY_TIMEOUT).await;
    let observed = candidates
        .iter()
        .filter_map(|c| Some((c.id.clone(), c.source.clone()?)))
        .collect();
    Candidates {
        candidates,
        observed,
        walk: None,
        judge_calls: Some(synthesis.calls),
        synthesis: Some(synthesis.phase),
    }
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
    }
}

/// Keep `n` of `tasks`, chosen by a seeded shuffle, in their original order.
pub fn trim(tasks: Vec<Task>, n: usize, seed: u64) -> Vec<Task> {
    if tasks.len() <= n {
        return tasks;
    }
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x7472_696d); // "trim"
    order.shuffle(&mut rng);
    let keep: BTreeSet<usize> = order.into_iter().take(n).collect();
    tasks
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keep.contains(i))
        .map(|(_, t)| t)
        .collect()
}

/// What the null screen did.
#[derive(Debug, Clone)]
pub struct ScreenOutcome {
    /// Candidates the runner could not answer without tools, or whose screen
    /// call failed.
    pub kept: Vec<Task>,
    /// Ids of the candidates the runner answered with no tools (deleted).
    pub screened_out: Vec<String>,
    /// Screen calls that failed (their candidates are kept).
    pub errors: u64,
    pub spend: PhaseSpend,
}

/// The generation-time null screen: the runner answers each task with no
/// tools, graded by the task's own predicate; answered tasks are deleted.
/// Every exchange is written to `tape` (`<id>::screen`), failures as
/// `llm.error` events.
pub async fn null_screen(tasks: Vec<Task>, runner: &dyn ModelClient, tape: &Tap) -> ScreenOutcome {
    let mut out = ScreenOutcome {
        kept: Vec::new(),
        screened_out: Vec::new(),
        errors: 0,
        spend: PhaseSpend::new("screen", &runner.id().to_string()),
    };
    for task in tasks {
        match screen_one(runner, &task, tape).await {
            Ok((answered, usage)) => {
                out.spend.count(usage.as_ref());
                if answered {
                    out.screened_out.push(task.id.clone());
                } else {
                    out.kept.push(task);
                }
            }
            Err(()) => {
                out.spend.threw();
                out.errors += 1;
                out.kept.push(task);
            }
        }
    }
    out
}

const SCREEN_SYSTEM: &str = "You have no tools and no access to any server, file or network. \
Answer the user's request as best you can from what you already know, in one short reply.";

/// Ask the runner the task with no tools; `Ok((answered, usage))`, or
/// `Err(())` when the call failed.
async fn screen_one(
    runner: &dyn ModelClient,
    task: &Task,
    tape: &Tap,
) -> Result<(bool, Option<Usage>), ()> {
    let request = ChatRequest {
        system: Some(SCREEN_SYSTEM.into()),
        messages: vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: task.prompt.clone(),
            }],
        }],
        tools: vec![],
        max_tokens: 1024,
        temperature: Some(0.0),
        corr_id: Some(format!("{}::screen", task.id)),
        json_object: false,
    };
    match taped_call(runner, &request, tape, "screen").await {
        Ok(resp) => Ok((task.check.check(&text_of(&resp.content)), resp.usage)),
        Err(_) => Err(()),
    }
}

/// One model call of generation, on the agent tape: the user turn, then the
/// assistant turn, or an `llm.error` event (with the phase) when it failed.
/// The corr_id is the request's.
pub async fn taped_call(
    client: &dyn ModelClient,
    request: &ChatRequest,
    tape: &Tap,
    phase: &str,
) -> Result<ChatResponse, crate::model::types::LlmError> {
    let corr = request.corr_id.clone().unwrap_or_default();
    let user_text = request
        .messages
        .last()
        .map(|m| text_of(&m.content))
        .unwrap_or_default();
    tape.line(&agent::turn_line(
        "user",
        &[ContentBlock::Text { text: user_text }],
        None,
        None,
        None,
        &corr,
    ));
    let result = client.complete(request).await;
    match &result {
        Ok(resp) => tape.line(&agent::assistant_line(resp, &corr)),
        Err(e) => tape.event(
            "llm.error",
            json!({
                "class": e.class,
                "status": e.status,
                "message": e.message,
                "attempts": e.attempts,
                "phase": phase,
            }),
            Some(&corr),
        ),
    }
    result
}
