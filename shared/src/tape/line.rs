//! The typed lines of an mcp-tape v1 tape.
//!
//! A line is classified the way every mcp-tape consumer classifies it: by
//! `type` first (`meta`, `turn`, `end`), then by `dir` (`in`/`out` are wire
//! messages, `event`/`command`/`telemetry` are one-way producer frames).
//! Anything else, or a known line whose fields do not fit its type, becomes
//! [`Line::Unknown`] with the value kept as read, so a reader never loses a
//! line it cannot type.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// One line of a tape.
/// Which plane a tape records: the wire (`mcp.jsonl`) or the agent
/// (`agent.jsonl`). The one plane type of records, statistics and the
/// replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Plane {
    Mcp,
    Agent,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Meta(Meta),
    Message(WireMessage),
    Event(Event),
    Turn(Turn),
    End(End),
    Unknown(UnknownLine),
}

/// The first line: who recorded what, when.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// Format version; 1 for every tape this crate reads.
    pub v: u64,
    #[serde(rename = "startedAt")]
    pub started_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// `"mcp"` when absent (format.md), `"llm"` for an agent plane.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `name@version` of the producer, also the namespace for id pairing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer: Option<Producer>,
    /// Fields this crate does not know, kept for the round trip.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Producer {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(
        rename = "configHash",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub config_hash: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Which way a wire message went. `In` is client to server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    In,
    Out,
}

/// A JSON-RPC frame as it crossed the wire.
///
/// `raw` holds the frame's exact bytes: reading keeps them and writing emits
/// them unchanged, so a frame's key order and spacing survive a round trip.
#[derive(Debug, Clone)]
pub struct WireMessage {
    pub t: String,
    pub dir: Direction,
    pub raw: Box<RawValue>,
    pub corr_id: Option<String>,
    pub extra: Map<String, Value>,
}

impl PartialEq for WireMessage {
    fn eq(&self, other: &Self) -> bool {
        self.t == other.t
            && self.dir == other.dir
            && self.raw.get() == other.raw.get()
            && self.corr_id == other.corr_id
            && self.extra == other.extra
    }
}

impl WireMessage {
    /// The frame parsed as a value (keys in source order).
    pub fn raw_value(&self) -> Result<Value, serde_json::Error> {
        serde_json::from_str(self.raw.get())
    }
}

/// A one-way producer frame (`dir` `event`, `command` or `telemetry`), such
/// as the harness's `fitness.*` events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub t: String,
    pub dir: EventDir,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corr_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EventDir {
    Event,
    Command,
    Telemetry,
}

/// One model turn on the agent plane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub t: String,
    pub role: String,
    pub blocks: Vec<Block>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing: Option<Timing>,
    /// Resent context, not a generation: never a model call, never in totals.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub echoed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corr_id: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Token usage, normalised: `input_tokens` excludes cache tokens and
/// thinking tokens are part of `output_tokens` (R-TAPE-4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_tokens: Option<u64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttft_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One content block of a turn. A block of another type, or one whose fields
/// do not fit, is kept whole as [`Block::Unknown`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Block {
    // `untagged` is safe here: each known variant carries its `type` tag as a
    // field checked by `BlockTag`, so no variant can match another's block.
    Known(KnownBlock),
    Unknown(Value),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KnownBlock {
    Text {
        text: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    Thinking {
        thinking: String,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
    ToolResult {
        tool_use_id: String,
        #[serde(default)]
        content: Value,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

/// The last line: how and when the session ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct End {
    pub t: String,
    #[serde(
        rename = "durationMs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Only process wrappers write this; Fitness Report wraps no process.
    #[serde(rename = "exitCode", default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A line this crate cannot type, kept as read.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownLine {
    pub value: Map<String, Value>,
    pub why: UnknownWhy,
}

#[derive(Debug, Clone, PartialEq)]
pub enum UnknownWhy {
    /// Neither `type` nor `dir` names a line kind this crate knows.
    UnknownKind,
    /// The line names a known kind but its fields do not fit it.
    Malformed(String),
}

/// Which kind of line a JSON object is, by the reference's rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    Meta,
    Message,
    Event,
    Turn,
    End,
    Other,
}

impl LineKind {
    /// `type` wins over `dir`, as in the reference's `recordKind`.
    pub fn classify(ty: Option<&str>, dir: Option<&str>) -> Self {
        match (ty, dir) {
            (Some("meta"), _) => Self::Meta,
            (Some("end"), _) => Self::End,
            (Some("turn"), _) => Self::Turn,
            (_, Some("event" | "command" | "telemetry")) => Self::Event,
            (_, Some("in" | "out")) => Self::Message,
            _ => Self::Other,
        }
    }
}

#[derive(Deserialize)]
struct Probe<'a> {
    #[serde(rename = "type", default, borrow)]
    ty: Option<LooseStr<'a>>,
    #[serde(default, borrow)]
    dir: Option<LooseStr<'a>>,
}

/// A field read as a string when it is one and ignored otherwise.
pub(crate) struct LooseStr<'a>(pub(crate) Option<std::borrow::Cow<'a, str>>);

