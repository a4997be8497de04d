//! What one tape line shows on the timeline ([`Fact`]): where it sits
//! ([`LineRef`]), its entry's kind ([`EntryKind`]), title, detail and error,
//! read from the line's [`LineView`].

use serde_json::Value;

use crate::tape::js;
use crate::tape::jsonrpc::error_text;
use crate::tape::line::LineKind;
use crate::tape::line::Plane;
use crate::tape::view::LineView;

use super::entry::{EntryKind, LineRef, MarkKind};

/// A line as read, before pairing and ordering.
#[derive(Clone)]
pub(super) struct Fact {
    pub(super) at: LineRef,
    pub(super) plane: Plane,
    pub(super) t: Option<String>,
    pub(super) t_ms: Option<f64>,
    pub(super) corr_id: Option<String>,
    pub(super) kind: EntryKind,
    pub(super) title: String,
    pub(super) detail: String,
    pub(super) error: Option<String>,
    pub(super) destructive: bool,
    /// For requests and responses: the pairing key and whether it is a tools/call.
    pub(super) key: Option<String>,
    pub(super) tool_call: bool,
    /// A model call (an assistant turn, a failed attempt) or a tool call
    /// (a `tools/call` request, a call the harness withheld or refused):
    /// a mark on the run's timeline strip.
    pub(super) mark: Option<MarkKind>,
    /// An assistant turn's duration, ending at its time.
    pub(super) span_ms: Option<f64>,
    /// A gate's verdict (`fitness.gate`): its id and where it stands.
    pub(super) gate: Option<(String, crate::gate_state::GateState)>,
}

const TITLE_CHARS: usize = 160;

/// At most `max` characters of `s` on one line (control characters as
/// spaces), with an ellipsis when cut.
pub fn excerpt(s: &str, max: usize) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max + 1)
        .collect();
    if one_line.chars().count() > max {
        let mut cut: String = one_line.chars().take(max).collect();
        cut.push('…');
        cut
    } else {
        one_line
    }
}

pub(super) fn describe(
    l: &LineView<'_>,
    kind: LineKind,
    at: LineRef,
    plane: Plane,
    t: Option<String>,
    t_ms: Option<f64>,
) -> Fact {
    let mut fact = Fact {
        at,
        plane,
        t,
        t_ms,
        corr_id: l.corr_id.get().map(str::to_owned),
        kind: EntryKind::Other,
        title: String::new(),
        detail: String::new(),
        error: None,
        destructive: false,
        key: None,
        tool_call: false,
        mark: None,
        span_ms: None,
        gate: None,
    };
    match kind {
        LineKind::Meta => {
            fact.kind = EntryKind::Meta;
            fact.title = format!("tape opened: {}", l.label.get().unwrap_or("(no label)"));
        }
        LineKind::End => {
            fact.kind = EntryKind::End;
            fact.title = format!("tape ended: {}", l.reason.get().unwrap_or("(no reason)"));
        }
        LineKind::Other => {
            fact.title = format!(
                "unknown line type {}",
                l.ty.get().or(l.dir.get()).unwrap_or("(none)")
            );
        }
        LineKind::Turn => describe_turn(l, &mut fact),
        LineKind::Event => {
            fact.kind = EntryKind::Event;
            let ek = l.kind.get().unwrap_or("(no kind)");
            let raw = l.raw.0.as_ref();
            let mut parts = Vec::new();
            if let Some(raw) = raw {
                for (name, value) in [
                    ("gate", raw.gate.get()),
                    ("task", raw.task_id.get()),
                    ("tool", raw.tool.get()),
                    ("reason", raw.reason.get()),
                ] {
                    if let Some(v) = value {
                        parts.push(format!("{name} {v}"));
                    }
                }
                if let Some(ok) = raw.ok.as_ref().and_then(Value::as_bool) {
                    // A gate event says where the gate stands (a deferred
                    // one is undecided, not ok); any other event its ok.
                    parts.push(match (ek, ok) {
                        ("fitness.gate", ok) => crate::gate_state::GateState::of(
                            ok,
                            raw.reason.get().unwrap_or_default(),
                        )
                        .word()
                        .into(),
                        (_, true) => "ok".into(),
                        (_, false) => "not ok".into(),
                    });
                }
            }
            fact.title = excerpt(&format!("{ek} {}", parts.join(", ")), TITLE_CHARS);
            fact.destructive = ek == "fitness.destructive_call";
            fact.mark = match ek {
                "llm.error" => Some(MarkKind::Model),
                "fitness.blocked_call" | "fitness.refused_call" => Some(MarkKind::Tool),
                _ => None,
            };
            if ek == "fitness.gate"
                && let Some(raw) = raw
                && let Some(gate) = raw.gate.get()
            {
                let ok = raw.ok.as_ref().and_then(Value::as_bool).unwrap_or(false);
                let state =
                    crate::gate_state::GateState::of(ok, raw.reason.get().unwrap_or_default());
                fact.gate = Some((gate.to_owned(), state));
            }
            if ek == "fitness.protocol_error" || ek == "llm.error" {
                let detail = raw.and_then(|r| r.detail.get()).unwrap_or(ek);
                fact.error = Some(excerpt(detail, TITLE_CHARS));
            }
        }
        LineKind::Message => describe_message(l, &mut fact),
    }
    fact
}

