//! `schema-walk/2`: the offline generator whose tasks need the server's
//! work. Zero model spend.
//!
//! * **Exploration** ([`explore`]): every callable tool (as in
//!   `schema-walk/1`: not destructive, not open-world, not a secrets tool) is
//!   called with schema-valid arguments, each value of its first enumerated
//!   argument in turn; later rounds put handles harvested from earlier
//!   results (names, paths, ids, revisions; a listed entry joined onto the
//!   listed path) into its string arguments. The operator's own values seed
//!   the handles: the absolute paths on a stdio server's command line.
//! * **Only successful calls count**: an `isError` result, a result that
//!   reads as an error (`ENOENT`, `not found`, a traceback...), or an empty
//!   one is counted and never becomes a task.
//! * **Facts** ([`text`]): a value with the label its result gives it (a
//!   JSON field, a `Label: value` line, `label 150ms` prose). The answer is
//!   the value; the predicate checks that value, never an incidental first
//!   number. Values that are clock readings, that occur in the arguments,
//!   the instructions or a tool description, or that other calls of the
//!   same tool also return, are passed over.
//! * **Prompts state the goal** ([`spec`]), never the tool or its
//!   arguments: "Using the server's tools, find the humidity for location
//!   `Chicago`." Where
//!   the handle came from another call's result and its record has another
//!   name (a commit's message, a listed entry's name under its root), the
//!   task names the record by that and its solution is the chain of calls.
//! * **Spread**: at most `max_per_tool` candidates end at one tool, or an
//!   equal share where fewer than three tools offer tasks ([`SPREAD`]),
//!   taken round-robin over the tools; the final call of a task never changes
//!   state (a tool not declared read-only may only produce its handles).
//! * **Stable**: the final call is replayed and its answer must come back,
//!   and every call of the task is made again in a fresh server process
//!   (stdio: started again; HTTP: a new session), where the answer must
//!   come back too (`answer-changed` when it does not).
//!
//! Admission then applies the rules `schema-walk/1` never needed:
//! `error-answer`, `answer-derivable` and `check-not-discriminating`.

mod catalogue;
mod composed;
mod config;
mod discover;
mod entries;
mod examples;
mod exploration;
mod explore;
mod fit;
mod follow;
pub(crate) mod kinds;
mod lines;
mod model;
mod setup;
mod spec;
pub mod text;
mod witness;

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use futures::future::LocalBoxFuture;
use rmcp::model::Tool;
use serde_json::{Value, json};

use super::seam::{Candidates, GenerationInput, Generator};
use super::walk::{Called, WalkOutcome, WalkStats, call, callable_tools};
use crate::mcp::connect::Session;
use crate::model::types::PlannedCall;
use crate::suite::compose::prove;
use crate::suite::task::{Candidate, HandleBinding, Origin, Task};
pub use config::WalkConfig2;
use exploration::{Exploration, Observation};
use explore::Explorer;
pub use explore::{Asked, Guide, Proposed};
use fitness_shared::record::DiscoveryMove;
use spec::{Spec, specs_for};

/// `schema-walk/2`.
pub struct SchemaWalk2;

impl Generator for SchemaWalk2 {
    fn config(&self, input: &GenerationInput<'_>) -> serde_json::Map<String, Value> {
        let mut config = serde_json::Map::new();
        config.insert(
            "walk".into(),
            WalkConfig2::default().to_json(max_per_tool(input.want)),
        );
        config.insert("seed_handles".into(), json!(input.opts.seed_handles.len()));
        config.insert("spread".into(), json!(SPREAD));
        config.insert(
            "operator_files".into(),
            json!(input.opts.operator_files.len()),
        );
        config
    }

    fn propose<'a>(
        &'a self,
        input: &'a GenerationInput<'a>,
    ) -> LocalBoxFuture<'a, anyhow::Result<Candidates>> {
        Box::pin(async move {
            Ok(Candidates::walked(
                walk(input, &WalkConfig2::default()).await,
            ))
        })
    }
}

/// Candidates ending at one tool, at most, before the tools that answer
/// are known: a third of those asked for (at least 2), so a suite spreads
/// over three tools or more where there are (the config's `max_per_tool`).
pub fn max_per_tool(want: usize) -> usize {
    want.div_ceil(3).max(2)
}

