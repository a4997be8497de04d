//! Pairing statistics in the `mcp-tape.stats/1` shape (R-TAPE-8).
//!
//! The figures must agree with the `trace_stats` blocks the reference
//! implementation stored in its records, so the rules are the reference's:
//! `tools/call` requests paired with responses by id (keyed per source file
//! and producer), an error is a JSON-RPC error or `result.isError: true`, a
//! request with no response is pending, latencies are nearest-rank
//! percentiles of whole milliseconds, and echoed turns are never model calls.
//!
//! Memory: lines are read one at a time and only the facts the figures need
//! are kept (a key, a timestamp and a tool name per call, a few numbers per
//! turn), never the lines themselves. The facts are settled in [`finish`]
//! because the reference pairs over the whole file: a response may precede
//! its request, and turns are ordered by time before pairing.
//!
//! [`finish`]: StatsBuilder::finish

use std::cmp::Ordering;
use std::collections::HashMap;

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::js;
use super::line::LineKind;
use super::view::{Content, ContentItem, LineView, ProducerView, RawView};

/// The schema id of every stats block.
pub const STATS_SCHEMA: &str = "mcp-tape.stats/1";

/// A number printed as JavaScript prints it: integral values without a
/// fraction (`44518`, not `44518.0`).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct JsNum(pub f64);

impl Serialize for JsNum {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v = self.0;
        if v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0 {
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}

/// Lines by kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RecordCounts {
    pub total: u64,
    pub meta: u64,
    pub message: u64,
    pub event: u64,
    pub turn: u64,
    pub end: u64,
    pub other: u64,
}

impl RecordCounts {
    fn add(&mut self, kind: LineKind) {
        self.total += 1;
        match kind {
            LineKind::Meta => self.meta += 1,
            LineKind::Message => self.message += 1,
            LineKind::Event => self.event += 1,
            LineKind::Turn => self.turn += 1,
            LineKind::End => self.end += 1,
            LineKind::Other => self.other += 1,
        }
    }

