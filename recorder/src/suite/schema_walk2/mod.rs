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
//! * **Prompts state the goal**, never the tool or its arguments: "Using
//!   the server's tools, find the humidity for location `Chicago`." Where
//!   the handle came from another call's result and its record has another
//!   name (a commit's message, a listed entry's name under its root), the
//!   task names the record by that and its solution is the chain of calls.
//! * **Spread**: at most `max_per_tool` candidates end at one tool, taken
//!   round-robin over the tools; the final call of a task never changes
//!   state (a tool not declared read-only may only produce its handles).
//! * **Stable**: the final call is replayed and its answer must come back.
//!
//! Admission then applies the rules `schema-walk/1` never needed:
//! `error-answer`, `answer-derivable` and `check-not-discriminating`.

mod explore;
pub mod text;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use super::GenerationInput;
use super::admission::{Candidate, contains_token};
use super::schema_args::Limits;
use super::schema_walk::{
    Called, STOPWORDS, VOLATILE, WalkOutcome, WalkStats, call, callable_tools, salient,
};
use super::task::{HandleBinding, Predicate, Task};
use crate::mcp::connect::Session;
use crate::model::types::PlannedCall;
use explore::{Exploration, Observation};
use text::{Fact, label_words};

/// The walk's registered parameters (part of the suite's generator config).
#[derive(Debug, Clone)]
pub struct WalkConfig2 {
    pub samples_per_tool: usize,
    pub call_timeout: Duration,
    pub max_calls: usize,
    pub max_rounds: usize,
    /// Facts taken from one observation at most.
    pub facts_per_call: usize,
    /// Caps on each generated argument set (its wall time is also cut to
    /// `call_timeout`).
    pub argument_limits: Limits,
}

impl Default for WalkConfig2 {
    fn default() -> Self {
        WalkConfig2 {
            samples_per_tool: 4,
            call_timeout: Duration::from_secs(5),
            max_calls: 400,
            max_rounds: 5,
            facts_per_call: 6,
            argument_limits: Limits::default(),
        }
    }
}

impl WalkConfig2 {
    /// The argument caps in force: the time budget is at most a call's.
    pub fn limits(&self) -> Limits {
        self.argument_limits.within(self.call_timeout)
    }

    pub fn to_json(&self, max_per_tool: usize) -> Value {
        json!({
            "samples_per_tool": self.samples_per_tool,
            "call_timeout_ms": self.call_timeout.as_millis() as u64,
            "max_calls": self.max_calls,
            "max_rounds": self.max_rounds,
            "facts_per_call": self.facts_per_call,
            "max_per_tool": max_per_tool,
            "argument_limits": self.limits().to_json(),
            "prompt_templates": [LABELLED_PROMPT, QUOTE_PROMPT],
        })
    }
}

const LABELLED_PROMPT: &str = "Using the server's tools, find the {label} {subject}. Reply with the {label} exactly as the server gives it.";
const QUOTE_PROMPT: &str =
    "Using the server's tools, find what the server returns {subject} and quote it.";

/// The two prompts for a subject phrase (`of the record whose name is
/// `x``, `for location `Chicago``, or empty).
fn labelled_prompt(label: &str, subject: &str) -> String {
    let subject = if subject.is_empty() {
        "the server reports"
    } else {
        subject
    };
    LABELLED_PROMPT
        .replace("{label}", label)
        .replace("{subject}", subject)
}

fn quote_prompt(label: &str, subject: &str) -> String {
    let subject = subject
        .strip_prefix("of ")
        .map_or_else(|| subject.to_owned(), |rest| format!("for {rest}"));
    let subject = if label.is_empty() {
        subject
    } else {
        format!("as {label} {subject}")
    };
    QUOTE_PROMPT
        .replace("{subject}", subject.trim_end())
        .replace("  ", " ")
}

/// The operator's own values a walk may start from: the absolute paths
/// that exist among a stdio server's arguments (`/srv/repo`,
/// `--repository=/srv/repo`). An HTTP target gives none.
pub fn seed_handles(target: &crate::mcp::connect::Target) -> Vec<String> {
    let crate::mcp::connect::Target::Stdio(stdio) = target else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for arg in &stdio.args {
        let value = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
        let path = std::path::Path::new(value);
        if path.is_absolute() && path.exists() && !out.iter().any(|o: &String| o == value) {
            out.push(value.trim_end_matches('/').to_owned());
        }
    }
    out
}

