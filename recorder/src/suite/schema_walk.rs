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

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rmcp::model::Tool;
use serde::Serialize;
use serde_json::{Map, Value, json};

use super::admission::{Candidate, contains_token};
use super::predicate::{first_json_value, numbers_in};
use super::schema_args::{Limits, Unsatisfiable, valid_arguments_within};
use super::task::{Predicate, Task};
use super::{GenerateOptions, ToolDestructiveness, destructive};
use crate::mcp::connect::Session;
use crate::model::types::PlannedCall;

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

/// Candidates, the responses their answers came from, and the counts.
pub struct WalkOutcome {
    pub candidates: Vec<Candidate>,
    /// Candidate id → the response text.
    pub observed: BTreeMap<String, String>,
    pub stats: WalkStats,
}

pub(super) enum Called {
    Text(String),
    Error,
    Empty,
    Failed,
    TimedOut,
}

pub(super) async fn call(
    session: &Session,
    tool: &str,
    args: &Map<String, Value>,
    timeout: Duration,
) -> Called {
    match tokio::time::timeout(timeout, session.call_tool(tool, args.clone())).await {
        Err(_) => Called::TimedOut,
        Ok(Err(_)) => Called::Failed,
        Ok(Ok(result)) => {
            let v = serde_json::to_value(&result).unwrap_or(Value::Null);
            let incomplete = v
                .get("resultType")
                .and_then(Value::as_str)
                .is_some_and(|t| t != "complete");
            if v.get("isError").and_then(Value::as_bool) == Some(true) || incomplete {
                return Called::Error;
            }
            let text = result_text(&v);
            if is_empty(&text) {
                Called::Empty
            } else {
                Called::Text(text)
            }
        }
    }
}

/// What one exploring call gave the walk.
pub(super) enum Taken {
    /// Text to read.
    Text(String),
    /// Nothing to read (an error, an empty result, a failed call): counted.
    Skip,
    /// The call timed out: the tool is not called again.
    Dead,
}

/// [`call`], with a result that gives nothing to read counted in `stats`.
pub(super) async fn call_counted(
    session: &Session,
    tool: &str,
    args: &Map<String, Value>,
    timeout: Duration,
    stats: &mut WalkStats,
) -> Taken {
    match call(session, tool, args, timeout).await {
        Called::Text(t) => Taken::Text(t),
        Called::Error => {
            stats.error_results += 1;
            Taken::Skip
        }
        Called::Empty => {
            stats.empty_results += 1;
            Taken::Skip
        }
        Called::Failed => {
            stats.call_failures += 1;
            Taken::Skip
        }
        Called::TimedOut => {
            stats.timeouts += 1;
            Taken::Dead
        }
    }
}

/// The text an agent reads from a tool result: text blocks, embedded
/// resource text, resource links; the structured content when there is no
/// text at all.
pub fn result_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(t) = block.get("text").and_then(Value::as_str) {
            parts.push(t.to_owned());
        }
        if let Some(t) = block
            .get("resource")
            .and_then(|r| r.get("text"))
            .and_then(Value::as_str)
        {
            parts.push(t.to_owned());
        }
        if block.get("type").and_then(Value::as_str) == Some("resource_link") {
            for key in ["name", "uri", "description"] {
                if let Some(t) = block.get(key).and_then(Value::as_str) {
                    parts.push(t.to_owned());
                }
            }
        }
    }
    if parts.is_empty()
        && let Some(s) = result.get("structuredContent")
        && !s.is_null()
    {
        parts.push(s.to_string());
    }
    parts.join("\n")
}

pub(super) fn is_empty(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() {
        return true;
    }
    match serde_json::from_str::<Value>(t) {
        Ok(v) => !has_leaf(&v),
        Err(_) => false,
    }
}

fn has_leaf(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        Value::Bool(_) | Value::Number(_) => true,
        Value::Array(a) => a.iter().any(has_leaf),
        Value::Object(o) => o.values().any(has_leaf),
    }
}

pub(super) fn read_only(tool: &Tool) -> bool {
    tool.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}

/// Name words of tools that may hand back the server's environment or
/// credentials: never called by the walk (the wire tape would carry them).
const SECRET_WORDS: &[&str] = &[
    "env",
    "environ",
    "environment",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "password",
    "passwords",
    "token",
    "tokens",
    "apikey",
    "dotenv",
];