    fn merged(&self, b: &RecordCounts) -> RecordCounts {
        RecordCounts {
            total: self.total + b.total,
            meta: self.meta + b.meta,
            message: self.message + b.message,
            event: self.event + b.event,
            turn: self.turn + b.turn,
            end: self.end + b.end,
            other: self.other + b.other,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStats {
    pub label: Option<String>,
    pub kind: Option<String>,
    pub started_at: Option<String>,
    pub ended_at: Option<String>,
    pub duration_ms: Option<JsNum>,
    pub command: Option<Vec<String>>,
    pub producer: Option<String>,
    pub records: RecordCounts,
    pub skipped_lines: u64,
    pub end_reason: Option<String>,
    pub exit_code: Option<JsNum>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelStats {
    pub model: String,
    pub calls: u64,
    pub input_tokens: Option<JsNum>,
    pub output_tokens: Option<JsNum>,
    pub cache_read_tokens: Option<JsNum>,
    pub cache_creation_tokens: Option<JsNum>,
    pub thinking_tokens: Option<JsNum>,
    pub thinking_estimated: bool,
    pub cache_hit_rate: Option<JsNum>,
    pub ttft_p50_ms: Option<JsNum>,
    pub ttft_p95_ms: Option<JsNum>,
    pub est_cost_usd: Option<JsNum>,
    /// False when no price row matched this model id.
    pub priced: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelSummary {
    pub models: u64,
    pub assistant_turns: u64,
    pub turns: u64,
    pub echoed_turns: u64,
    pub input_tokens: Option<JsNum>,
    pub output_tokens: Option<JsNum>,
    pub cache_read_tokens: Option<JsNum>,
    pub cache_creation_tokens: Option<JsNum>,
    pub thinking_exact_tokens: Option<JsNum>,
    pub thinking_estimated_tokens: Option<JsNum>,
    pub cache_hit_rate: Option<JsNum>,
    pub total_model_time_ms: Option<JsNum>,
}

/// List-price estimate; never billing data.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostStats {
    pub estimated: bool,
    pub currency: String,
    pub total_usd: Option<JsNum>,
    /// Some usage could not be priced: the total is a lower bound.
    pub partial: bool,
    pub unpriced_models: Vec<String>,
    pub as_of: Option<String>,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelsBlock {
    pub per_model: Vec<ModelStats>,
    pub summary: ModelSummary,
    pub cost: CostStats,
}

/// Where a tool row's calls were seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// JSON-RPC `tools/call` pairs.
    Mcp,
    /// `tool_use` / `tool_result` blocks.
    Turn,
    Mixed,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolStats {
    pub name: String,
    pub calls: u64,
    pub errors: u64,
    pub p50_ms: Option<JsNum>,
    pub p95_ms: Option<JsNum>,
    pub origin: Origin,
    /// Calls with no response.
    pub pending: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorSource {
    Tool,
    Jsonrpc,
    Llm,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ErrorStats {
    pub t: Option<String>,
    pub source: ErrorSource,
    pub name: String,
    pub message: String,
}

/// The stats of one plane (one tape, or several tapes of the same kind).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    pub schema: &'static str,
    pub file: Option<String>,
    pub session: SessionStats,
    /// `None` when the plane has no live assistant turn (a pure wire plane).
    pub models: Option<ModelsBlock>,
    pub tools: Vec<ToolStats>,
    pub errors: Vec<ErrorStats>,
}

/// Which plane a merged block took its tool table from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Plane {
    Mcp,
    Agent,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Planes {
    pub mcp: Stats,
    pub agent: Stats,
}

/// Two planes reported as one session, each plane's block kept whole: the
/// planes describe the same calls from both sides, so they are never summed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TraceStats {
    #[serde(flatten)]
    pub merged: Stats,
    pub planes: Planes,
    #[serde(rename = "toolsPlane")]
    pub tools_plane: Option<Plane>,
}

/// One row of the bundled list-price table, per million tokens.
#[derive(Debug, Clone, PartialEq)]
pub struct Price {
    /// Canonical model id; a dated variant (`<id>-20260514`) also matches.
    pub model: &'static str,
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    pub as_of: &'static str,
}

/// The list prices the anchor's records were costed with (its `asOf`
/// 2026-08-19, `source` "bundled"); every anchor cost figure follows from
/// them, e.g. 44,518 in + 1,707 out on claude-sonnet-5 = $0.106106.
pub const PRICES: &[Price] = &[
    Price {
        model: "claude-sonnet-5",
        input_per_mtok: 2.0,
        output_per_mtok: 10.0,
        as_of: "2026-08-19",
    },
    Price {
        model: "claude-opus-5",
        input_per_mtok: 5.0,
        output_per_mtok: 25.0,
        as_of: "2026-08-19",
    },
    Price {
        model: "claude-haiku-4-5",
        input_per_mtok: 1.0,
        output_per_mtok: 5.0,
        as_of: "2026-08-19",
    },
];

/// Anthropic's cache multipliers over the input rate: a cache write bills at
/// 1.25x, a cache read at 0.1x.
const CACHE_WRITE_MULTIPLIER: f64 = 1.25;
const CACHE_READ_MULTIPLIER: f64 = 0.1;

/// The price row for a model id, exact or dated variant; `None` for anything
/// unrecognised (fail closed: an unknown model is never given a default rate).
pub fn resolve_price<'p>(model: &str, table: &'p [Price]) -> Option<&'p Price> {
    if model.is_empty() {
        return None;
    }
    table.iter().find(|p| {
        model == p.model
            || model
                .strip_prefix(p.model)
                .is_some_and(|rest| rest.starts_with('-'))
    })
}

/// Nearest-rank percentile: the smallest value with at least `p`% of the
/// sample at or below it. `None` for an empty sample.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut vs: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if vs.is_empty() {
        return None;
    }
    vs.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    let n = vs.len();
    let rank = (((p / 100.0) * n as f64).ceil() as usize).max(1);
    vs.get(rank.min(n) - 1).copied()
}

// ---------------------------------------------------------------------------
// Facts kept while streaming
// ---------------------------------------------------------------------------

#[derive(Default)]
struct MetaFacts {
    started_at: Option<String>,
    label: Option<String>,
    kind: Option<String>,
    command: Option<Vec<String>>,
    producer: Option<String>,
}

#[derive(Default)]
struct EndFacts {
    t: Option<String>,
    duration_ms: Option<f64>,
    reason: Option<String>,
    exit_code: Option<f64>,
}

struct Request {
    tool: String,
    t: Option<String>,
}

struct Response {
    key: String,
    id: String,
    t: Option<String>,
    protocol_error: Option<String>,
    execution_error: Option<String>,
}

struct RpcError {
    t: Option<String>,
    id: Option<String>,
    message: String,
}

struct ToolUse {
    key: String,
    tool: String,
}

struct ToolResult {
    key: String,
    error: Option<String>,
}

struct TurnFacts {
    t: Option<String>,
    assistant: bool,
    echoed: bool,
    model: Option<String>,
    /// input, output, cache read, cache creation; `None` without a usage object.
    usage: Option<[Option<f64>; 4]>,
    thinking: Option<(f64, bool)>,
    ttft_ms: Option<f64>,
    duration_ms: Option<f64>,
    results: Vec<ToolResult>,
    uses: Vec<ToolUse>,
}

/// Accumulates the stats of one plane, one line at a time.
pub struct StatsBuilder {
    namespace: u32,
    counts: RecordCounts,
    skipped: u64,
    meta: Option<MetaFacts>,
    end: Option<EndFacts>,
    last_t: Option<String>,
    /// `tools/call` requests by key, in first-seen order; a repeated key
    /// replaces the request in place, as a JS `Map` does.
    requests: Vec<Option<Request>>,
    request_index: HashMap<String, usize>,
    responses: Vec<Response>,
    method_by_id: HashMap<String, String>,
    rpc_errors: Vec<RpcError>,
    llm_errors: Vec<ErrorStats>,
    turns: Vec<TurnFacts>,
    prices: &'static [Price],
    price_source: String,
}

impl Default for StatsBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl StatsBuilder {
    pub fn new() -> Self {
        Self::with_prices(PRICES, "bundled")
    }