/// The spread rule, for every walk: [`max_per_tool`], or an equal share of
/// the tools that offer tasks where fewer than three do, so a server with
/// one or two answering tools fills its suite from distinct inputs to them
/// and is never refused for having few tools.
pub const SPREAD: &str = "a third of the candidates asked for (at least 2) end at one tool, or an equal share of the tools that offer tasks where fewer than three do";

/// The cap of [`SPREAD`], for `want` candidates over `answering` tools
/// that offer tasks.
pub fn per_tool_cap(want: usize, answering: usize) -> usize {
    max_per_tool(want).max(want.div_ceil(answering.max(1)))
}

/// Walk the server; `input.want` candidates at most.
pub async fn walk(input: &GenerationInput<'_>, config: &WalkConfig2) -> WalkOutcome {
    walk_guided(input, config, None).await
}

/// Explore the callable tools: discovery first ([`discover`]: the
/// operator's seed calls, what the server says about itself, a catalogue
/// of each query language, broad values for each search), then the walk's
/// rounds with handles harvested from what answered, a `guide` asked before
/// and after them ([`Explorer::walk`]).
async fn explore(
    input: &GenerationInput<'_>,
    callable: &[&Tool],
    config: &WalkConfig2,
    stats: &mut WalkStats,
    guide: Option<&mut dyn Guide>,
) -> Exploration {
    let mut explorer = Explorer::open(input, callable, config, stats).await;
    explorer
        .discover(callable, &input.opts.hints.seed_calls, input.instructions)
        .await;
    explorer.setup(input.tools, callable).await;
    let context = input.opts.hints.context.as_deref();
    explorer.walk(callable, guide, context).await;
    // A step the walk's own calls were told to make first: made, and the
    // tools read again after it.
    if explorer.setup(input.tools, callable).await {
        explorer.rounds(callable, 1).await;
    }
    explorer.catalogue_again(callable).await;
    // What the listings hold, read whole where they can be, while the
    // witnesses still watch: the model's reads are watched too.
    explorer.budget = explorer.budget.max(explorer.stats.calls as usize) + config::MODEL_CALLS;
    explorer.model_listings(callable).await;
    explorer.model_entries(callable).await;
    // An entry's read may itself list records (a file's functions).
    explorer.model_listings(callable).await;
    explorer.counted_otherwise();
    explorer.close().await
}

/// [`walk`], with a guide proposing argument sets the schema alone cannot
/// (see [`Guide`]), candidates spread as [`SPREAD`] says.
pub async fn walk_guided(
    input: &GenerationInput<'_>,
    config: &WalkConfig2,
    guide: Option<&mut dyn Guide>,
) -> WalkOutcome {
    let mut stats = WalkStats::default();
    let callable = callable_tools(&input.surface(), &mut stats);
    let forbidden = known_without_server(input);
    let ex = explore(input, &callable, config, &mut stats, guide).await;
    let by_tool = specs_by_tool(&ex, &forbidden, config.facts_per_call, &mut stats);
    // Questions composed over what the server holds come first; each other
    // tool that offers the walk's own tasks keeps room for two of them, so
    // the suite still covers the server's tools.
    let modelled: BTreeSet<&str> = ex.holdings.kinds.iter().map(|k| k.tool()).collect();
    let others = by_tool
        .iter()
        .filter(|(tool, specs)| !specs.is_empty() && !modelled.contains(tool.as_str()))
        .count();
    let composed_want = input
        .want
        .saturating_sub(2 * others)
        .max(per_tool_cap(input.want, others + 1));
    // Every answer is read again from a fresh server process before it
    // counts: one opened for the composed questions and the walk's own.
    let (fresh, setup_calls) =
        prove::fresh_session(input.opts.fresh.as_ref(), input.session, &ex.setup).await;
    stats.calls += setup_calls;
    let (mut candidates, mut observed) =
        composed::composed(input, &ex, composed_want, &mut stats, fresh.as_ref()).await;
    let room = input
        .want
        .saturating_sub(candidates.iter().filter(|c| c.disproved.is_none()).count());
    let mut fresh_reads = FreshReads::new(fresh.as_ref().ok());
    let (walked, seen) = take_round_robin(
        input,
        config,
        &ex,
        by_tool,
        room,
        candidates.len(),
        &mut stats,
        &mut fresh_reads,
    )
    .await;
    stats
        .discovery
        .push(fresh_reads.ledger(fresh.as_ref().err()));
    if let Ok(session) = fresh {
        session.close().await;
    }
    candidates.extend(walked);
    observed.extend(seen);
    let holdings = (!ex.holdings.kinds.is_empty()).then(|| ex.holdings.summary());
    WalkOutcome {
        candidates,
        observed,
        stats,
        holdings,
    }
}

