//! `schema-walk/1`: the offline generator, zero model spend.
//!
//! It calls the server's callable tools with schema-valid arguments from a
//! seeded RNG and turns each real response into a task whose answer key is a
//! salient token of that response.
//!
//! * **Callable**: not destructive (see [`super::destructive`]: declared,
//!   else the documented rule set) and not `openWorldHint: true` (such a tool
//!   reaches beyond the server, e.g. the network, so its answer is neither
//!   the server's nor reproducible). Non-destructive writers (e.g.
//!   `create_entities` declared `destructiveHint: false`) are callable: their
//!   calls add state the read tools can then report.
//! * **Rounds**: round 0 draws arguments from the schema alone; later rounds
//!   also put strings harvested from earlier responses into string
//!   arguments (so a search tool is asked for something that exists). At
//!   most `samples_per_tool` new argument sets per tool per round, no
//!   argument set twice, until enough candidates or a round adds none.
//! * **Never called**: tools whose name has a word saying they return the
//!   environment or credentials (`env`, `secret`, `token`, `password`, …): the
//!   wire tape would carry what they return.
//! * **Skipped (counted)**: calls that time out (the tool is then dropped),
//!   error results, empty results (no text, or JSON with no non-empty leaf),
//!   responses holding anything the redaction policy replaces (a value the
//!   operator gave, a secret-looking environment variable, a token),
//!   responses with no salient token, and responses whose token does not
//!   come back when the same call is replayed (unstable).
//! * **Salient token**: the first word (4–40 characters, a letter in it, not
//!   a JSON key of the response, not a common word, not secret-looking) of
//!   the response text that occurs neither in the prompt (which holds the
//!   arguments) nor in the server instructions or any tool description;
//!   when there is none, the last number of the response that is not in the
//!   prompt or descriptions and is not 0 or 1. Words get a case-insensitive
//!   `substring` check, numbers a `number_within` (exact for integers).
//! * **Prompt**: ``Use the `TOOL` tool with arguments {JSON} and report the
//!   result.`` (the sim agent parses the backticked tool and the first JSON
//!   object).

mod call;
mod callable;
mod harvest;
mod salient;

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;
use std::time::Duration;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rmcp::model::Tool;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::GenerationInput;
use super::admission::Candidate;
use super::schema_args::{Limits, Unsatisfiable, valid_arguments_within};
use super::task::{Predicate, Task};
use crate::model::types::PlannedCall;
pub use call::result_text;
pub(super) use call::{Called, Taken, call, call_counted};
use callable::read_only;
pub(super) use callable::{callable_tools, exposes_secrets};
use harvest::{harvest, harvest_args};
pub use salient::salient;
pub(super) use salient::{STOPWORDS, VOLATILE};

/// The walk's registered parameters (part of the suite's generator config).
#[derive(Debug, Clone)]
pub struct WalkConfig {
    pub samples_per_tool: usize,
    pub call_timeout: Duration,
    pub max_calls: usize,
    pub max_rounds: usize,
    /// Caps on each generated argument set (its wall time is also cut to
    /// `call_timeout`).
    pub argument_limits: Limits,
}

impl Default for WalkConfig {
    fn default() -> Self {
        WalkConfig {
            samples_per_tool: 3,
            call_timeout: Duration::from_secs(5),
            max_calls: 400,
            max_rounds: 6,
            argument_limits: Limits::default(),
        }
    }
}

impl WalkConfig {
    /// The argument caps in force: the time budget is at most a call's.
    pub fn limits(&self) -> Limits {
        self.argument_limits.within(self.call_timeout)
    }

    pub fn to_json(&self) -> Value {
        json!({
            "samples_per_tool": self.samples_per_tool,
            "call_timeout_ms": self.call_timeout.as_millis() as u64,
            "max_calls": self.max_calls,
            "max_rounds": self.max_rounds,
            "argument_limits": self.limits().to_json(),
            "prompt_template": PROMPT_TEMPLATE,
        })
    }
}

const PROMPT_TEMPLATE: &str =
    "Use the `{tool}` tool with arguments {arguments} and report the result.";

