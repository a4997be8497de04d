//! Findings read from a run's tapes: what the wire and the agent's calls show
//! about the server's tool descriptions, schemas, annotations and errors.
//!
//! Every finding names the tape lines it rests on (1-based line numbers of
//! `mcp.jsonl`, with their corr_ids), so a reader can open the exact frame.
//!
//! The rules (`findings/1`):
//! - **wrong_tool**: in a drive or construct trial (corr_id `<task>` or
//!   `<task>::construct`), a `tools/call` of a tool that is not among the
//!   task's expected tools. One finding per wrongly chosen tool, counted
//!   against all wrong-tool selections of the run.
//! - **missing_when_not_to_use**: a wrongly chosen tool whose description says
//!   nothing about when not to use it (no "do not", "don't", "not for",
//!   "instead", "only for", "only when").
//! - **corrected_argument**: a call that failed (JSON-RPC error or `isError`)
//!   in a drive or construct trial followed, under the same corr_id, by a
//!   successful call to the same tool with different arguments; the
//!   parameters that differ (added, removed or changed) are the ones
//!   corrected. A retry with identical arguments is not an argument
//!   correction.
//! - **ambiguous_parameter**: a parameter named like an entity (`user`, `id`,
//!   `name`, `item`, `account`, ...) that either drew argument errors (an
//!   error response naming the parameter) or whose description does not say
//!   what form the value takes (no "id", "identifier", "name", "email",
//!   "number", "uuid", "format", "e.g.").
//! - **unannotated_destructive**: a tool inferred destructive (the suite's
//!   destructiveness assessment) that declares nothing in its annotations
//!   (no `destructiveHint`, no `readOnlyHint`); a declaration either way is
//!   taken as the server's word. The evidence is the `tools/list` response
//!   line that lists it.
//! - **unactionable_error**: an error response whose text names none of the
//!   tool's parameters, carries no number (no range, no limit) and no hint
//!   word ("must", "expected", "should", "retry", "try", "use", "valid",
//!   "between", "one of", "allowed", "required", "missing", "at most",
//!   "at least"; whole words).
//!
//! Probe traffic (calls to tools the server does not list) is ignored.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use anyhow::Context as _;
use fitness_shared::record::{EvidenceLink, Finding, FindingKind};
use fitness_shared::tape::jsonrpc::error_words;
use fitness_shared::tape::pairing::{AfterAnswer, Pairing, Reach, Repeat, RequestFate, Rules};
use fitness_shared::tape::view::{Content, ContentItem, LineView, RawView};
use fitness_shared::tape::{Plane, TapeReader};
use rmcp::model::Tool;
use serde_json::{Map, Value};

use crate::suite::ToolDestructiveness;
use crate::suite::task::Task;

/// Parameter names that name an entity rather than a value's form.
pub const ENTITY_NAMES: &[&str] = &[
    "user", "id", "name", "item", "account", "customer", "project", "file", "record", "entity",
    "object", "target", "resource", "key", "ref", "owner", "org", "team", "document", "doc",
    "node", "page", "member", "person", "repo", "issue", "order", "product",
];

/// Words that say what form an entity-named value takes.
const FORM_WORDS: &[&str] = &[
    "id",
    "identifier",
    "name",
    "email",
    "number",
    "numeric",
    "uuid",
    "slug",
    "handle",
    "format",
    "e.g",
    "for example",
    "username",
];

/// Words that tell a caller what to do about an error.
const HINT_WORDS: &[&str] = &[
    "must", "expected", "should", "retry", "try", "use", "valid", "between", "one of", "allowed",
    "required", "missing", "at most", "at least",
];

/// Words that say when not to use a tool.
const WHEN_NOT_WORDS: &[&str] = &[
    "do not",
    "don't",
    "not for",
    "instead",
    "only for",
    "only when",
    "never use",
];

/// The most evidence links one finding carries (the summary keeps the counts).
pub const MAX_EVIDENCE: usize = 12;

/// One `tools/call` exchange read from the wire tape.
#[derive(Debug, Clone)]
pub struct CallExchange {
    pub tool: String,
    pub arguments: Map<String, Value>,
    pub corr_id: Option<String>,
    pub request_line: u64,
    /// The corr_ids the request and response lines carry on the tape (they
    /// differ from `corr_id` only when an answer was taped before its request).
    pub request_corr: Option<String>,
    pub response_corr: Option<String>,
    pub response_line: Option<u64>,
    /// The error text when the response was a JSON-RPC error or `isError`.
    pub error: Option<String>,
}