impl<'de: 'a, 'a> Deserialize<'de> for LooseStr<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        crate::tape::view::loose_str(d).map(LooseStr)
    }
}

/// The wire line's own fields, with `raw` borrowed so its bytes are kept.
#[derive(Deserialize)]
struct WireFields<'a> {
    t: String,
    dir: Direction,
    #[serde(borrow)]
    raw: &'a RawValue,
    #[serde(default)]
    corr_id: Option<String>,
}

impl Line {
    /// Type one line of JSON text. `Err` only when the text is not a JSON
    /// object; every object becomes some `Line`.
    pub fn parse(text: &str) -> Result<Line, serde_json::Error> {
        let probe: Probe<'_> = serde_json::from_str(text)?;
        let ty = probe.ty.and_then(|s| s.0);
        let dir = probe.dir.and_then(|s| s.0);
        let kind = LineKind::classify(ty.as_deref(), dir.as_deref());
        let typed = match kind {
            LineKind::Meta => serde_json::from_str::<Meta>(text).map(|mut m| {
                m.extra.remove("type");
                Line::Meta(m)
            }),
            LineKind::Turn => serde_json::from_str::<Turn>(text).map(|mut t| {
                t.extra.remove("type");
                Line::Turn(t)
            }),
            LineKind::End => serde_json::from_str::<End>(text).map(|mut e| {
                e.extra.remove("type");
                Line::End(e)
            }),
            LineKind::Event => serde_json::from_str::<Event>(text).map(Line::Event),
            LineKind::Message => parse_wire(text).map(Line::Message),
            LineKind::Other => {
                let value: Map<String, Value> = serde_json::from_str(text)?;
                return Ok(Line::Unknown(UnknownLine {
                    value,
                    why: UnknownWhy::UnknownKind,
                }));
            }
        };
        match typed {
            Ok(line) => Ok(line),
            Err(err) => {
                let value: Map<String, Value> = serde_json::from_str(text)?;
                Ok(Line::Unknown(UnknownLine {
                    value,
                    why: UnknownWhy::Malformed(err.to_string()),
                }))
            }
        }
    }

    /// The line's kind.
    pub fn kind(&self) -> LineKind {
        match self {
            Line::Meta(_) => LineKind::Meta,
            Line::Message(_) => LineKind::Message,
            Line::Event(_) => LineKind::Event,
            Line::Turn(_) => LineKind::Turn,
            Line::End(_) => LineKind::End,
            Line::Unknown(_) => LineKind::Other,
        }
    }

    /// The line as one line of JSON text, without the newline.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        #[derive(Serialize)]
        struct Tagged<'a, T: Serialize> {
            #[serde(skip_serializing_if = "Option::is_none")]
            v: Option<u64>,
            #[serde(rename = "type")]
            ty: &'static str,
            #[serde(flatten)]
            inner: &'a T,
        }
        match self {
            Line::Meta(m) => {
                // `v` leads the line, as in every tape in the wild.
                let mut inner = serde_json::to_value(m)?;
                if let Value::Object(map) = &mut inner {
                    map.remove("v");
                }
                serde_json::to_string(&Tagged {
                    v: Some(m.v),
                    ty: "meta",
                    inner: &inner,
                })
            }
            Line::Turn(t) => serde_json::to_string(&Tagged {
                v: None,
                ty: "turn",
                inner: t,
            }),
            Line::End(e) => serde_json::to_string(&Tagged {
                v: None,
                ty: "end",
                inner: e,
            }),
            Line::Event(e) => serde_json::to_string(e),
            Line::Message(m) => wire_json(&m.t, m.dir, &m.raw, m.corr_id.as_deref(), &m.extra),
            Line::Unknown(u) => serde_json::to_string(&u.value),
        }
    }
}

fn parse_wire(text: &str) -> Result<WireMessage, serde_json::Error> {
    let fields: WireFields<'_> = serde_json::from_str(text)?;
    // Unknown fields are rare on wire lines; read them in a second pass so the
    // frame itself is never re-parsed into a value.
    let mut extra: Map<String, Value> = serde_json::from_str::<Map<String, Value>>(text)?;
    for known in ["t", "dir", "raw", "corr_id"] {
        extra.remove(known);
    }
    Ok(WireMessage {
        t: fields.t,
        dir: fields.dir,
        raw: fields.raw.to_owned(),
        corr_id: fields.corr_id,
        extra,
    })
}

/// A wire line as JSON text, `raw` emitted byte for byte.
pub(crate) fn wire_json(
    t: &str,
    dir: Direction,
    raw: &RawValue,
    corr_id: Option<&str>,
    extra: &Map<String, Value>,
) -> Result<String, serde_json::Error> {
    #[derive(Serialize)]
    struct Wire<'a> {
        t: &'a str,
        dir: Direction,
        raw: &'a RawValue,
        #[serde(skip_serializing_if = "Option::is_none")]
        corr_id: Option<&'a str>,
        #[serde(flatten)]
        extra: &'a Map<String, Value>,
    }
    serde_json::to_string(&Wire {
        t,
        dir,
        raw,
        corr_id,
        extra,
    })
}
