//! Two planes of one run as one block.

use std::cmp::Ordering;

use super::block::{
    ErrorSource, ErrorStats, JsNum, Planes, STATS_SCHEMA, SessionStats, Stats, TraceStats,
};
use crate::tape::js;
use crate::tape::line::Plane;

pub(super) fn min_iso(a: Option<&str>, b: Option<&str>) -> Option<String> {
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

pub(super) fn max_iso(a: Option<&str>, b: Option<&str>) -> Option<String> {
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