/// Words the task already has without the server: the instructions, the
/// descriptions, the tool names, the operator's seed values.
fn known_without_server(input: &GenerationInput<'_>) -> String {
    let mut forbidden = input.instructions.unwrap_or("").to_owned();
    for t in input.tools {
        forbidden.push('\n');
        forbidden.push_str(&t.name);
        forbidden.push('\n');
        forbidden.push_str(t.description.as_deref().unwrap_or(""));
    }
    for seed in input
        .opts
        .seed_handles
        .iter()
        .chain(&input.opts.operator_files)
    {
        forbidden.push('\n');
        forbidden.push_str(seed);
    }
    forbidden
}

/// The tasks each observation offers, by tool, best first; a call that
/// writes or whose response holds a secret offers none.
fn specs_by_tool(
    ex: &Exploration,
    forbidden: &str,
    per_call: usize,
    stats: &mut WalkStats,
) -> BTreeMap<String, Vec<Spec>> {
    // A response the redaction policy would touch holds a value it keeps
    // off disk (a token, or a value given with --env, such as the folder
    // a search server is configured with and quotes in every hit): no task
    // asks for it, states it or names it in a call, and a response whose
    // every task would is counted as sensitive. The rest of the response
    // stays usable: its other values are the server's data.
    let policy = crate::secrets::policy();
    let names_secret = |spec: &Spec| {
        policy.finds(&spec.answer)
            || policy.finds(&spec.prompt)
            || policy.finds(&serde_json::to_string(&spec.check).unwrap_or_default())
            || spec
                .chain
                .iter()
                .chain(std::iter::once(&spec.observation))
                .any(|&i| policy.finds(&Value::Object(ex.observations[i].args.clone()).to_string()))
    };

    let mut by_tool: BTreeMap<String, Vec<Spec>> = BTreeMap::new();
    for o in &ex.observations {
        if o.writes || o.handles_only {
            continue;
        }
        let mut specs = specs_for(o, ex, forbidden, per_call);
        // Any task may name a secret in its calls, also one over a response
        // that holds none: a path the server resolved under the folder it
        // was configured with (`--env`), harvested and given back.
        let before = specs.len();
        specs.retain(|spec| !names_secret(spec));
        if before > 0 && specs.is_empty() {
            stats.sensitive_results += 1;
            continue;
        }
        // In a walk that only reads, nothing is asked about state the walk
        // itself created (a table a reading tool made on its first call).
        if !ex.created.is_empty() {
            let before = specs.len();
            specs.retain(|spec| !about_created(spec, ex));
            stats.created_state += (before - specs.len()) as u64;
        }
        if specs.is_empty() {
            stats.no_salient_answer += 1;
        }
        by_tool.entry(o.tool.clone()).or_default().extend(specs);
    }
    for specs in by_tool.values_mut() {
        // Best first; the order found breaks ties.
        specs.sort_by_key(|s| -s.score);
    }
    by_tool
}

/// Does a task's answer, or any of its calls' arguments, name state the
/// walk created?
fn about_created(spec: &Spec, ex: &Exploration) -> bool {
    let created = &ex.created;
    witness::names_created(created, &Value::String(spec.answer.clone()))
        || spec
            .chain
            .iter()
            .chain(std::iter::once(&spec.observation))
            .any(|&i| {
                witness::names_created(created, &Value::Object(ex.observations[i].args.clone()))
            })
}

