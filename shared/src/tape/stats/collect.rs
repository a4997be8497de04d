//! The facts the figures need, kept line by line.

use std::cmp::Ordering;
use std::collections::HashMap;

use serde_json::Value;

use super::block::{
    ErrorSource, ErrorStats, JsNum, PRICES, Price, RecordCounts, STATS_SCHEMA, SessionStats, Stats,
};
use super::facts::{
    EndFacts, MetaFacts, Request, Response, RpcError, ToolResult, ToolUse, TurnFacts,
};
use super::settle::{build_errors, build_models, build_tool_stats, mcp_pairs, turn_pairs};
use crate::tape::js;
use crate::tape::jsonrpc::error_text;
use crate::tape::line::LineKind;
use crate::tape::pairing::{AfterAnswer, Pairing, Reach, Repeat, Rules};
use crate::tape::view::{Content, ContentItem, LineView, ProducerView, RawView};

/// The reference's pairing: over the whole file (a response may precede its
/// request), a repeated `tools/call` key replaces the request in place as a
/// JS `Map` does, and the first response answers it.
const PAIRING: Rules = Rules {
    reach: Reach::WholeTape,
    repeat: Repeat::Replace,
    after_answer: AfterAnswer::Close,
};

/// Accumulates the stats of one plane, one line at a time.
pub struct StatsBuilder {
    pub(super) namespace: u32,
    pub(super) counts: RecordCounts,
    pub(super) skipped: u64,
    pub(super) meta: Option<MetaFacts>,
    pub(super) end: Option<EndFacts>,
    pub(super) last_t: Option<String>,
    /// `tools/call` requests and every response with an id, paired by key
    /// in [`finish`](Self::finish).
    pub(super) pairing: Pairing<String>,
    /// By request number of `pairing`.
    pub(super) requests: Vec<Request>,
    /// By response number of `pairing`.
    pub(super) responses: Vec<Response>,
    pub(super) method_by_id: HashMap<String, String>,
    pub(super) rpc_errors: Vec<RpcError>,
    pub(super) llm_errors: Vec<ErrorStats>,
    /// Keys of the model's calls a harness withheld (`fitness.blocked_call`).
    pub(super) blocked: std::collections::HashSet<String>,
    pub(super) turns: Vec<TurnFacts>,
    pub(super) prices: &'static [Price],
    pub(super) price_source: String,
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
            pairing: Pairing::new(PAIRING),
            requests: Vec::new(),
            responses: Vec::new(),
            method_by_id: HashMap::new(),
            rpc_errors: Vec::new(),
            llm_errors: Vec::new(),
            blocked: std::collections::HashSet::new(),
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
        if !text.trim_ascii_start().starts_with(b"{") {
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
            // A call the harness withheld (read-only) or refused (past the
            // turn's limit) never reached a tool: its result is no tool's
            // error.
            Some("event")
                if line.kind.is("fitness.blocked_call") || line.kind.is("fitness.refused_call") =>
            {
                if let Some(id) = line.raw.0.as_ref().and_then(|r| r.tool_use_id.get()) {
                    let ns = line.source.get().unwrap_or("mcp-tape");
                    let id = serde_json::Value::String(id.to_owned());
                    self.blocked.insert(format!(
                        "{}\u{0}{ns}::{}",
                        self.namespace,
                        js::to_js_string(&id)
                    ));
                }
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
        self.pairing.request(key, 0);
        self.requests.push(request);
    }

    fn push_response(&mut self, line: &LineView<'_>) {
        let Some(raw) = &line.raw.0 else { return };
        if let Some(error) = &raw.error {
            self.rpc_errors.push(RpcError {
                t: line.t.get().map(str::to_owned),
                id: raw.id.as_ref().map(js::to_js_string),
                message: error_text(error),
            });
        }
        let Some(id) = &raw.id else { return };
        let key = self.source_key(line, id);
        self.pairing.response(key, 0);
        self.responses.push(Response {
            id: js::to_js_string(id),
            t: line.t.get().map(str::to_owned),
            protocol_error: raw.error.as_ref().map(error_text),
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
                let blocked = self.blocked.contains(&key(id));
                let error = block
                    .is_error
                    .as_ref()
                    .is_some_and(|e| !blocked && js::truthy(e))
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
        let paired = self.pairing.finish();
        let mut pairs = mcp_pairs(self.requests, &paired, &self.responses);
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

pub(super) fn meta_facts(line: &LineView<'_>) -> MetaFacts {
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

/// A failed tool answers with a successful response carrying
/// `result.isError: true` and the reason in its content blocks.
pub(super) fn tool_result_error(raw: &RawView<'_>) -> Option<String> {
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
pub(super) fn result_text(content: &Content<'_>) -> String {
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

pub(super) fn llm_error(t: Option<&str>, raw: Option<&RawView<'_>>) -> ErrorStats {
    let message = match raw {
        Some(RawView {
            error: Some(error), ..
        }) => error_text(error),
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
pub(super) fn sort_by_t(turns: &mut [TurnFacts]) {
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