fn describe_message(l: &LineView<'_>, fact: &mut Fact) {
    let dir = l.dir.get().unwrap_or("in");
    let arrow = if dir == "in" {
        "client to server"
    } else {
        "server to client"
    };
    let Some(raw) = l.raw.0.as_ref() else {
        fact.kind = EntryKind::Notification;
        fact.title = format!("{arrow}: a message with no JSON-RPC object");
        return;
    };
    let source = l.source.get().unwrap_or("mcp-tape");
    let tape = fact.at.tape;
    // A request and its response share the tape, the source, the id and the
    // request's direction.
    let key = |request_dir: &str| {
        raw.id.as_ref().map(|id| {
            format!(
                "{tape}\u{0}{source}\u{0}{request_dir}\u{0}{}",
                js::to_js_string(id)
            )
        })
    };
    if let Some(method) = raw.method.get() {
        let tool = raw.params.0.as_ref().and_then(|p| p.name.get());
        fact.title = match tool {
            Some(tool) if method == "tools/call" => format!("{method} {tool}"),
            _ => method.to_owned(),
        };
        if raw.id.is_some() {
            fact.kind = EntryKind::Call;
            fact.tool_call = dir == "in" && method == "tools/call";
            fact.mark = Some(if method == "tools/call" {
                MarkKind::Tool
            } else {
                MarkKind::Protocol
            });
            fact.key = key(dir);
            fact.detail = match raw.params.0.as_ref().and_then(|p| p.arguments) {
                Some(args) => format!("{arrow}; arguments {}", excerpt(args.get(), 100)),
                None => arrow.to_owned(),
            };
        } else {
            fact.kind = EntryKind::Notification;
            fact.detail = format!("{arrow} notification");
        }
        return;
    }
    fact.kind = EntryKind::Response;
    fact.key = key(if dir == "in" { "out" } else { "in" });
    fact.title = match raw.id.as_ref() {
        Some(id) => format!("response to id {}", js::to_js_string(id)),
        None => "response with no id".to_owned(),
    };
    fact.detail = arrow.to_owned();
    if let Some(content) = raw.result.0.as_ref().and_then(|r| r.content) {
        fact.detail = format!("result {}", content_excerpt(content.get()));
    }
    if let Some(err) = &raw.error {
        fact.error = Some(excerpt(&error_text(err), TITLE_CHARS));
    } else if raw.result.0.as_ref().is_some_and(|r| r.is_error.0) {
        fact.error = Some("tool result isError: true".to_owned());
    }
}

/// A short look at a `content` value, as its JSON text: a leading text
/// block's wrapper is dropped so the words come first.
fn content_excerpt(json: &str) -> String {
    let text = json
        .trim_start()
        .strip_prefix(r#"[{"type":"text","text":""#)
        .unwrap_or(json);
    excerpt(text, 120)
}

fn describe_turn(l: &LineView<'_>, fact: &mut Fact) {
    fact.kind = EntryKind::Turn;
    let role = l.role.get().unwrap_or("(no role)");
    if role == "assistant" {
        fact.mark = Some(MarkKind::Model);
        fact.span_ms = l.timing.0.as_ref().and_then(|t| t.duration_ms.0);
    }
    let mut text = None;
    let mut uses = Vec::new();
    let mut results = 0usize;
    let mut first_result = None;
    let mut failed = 0usize;
    let mut other = 0usize;
    for block in l.blocks.0.iter().filter_map(|b| b.0.as_ref()) {
        match block.ty.get() {
            Some("text") => {
                if text.is_none() {
                    text = block.text().map(|t| excerpt(&t, TITLE_CHARS));
                }
            }
            Some("tool_use") => uses.push(block.name.get().unwrap_or("(unnamed)").to_owned()),
            Some("tool_result") => {
                results += 1;
                if first_result.is_none() {
                    first_result = block.content.map(|c| content_excerpt(c.get()));
                }
                if block.is_error.as_ref().is_some_and(js::truthy) {
                    failed += 1;
                }
            }
            _ => other += 1,
        }
    }
    let mut head = role.to_owned();
    if let Some(m) = l.model.get() {
        head.push_str(&format!(" ({m})"));
    }
    if l.echoed.0 {
        head.push_str(", echoed");
    }
    fact.title = match &text {
        Some(t) => format!("{head}: {t}"),
        None if !uses.is_empty() => format!("{head}: tool_use {}", uses.join(", ")),
        None if results > 0 => match &first_result {
            Some(r) => format!("{head}: tool_result {r}"),
            None => format!("{head}: {results} tool_result"),
        },
        None => head,
    };
    let mut parts = Vec::new();
    if !uses.is_empty() {
        parts.push(format!("tool_use {}", uses.join(", ")));
    }
    if results > 0 {
        parts.push(format!("tool_result {results}"));
    }
    if other > 0 {
        parts.push(format!("{other} other blocks"));
    }
    if let Some(u) = l.usage.0.as_ref() {
        let n = |x: Option<f64>| x.map(js::number_to_string).unwrap_or_else(|| "?".into());
        parts.push(format!(
            "usage in {} out {}",
            n(u.input_tokens.0),
            n(u.output_tokens.0)
        ));
    }
    fact.detail = parts.join("; ");
    if failed > 0 {
        fact.error = Some(format!("{failed} tool_result with is_error"));
    }
}