/// What the walk did, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WalkStats {
    pub callable_tools: Vec<String>,
    /// Tools not called, with why.
    pub not_called: Vec<Value>,
    /// Tools dropped because no argument set valid under their input
    /// schema fits the argument caps (or exists), with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsatisfiable: Vec<Value>,
    pub calls: u64,
    pub timeouts: u64,
    pub call_failures: u64,
    pub error_results: u64,
    pub empty_results: u64,
    pub sensitive_results: u64,
    pub no_salient_answer: u64,
    pub unstable: u64,
    pub rounds: u64,
    /// Calls to tools not declared read-only (non-destructive writers): the
    /// tasks may rely on state these calls created (server-memory's do).
    pub state_writes: u64,
}

/// What was drawn for a tool; when no argument set valid under its schema
/// fits the caps, `None`, and the tool is dropped (`dead`) and counted.
pub(super) fn drop_unsatisfiable<T>(
    drawn: Result<T, Unsatisfiable>,
    tool: &str,
    stats: &mut WalkStats,
    dead: &mut HashSet<String>,
) -> Option<T> {
    match drawn {
        Ok(args) => Some(args),
        Err(why) => {
            stats
                .unsatisfiable
                .push(json!({"tool": tool, "why": format!(
                    "no argument set valid under its input schema within the caps: {why}"
                )}));
            dead.insert(tool.to_owned());
            None
        }
    }
}

/// Candidates, the responses their answers came from, and the counts.
pub struct WalkOutcome {
    pub candidates: Vec<Candidate>,
    /// Candidate id → the response text.
    pub observed: BTreeMap<String, String>,
    pub stats: WalkStats,
}
/// A single-call candidate whose answer came from the real response.
fn single_call(
    id: String,
    tool: &str,
    prompt: String,
    args: Map<String, Value>,
    answer: String,
    check: Predicate,
) -> Candidate {
    let task = Task {
        id: id.clone(),
        prompt,
        expected_tools: vec![tool.to_owned()],
        rationale: Some(format!(
            "schema-walk/1: `{answer}` is in the real response of `{tool}` to these arguments (stable on replay)"
        )),
        answer_key: answer,
        check,
        destructive: false,
        solution: vec![PlannedCall {
            tool: tool.to_owned(),
            arguments: args,
        }],
        handles: vec![],
    };
    Candidate::new(id, Ok(task))
}

/// Walk the server; `input.want` candidates at most.
pub async fn walk(input: &GenerationInput<'_>, config: &WalkConfig) -> WalkOutcome {
    let mut stats = WalkStats::default();
    let callable = callable_tools(input.tools, input.labels, &mut stats);
    let mut walker = Walker::new(input, config, stats);
    for round in 0..config.max_rounds {
        walker.stats.rounds += 1;
        let before = walker.candidates.len();
        let Some(new_calls) = walker.round(&callable, round).await else {
            break;
        };
        if new_calls == 0
            || (round > 0 && walker.candidates.len() == before && walker.harvested.is_empty())
        {
            break;
        }
    }
    WalkOutcome {
        candidates: walker.candidates,
        observed: walker.observed,
        stats: walker.stats,
    }
}

/// The walk's state from round to round: what it has called, harvested
/// and kept.
struct Walker<'a> {
    input: &'a GenerationInput<'a>,
    config: &'a WalkConfig,
    limits: Limits,
    /// The instructions and tool descriptions: an answer found there needs
    /// no call.
    forbidden: String,
    policy: std::sync::Arc<fitness_shared::redact::Redactor>,
    rng: ChaCha8Rng,
    stats: WalkStats,
    harvested: Vec<String>,
    /// `tool NUL arguments` of every call made.
    tried: HashSet<String>,
    /// Tools dropped: no valid arguments, or they stopped answering.
    dead: HashSet<String>,
    candidates: Vec<Candidate>,
    observed: BTreeMap<String, String>,
}

