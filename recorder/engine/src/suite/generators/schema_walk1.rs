//! `schema-walk/1`: the offline generator, zero model spend.
//!
//! It calls the server's callable tools with schema-valid arguments from a
//! seeded RNG and turns each real response into a task whose answer key is a
//! salient token of that response.
//!
//! * **Callable** ([`super::walk::callable_tools`]): none that may write
//!   in a read-only run ([`crate::access::may_write`]); in a sandbox whose
//!   generation may write, not destructive (see [`crate::suite::destructive`])
//!   so that non-destructive writers (e.g. `create_entities` declared
//!   `destructiveHint: false`) add state the read tools can then report.
//!   Never `openWorldHint: true` (such a tool reaches beyond the server, e.g.
//!   the network, so its answer is neither the server's nor reproducible).
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

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;
use std::time::Duration;

use futures::future::LocalBoxFuture;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use super::seam::{Candidates, GenerationInput, Generator};
use super::walk::{
    Called, Taken, WalkOutcome, WalkStats, call, call_counted, callable_tools, drop_unsatisfiable,
    harvest, harvest_args, salient,
};
use crate::model::types::PlannedCall;
use crate::suite::schema_args::{Limits, valid_arguments_within};
use crate::suite::task::{Candidate, Predicate, Task};

/// `schema-walk/1`.
pub struct SchemaWalk1;

impl Generator for SchemaWalk1 {
    fn config(&self, _input: &GenerationInput<'_>) -> Map<String, Value> {
        let mut config = Map::new();
        config.insert("walk".into(), WalkConfig::default().to_json());
        config
    }

    fn propose<'a>(
        &'a self,
        input: &'a GenerationInput<'a>,
    ) -> LocalBoxFuture<'a, anyhow::Result<Candidates>> {
        Box::pin(async move {
            Ok(Candidates::walked(
                walk(input, &WalkConfig::default()).await,
            ))
        })
    }
}

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
        origin: None,
        kind: Default::default(),
        state_check: None,
        shape: None,
    };
    Candidate::new(id, Ok(task))
}

/// Walk the server; `input.want` candidates at most.
pub async fn walk(input: &GenerationInput<'_>, config: &WalkConfig) -> WalkOutcome {
    let mut stats = WalkStats::default();
    let callable = callable_tools(&input.surface(), &mut stats);
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
        holdings: None,
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
                if self.sample(&name, args, &args_json).await.is_break() {
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
        name: &str,
        args: Map<String, Value>,
        args_json: &str,
    ) -> ControlFlow<()> {
        let session = self.input.session;
        let timeout = self.config.call_timeout;
        self.stats.calls += 1;
        if self.input.writers.contains(name) {
            self.stats.state_writes += 1;
        }
        let text = match call_counted(session, name, &args, timeout, &mut self.stats).await {
            Taken::Text(t) => t,
            Taken::Skip(_) => return ControlFlow::Continue(()),
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