/// Candidates ending at one tool, at most: a third of those asked for (at
/// least 2), so a suite spreads over three tools or more where there are.
pub fn max_per_tool(want: usize) -> usize {
    want.div_ceil(3).max(2)
}

static ERROR_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:error|exception|traceback|fatal|failed|failure|denied|forbidden|unauthori[sz]ed|invalid|not found|no such|cannot|could not|unable to)\b|\b(?:ENOENT|EACCES|EPERM|EISDIR|ENOTDIR|Permission denied|No such file or directory|Access denied|Traceback \(most recent call last\)|MCP error -?\d+|is not a valid|does not exist|outside (?:the )?allowed)\b",
    )
    .expect("the error pattern compiles")
});

static EMPTY_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:no (?:matches|results|entries|items|files|records|data)\b|nothing (?:found|to show)|none found|0 results)")
        .expect("the empty pattern compiles")
});

/// Does a tool result say it found nothing?
pub fn reads_as_empty(text: &str) -> bool {
    EMPTY_TEXT.is_match(text)
}

/// Does a tool result read as an error although it was not flagged as one?
pub fn reads_as_error(text: &str) -> bool {
    let head: String = text.chars().take(2_000).collect();
    ERROR_TEXT.is_match(&head)
}

/// Labels whose values are clock readings or counters of time.
const VOLATILE_LABEL_WORDS: &[&str] = &[
    "time",
    "date",
    "timestamp",
    "created",
    "modified",
    "accessed",
    "updated",
    "uptime",
    "elapsed",
    "now",
    "expires",
    "age",
    "mtime",
    "atime",
    "ctime",
    "birthtime",
];

/// A planned task before it is replayed.
struct Spec {
    observation: usize,
    fact: Fact,
    answer: String,
    check: Predicate,
    prompt: String,
    /// Indices of the observations whose calls come first.
    chain: Vec<usize>,
    score: i32,
}