pub(super) fn exposes_secrets(tool: &Tool) -> Option<&'static str> {
    destructive::words(&tool.name)
        .iter()
        .find_map(|w| SECRET_WORDS.iter().copied().find(|s| s == w))
}

/// Words too common to show that the server was asked: never answer keys.
pub(super) const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "access",
    "after",
    "again",
    "against",
    "also",
    "although",
    "always",
    "among",
    "another",
    "any",
    "anything",
    "array",
    "available",
    "back",
    "based",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "call",
    "called",
    "cannot",
    "content",
    "could",
    "count",
    "created",
    "current",
    "data",
    "default",
    "demo",
    "does",
    "done",
    "down",
    "during",
    "each",
    "either",
    "else",
    "empty",
    "error",
    "every",
    "example",
    "false",
    "field",
    "file",
    "first",
    "following",
    "found",
    "from",
    "given",
    "good",
    "have",
    "having",
    "hello",
    "here",
    "here's",
    "http",
    "https",
    "image",
    "information",
    "into",
    "item",
    "items",
    "json",
    "just",
    "last",
    "less",
    "like",
    "link",
    "links",
    "list",
    "made",
    "make",
    "many",
    "message",
    "more",
    "most",
    "much",
    "must",
    "name",
    "need",
    "never",
    "next",
    "none",
    "null",
    "number",
    "object",
    "only",
    "other",
    "over",
    "page",
    "please",
    "provided",
    "ready",
    "really",
    "request",
    "requested",
    "resource",
    "resources",
    "response",
    "result",
    "results",
    "return",
    "returned",
    "returning",
    "returns",
    "same",
    "second",
    "see",
    "server",
    "should",
    "show",
    "since",
    "some",
    "something",
    "still",
    "string",
    "success",
    "successful",
    "successfully",
    "such",
    "sure",
    "take",
    "text",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "this",
    "those",
    "through",
    "time",
    "tool",
    "tools",
    "total",
    "true",
    "type",
    "under",
    "undefined",
    "until",
    "used",
    "using",
    "value",
    "values",
    "very",
    "want",
    "well",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "will",
    "with",
    "within",
    "without",
    "would",
    "your",
    "yours",
];

/// Clock readings and dates: they change between generation and the drive.
pub(super) static VOLATILE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AP]M)?\b",
    )
    .expect("the clock pattern compiles")
});

/// The answer a response yields: (key, predicate). Clock readings and dates
/// are ignored. Words are scored: +4 when inside a JSON string value of the
/// response, +2 for 8+ characters (+1 for 6+), +1 when letters and digits
/// mix; the best wins, the first on a tie. A number (the last one) is
/// preferred to a word scoring below 2.
pub fn salient(text: &str, prompt: &str, forbidden: &str) -> Option<(String, Predicate)> {
    let allowed = |tok: &str| !contains_token(prompt, tok) && !contains_token(forbidden, tok);
    let stable = VOLATILE.replace_all(text, " ");
    let mut leaves = Vec::new();
    if let Some(v) = first_json_value(text) {
        string_leaves(&v, &mut leaves);
    }
    let mut best: Option<(i32, String)> = None;
    for raw in stable.split(|c: char| !(c.is_alphanumeric() || "-_.@/:'".contains(c))) {
        let tok = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let n = tok.chars().count();
        if !(4..=40).contains(&n) || !tok.chars().any(char::is_alphabetic) {
            continue;
        }
        if STOPWORDS.contains(&tok.to_lowercase().as_str()) {
            continue;
        }
        if text.contains(&format!("\"{tok}\":")) || text.contains(&format!("\"{tok}\" :")) {
            continue; // a JSON key: structure, not content
        }
        let secret_looking = n >= 20
            && tok.chars().any(|c| c.is_ascii_digit())
            && tok.chars().any(char::is_uppercase)
            && tok.chars().any(char::is_lowercase);
        if secret_looking || !allowed(tok) {
            continue;
        }
        let mut score = 0;
        if leaves.iter().any(|l| l.contains(tok)) {
            score += 4;
        }
        score += if n >= 8 {
            2
        } else if n >= 6 {
            1
        } else {
            0
        };
        if tok.chars().any(|c| c.is_ascii_digit()) {
            score += 1;
        }
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, tok.to_owned()));
        }
    }
    let word = |tok: String| {
        Some((
            tok.clone(),
            Predicate::Substring {
                value: tok,
                case_insensitive: true,
            },
        ))
    };
    if let Some((score, tok)) = &best
        && *score >= 2
    {
        return word(tok.clone());
    }
    for v in numbers_in(&stable).into_iter().rev() {
        if v == 0.0 || v == 1.0 {
            continue;
        }
        let repr = if v.fract() == 0.0 && v.abs() < 1e15 {
            format!("{}", v as i64)
        } else {
            format!("{v}")
        };
        if !allowed(&repr) {
            continue;
        }
        let tolerance = if v.fract() == 0.0 {
            0.0
        } else {
            (v.abs() * 1e-6).max(1e-9)
        };
        return Some((
            repr,
            Predicate::NumberWithin {
                value: v,
                tolerance,
            },
        ));
    }
    best.and_then(|(_, tok)| word(tok))
}