    pub fn with_prices(prices: &'static [Price], source: &str) -> Self {
        StatsBuilder {
            namespace: 0,
            counts: RecordCounts::default(),
            skipped: 0,
            meta: None,
            end: None,
            last_t: None,
            requests: Vec::new(),
            request_index: HashMap::new(),
            responses: Vec::new(),
            method_by_id: HashMap::new(),
            rpc_errors: Vec::new(),
            llm_errors: Vec::new(),
            turns: Vec::new(),
            prices,
            price_source: source.to_owned(),
        }
    }

    /// Start a new source file: ids from here on never pair with ids before.
    pub fn next_file(&mut self) {
        self.namespace += 1;
    }

    /// Count lines the reader skipped (`session.skippedLines`).
    pub fn add_skipped(&mut self, lines: u64) {
        self.skipped += lines;
    }

    /// Add one line of JSON text. A line that is not a JSON object is not
    /// counted and the error says why; the caller counts it as skipped.
    pub fn push_line(&mut self, text: &[u8]) -> Result<(), serde_json::Error> {
        if text.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
            // Arrays and scalars parse as JSON but are not tape lines.
            return Err(<serde_json::Error as serde::de::Error>::custom(
                "line is not a JSON object",
            ));
        }
        let mut spill = None;
        match LineView::read(text, &mut spill) {
            Ok(view) => {
                self.push_view(&view);
                Ok(())
            }
            Err(err) => Err(err),
        }
    }

    fn push_view(&mut self, line: &LineView<'_>) {
        let ty = line.ty.0.as_deref();
        let dir = line.dir.0.as_deref();
        let kind = LineKind::classify(ty, dir);
        self.counts.add(kind);
        let t = line.t.get();
        if let Some(t) = t
            && self
                .last_t
                .as_deref()
                .is_none_or(|last| js::utf16_cmp(t, last) == Ordering::Greater)
        {
            self.last_t = Some(t.to_owned());
        }
        if ty == Some("meta") && self.meta.is_none() {
            self.meta = Some(meta_facts(line));
        }
        if ty == Some("end") && self.end.is_none() {
            self.end = Some(EndFacts {
                t: t.map(str::to_owned),
                duration_ms: line.duration_ms.0,
                reason: line.reason.get().map(str::to_owned),
                exit_code: line.exit_code.0,
            });
        }
        if ty == Some("turn") {
            self.push_turn(line);
        }
        match dir {
            Some("in") => self.push_request(line),
            Some("out") => self.push_response(line),
            Some("event") if line.kind.is("llm.error") => {
                let raw = line.raw.0.as_ref().or(line.data.0.as_ref());
                self.llm_errors.push(llm_error(t, raw));
            }
            _ => {}
        }
    }

    fn source_key(&self, line: &LineView<'_>, id: &Value) -> String {
        let source = line.source.get().unwrap_or("mcp-tape");
        format!("{}\u{0}{source}::{}", self.namespace, js::to_js_string(id))
    }

    fn push_request(&mut self, line: &LineView<'_>) {
        let Some(raw) = &line.raw.0 else { return };
        let Some(id) = &raw.id else { return };
        if let Some(method) = raw.method.get() {
            self.method_by_id
                .insert(js::to_js_string(id), method.to_owned());
        }
        if !raw.method.is("tools/call") {
            return;
        }
        let key = self.source_key(line, id);
        let request = Request {
            tool: raw
                .params
                .0
                .as_ref()
                .and_then(|p| p.name.get())
                .unwrap_or("(unknown)")
                .to_owned(),
            t: line.t.get().map(str::to_owned),
        };
        match self.request_index.get(&key) {
            Some(&i) => self.requests[i] = Some(request),
            None => {
                self.request_index.insert(key, self.requests.len());
                self.requests.push(Some(request));
            }
        }
    }

    fn push_response(&mut self, line: &LineView<'_>) {
        let Some(raw) = &line.raw.0 else { return };
        if let Some(error) = &raw.error {
            self.rpc_errors.push(RpcError {
                t: line.t.get().map(str::to_owned),
                id: raw.id.as_ref().map(js::to_js_string),
                message: error_message(error),
            });
        }
        let Some(id) = &raw.id else { return };
        self.responses.push(Response {
            key: self.source_key(line, id),
            id: js::to_js_string(id),
            t: line.t.get().map(str::to_owned),
            protocol_error: raw.error.as_ref().map(error_message),
            execution_error: tool_result_error(raw),
        });
    }