impl<'a> Walker<'a> {
    fn new(input: &'a GenerationInput<'a>, config: &'a WalkConfig, stats: WalkStats) -> Self {
        let mut forbidden = input.instructions.unwrap_or("").to_owned();
        for t in input.tools {
            forbidden.push('\n');
            forbidden.push_str(t.description.as_deref().unwrap_or(""));
        }
        Walker {
            input,
            config,
            limits: config.limits(),
            forbidden,
            policy: crate::secrets::policy(),
            rng: ChaCha8Rng::seed_from_u64(input.opts.seed),
            stats,
            harvested: Vec::new(),
            tried: HashSet::new(),
            dead: HashSet::new(),
            candidates: Vec::new(),
            observed: BTreeMap::new(),
        }
    }

    /// One round over the callable tools: the new calls it made, or `None`
    /// when the walk has its candidates or has spent its calls.
    async fn round(&mut self, callable: &[&Tool], round: usize) -> Option<usize> {
        let mut new_calls = 0;
        for tool in callable {
            let name = tool.name.to_string();
            if self.dead.contains(&name) {
                continue;
            }
            let schema = Value::Object((*tool.input_schema).clone());
            let has_args = schema
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            let samples = if has_args {
                self.config.samples_per_tool
            } else {
                1
            };
            for _ in 0..samples {
                if self.candidates.len() >= self.input.want
                    || self.stats.calls as usize >= self.config.max_calls
                {
                    return None;
                }
                let Some(args) = self.draw(&schema, round, &name) else {
                    break;
                };
                let args_json = Value::Object(args.clone()).to_string();
                if !self.tried.insert(format!("{name}\u{0}{args_json}")) {
                    continue;
                }
                new_calls += 1;
                if self.sample(tool, &name, args, &args_json).await.is_break() {
                    break;
                }
            }
        }
        Some(new_calls)
    }

    /// Arguments for one call: harvested strings after round 0, else the
    /// schema alone; `None` (the tool is dropped) when none fit the caps.
    fn draw(&mut self, schema: &Value, round: usize, name: &str) -> Option<Map<String, Value>> {
        let drawn = if round > 0 && !self.harvested.is_empty() {
            harvest_args(schema, &mut self.rng, &self.harvested, &self.limits)
        } else {
            valid_arguments_within(schema, &mut self.rng, &self.limits)
        };
        drop_unsatisfiable(drawn, name, &mut self.stats, &mut self.dead)
    }

    /// Call a tool and keep a candidate when its result has a salient
    /// answer that comes back on replay; `Break` when the tool is dead.
    async fn sample(
        &mut self,
        tool: &Tool,
        name: &str,
        args: Map<String, Value>,
        args_json: &str,
    ) -> ControlFlow<()> {
        let session = self.input.session;
        let timeout = self.config.call_timeout;
        self.stats.calls += 1;
        if !read_only(tool) {
            self.stats.state_writes += 1;
        }
        let text = match call_counted(session, name, &args, timeout, &mut self.stats).await {
            Taken::Text(t) => t,
            Taken::Skip => return ControlFlow::Continue(()),
            Taken::Dead => {
                self.dead.insert(name.to_owned());
                return ControlFlow::Break(());
            }
        };
        if self.policy.finds(&text) {
            self.stats.sensitive_results += 1;
            return ControlFlow::Continue(());
        }
        harvest(&text, &mut self.harvested);
        let prompt = PROMPT_TEMPLATE
            .replace("{tool}", name)
            .replace("{arguments}", args_json);
        let Some((answer, check)) = salient(&text, &prompt, &self.forbidden) else {
            self.stats.no_salient_answer += 1;
            return ControlFlow::Continue(());
        };
        // Replay: the answer must come back from the same call.
        self.stats.calls += 1;
        match call(session, name, &args, timeout).await {
            Called::Text(again) if check.check(&again) => {}
            _ => {
                self.stats.unstable += 1;
                return ControlFlow::Continue(());
            }
        }
        let id = format!(
            "{}c{}",
            self.input.opts.id_prefix,
            self.candidates.len() + 1
        );
        self.observed.insert(id.clone(), text);
        self.candidates
            .push(single_call(id, name, prompt, args, answer, check));
        ControlFlow::Continue(())
    }
}