pub(super) fn string_leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| string_leaves(x, out)),
        Value::Object(o) => o.values().for_each(|x| string_leaves(x, out)),
        _ => {}
    }
}

/// Arguments for `schema` with harvested strings in its free string slots.
fn harvest_args(
    schema: &Value,
    rng: &mut ChaCha8Rng,
    harvested: &[String],
    limits: &Limits,
) -> Result<Map<String, Value>, Unsatisfiable> {
    let mut args = valid_arguments_within(schema, rng, limits)?;
    let props = schema.get("properties").and_then(Value::as_object);
    for (k, v) in args.iter_mut() {
        let Some(p) = props.and_then(|p| p.get(k)) else {
            continue;
        };
        let free = |p: &Value| {
            p.get("type").and_then(Value::as_str) == Some("string")
                && p.get("enum").is_none()
                && p.get("const").is_none()
                && p.get("format").is_none()
                && p.get("pattern").is_none()
        };
        let pick = |rng: &mut ChaCha8Rng| harvested[rng.random_range(0..harvested.len())].clone();
        if free(p) {
            *v = Value::String(pick(rng));
        } else if p.get("type").and_then(Value::as_str) == Some("array")
            && p.get("items").is_some_and(free)
        {
            *v = json!([pick(rng)]);
        }
    }
    Ok(args)
}

/// Strings worth trying as arguments: JSON string leaves of a response.
fn harvest(text: &str, into: &mut Vec<String>) {
    fn walk(v: &Value, into: &mut Vec<String>) {
        match v {
            Value::String(s) => {
                let n = s.chars().count();
                if (3..=60).contains(&n) && !into.contains(s) {
                    into.push(s.clone());
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, into)),
            Value::Object(o) => o.values().for_each(|x| walk(x, into)),
            _ => {}
        }
    }
    if let Some(v) = first_json_value(text) {
        walk(&v, into);
    }
}

/// The tools the walk may call, sorted by name; the others are recorded in
/// `stats.not_called` with why.
pub(super) fn callable_tools<'t>(
    tools: &'t [Tool],
    labels: &[ToolDestructiveness],
    stats: &mut WalkStats,
) -> Vec<&'t Tool> {
    let mut sorted: Vec<&Tool> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut callable = Vec::new();
    for t in sorted {
        let label = labels.iter().find(|l| l.tool == t.name.as_ref());
        let why = if label.is_none_or(destructive::labelled_destructive) {
            Some("destructive".to_owned())
        } else if destructive::open_world(t) {
            Some("openWorldHint: reaches beyond the server".to_owned())
        } else {
            exposes_secrets(t).map(|w| {
                format!("its name says `{w}`: it may return secrets, which must reach neither the tape nor the suite")
            })
        };
        match why {
            Some(why) => stats.not_called.push(json!({"tool": t.name, "why": why})),
            None => callable.push(t),
        }
    }
    callable
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