/// How many lines before its request an answer may be taped and still be
/// paired with it.
const EARLY_WINDOW: u64 = 4;

/// What the wire tape holds that findings need.
#[derive(Debug, Default)]
pub struct WireReading {
    pub calls: Vec<CallExchange>,
    /// `tools/list` response lines, with the tool names each lists.
    pub tool_lists: Vec<(u64, Option<String>, Vec<String>)>,
}

/// Read `mcp.jsonl`: every `tools/call` with its response, and every
/// `tools/list` response. Requests and responses are paired by JSON-RPC id
/// in tape order (sessions on the tape run one after another).
pub fn read_wire(path: &Path) -> anyhow::Result<WireReading> {
    let file =
        std::fs::File::open(path).with_context(|| format!("failed to open {}", path.display()))?;
    let mut reader = TapeReader::new(std::io::BufReader::new(file));
    let mut frames = WireFrames::new();
    while let Some(raw) = reader.next_raw()? {
        let mut spill = None;
        if let Ok(line) = LineView::read(raw.bytes, &mut spill) {
            frames.read_line(raw.number, &line);
        }
    }
    Ok(frames.finish())
}

/// The wire tape's request and response frames in tape order, as they are
/// paired.
struct WireFrames {
    pairing: Pairing<String>,
    requests: Vec<WireRequest>,
    responses: Vec<WireResponse>,
}

impl WireFrames {
    fn new() -> WireFrames {
        WireFrames {
            // In tape order, by id alone; a request reusing an open id takes
            // it over (the earlier stays unanswered); the tap can write a
            // request frame just after its answer, so a `tools/call` takes an
            // answer taped at most EARLY_WINDOW lines before it.
            pairing: Pairing::new(Rules {
                reach: Reach::InOrder {
                    early_answers: Some(EARLY_WINDOW),
                },
                repeat: Repeat::Shadow,
                after_answer: AfterAnswer::Close,
            }),
            requests: Vec::new(),
            responses: Vec::new(),
        }
    }

    /// Take one tape line: a request or response frame with an id is kept,
    /// anything else passed over.
    fn read_line(&mut self, number: u64, line: &LineView<'_>) {
        let Some(frame) = line.raw.0.as_ref() else {
            return;
        };
        let corr = line.corr_id.get().map(str::to_owned);
        let Some(id) = frame
            .id
            .as_ref()
            .filter(|v| !v.is_null())
            .map(Value::to_string)
        else {
            return;
        };
        match line.dir.get() {
            Some("in") => self.request(id, number, corr, frame),
            Some("out") => self.response(id, number, corr, frame),
            _ => {}
        }
    }

    /// A request frame; a `tools/call` keeps its tool and arguments.
    fn request(&mut self, id: String, number: u64, corr: Option<String>, frame: &RawView<'_>) {
        let Some(method) = frame.method.get() else {
            return;
        };
        let call = (method == "tools/call").then(|| {
            let params = frame.params.0.as_ref();
            let tool = params
                .and_then(|p| p.name.get())
                .unwrap_or_default()
                .to_owned();
            let arguments = params
                .and_then(|p| p.arguments)
                .and_then(|a| serde_json::from_str::<Map<String, Value>>(a.get()).ok())
                .unwrap_or_default();
            (tool, arguments)
        });
        if call.is_some() {
            self.pairing.request(id, number);
        } else {
            self.pairing.request_without_early_answers(id, number);
        }
        self.requests.push(WireRequest {
            line: number,
            corr,
            method: method.to_owned(),
            call,
        });
    }

    /// A response frame, with its error and the tools a `tools/list` lists.
    fn response(&mut self, id: String, number: u64, corr: Option<String>, frame: &RawView<'_>) {
        self.pairing.response(id, number);
        let tools = frame.result.0.as_ref().map(|r| {
            r.tools
                .0
                .iter()
                .filter_map(|t| t.0.as_ref()?.name.get().map(str::to_owned))
                .collect()
        });
        self.responses.push(WireResponse {
            line: number,
            corr,
            error: error_text(frame),
            tools,
        });
    }

