//! `mcp-tape.stats/1` of every anchor tape reproduces the `trace_stats`
//! block the reference stored in that run's record.

use crate::common;

use std::fs::File;
use std::io::BufReader;

use fitness_shared::tape::add_tape;
use fitness_shared::tape::stats::{Stats, StatsBuilder, merge_planes};
use serde_json::{Value, json};

fn plane(run_id: &str, file: &str) -> Stats {
    let path = common::anchor_dir().join("traces").join(run_id).join(file);
    let input =
        BufReader::new(File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    let mut builder = StatsBuilder::new();
    let skips = add_tape(input, &mut builder).expect("reading a file on disk");
    assert_eq!(skips.count, 0, "{run_id}/{file}: {:?}", skips.explained);
    builder.finish(None)
}

fn to_json(stats: &Stats) -> Value {
    serde_json::to_value(stats).expect("stats serialise")
}

#[test]
fn there_are_eight_anchor_runs_with_tapes() {
    assert_eq!(common::trace_run_ids().len(), 8);
}

#[test]
fn mcp_plane_records_and_tools_match_the_anchor() {
    for id in common::trace_run_ids() {
        let want = &common::anchor_trace_stats(&id)["planes"]["mcp"];
        let got = to_json(&plane(&id, "mcp.jsonl"));
        assert_eq!(
            got["session"]["records"], want["session"]["records"],
            "{id}: records"
        );
        let pick = |v: &Value| -> Vec<Value> {
            v["tools"]
                .as_array()
                .expect("tools is an array")
                .iter()
                .map(|t| {
                    json!([
                        t["name"],
                        t["calls"],
                        t["errors"],
                        t["pending"],
                        t["p50Ms"],
                        t["p95Ms"]
                    ])
                })
                .collect()
        };
        assert_eq!(pick(&got), pick(want), "{id}: tools");
    }
}

#[test]
fn agent_plane_records_and_tokens_match_the_anchor() {
    for id in common::trace_run_ids() {
        let want = &common::anchor_trace_stats(&id)["planes"]["agent"];
        let got = to_json(&plane(&id, "agent.jsonl"));
        assert_eq!(
            got["session"]["records"], want["session"]["records"],
            "{id}: records"
        );
        let pick = |v: &Value| -> Vec<Value> {
            // A plane with no live assistant turn has `models: null`.
            v["models"]["perModel"]
                .as_array()
                .map(|a| a.as_slice())
                .unwrap_or_default()
                .iter()
                .map(|m| json!([m["model"], m["calls"], m["inputTokens"], m["outputTokens"]]))
                .collect()
        };
        assert_eq!(
            got["models"].is_null(),
            want["models"].is_null(),
            "{id}: models"
        );
        assert_eq!(pick(&got), pick(want), "{id}: per-model tokens");
    }
}

#[test]
fn whole_blocks_match_the_anchor_including_cost_errors_and_merge() {
    for id in common::trace_run_ids() {
        let want = common::anchor_trace_stats(&id);
        let mcp = plane(&id, "mcp.jsonl");
        let agent = plane(&id, "agent.jsonl");
        assert_eq!(to_json(&mcp), want["planes"]["mcp"], "{id}: mcp plane");
        assert_eq!(
            to_json(&agent),
            want["planes"]["agent"],
            "{id}: agent plane"
        );
        let merged = serde_json::to_value(merge_planes(mcp, agent, None)).expect("serialise");
        assert_eq!(merged, want, "{id}: merged block");
    }
}

#[test]
fn the_cloudflare_run_reads_as_the_anchor_prints_it() {
    // Spelled-out figures, so a change to the fixture cannot hide a change here.
    let id = "docs-mcp-cloudflare-com-2026-08-19T20-56-16-949Z";
    let mcp = plane(id, "mcp.jsonl");
    let search = &mcp.tools[0];
    assert_eq!(
        (
            search.name.as_str(),
            search.calls,
            search.errors,
            search.pending
        ),
        ("search_cloudflare_documentation", 5, 0, 0)
    );
    assert_eq!(
        (search.p50_ms.map(|n| n.0), search.p95_ms.map(|n| n.0)),
        (Some(3897.0), Some(4683.0))
    );
    let agent = plane(id, "agent.jsonl");
    let models = agent.models.expect("an agent plane has models");
    assert_eq!(models.per_model[0].calls, 16);
    assert_eq!(models.cost.total_usd.map(|n| n.0), Some(0.106106));
}