/// Walk the server; `want` candidates at most.
pub async fn walk(
    session: &Session,
    tools: &[Tool],
    labels: &[ToolDestructiveness],
    instructions: Option<&str>,
    opts: &GenerateOptions,
    want: usize,
    config: &WalkConfig,
) -> WalkOutcome {
    let mut stats = WalkStats::default();
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let callable = callable_tools(tools, labels, &mut stats);
    stats.callable_tools = callable.iter().map(|t| t.name.to_string()).collect();

    let mut forbidden = instructions.unwrap_or("").to_owned();
    for t in tools {
        forbidden.push('\n');
        forbidden.push_str(t.description.as_deref().unwrap_or(""));
    }
    let policy = crate::secrets::policy();
    let mut harvested: Vec<String> = Vec::new();
    let mut tried: HashSet<String> = HashSet::new();
    let mut dead: HashSet<String> = HashSet::new();
    let mut candidates = Vec::new();
    let mut observed = BTreeMap::new();
    let limits = config.limits();

    'rounds: for round in 0..config.max_rounds {
        stats.rounds += 1;
        let before = candidates.len();
        let mut new_calls = 0;
        for tool in &callable {
            let name = tool.name.to_string();
            if dead.contains(&name) {
                continue;
            }
            let schema = Value::Object((*tool.input_schema).clone());
            let has_args = schema
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            let samples = if has_args { config.samples_per_tool } else { 1 };
            for _ in 0..samples {
                if candidates.len() >= want {
                    break 'rounds;
                }
                if stats.calls as usize >= config.max_calls {
                    break 'rounds;
                }
                let drawn = if round > 0 && !harvested.is_empty() {
                    harvest_args(&schema, &mut rng, &harvested, &limits)
                } else {
                    valid_arguments_within(&schema, &mut rng, &limits)
                };
                let args = match drawn {
                    Ok(args) => args,
                    Err(why) => {
                        stats.unsatisfiable.push(json!({"tool": name, "why": format!(
                            "no argument set valid under its input schema within the caps: {why}"
                        )}));
                        dead.insert(name.clone());
                        break;
                    }
                };
                let args_json = Value::Object(args.clone()).to_string();
                if !tried.insert(format!("{name}\u{0}{args_json}")) {
                    continue;
                }
                new_calls += 1;
                stats.calls += 1;
                if !read_only(tool) {
                    stats.state_writes += 1;
                }
                let text = match call_counted(
                    session,
                    &name,
                    &args,
                    config.call_timeout,
                    &mut stats,
                )
                .await
                {
                    Taken::Text(t) => t,
                    Taken::Skip => continue,
                    Taken::Dead => {
                        dead.insert(name.clone());
                        break;
                    }
                };
                if policy.finds(&text) {
                    stats.sensitive_results += 1;
                    continue;
                }
                harvest(&text, &mut harvested);
                let prompt = PROMPT_TEMPLATE
                    .replace("{tool}", &name)
                    .replace("{arguments}", &args_json);
                let Some((answer, check)) = salient(&text, &prompt, &forbidden) else {
                    stats.no_salient_answer += 1;
                    continue;
                };
                // Replay: the answer must come back from the same call.
                stats.calls += 1;
                match call(session, &name, &args, config.call_timeout).await {
                    Called::Text(again) if check.check(&again) => {}
                    _ => {
                        stats.unstable += 1;
                        continue;
                    }
                }
                let id = format!("{}c{}", opts.id_prefix, candidates.len() + 1);
                observed.insert(id.clone(), text);
                candidates.push(single_call(id, &name, prompt, args, answer, check));
            }
        }
        if new_calls == 0 || (round > 0 && candidates.len() == before && harvested.is_empty()) {
            break;
        }
    }
    WalkOutcome {
        candidates,
        observed,
        stats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salient_prefers_new_words_then_the_last_new_number() {
        let prompt =
            "Use the `get-sum` tool with arguments {\"a\":3,\"b\":9} and report the result.";
        let (key, check) =
            salient("The sum of 3 and 9 is 12.", prompt, "Returns the sum").expect("a number");
        assert_eq!(key, "12");
        assert!(check.check("It is 12"));
        assert!(!check.check("It is 13"));
        let (key, _) = salient(
            "{\"entityType\": \"kenlu\", \"name\": \"tavimor\"}",
            "Use the `search_nodes` tool with arguments {\"query\":\"tavimor\"} and report the result.",
            "",
        )
        .expect("a word");
        assert_eq!(key, "kenlu");
        assert!(
            salient(
                "Echo: hello",
                "Use the `echo` tool with arguments {\"message\":\"hello\"} and report the result.",
                "Echoes back the input"
            )
            .is_none()
        );
    }

    #[test]
    fn empty_json_results_are_empty() {
        assert!(is_empty("{\"entities\": [], \"relations\": []}"));
        assert!(is_empty("  "));
        assert!(!is_empty("{\"entities\": [{\"name\": \"x\"}]}"));
    }
}