/// Candidates taken round-robin over the tools, at most `max_per_tool`
/// ending at one, `want` in all, numbered after the `before` taken
/// already, each replayed before it counts and its calls made again in a
/// fresh server process (one whose answer changed there is kept, refused
/// by `answer-changed`, and its slot filled by the next); with the
/// responses their answers came from.
#[allow(clippy::too_many_arguments)]
async fn take_round_robin(
    input: &GenerationInput<'_>,
    config: &WalkConfig2,
    ex: &Exploration,
    by_tool: BTreeMap<String, Vec<Spec>>,
    want: usize,
    before: usize,
    stats: &mut WalkStats,
    fresh: &mut FreshReads<'_>,
) -> (Vec<Candidate>, BTreeMap<String, String>) {
    let answering = by_tool.values().filter(|specs| !specs.is_empty()).count();
    let cap = per_tool_cap(input.want, answering);
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    let mut replays = Replays::default();
    let mut candidates = Vec::new();
    let mut observed = BTreeMap::new();
    let mut queues: Vec<(String, std::vec::IntoIter<Spec>)> = by_tool
        .into_iter()
        .map(|(tool, specs)| (tool, specs.into_iter()))
        .collect();
    let mut seen_prompts = BTreeSet::new();
    let mut seen_answers = BTreeSet::new();
    let mut admitted = 0;
    let mut changed = 0;
    'outer: loop {
        let mut progressed = false;
        for (tool, queue) in &mut queues {
            if admitted >= want {
                break 'outer;
            }
            if taken.get(tool.as_str()).copied().unwrap_or(0) >= cap {
                continue;
            }
            let Some(spec) = queue.next() else {
                continue;
            };
            progressed = true;
            if !seen_prompts.insert(spec.prompt.clone()) {
                continue;
            }
            let o = &ex.observations[spec.observation];
            // One task per call and answer: `the type` and `the entity
            // type` of one record, both `person`, are one task (admission
            // would reject the second as a duplicate, and the slot with it).
            if !seen_answers.insert((
                spec.chain.clone(),
                o.tool.clone(),
                Value::Object(o.args.clone()).to_string(),
                spec.answer.to_lowercase(),
            )) {
                continue;
            }
            let again = replays
                .of(input.session, o, config.call_timeout, stats)
                .await;
            if !again.as_deref().is_some_and(|t| spec.check.check(t)) {
                stats.unstable += 1;
                continue;
            }
            let changed_in_fresh = fresh.changed(&spec, ex, stats).await;
            if changed_in_fresh.is_some() {
                // Kept for admission to refuse by name, a few at most.
                changed += 1;
                if changed > want.div_ceil(4) {
                    continue;
                }
            } else {
                *taken.entry(tool.clone()).or_default() += 1;
                admitted += 1;
            }
            let id = format!("{}c{}", input.opts.id_prefix, before + candidates.len() + 1);
            observed.insert(id.clone(), o.text.clone());
            let mut c = candidate(id, spec, ex, input.tools);
            c.disproved = changed_in_fresh.map(|why| ("answer-changed", why));
            candidates.push(c);
        }
        if !progressed {
            break;
        }
    }
    (candidates, observed)
}

/// Each observation's call made again, once: its text, or `None` when the
/// replay failed.
#[derive(Default)]
struct Replays(BTreeMap<usize, Option<String>>);

impl Replays {
    /// The replay of `o`'s call, made on first asking.
    async fn of(
        &mut self,
        session: &Session,
        o: &Observation,
        timeout: Duration,
        stats: &mut WalkStats,
    ) -> Option<String> {
        if let Some(r) = self.0.get(&o.index) {
            return r.clone();
        }
        stats.calls += 1;
        let r = match call(session, &o.tool, &o.args, timeout).await {
            Called::Text(t) => Some(t),
            _ => None,
        };
        self.0.insert(o.index, r.clone());
        r
    }
}

/// A task's calls made again in a fresh server process, each once: does
/// its answer come back there?
struct FreshReads<'s> {
    session: Option<&'s Session>,
    texts: BTreeMap<usize, Option<String>>,
    read: usize,
    changed: usize,
}

impl<'s> FreshReads<'s> {
    fn new(session: Option<&'s Session>) -> Self {
        FreshReads {
            session,
            texts: BTreeMap::new(),
            read: 0,
            changed: 0,
        }
    }