    /// Pair the frames: every `tools/call` with its answer, every
    /// `tools/list` response.
    fn finish(self) -> WireReading {
        let paired = self.pairing.finish();
        let mut out = WireReading::default();
        for (request, fate) in self.requests.iter().zip(&paired.requests) {
            let response = match fate {
                RequestFate::Answered(r) => self.responses.get(*r),
                _ => None,
            };
            out.calls.extend(exchange(request, response));
        }
        for (response, answers) in self.responses.into_iter().zip(&paired.responses) {
            let Some(request) = answers.map(|q| &self.requests[q]) else {
                continue;
            };
            if request.call.is_none()
                && request.method == "tools/list"
                && let Some(names) = response.tools
            {
                out.tool_lists.push((response.line, response.corr, names));
            }
        }
        out
    }
}

/// A `tools/call` request with its answer, if any; `None` for another
/// method.
fn exchange(request: &WireRequest, response: Option<&WireResponse>) -> Option<CallExchange> {
    let (tool, arguments) = request.call.as_ref()?;
    // An answer taped before its request belongs to the trial that was
    // running when it was taped: the call takes the answer's corr_id.
    let corr_id = match response {
        Some(answer) if answer.line < request.line => answer.corr.clone().or(request.corr.clone()),
        _ => request.corr.clone(),
    };
    Some(CallExchange {
        tool: tool.clone(),
        arguments: arguments.clone(),
        corr_id,
        request_line: request.line,
        request_corr: request.corr.clone(),
        response_corr: response.and_then(|a| a.corr.clone()),
        response_line: response.map(|a| a.line),
        error: response.and_then(|a| a.error.clone()),
    })
}

/// A request frame of the wire tape, as findings need it.
struct WireRequest {
    line: u64,
    corr: Option<String>,
    method: String,
    /// For a `tools/call`: the tool and its arguments.
    call: Option<(String, Map<String, Value>)>,
}

/// A response frame of the wire tape, as findings need it.
struct WireResponse {
    line: u64,
    corr: Option<String>,
    error: Option<String>,
    /// The names a `tools/list` result lists.
    tools: Option<Vec<String>>,
}