/// Walk the server; `input.want` candidates at most.
pub async fn walk(input: &GenerationInput<'_>, config: &WalkConfig2) -> WalkOutcome {
    let mut stats = WalkStats::default();
    let callable = callable_tools(input.tools, input.labels, &mut stats);
    let forbidden = known_without_server(input);
    let ex = explore::explore(
        input.session,
        &callable,
        &input.opts.seed_handles,
        input.opts.seed,
        config,
        &mut stats,
    )
    .await;
    let by_tool = specs_by_tool(&ex, &forbidden, config.facts_per_call, &mut stats);
    let (candidates, observed) = take_round_robin(input, config, &ex, by_tool, &mut stats).await;
    WalkOutcome {
        candidates,
        observed,
        stats,
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
    for seed in &input.opts.seed_handles {
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
    // A response the redaction policy would touch holds a secret: it must
    // reach neither the suite nor the tape as an answer.
    let policy = crate::secrets::policy();
    let sensitive: BTreeSet<usize> = ex
        .observations
        .iter()
        .filter(|o| policy.finds(&o.text))
        .map(|o| o.index)
        .collect();
    stats.sensitive_results += sensitive.len() as u64;

    let mut by_tool: BTreeMap<String, Vec<Spec>> = BTreeMap::new();
    for o in &ex.observations {
        if o.writes || sensitive.contains(&o.index) {
            continue;
        }
        let specs = specs_for(o, ex, forbidden, per_call);
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

/// Candidates taken round-robin over the tools, at most `max_per_tool`
/// ending at one, each replayed before it counts; with the responses their
/// answers came from.
async fn take_round_robin(
    input: &GenerationInput<'_>,
    config: &WalkConfig2,
    ex: &Exploration,
    by_tool: BTreeMap<String, Vec<Spec>>,
    stats: &mut WalkStats,
) -> (Vec<Candidate>, BTreeMap<String, String>) {
    let cap = max_per_tool(input.want);
    let mut taken: BTreeMap<String, usize> = BTreeMap::new();
    let mut replays = Replays::default();
    let mut candidates = Vec::new();
    let mut observed = BTreeMap::new();
    let mut queues: Vec<(String, std::vec::IntoIter<Spec>)> = by_tool
        .into_iter()
        .map(|(tool, specs)| (tool, specs.into_iter()))
        .collect();
    let mut seen_prompts = BTreeSet::new();
    'outer: loop {
        let mut progressed = false;
        for (tool, queue) in &mut queues {
            if candidates.len() >= input.want {
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
            let again = replays
                .of(input.session, o, config.call_timeout, stats)
                .await;
            if !again.as_deref().is_some_and(|t| spec.check.check(t)) {
                stats.unstable += 1;
                continue;
            }
            *taken.entry(tool.clone()).or_default() += 1;
            let id = format!("{}c{}", input.opts.id_prefix, candidates.len() + 1);
            observed.insert(id.clone(), o.text.clone());
            candidates.push(candidate(id, spec, ex, input.tools));
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

/// Is `value` worth asking for, from this call?
fn usable(fact: &Fact, o: &Observation, forbidden: &str) -> bool {
    let value = fact.value.trim();
    let n = value.chars().count();
    if n == 0 || n > 200 || value.contains('\n') {
        return false;
    }
    if fact.number.is_none() && !value.chars().any(char::is_alphanumeric) {
        return false;
    }
    if fact.number.is_none() && n < 3 {
        return false;
    }
    // A blob (base64, a hash dump) is no answer to quote.
    if n > 60 && !value.contains(char::is_whitespace) {
        return false;
    }
    if VOLATILE.is_match(value) {
        return false;
    }
    let label = label_words(&fact.label);
    if label
        .split_whitespace()
        .any(|w| VOLATILE_LABEL_WORDS.contains(&w))
    {
        return false;
    }
    if STOPWORDS.contains(&value.to_lowercase().as_str()) {
        return false;
    }
    if fact.subject.as_ref().is_some_and(|(_, s)| s == value) {
        return false;
    }
    // The record is named by a value the result gives it alone.
    if fact
        .subject
        .as_ref()
        .is_some_and(|(_, s)| o.text.matches(s.as_str()).count() != 1)
    {
        return false;
    }
    // A bare name asks nothing: it is asked for by another field.
    if text::is_naming(&fact.label) && fact.subject.is_none() {
        return false;
    }
    let args = Value::Object(o.args.clone()).to_string();
    if contains_token(&args, value) || contains_token(forbidden, value) {
        return false;
    }
    // A label that is an argument (`Debug:` for messageType `debug`) heads
    // an echo of the request, not a fact.
    if arg_scalars(&o.args)
        .iter()
        .any(|a| a.eq_ignore_ascii_case(fact.label.trim()))
    {
        return false;
    }
    !built_from_args(value, &o.args)
}

/// The scalar argument values of a call, as text.
fn arg_scalars(args: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Number(n) => out.push(n.to_string()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    args.values().for_each(|v| walk(v, &mut out));
    out
}

/// An answer that spells an argument inside it
/// (`demo://resource/text/82` for resource id 82) is the request plus a
/// constant, not the server's work.
fn built_from_args(value: &str, args: &Map<String, Value>) -> bool {
    arg_scalars(args)
        .iter()
        .filter(|a| a.chars().count() >= 2)
        .any(|a| contains_token(value, a))
}

/// The predicate for a fact: the number, the whole short value, or the
/// salient word of a long one.
fn check_for(fact: &Fact, prompt: &str, forbidden: &str) -> Option<(String, Predicate)> {
    if let Some(v) = fact.number {
        let tolerance = if v.fract() == 0.0 {
            0.0
        } else {
            (v.abs() * 1e-6).max(1e-9)
        };
        return Some((
            fact.value.clone(),
            Predicate::NumberWithin {
                value: v,
                tolerance,
            },
        ));
    }
    let value = fact.value.trim();
    if value.chars().count() <= 60 {
        return Some((
            value.to_owned(),
            Predicate::Substring {
                value: value.to_owned(),
                case_insensitive: true,
            },
        ));
    }
    salient(value, prompt, forbidden)
}

/// `location `Chicago` and resource id 3`: the arguments a task may name
/// (scalars, one-element lists; never a handle slot).
fn args_phrase(args: &Map<String, Value>, skip: &[&str]) -> String {
    let mut parts = Vec::new();
    for (k, v) in args {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let v = match v {
            Value::Array(a) if a.len() == 1 => &a[0],
            other => other,
        };
        match v {
            Value::String(s) if s.chars().count() <= 80 => {
                parts.push(format!("{} `{s}`", label_words(k)));
            }
            Value::Number(n) => parts.push(format!("{} {n}", label_words(k))),
            _ => {}
        }
    }
    parts.join(" and ")
}

/// How the task names what it asks about, and the calls before the last.
fn subject_of(o: &Observation, fact: &Fact, ex: &Exploration) -> (String, Vec<usize>) {
    // A fact of a record inside the result (a child in a listing) is named
    // by that record, not by the handle the call was made with.
    if let Some((k, v)) = &fact.subject
        && !o.inputs.iter().any(|(_, h)| {
            let handle = &ex.handles[*h];
            handle.value == *v || handle.alias.as_ref().is_some_and(|(_, a)| a == v)
        })
        && !o.inputs.is_empty()
    {
        return (
            format!("of the record whose {} is `{v}`", label_words(k)),
            Vec::new(),
        );
    }
    // A handle from another call's result, named by its record's alias.
    for (_, h) in &o.inputs {
        let handle = &ex.handles[*h];
        let Some((alias_label, alias)) = &handle.alias else {
            continue;
        };
        // A path joined from listings: name its root and the entry; the
        // listing calls along the way come first, outermost first.
        if handle.parent.is_some() {
            let mut top = *h;
            let mut depth = 0;
            while let Some(p) = ex.handles[top].parent {
                depth += 1;
                top = p;
                if depth > 8 {
                    break;
                }
            }
            let mut chain = Vec::new();
            let mut cursor = Some(*h);
            while let Some(c) = cursor {
                if let Some(from) = ex.handles[c].from
                    && from != o.index
                {
                    chain.push(from);
                }
                cursor = ex.handles[c].parent;
                if chain.len() > 8 {
                    break;
                }
            }
            chain.reverse();
            chain.dedup();
            if chain.iter().any(|&c| ex.observations[c].writes) {
                continue;
            }
            let top = &ex.handles[top].value;
            let phrase = if depth >= 2 {
                format!("of the entry named `{alias}` somewhere under `{top}`")
            } else {
                format!("of the entry named `{alias}` in `{top}`")
            };
            return (phrase, chain);
        }
        // The alias names the record only when the request does not
        // already, and the producing result names one record by it.
        if contains_token(&Value::Object(o.args.clone()).to_string(), alias)
            || handle
                .from
                .is_none_or(|f| ex.observations[f].text.matches(alias.as_str()).count() != 1)
        {
            continue;
        }
        // A handle a writing call returned is state the server now holds:
        // the task names it, and its solution does not write again.
        if let Some(from) = handle.from
            && from != o.index
            && !ex.observations[from].writes
        {
            let phrase = format!(
                "of the item whose {} is `{alias}`",
                label_words(alias_label)
            );
            return (phrase, vec![from]);
        }
    }
    if let Some((k, v)) = &fact.subject {
        return (
            format!("of the record whose {} is `{v}`", label_words(k)),
            Vec::new(),
        );
    }
    let skip: Vec<&str> = Vec::new();
    let phrase = args_phrase(&o.args, &skip);
    if phrase.is_empty() {
        (String::new(), Vec::new())
    } else {
        (format!("for {phrase}"), Vec::new())
    }
}

fn specs_for(o: &Observation, ex: &Exploration, forbidden: &str, per_call: usize) -> Vec<Spec> {
    let all = text::facts(&o.text, o.json.as_ref());
    // A value the result gives under several labels tells none of them.
    let repeated = |f: &Fact| {
        all.iter()
            .filter(|g| g.value == f.value && g.label != f.label)
            .count()
            > 0
    };
    let mut facts: Vec<(i32, Fact)> = all
        .iter()
        .filter(|f| usable(f, o, forbidden) && !repeated(f))
        .cloned()
        .map(|f| {
            let mut score = 0;
            let words = label_words(&f.label);
            if !words.is_empty()
                && !["text", "content", "result", "value"].contains(&words.as_str())
            {
                score += 3;
            }
            if f.number.is_some() {
                score += 1;
            } else if f.value.chars().count() <= 40 {
                score += 2;
            }
            // A sentence is a weaker answer than the value inside it.
            if f.value.split_whitespace().count() >= 4 {
                score -= 3;
            }
            // A value other calls of this tool also return does not tell
            // this call from them.
            let elsewhere = ex
                .observations
                .iter()
                .filter(|p| p.tool == o.tool && p.index != o.index)
                .filter(|p| contains_token(&p.text, &f.value))
                .count();
            score -= 2 * elsewhere.min(3) as i32;
            (score, f)
        })
        .collect();
    facts.sort_by_key(|(s, _)| -s);
    let mut out = Vec::new();
    let mut labels_used = BTreeSet::new();
    for (score, fact) in facts {
        if out.len() >= per_call {
            break;
        }
        if !labels_used.insert((fact.label.clone(), fact.subject.clone())) {
            continue;
        }
        let (subject, chain) = subject_of(o, &fact, ex);
        let label = label_words(&fact.label);
        let prompt = if fact.number.is_some() || fact.value.chars().count() <= 60 {
            labelled_prompt(&label, &subject)
        } else {
            quote_prompt(&label, &subject)
        };
        let Some((answer, check)) = check_for(&fact, &prompt, forbidden) else {
            continue;
        };
        if contains_token(&prompt, &answer) {
            continue;
        }
        // A value other calls of the tool return as well is a constant of
        // the tool, not this call's answer.
        if score < 0 {
            continue;
        }
        out.push(Spec {
            observation: o.index,
            fact,
            answer,
            check,
            prompt,
            score: score + if chain.is_empty() { 0 } else { 2 },
            chain,
        });
    }
    // No labelled value worth asking for: the result's salient word, quoted,
    // unless other calls of the tool return it too.
    if out.iter().all(|s| s.score <= 0) {
        let (subject, chain) = subject_of(
            o,
            &Fact {
                label: String::new(),
                value: String::new(),
                number: None,
                subject: None,
            },
            ex,
        );
        let prompt = quote_prompt("", &subject);
        let args = Value::Object(o.args.clone()).to_string();
        // Words other calls of the tool return too are its constants.
        let mut known = forbidden.to_owned();
        for p in ex
            .observations
            .iter()
            .filter(|p| p.tool == o.tool && p.index != o.index)
        {
            if known.len() > 1 << 20 {
                break;
            }
            known.push('\n');
            known.push_str(&p.text);
        }
        if let Some((answer, check)) = salient(&o.text, &format!("{prompt}\n{args}"), &known)
            .filter(|(answer, _)| {
                // A number inside a hash or an id is no answer.
                !built_from_args(answer, &o.args) && contains_token(&o.text, answer)
            })
        {
            out.push(Spec {
                observation: o.index,
                fact: Fact {
                    label: String::new(),
                    value: answer.clone(),
                    number: None,
                    subject: None,
                },
                answer,
                check,
                prompt,
                score: 0,
                chain,
            });
        }
    }
    out
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
    let task = Task {
        id: id.clone(),
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
    };
    let mut c = Candidate::new(id, Ok(task));
    c.source = Some(o.text.clone());
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn observation(index: usize, tool: &str, args: Value, text: &str) -> Observation {
        Observation {
            index,
            tool: tool.to_owned(),
            args: args.as_object().cloned().unwrap_or_default(),
            text: text.to_owned(),
            json: super::super::predicate::first_json_value(text),
            inputs: Vec::new(),
            writes: false,
        }
    }

    #[test]
    fn a_commit_is_asked_for_by_its_message_through_the_log() {
        let log = "Commit history:\nCommit: 91e702075cdad32fe604efec43f8f108c48648d6\nAuthor: Grace Hopper\nDate: 2026-11-08 10:00:00+00:00\nMessage: Log the Hebridean cargo manifest\n\n\nCommit: b010c88767d8b509ae91c0bd73d97b92a8d8a224\nAuthor: Grace Hopper\nDate: 2026-11-07 10:00:00+00:00\nMessage: Correct the Loch Fyne charts\n";
        let show = "commit 91e702075cdad32fe604efec43f8f108c48648d6\nAuthor: Grace Hopper <dev@example.org>\nDate:   2026-11-08 10:00:00 +0000\n\n    Log the Hebridean cargo manifest\n\n--- /dev/null\n+++ b/cargo.md\n@@ -0,0 +1 @@\n+Hold three carries whisky casks, peat bricks and a tractor.\n";
        let mut ex = Exploration::default();
        ex.observations
            .push(observation(0, "git_log", json!({"repo_path": "/r"}), log));
        for h in text::harvest(log, None, 0) {
            ex.handles.push(h);
        }
        let hash = ex
            .handles
            .iter()
            .position(|h| h.value.starts_with("91e7"))
            .expect("the commit is a handle");
        let mut o = observation(
            1,
            "git_show",
            json!({"repo_path": "/r", "revision": "91e702075cdad32fe604efec43f8f108c48648d6"}),
            show,
        );
        o.inputs = vec![("revision".to_owned(), hash)];
        ex.observations.push(o.clone());
        let specs = specs_for(&ex.observations[1], &ex, "git_show git_log", 6);
        assert!(!specs.is_empty(), "a task from the show");
        let s = &specs[0];
        assert_eq!(s.chain, vec![0], "the log call comes first");
        assert!(
            s.prompt.contains("`Log the Hebridean cargo manifest`"),
            "{}",
            s.prompt
        );
        assert!(!s.prompt.contains("91e7"), "{}", s.prompt);
        assert!(s.check.check(show));
    }
}