    /// Why `spec`'s answer did not come back in the fresh process, or
    /// `None` when it did (or there is no fresh process to ask).
    async fn changed(
        &mut self,
        spec: &Spec,
        ex: &Exploration,
        stats: &mut WalkStats,
    ) -> Option<String> {
        let session = self.session?;
        self.read += 1;
        let mut last = None;
        for &i in spec.chain.iter().chain(std::iter::once(&spec.observation)) {
            let o = &ex.observations[i];
            let text = match self.texts.get(&i) {
                Some(t) => t.clone(),
                None => {
                    stats.calls += 1;
                    let t = match call(session, &o.tool, &o.args, session.call_limit()).await {
                        Called::Text(t) => Some(t),
                        _ => None,
                    };
                    self.texts.insert(i, t.clone());
                    t
                }
            };
            let Some(text) = text else {
                self.changed += 1;
                return Some(format!(
                    "read again in a fresh server process, `{}` with {} gave nothing to read",
                    o.tool,
                    Value::Object(o.args.clone())
                ));
            };
            last = Some(text);
        }
        if last.as_deref().is_some_and(|t| spec.check.check(t)) {
            return None;
        }
        self.changed += 1;
        let o = &ex.observations[spec.observation];
        Some(format!(
            "read again in a fresh server process, `{}` with {} no longer gives `{}`",
            o.tool,
            Value::Object(o.args.clone()),
            spec.answer
        ))
    }

    /// The ledger's line: how many of the walk's answers were read again,
    /// how many changed, or why there was no fresh process.
    fn ledger(&self, none: Option<&String>) -> DiscoveryMove {
        DiscoveryMove {
            name: "reread".into(),
            tool: None,
            tried: format!(
                "{} of the walk's answers read again in a fresh server process",
                self.read
            ),
            found: match none {
                Some(why) => format!("none read again: {why}"),
                None => format!(
                    "{} unchanged; {} changed (refused: answer-changed)",
                    self.read - self.changed,
                    self.changed
                ),
            },
            worked: none.is_none(),
        }
    }
}

fn candidate(id: String, spec: Spec, ex: &Exploration, tools: &[Tool]) -> Candidate {
    let o = &ex.observations[spec.observation];
    let mut solution: Vec<PlannedCall> = spec
        .chain
        .iter()
        .map(|&i| PlannedCall {
            tool: ex.observations[i].tool.clone(),
            arguments: ex.observations[i].args.clone(),
        })
        .collect();
    solution.push(PlannedCall {
        tool: o.tool.clone(),
        arguments: o.args.clone(),
    });
    let handles = (1..solution.len())
        .map(|i| HandleBinding {
            name: format!("step{i}"),
            produced_by: i - 1,
            consumed_by: i,
        })
        .collect();
    // Every tool whose observed result holds the answer can reach it.
    let mut expected = vec![o.tool.clone()];
    for p in &ex.observations {
        if !p.writes
            && !expected.contains(&p.tool)
            && tools.iter().any(|t| t.name == p.tool.as_str())
            && spec.check.check(&p.text)
            && !spec.check.check(&Value::Object(p.args.clone()).to_string())
        {
            expected.push(p.tool.clone());
        }
    }
    let label = if spec.fact.label.is_empty() {
        "salient word".to_owned()
    } else {
        format!("`{}`", spec.fact.label)
    };
    let origin = spec
        .chain
        .iter()
        .chain(std::iter::once(&spec.observation))
        .fold(None, |a, &i| Origin::stronger(a, ex.observations[i].origin));
    let solution_len = solution.len();
    let task = Task {
        id: id.clone(),
        origin,
        prompt: spec.prompt,
        expected_tools: expected,
        rationale: Some(format!(
            "schema-walk/2: {label} `{}` is in the real response of `{}` to {} ({} call{} in all; stable on replay)",
            spec.answer,
            o.tool,
            Value::Object(o.args.clone()),
            solution.len(),
            if solution.len() == 1 { "" } else { "s" }
        )),
        answer_key: spec.answer,
        check: spec.check,
        destructive: false,
        solution,
        handles,
        kind: Default::default(),
        state_check: None,
        shape: Some(if solution_len > 1 {
            fitness_shared::record::TaskShape::MultiStep
        } else {
            fitness_shared::record::TaskShape::Lookup
        }),
    };
    let mut c = Candidate::new(id, Ok(task));
    c.source = Some(o.text.clone());
    c
}