    fn push_turn(&mut self, line: &LineView<'_>) {
        let ns = line.source.get().unwrap_or("mcp-tape");
        let key = |id: &Value| format!("{}\u{0}{ns}::{}", self.namespace, js::to_js_string(id));
        let mut results = Vec::new();
        let mut uses = Vec::new();
        let mut thinking_chars = 0usize;
        for block in line.blocks.0.iter().filter_map(|b| b.0.as_ref()) {
            if block.ty.is("thinking")
                && let Some(len) = block.thinking.0
            {
                thinking_chars += len;
            }
            if block.ty.is("tool_result")
                && let Some(id) = &block.tool_use_id
            {
                let error = block
                    .is_error
                    .as_ref()
                    .is_some_and(js::truthy)
                    .then(|| {
                        Some(result_text(&Content::read(block.content))).filter(|s| !s.is_empty())
                    })
                    .map(|text| text.unwrap_or_else(|| "tool error".to_owned()));
                results.push(ToolResult {
                    key: key(id),
                    error,
                });
            }
            if block.ty.is("tool_use")
                && let Some(id) = &block.id
            {
                uses.push(ToolUse {
                    key: key(id),
                    tool: block.name.get().unwrap_or("(unknown)").to_owned(),
                });
            }
        }
        let usage = line.usage.0.as_ref();
        let thinking = match usage.and_then(|u| u.thinking_tokens.0) {
            Some(exact) => Some((exact, false)),
            None if thinking_chars > 0 => {
                Some((((thinking_chars as f64 / 4.0) + 0.5).floor().max(1.0), true))
            }
            None => None,
        };
        let timing = line.timing.0.as_ref();
        self.turns.push(TurnFacts {
            t: line.t.get().map(str::to_owned),
            assistant: line.role.is("assistant"),
            echoed: line.echoed.0,
            model: line.model.get().map(str::to_owned),
            usage: usage.map(|u| {
                [
                    u.input_tokens.0,
                    u.output_tokens.0,
                    u.cache_read_input_tokens.0,
                    u.cache_creation_input_tokens.0,
                ]
            }),
            thinking,
            ttft_ms: timing.and_then(|t| t.ttft_ms.0),
            duration_ms: timing.and_then(|t| t.duration_ms.0),
            results,
            uses,
        });
    }

    /// Settle the facts into the plane's stats.
    pub fn finish(self, file: Option<String>) -> Stats {
        let session = self.session();
        let mut turns = self.turns;
        sort_by_t(&mut turns);
        let mut pairs = mcp_pairs(self.requests, self.request_index, &self.responses);
        pairs.extend(turn_pairs(&turns));
        let models = build_models(&turns, self.prices, &self.price_source);
        let tools = build_tool_stats(&pairs);
        let errors = build_errors(
            &pairs,
            &self.rpc_errors,
            &self.method_by_id,
            self.llm_errors,
        );
        Stats {
            schema: STATS_SCHEMA,
            file,
            session,
            models,
            tools,
            errors,
        }
    }

    fn session(&self) -> SessionStats {
        let meta = self.meta.as_ref();
        let end = self.end.as_ref();
        let started_at = meta.and_then(|m| m.started_at.clone());
        let ended_at = end
            .and_then(|e| e.t.clone())
            .or_else(|| self.last_t.clone());
        let duration_ms = end
            .and_then(|e| e.duration_ms)
            .or_else(|| js::ms_between(started_at.as_deref(), ended_at.as_deref()));
        SessionStats {
            label: meta.and_then(|m| m.label.clone()),
            // Consumers assume "mcp" when meta.kind is absent (format.md).
            kind: meta.map(|m| m.kind.clone().unwrap_or_else(|| "mcp".to_owned())),
            started_at,
            ended_at,
            duration_ms: duration_ms.map(JsNum),
            command: meta.and_then(|m| m.command.clone()),
            producer: meta.and_then(|m| m.producer.clone()),
            records: self.counts.clone(),
            skipped_lines: self.skipped,
            end_reason: end.and_then(|e| e.reason.clone()),
            exit_code: end.and_then(|e| e.exit_code).map(JsNum),
        }
    }
}

fn meta_facts(line: &LineView<'_>) -> MetaFacts {
    let command = line.command.0.as_ref().map(|items| {
        items
            .iter()
            .filter_map(|s| s.0.as_deref().map(str::to_owned))
            .collect::<Vec<_>>()
    });
    let producer = if let Some(source) = line.source.get() {
        Some(source.to_owned())
    } else {
        match &line.producer {
            ProducerView::Str(s) => Some(s.to_string()).filter(|s| !s.is_empty()),
            ProducerView::Obj(Some(name), version) if !name.is_empty() => {
                Some(match version.as_deref().filter(|v| !v.is_empty()) {
                    Some(v) => format!("{name}@{v}"),
                    None => name.to_string(),
                })
            }
            _ => line.mcp_tap_version.get().map(|v| format!("mcp-tape@{v}")),
        }
    };
    MetaFacts {
        started_at: line.started_at.get().map(str::to_owned),
        label: line.label.get().map(str::to_owned),
        kind: line.kind.get().map(str::to_owned),
        command: command.filter(|c| !c.is_empty()),
        producer,
    }
}

