//! The stats blocks (`mcp-tape.stats/1`): their types, the JavaScript number they print, and the bundled price table the reference prices tokens with.

use crate::tape::line::LineKind;
use crate::tape::line::Plane;
use serde::{Serialize, Serializer};

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
    pub(super) fn add(&mut self, kind: LineKind) {
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

    pub(super) fn merged(&self, b: &RecordCounts) -> RecordCounts {
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
    /// Which plane the merged block took its tool table from.
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
pub(super) const CACHE_WRITE_MULTIPLIER: f64 = 1.25;
pub(super) const CACHE_READ_MULTIPLIER: f64 = 0.1;

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