/// The error a response carries: a JSON-RPC error's message (and data), or
/// the text blocks of an `isError` result.
fn error_text(frame: &RawView<'_>) -> Option<String> {
    if let Some(err) = &frame.error {
        return Some(error_words(err));
    }
    let result = frame.result.0.as_ref()?;
    if !result.is_error.0 {
        return None;
    }
    let text = match Content::read(result.content) {
        Content::Items(items) => items
            .into_iter()
            .filter_map(|item| match item {
                ContentItem::Obj(Some(text)) => Some(text.into_owned()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    Some(text)
}

/// Everything the findings are computed from.
pub struct Inputs<'a> {
    /// The run directory (holding `mcp.jsonl`).
    pub dir: &'a Path,
    /// The tools as the server listed them.
    pub tools: &'a [Tool],
    /// Every task driven or checked (suite and extension batches).
    pub tasks: &'a [Task],
    /// The suite's destructiveness labels; inferred by the rule set when the
    /// run stopped before generation.
    pub destructiveness: &'a [ToolDestructiveness],
}

/// All findings of a run, in a stable order, ids `f1`, `f2`, ...
pub fn analyze(inputs: &Inputs<'_>) -> anyhow::Result<Vec<Finding>> {
    let wire = read_wire(&inputs.dir.join(fitness_shared::site::MCP_TAPE))?;
    Ok(from_wire(&wire, inputs))
}

/// The findings of an already-read wire tape.
pub fn from_wire(wire: &WireReading, inputs: &Inputs<'_>) -> Vec<Finding> {
    let listed: BTreeMap<&str, &Tool> = inputs.tools.iter().map(|t| (t.name.as_ref(), t)).collect();
    // Probe traffic (unknown tools) is not the agent's nor the server's tools.
    let calls: Vec<&CallExchange> = wire
        .calls
        .iter()
        .filter(|c| listed.contains_key(c.tool.as_str()))
        .collect();
    let mut found: Vec<Finding> = Vec::new();
    wrong_tool(&calls, inputs, &listed, wire, &mut found);
    corrected_arguments(&calls, inputs.tasks, &mut found);
    ambiguous_parameters(&calls, inputs.tools, wire, &mut found);
    unannotated_destructive(inputs, wire, &mut found);
    unactionable_errors(&calls, &listed, &mut found);
    for (i, f) in found.iter_mut().enumerate() {
        f.id = format!("f{}", i + 1);
    }
    found
}

fn link(line: u64, corr: Option<&String>) -> EvidenceLink {
    EvidenceLink {
        tape: Plane::Mcp,
        line,
        corr_id: corr.cloned(),
    }
}

/// The request line and (when answered) the response line of a call.
fn call_links(c: &CallExchange) -> Vec<EvidenceLink> {
    let mut v = vec![link(c.request_line, c.request_corr.as_ref())];
    if let Some(r) = c.response_line {
        v.push(link(r, c.response_corr.as_ref()));
    }
    v
}

fn capped(mut v: Vec<EvidenceLink>) -> Vec<EvidenceLink> {
    v.truncate(MAX_EVIDENCE);
    v
}

/// The first `tools/list` response line that lists `tool`.
fn listing_line(wire: &WireReading, tool: &str) -> Option<EvidenceLink> {
    wire.tool_lists
        .iter()
        .find(|(_, _, names)| names.iter().any(|n| n == tool))
        .map(|(line, corr, _)| link(*line, corr.as_ref()))
}

/// The task a trial's corr_id belongs to (drive `<task>`, construct
/// `<task>::construct`); other arms are not selections by an agent.
fn trial_task<'t>(corr: Option<&String>, tasks: &'t [Task]) -> Option<&'t Task> {
    let corr = corr?;
    let id = corr.strip_suffix("::construct").unwrap_or(corr);
    if id.contains("::") {
        return None;
    }
    tasks.iter().find(|t| t.id == id)
}

fn wrong_tool(
    calls: &[&CallExchange],
    inputs: &Inputs<'_>,
    listed: &BTreeMap<&str, &Tool>,
    wire: &WireReading,
    found: &mut Vec<Finding>,
) {
    // chosen tool -> (calls, expected tools of those tasks)
    let mut wrong: BTreeMap<&str, (Vec<&CallExchange>, BTreeSet<&str>)> = BTreeMap::new();
    let mut selections = 0u64;
    for c in calls {
        let Some(task) = trial_task(c.corr_id.as_ref(), inputs.tasks) else {
            continue;
        };
        if task.expected_tools.is_empty() {
            continue;
        }
        selections += 1;
        if !task.expected_tools.contains(&c.tool) {
            let entry = wrong.entry(c.tool.as_str()).or_default();
            entry.0.push(c);
            entry
                .1
                .extend(task.expected_tools.iter().map(String::as_str));
        }
    }
    let total: usize = wrong.values().map(|(v, _)| v.len()).sum();
    for (tool, (bad, expected)) in &wrong {
        let expected: Vec<&str> = expected.iter().copied().collect();
        let trials: BTreeSet<&str> = bad.iter().filter_map(|c| c.corr_id.as_deref()).collect();
        let evidence: Vec<EvidenceLink> = bad.iter().flat_map(|c| call_links(c)).collect();
        found.push(Finding {
            id: String::new(),
            kind: FindingKind::WrongTool,
            tool: (*tool).to_owned(),
            parameter: None,
            summary: format!(
                "`{tool}` caused {} of {total} wrong-tool selections ({} of {selections} calls in drive and construct trials, over {} trials); those tasks expected {}.",
                bad.len(),
                total,
                trials.len(),
                expected
                    .iter()
                    .map(|t| format!("`{t}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            evidence: capped(evidence.clone()),
        });
        let description = listed
            .get(tool)
            .and_then(|t| t.description.as_deref())
            .unwrap_or("");
        let lower = description.to_lowercase();
        if !WHEN_NOT_WORDS.iter().any(|w| lower.contains(w)) {
            let mut ev: Vec<EvidenceLink> = listing_line(wire, tool).into_iter().collect();
            ev.extend(evidence);
            found.push(Finding {
                id: String::new(),
                kind: FindingKind::MissingWhenNotToUse,
                tool: (*tool).to_owned(),
                parameter: None,
                summary: format!(
                    "`{tool}` was chosen wrongly {} times and its description ({:?}) says nothing about when not to use it.",
                    bad.len(),
                    description
                ),
                evidence: capped(ev),
            });
        }
    }
}

/// Parameters whose values differ between two argument objects.
fn differing(a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<String> {
    let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .cloned()
        .collect()
}

fn corrected_arguments(calls: &[&CallExchange], tasks: &[Task], found: &mut Vec<Finding>) {
    // (tool, parameter) -> (corrections, evidence)
    let mut fixes: BTreeMap<(String, String), (u64, Vec<EvidenceLink>)> = BTreeMap::new();
    let mut failed_calls: BTreeMap<String, u64> = BTreeMap::new();
    for (i, c) in calls.iter().enumerate() {
        // Only an agent's trials correct arguments (not the generator's
        // walk, not the random-argument null arm).
        if c.error.is_none() || trial_task(c.corr_id.as_ref(), tasks).is_none() {
            continue;
        }
        *failed_calls.entry(c.tool.clone()).or_default() += 1;
        let later = calls[i + 1..]
            .iter()
            .find(|d| d.corr_id == c.corr_id && d.tool == c.tool && d.response_line.is_some());
        let Some(fixed) = later.filter(|d| d.error.is_none()) else {
            continue;
        };
        let params = differing(&c.arguments, &fixed.arguments);
        for p in params {
            let entry = fixes.entry((c.tool.clone(), p)).or_default();
            entry.0 += 1;
            entry.1.extend(call_links(c));
            entry.1.extend(call_links(fixed));
        }
    }
    for ((tool, param), (n, evidence)) in fixes {
        let failed = failed_calls.get(&tool).copied().unwrap_or(n);
        found.push(Finding {
            id: String::new(),
            kind: FindingKind::CorrectedArgument,
            tool: tool.clone(),
            parameter: Some(param.clone()),
            summary: format!(
                "`{tool}`: the agent corrected `{param}` {n} times after a failed call ({failed} failed calls to `{tool}` in all)."
            ),
            evidence: capped(evidence),
        });
    }
}

/// Does `text` name `word` as a whole word (or in backticks)?
fn names(text: &str, word: &str) -> bool {
    let lower = text.to_lowercase();
    let word = word.to_lowercase();
    lower.match_indices(&word).any(|(at, _)| {
        let before = lower[..at].chars().next_back();
        let after = lower[at + word.len()..].chars().next();
        let edge = |c: Option<char>| c.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        edge(before) && edge(after)
    })
}

/// The input parameters of a tool: (name, schema).
fn parameters(tool: &Tool) -> Vec<(String, Value)> {
    tool.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

fn ambiguous_parameters(
    calls: &[&CallExchange],
    tools: &[Tool],
    wire: &WireReading,
    found: &mut Vec<Finding>,
) {
    for tool in tools {
        for (param, schema) in parameters(tool) {
            let lower = param.to_lowercase();
            if !ENTITY_NAMES.contains(&lower.as_str()) {
                continue;
            }
            let description = schema
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            let desc_lower = description.to_lowercase();
            // The parameter's own name does not say what form it takes.
            let says_form = FORM_WORDS
                .iter()
                .filter(|w| **w != lower)
                .any(|w| names(&desc_lower, w) || (w.contains('.') && desc_lower.contains(w)));
            let constrained = schema.get("enum").is_some()
                || schema.get("minimum").is_some()
                || schema.get("pattern").is_some()
                || schema.get("format").is_some();
            let errors: Vec<&&CallExchange> = calls
                .iter()
                .filter(|c| {
                    c.tool == tool.name.as_ref()
                        && c.error.as_deref().is_some_and(|e| names(e, &param))
                })
                .collect();
            let all_calls = calls
                .iter()
                .filter(|c| c.tool == tool.name.as_ref())
                .count();
            if errors.is_empty() && (says_form || constrained) {
                continue;
            }
            let ty = schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("untyped");
            let mut evidence: Vec<EvidenceLink> =
                listing_line(wire, &tool.name).into_iter().collect();
            evidence.extend(errors.iter().flat_map(|c| call_links(c)));
            let mut by_arm: BTreeMap<&str, u64> = BTreeMap::new();
            for c in &errors {
                *by_arm.entry(arm(c.corr_id.as_deref())).or_default() += 1;
            }
            let arms = by_arm
                .iter()
                .map(|(a, n)| format!("{a} {n}"))
                .collect::<Vec<_>>()
                .join(", ");
            let example = errors
                .first()
                .and_then(|c| c.error.as_deref())
                .map(|e| format!(" The server answered, e.g.: {:?}.", excerpt(e)))
                .unwrap_or_default();
            found.push(Finding {
                id: String::new(),
                kind: FindingKind::AmbiguousParameter,
                tool: tool.name.to_string(),
                parameter: Some(param.clone()),
                summary: format!(
                    "`{}.{param}` is named like an entity ({ty}, described {:?}) without saying what value is meant; it drew {} argument errors in {all_calls} calls{}.{example}",
                    tool.name,
                    description,
                    errors.len(),
                    if arms.is_empty() { String::new() } else { format!(" (by arm: {arms})") }
                ),
                evidence: capped(evidence),
            });
        }
    }
}

/// Which part of the run a corr_id belongs to, for summaries.
pub fn arm(corr: Option<&str>) -> &'static str {
    match corr {
        None => "session",
        Some(c) if c.starts_with("generate") => "generation",
        Some(c) if c.starts_with("probe") => "probe",
        Some(c) if c.ends_with("::construct") => "construct",
        Some(c) if c.contains("::null-") => "null",
        Some(c) if c.contains("::") => "other",
        Some(_) => "drive",
    }
}

fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(160).collect();
    if t.len() < text.len() {
        format!("{t}...")
    } else {
        t
    }
}

fn unannotated_destructive(inputs: &Inputs<'_>, wire: &WireReading, found: &mut Vec<Finding>) {
    for label in inputs.destructiveness {
        // A declaration either way is the server's word; only the silent
        // tools are findings.
        if !label.inferred || label.declared.is_some() {
            continue;
        }
        let declared = "declares no destructiveness (no destructiveHint, no readOnlyHint)";
        found.push(Finding {
            id: String::new(),
            kind: FindingKind::UnannotatedDestructive,
            tool: label.tool.clone(),
            parameter: None,
            summary: format!(
                "`{}` {declared}, but is inferred destructive: {}.",
                label.tool, label.evidence
            ),
            evidence: listing_line(wire, &label.tool).into_iter().collect(),
        });
    }
}

/// Does an error text give the caller something to act on?
pub fn actionable(text: &str, params: &[String]) -> bool {
    let lower = text.to_lowercase();
    params.iter().any(|p| names(&lower, p))
        || lower.chars().any(|c| c.is_ascii_digit())
        || HINT_WORDS.iter().any(|w| names(&lower, w))
}

/// Does an error quote something the call sent? `Unknown column 'starts'
/// in 'WHERE'` names the word of the query that was wrong: the caller can
/// act on it though it names no parameter.
fn quotes_what_was_sent(text: &str, arguments: &Map<String, Value>) -> bool {
    let mut sent = Vec::new();
    for v in arguments.values() {
        strings_in(v, &mut sent);
    }
    quoted_spans(text)
        .iter()
        .any(|q| sent.iter().any(|s| s.contains(q.as_str())))
}

/// The strings inside a JSON value, at any depth.
fn strings_in<'v>(v: &'v Value, out: &mut Vec<&'v str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| strings_in(i, out)),
        Value::Object(map) => map.values().for_each(|i| strings_in(i, out)),
        _ => {}
    }
}

/// The spans an error text puts in quotes ('x', "x", `x`), non-empty.
fn quoted_spans(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for q in ['\'', '"', '`'] {
        let parts: Vec<&str> = text.split(q).collect();
        // Every other part sits between a pair of quotes.
        out.extend(
            parts
                .iter()
                .skip(1)
                .step_by(2)
                .take(parts.len().saturating_sub(1) / 2)
                .filter(|p| !p.trim().is_empty() && p.chars().count() <= 80)
                .map(|p| (*p).to_owned()),
        );
    }
    out
}

fn unactionable_errors(
    calls: &[&CallExchange],
    listed: &BTreeMap<&str, &Tool>,
    found: &mut Vec<Finding>,
) {
    let mut by_tool: BTreeMap<&str, (u64, Vec<&CallExchange>)> = BTreeMap::new();
    for c in calls {
        let Some(err) = c.error.as_deref() else {
            continue;
        };
        let Some(tool) = listed.get(c.tool.as_str()) else {
            continue;
        };
        let params: Vec<String> = parameters(tool).into_iter().map(|(p, _)| p).collect();
        let entry = by_tool.entry(c.tool.as_str()).or_default();
        entry.0 += 1;
        if !actionable(err, &params) && !quotes_what_was_sent(err, &c.arguments) {
            entry.1.push(c);
        }
    }
    for (tool, (errors, bad)) in by_tool {
        let Some(first) = bad.first() else { continue };
        found.push(Finding {
            id: String::new(),
            kind: FindingKind::UnactionableError,
            tool: tool.to_owned(),
            parameter: None,
            summary: format!(
                "{} of {errors} error responses from `{tool}` named none of its parameters, nothing the call sent, no range and no hint, e.g. {:?}.",
                bad.len(),
                excerpt(first.error.as_deref().unwrap_or(""))
            ),
            evidence: capped(bad.iter().flat_map(|c| call_links(c)).collect()),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::suite::task::Predicate;
    use serde_json::json;

    fn tool(v: Value) -> Tool {
        serde_json::from_value(v).expect("a tool")
    }

    fn task(id: &str, expected: &str) -> Task {
        Task {
            id: id.into(),
            prompt: format!("Task {id}"),
            expected_tools: vec![expected.into()],
            answer_key: "42".into(),
            check: Predicate::Substring {
                value: "42".into(),
                case_insensitive: false,
            },
            destructive: false,
            solution: Vec::new(),
            handles: Vec::new(),
            rationale: None,
            origin: None,
            kind: Default::default(),
            state_check: None,
            shape: None,
        }
    }

    fn call(tool: &str, args: Value, corr: &str, line: u64, error: Option<&str>) -> CallExchange {
        CallExchange {
            tool: tool.into(),
            arguments: args.as_object().cloned().unwrap_or_default(),
            corr_id: Some(corr.into()),
            request_line: line,
            request_corr: Some(corr.into()),
            response_corr: Some(corr.into()),
            response_line: Some(line + 1),
            error: error.map(str::to_owned),
        }
    }

    #[test]
    fn selections_corrections_and_unactionable_errors_from_a_wire_reading() {
        let tools = vec![
            tool(json!({"name": "search", "description": "Search things.",
                "inputSchema": {"type": "object", "properties": {"q": {"type": "string", "description": "Query text."}}}})),
            tool(json!({"name": "lookup", "description": "Look up a record.",
                "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "description": "The record."}}, "required": ["id"]}})),
        ];
        let tasks = vec![task("t1", "lookup"), task("t2", "lookup")];
        let wire = WireReading {
            calls: vec![
                call("search", json!({"q": "x"}), "t1", 10, None),
                call("lookup", json!({}), "t1", 12, Some("`id` is required")),
                call("lookup", json!({"id": "7"}), "t1", 14, None),
                call("search", json!({"q": "y"}), "t2", 16, None),
                call(
                    "lookup",
                    json!({"id": "7"}),
                    "t2::construct",
                    18,
                    Some("internal failure"),
                ),
                call("lookup", json!({"id": "7"}), "t2::construct", 20, None),
                // The generator's own walk and probes are not selections.
                call("search", json!({"q": "z"}), "generate", 22, None),
                call("nope", json!({}), "probe::x", 24, Some("unknown tool")),
            ],
            tool_lists: vec![(5, None, vec!["search".into(), "lookup".into()])],
        };
        let inputs = Inputs {
            dir: Path::new("."),
            tools: &tools,
            tasks: &tasks,
            destructiveness: &[],
        };
        let found = from_wire(&wire, &inputs);
        let kinds: Vec<(FindingKind, &str, Option<&str>)> = found
            .iter()
            .map(|f| (f.kind, f.tool.as_str(), f.parameter.as_deref()))
            .collect();
        assert!(
            kinds.contains(&(FindingKind::WrongTool, "search", None)),
            "{kinds:?}"
        );
        assert!(kinds.contains(&(FindingKind::MissingWhenNotToUse, "search", None)));
        assert!(kinds.contains(&(FindingKind::CorrectedArgument, "lookup", Some("id"))));
        assert!(kinds.contains(&(FindingKind::AmbiguousParameter, "lookup", Some("id"))));
        assert!(kinds.contains(&(FindingKind::UnactionableError, "lookup", None)));
        let wrong = found
            .iter()
            .find(|f| f.kind == FindingKind::WrongTool)
            .unwrap();
        assert!(
            wrong
                .summary
                .contains("caused 2 of 2 wrong-tool selections"),
            "{}",
            wrong.summary
        );
        let lines: Vec<u64> = wrong.evidence.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![10, 11, 16, 17]);
        // The identical retry after the internal failure is not a correction.
        let fixed = found
            .iter()
            .find(|f| f.kind == FindingKind::CorrectedArgument)
            .unwrap();
        assert!(
            fixed.summary.contains("corrected `id` 1 times"),
            "{}",
            fixed.summary
        );
        let missing = found
            .iter()
            .find(|f| f.kind == FindingKind::MissingWhenNotToUse)
            .unwrap();
        assert_eq!(missing.evidence[0].line, 5, "the listing comes first");
        let ids: Vec<&str> = found.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids[0], "f1");

        // The rule set answers every finding; the selection findings share one.
        let ctx = crate::rewrite::proposals::Context {
            tools: &tools,
            tasks: &tasks,
            wire: &wire,
        };
        let proposals = crate::rewrite::proposals::by_rules(&found, &ctx);
        let answered: usize = proposals.iter().map(|p| p.answers.len()).sum();
        assert_eq!(answered, found.len());
        let search = proposals.iter().find(|p| p.tool == "search").unwrap();
        assert_eq!(search.answers.len(), 2);
        assert_eq!(
            search.change.append_description.as_deref(),
            Some("Do not use it for tasks that need `lookup`: use `lookup` instead.")
        );
    }

    #[test]
    fn an_answer_taped_before_its_request_is_paired_under_its_own_corr_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(fitness_shared::site::MCP_TAPE);
        let lines = [
            json!({"t": "x", "dir": "in", "corr_id": "t3", "raw": {"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "a", "arguments": {}}}}),
            json!({"t": "x", "dir": "out", "corr_id": "t3", "raw": {"jsonrpc": "2.0", "id": 9, "result": {"content": []}}}),
            json!({"t": "x", "dir": "out", "corr_id": "t3", "raw": {"jsonrpc": "2.0", "id": 10, "result": {"isError": true, "content": [{"type": "text", "text": "boom"}]}}}),
            json!({"t": "x", "dir": "in", "corr_id": "t4", "raw": {"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "a", "arguments": {"x": 1}}}}),
        ];
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        let wire = read_wire(&path).unwrap();
        assert_eq!(wire.calls.len(), 2);
        let late = &wire.calls[1];
        assert_eq!(late.corr_id.as_deref(), Some("t3"));
        assert_eq!((late.request_line, late.response_line), (4, Some(3)));
        assert_eq!(late.error.as_deref(), Some("boom"));
    }

    #[test]
    fn whole_word_naming() {
        assert!(names("no user \"x\": `user` is the id", "user"));
        assert!(!names("username required", "user"));
        assert!(names("limit must be between 1 and 50", "limit"));
    }

    #[test]
    fn actionable_errors_name_a_parameter_a_number_or_a_hint() {
        let p = vec!["scope".to_owned()];
        assert!(actionable("scope is wrong", &p));
        assert!(actionable("at most 50", &p));
        assert!(actionable("retry the call", &p));
        assert!(!actionable("internal error", &p));
        assert!(!actionable("something went wrong", &p));
        assert!(!actionable("no such entry", &p));
        assert!(!actionable("Invalid params", &p));
    }

    #[test]
    fn an_error_that_quotes_what_the_call_sent_is_actionable() {
        let tools = [tool(
            json!({"name": "query", "inputSchema": {"type": "object",
            "properties": {"sql": {"type": "string"}}}}),
        )];
        let listed: BTreeMap<&str, &Tool> = tools.iter().map(|t| (t.name.as_ref(), t)).collect();
        let sql = json!({"sql": "SELECT * FROM events WHERE starts > 3"});
        let named = call(
            "query",
            sql,
            "t1",
            10,
            Some("Unknown column 'starts' in 'WHERE'"),
        );
        let opaque = call(
            "query",
            json!({"sql": "SELECT 1"}),
            "t2",
            12,
            Some("Query failed"),
        );
        let mut found = Vec::new();
        unactionable_errors(&[&named, &opaque], &listed, &mut found);
        assert_eq!(found.len(), 1, "{found:?}");
        // The finding counts the one error that names nothing, and quotes it.
        assert!(
            found[0].summary.starts_with("1 of 2 error responses"),
            "{}",
            found[0].summary
        );
        assert!(
            found[0].summary.contains("Query failed"),
            "{}",
            found[0].summary
        );
        assert!(!found[0].summary.contains("starts"), "{}", found[0].summary);
        assert_eq!(quoted_spans("say 'a' and \"b\""), ["a", "b"]);
    }

    #[test]
    fn differing_parameters_cover_added_removed_and_changed() {
        let a: Map<String, Value> = serde_json::from_str(r#"{"x":1,"y":2}"#).unwrap();
        let b: Map<String, Value> = serde_json::from_str(r#"{"x":1,"y":3,"z":0}"#).unwrap();
        assert_eq!(differing(&a, &b), vec!["y".to_owned(), "z".to_owned()]);
        assert!(differing(&a, &a).is_empty());
    }
}