/// The reference's `errorMessage`: a message with its code, else the value
/// as text.
fn error_message(err: &Value) -> String {
    match err {
        Value::Null => "error".to_owned(),
        Value::String(s) => s.clone(),
        Value::Object(map) => {
            let message = map
                .get("message")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            match (message, map.get("code")) {
                (Some(m), Some(code)) if !code.is_null() => {
                    format!("{m} (code {})", js::to_js_string(code))
                }
                (Some(m), _) => m.to_owned(),
                (None, _) => js::json_stringify(err),
            }
        }
        other => js::to_js_string(other),
    }
}

/// A failed tool answers with a successful response carrying
/// `result.isError: true` and the reason in its content blocks.
fn tool_result_error(raw: &RawView<'_>) -> Option<String> {
    let result = raw.result.0.as_ref()?;
    if !result.is_error.0 {
        return None;
    }
    let content = Content::read(result.content);
    let texts: Vec<&str> = match &content {
        Content::Items(items) => items
            .iter()
            .filter_map(|item| match item {
                ContentItem::Obj(Some(text)) if !text.is_empty() => Some(text.as_ref()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    let text = texts.join(" ");
    let text = js::trim(&text);
    Some(if text.is_empty() {
        "tool reported an error".to_owned()
    } else {
        text.to_owned()
    })
}

/// The reference's `resultText`: a `tool_result` content flattened to text.
fn result_text(content: &Content<'_>) -> String {
    match content {
        Content::Absent => String::new(),
        Content::Str(s) => s.to_string(),
        Content::Items(items) => items
            .iter()
            .map(|item| match item {
                ContentItem::Str(s) => s.as_ref(),
                ContentItem::Obj(Some(text)) => text.as_ref(),
                _ => "",
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        Content::Other(v) => js::json_stringify(v),
    }
}

fn llm_error(t: Option<&str>, raw: Option<&RawView<'_>>) -> ErrorStats {
    let message = match raw {
        Some(RawView {
            error: Some(error), ..
        }) => error_message(error),
        Some(RawView {
            status: Some(status),
            ..
        }) => format!("HTTP {}", js::to_js_string(status)),
        _ => "llm error".to_owned(),
    };
    let name = raw
        .and_then(|r| r.endpoint.get().or(r.url.get()))
        .unwrap_or("(llm)")
        .to_owned();
    ErrorStats {
        t: t.map(str::to_owned),
        source: ErrorSource::Llm,
        name,
        message,
    }
}

/// Stable sort by `t` with `localeCompare`, absent `t` as "".
fn sort_by_t(turns: &mut [TurnFacts]) {
    fn t(x: &TurnFacts) -> &str {
        x.t.as_deref().unwrap_or("")
    }
    if turns
        .windows(2)
        .all(|w| js::locale_compare(t(&w[0]), t(&w[1])) != Ordering::Greater)
    {
        return;
    }
    turns.sort_by(|a, b| js::locale_compare(t(a), t(b)));
}

// ---------------------------------------------------------------------------
// Settling: pairs, tools, models, errors
// ---------------------------------------------------------------------------

struct Pair {
    /// The response's id as text, for mcp pairs (error de-duplication).
    mcp_id: Option<String>,
    tool: String,
    t: Option<String>,
    latency_ms: Option<f64>,
    error: Option<String>,
    pending: bool,
    origin: Origin,
}

fn mcp_pairs(
    mut requests: Vec<Option<Request>>,
    mut index: HashMap<String, usize>,
    responses: &[Response],
) -> Vec<Pair> {
    let mut rows = Vec::new();
    for response in responses {
        let Some(i) = index.remove(&response.key) else {
            continue; // a response to something other than a pending tools/call
        };
        let Some(request) = requests.get_mut(i).and_then(Option::take) else {
            continue;
        };
        let latency_ms = js::ms_between(request.t.as_deref(), response.t.as_deref());
        rows.push(Pair {
            mcp_id: Some(response.id.clone()),
            tool: request.tool,
            t: request.t,
            latency_ms,
            error: response
                .protocol_error
                .clone()
                .or_else(|| response.execution_error.clone()),
            pending: false,
            origin: Origin::Mcp,
        });
    }
    // Requests with no response: real calls of unknown latency, never dropped.
    for request in requests.into_iter().flatten() {
        rows.push(Pair {
            mcp_id: None,
            tool: request.tool,
            t: request.t,
            latency_ms: None,
            error: None,
            pending: true,
            origin: Origin::Mcp,
        });
    }
    rows
}

/// Pair `tool_use` blocks with later `tool_result` blocks; echoed turns are
/// left out, since they repeat their `tool_use` blocks verbatim.
fn turn_pairs(turns: &[TurnFacts]) -> Vec<Pair> {
    let mut rows: Vec<Pair> = Vec::new();
    let mut open: HashMap<&str, usize> = HashMap::new();
    for turn in turns.iter().filter(|t| !t.echoed) {
        // A turn's results answer earlier turns' calls, never its own.
        for result in &turn.results {
            let Some(i) = open.remove(result.key.as_str()) else {
                continue;
            };
            if let Some(row) = rows.get_mut(i) {
                row.latency_ms = js::ms_between(row.t.as_deref(), turn.t.as_deref());
                row.error = result.error.clone();
                row.pending = false;
            }
        }
        for tool_use in &turn.uses {
            open.insert(tool_use.key.as_str(), rows.len());
            rows.push(Pair {
                mcp_id: None,
                tool: tool_use.tool.clone(),
                t: turn.t.clone(),
                latency_ms: None,
                error: None,
                pending: true,
                origin: Origin::Turn,
            });
        }
    }
    rows
}

fn build_tool_stats(pairs: &[Pair]) -> Vec<ToolStats> {
    struct Slot<'a> {
        name: &'a str,
        calls: u64,
        errors: u64,
        pending: u64,
        latencies: Vec<f64>,
        mcp: bool,
        turn: bool,
    }
    let mut slots: Vec<Slot<'_>> = Vec::new();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for pair in pairs {
        let i = *by_name.entry(pair.tool.as_str()).or_insert_with(|| {
            slots.push(Slot {
                name: &pair.tool,
                calls: 0,
                errors: 0,
                pending: 0,
                latencies: Vec::new(),
                mcp: false,
                turn: false,
            });
            slots.len() - 1
        });
        let slot = &mut slots[i];
        slot.calls += 1;
        slot.errors += u64::from(pair.error.is_some());
        slot.pending += u64::from(pair.pending);
        slot.latencies.extend(pair.latency_ms);
        match pair.origin {
            Origin::Mcp => slot.mcp = true,
            _ => slot.turn = true,
        }
    }
    let mut out: Vec<ToolStats> = slots
        .into_iter()
        .map(|s| ToolStats {
            name: s.name.to_owned(),
            calls: s.calls,
            errors: s.errors,
            // Percentiles cover the calls that were timed, none if none were.
            p50_ms: percentile(&s.latencies, 50.0).map(JsNum),
            p95_ms: percentile(&s.latencies, 95.0).map(JsNum),
            origin: match (s.mcp, s.turn) {
                (true, true) => Origin::Mixed,
                (false, true) => Origin::Turn,
                _ => Origin::Mcp,
            },
            pending: s.pending,
        })
        .collect();
    out.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| js::locale_compare(&a.name, &b.name))
    });
    out
}

#[derive(Default)]
struct ModelSlot {
    calls: u64,
    input: f64,
    output: f64,
    cache_read: f64,
    cache_creation: f64,
    usage_turns: u64,
    cache_reported_turns: u64,
    cache_read_turns: u64,
    cache_creation_turns: u64,
    thinking_exact: f64,
    thinking_estimated: f64,
    ttfts: Vec<f64>,
}

fn hit_rate(cache_read: f64, input: f64, cache_creation: f64, reported: bool) -> Option<f64> {
    if !reported {
        return None;
    }
    let denom = input + cache_read + cache_creation;
    (denom > 0.0).then(|| cache_read / denom)
}

fn estimate_cost(usage: [Option<f64>; 4], price: &Price) -> Option<f64> {
    let [input, output, cache_read, cache_write] = usage.map(|v| v.unwrap_or(0.0));
    if input == 0.0 && output == 0.0 && cache_read == 0.0 && cache_write == 0.0 {
        return None;
    }
    // Same operations in the same order as the reference, so the same double.
    let usd = (input / 1e6) * price.input_per_mtok
        + (cache_read / 1e6) * price.input_per_mtok * CACHE_READ_MULTIPLIER
        + (cache_write / 1e6) * price.input_per_mtok * CACHE_WRITE_MULTIPLIER
        + (output / 1e6) * price.output_per_mtok;
    usd.is_finite().then_some(usd)
}

fn build_models(turns: &[TurnFacts], prices: &[Price], source: &str) -> Option<ModelsBlock> {
    let mut slots: Vec<(String, ModelSlot)> = Vec::new();
    let mut by_model: HashMap<String, usize> = HashMap::new();
    let mut assistant_turns = 0u64;
    let mut echoed_turns = 0u64;
    let mut total_duration = 0.0f64;
    let mut saw_duration = false;
    for turn in turns.iter().filter(|t| t.assistant) {
        if turn.echoed {
            echoed_turns += 1;
            continue;
        }
        assistant_turns += 1;
        let name = turn.model.as_deref().unwrap_or("(no model)");
        let i = match by_model.get(name) {
            Some(&i) => i,
            None => {
                by_model.insert(name.to_owned(), slots.len());
                slots.push((name.to_owned(), ModelSlot::default()));
                slots.len() - 1
            }
        };
        let slot = &mut slots[i].1;
        slot.calls += 1;
        if let Some([input, output, read, creation]) = turn.usage {
            slot.usage_turns += 1;
            slot.input += input.unwrap_or(0.0);
            slot.output += output.unwrap_or(0.0);
            if read.is_some() || creation.is_some() {
                slot.cache_reported_turns += 1;
                slot.cache_read_turns += u64::from(read.is_some());
                slot.cache_creation_turns += u64::from(creation.is_some());
                slot.cache_read += read.unwrap_or(0.0);
                slot.cache_creation += creation.unwrap_or(0.0);
            }
        }
        match turn.thinking {
            Some((tokens, true)) => slot.thinking_estimated += tokens,
            Some((tokens, false)) => slot.thinking_exact += tokens,
            None => {}
        }
        slot.ttfts.extend(turn.ttft_ms);
        if let Some(d) = turn.duration_ms {
            total_duration += d;
            saw_duration = true;
        }
    }
    if assistant_turns == 0 {
        return None;
    }

    let mut unpriced: Vec<String> = Vec::new();
    let mut total_usd = 0.0f64;
    let mut any_priced = false;
    let mut per_model = Vec::with_capacity(slots.len());
    for (model, s) in &slots {
        let price = resolve_price(model, prices);
        let has_usage = s.usage_turns > 0;
        let agg = [
            has_usage.then_some(s.input),
            has_usage.then_some(s.output),
            (s.cache_read_turns > 0).then_some(s.cache_read),
            (s.cache_creation_turns > 0).then_some(s.cache_creation),
        ];
        let cost = price
            .filter(|_| has_usage)
            .and_then(|p| estimate_cost(agg, p));
        match (price, cost) {
            (None, _) if has_usage => unpriced.push(model.clone()),
            (Some(_), Some(c)) => {
                any_priced = true;
                total_usd += c;
            }
            _ => {}
        }
        let thinking_total = s.thinking_exact + s.thinking_estimated;
        per_model.push(ModelStats {
            model: model.clone(),
            calls: s.calls,
            input_tokens: agg[0].map(JsNum),
            output_tokens: agg[1].map(JsNum),
            cache_read_tokens: agg[2].map(JsNum),
            cache_creation_tokens: agg[3].map(JsNum),
            thinking_tokens: (thinking_total > 0.0).then_some(JsNum(thinking_total)),
            thinking_estimated: s.thinking_estimated > 0.0,
            cache_hit_rate: hit_rate(
                s.cache_read,
                s.input,
                s.cache_creation,
                s.cache_reported_turns > 0,
            )
            .map(JsNum),
            ttft_p50_ms: percentile(&s.ttfts, 50.0).map(JsNum),
            ttft_p95_ms: percentile(&s.ttfts, 95.0).map(JsNum),
            est_cost_usd: cost.map(JsNum),
            priced: price.is_some(),
        });
    }
    per_model.sort_by(|a, b| {
        b.calls
            .cmp(&a.calls)
            .then_with(|| js::locale_compare(&a.model, &b.model))
    });

    let sum = |f: fn(&ModelSlot) -> f64| slots.iter().map(|(_, s)| f(s)).fold(0.0, |a, b| a + b);
    let any = |f: fn(&ModelSlot) -> bool| slots.iter().any(|(_, s)| f(s));
    let (input, output) = (sum(|s| s.input), sum(|s| s.output));
    let (cache_read, cache_creation) = (sum(|s| s.cache_read), sum(|s| s.cache_creation));
    let (thinking_exact, thinking_estimated) =
        (sum(|s| s.thinking_exact), sum(|s| s.thinking_estimated));
    let any_usage = any(|s| s.usage_turns > 0);
    let summary = ModelSummary {
        models: per_model.len() as u64,
        assistant_turns,
        turns: turns.len() as u64,
        echoed_turns,
        input_tokens: any_usage.then_some(JsNum(input)),
        output_tokens: any_usage.then_some(JsNum(output)),
        cache_read_tokens: any(|s| s.cache_read_turns > 0).then_some(JsNum(cache_read)),
        cache_creation_tokens: any(|s| s.cache_creation_turns > 0).then_some(JsNum(cache_creation)),
        thinking_exact_tokens: (thinking_exact > 0.0).then_some(JsNum(thinking_exact)),
        thinking_estimated_tokens: (thinking_estimated > 0.0).then_some(JsNum(thinking_estimated)),
        cache_hit_rate: hit_rate(
            cache_read,
            input,
            cache_creation,
            any(|s| s.cache_reported_turns > 0),
        )
        .map(JsNum),
        total_model_time_ms: saw_duration.then_some(JsNum(total_duration)),
    };
    unpriced.sort_by(|a, b| js::locale_compare(a, b));
    let as_of = prices
        .iter()
        .map(|p| p.as_of)
        .fold(None::<&str>, |newest, d| match newest {
            Some(n) if n >= d => Some(n),
            _ => Some(d),
        });
    let cost = CostStats {
        estimated: true,
        currency: "USD".to_owned(),
        // No priced model: no figure, not $0.00. An absent rate is not free.
        total_usd: any_priced.then_some(JsNum(total_usd)),
        partial: !unpriced.is_empty() && any_priced,
        unpriced_models: unpriced,
        as_of: as_of.map(str::to_owned),
        source: source.to_owned(),
    };
    Some(ModelsBlock {
        per_model,
        summary,
        cost,
    })
}

fn build_errors(
    pairs: &[Pair],
    rpc_errors: &[RpcError],
    method_by_id: &HashMap<String, String>,
    llm_errors: Vec<ErrorStats>,
) -> Vec<ErrorStats> {
    let mut out = Vec::new();
    // 1. Failed tool calls.
    let mut tool_error_ids: std::collections::HashSet<&str> = Default::default();
    for pair in pairs {
        let Some(error) = &pair.error else { continue };
        if let Some(id) = &pair.mcp_id {
            tool_error_ids.insert(id);
        }
        out.push(ErrorStats {
            t: pair.t.clone(),
            source: ErrorSource::Tool,
            name: pair.tool.clone(),
            message: error.clone(),
        });
    }
    // 2. JSON-RPC errors that are not tools/call answers already listed.
    for e in rpc_errors {
        if e.id
            .as_deref()
            .is_some_and(|id| tool_error_ids.contains(id))
        {
            continue;
        }
        let name = match &e.id {
            Some(id) => method_by_id
                .get(id)
                .cloned()
                .unwrap_or_else(|| format!("id {id}")),
            None => "(notification)".to_owned(),
        };
        out.push(ErrorStats {
            t: e.t.clone(),
            source: ErrorSource::Jsonrpc,
            name,
            message: e.message.clone(),
        });
    }
    // 3. llm.error events.
    out.extend(llm_errors);
    out.sort_by(|a, b| {
        js::locale_compare(a.t.as_deref().unwrap_or(""), b.t.as_deref().unwrap_or(""))
    });
    out
}

fn min_iso(a: Option<&str>, b: Option<&str>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if js::utf16_cmp(a, b) == Ordering::Less {
            a
        } else {
            b
        }),
        (a, b) => a.or(b),
    }
    .map(str::to_owned)
}

fn max_iso(a: Option<&str>, b: Option<&str>) -> Option<String> {
    match (a, b) {
        (Some(a), Some(b)) => Some(if js::utf16_cmp(a, b) == Ordering::Greater {
            a
        } else {
            b
        }),
        (a, b) => a.or(b),
    }
    .map(str::to_owned)
}

/// The two planes of one run as one block: the tool table from the mcp plane
/// when it saw any call, else from the agent plane; models from the agent
/// plane; record counts summed; each plane kept whole under `planes`.
pub fn merge_planes(mcp: Stats, agent: Stats, file: Option<String>) -> TraceStats {
    let from_mcp = !mcp.tools.is_empty();
    let tools_plane = if from_mcp {
        Some(Plane::Mcp)
    } else if !agent.tools.is_empty() {
        Some(Plane::Agent)
    } else {
        None
    };
    let tools = if from_mcp {
        mcp.tools.clone()
    } else {
        agent.tools.clone()
    };
    let not_tool = |e: &&ErrorStats| e.source != ErrorSource::Tool;
    let mut errors: Vec<ErrorStats> = if from_mcp {
        mcp.errors
            .iter()
            .chain(agent.errors.iter().filter(not_tool))
            .cloned()
            .collect()
    } else {
        mcp.errors
            .iter()
            .filter(not_tool)
            .chain(agent.errors.iter())
            .cloned()
            .collect()
    };
    errors.sort_by(|a, b| {
        js::locale_compare(a.t.as_deref().unwrap_or(""), b.t.as_deref().unwrap_or(""))
    });
    let (m, a) = (&mcp.session, &agent.session);
    let started_at = min_iso(m.started_at.as_deref(), a.started_at.as_deref());
    let ended_at = max_iso(m.ended_at.as_deref(), a.ended_at.as_deref());
    let session = SessionStats {
        label: m.label.clone().or_else(|| a.label.clone()),
        kind: Some("mcp+llm".to_owned()),
        duration_ms: js::ms_between(started_at.as_deref(), ended_at.as_deref())
            .map(JsNum)
            .or(m.duration_ms)
            .or(a.duration_ms),
        started_at,
        ended_at,
        command: m.command.clone().or_else(|| a.command.clone()),
        producer: m.producer.clone().or_else(|| a.producer.clone()),
        records: m.records.merged(&a.records),
        skipped_lines: m.skipped_lines + a.skipped_lines,
        end_reason: m.end_reason.clone().or_else(|| a.end_reason.clone()),
        exit_code: None,
    };
    TraceStats {
        merged: Stats {
            schema: STATS_SCHEMA,
            file,
            session,
            models: agent.models.clone().or_else(|| mcp.models.clone()),
            tools,
            errors,
        },
        planes: Planes { mcp, agent },
        tools_plane,
    }
}
