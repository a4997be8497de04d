//! `fitness tape stats` as a user runs it, on the anchor's real tapes.

use std::process::Output;

use serde_json::Value;

use crate::common;
use common::{anchor_dir, fitness};

fn trace_stats(run_id: &str) -> Value {
    let text = std::fs::read_to_string(anchor_dir().join("runs.json")).expect("runs.json reads");
    let runs: Vec<Value> = serde_json::from_str(&text).expect("runs.json parses");
    runs.into_iter()
        .find(|r| r["run"]["id"] == run_id)
        .map(|r| r["trace_stats"].clone())
        .unwrap_or_else(|| panic!("no record {run_id}"))
}

fn run_ids() -> Vec<String> {
    let mut ids: Vec<String> = std::fs::read_dir(anchor_dir().join("traces"))
        .expect("traces lists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

fn json_of(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn json_of_each_tape_reproduces_its_plane_of_the_anchor_block() {
    let ids = run_ids();
    assert_eq!(ids.len(), 8);
    for id in ids {
        let want = trace_stats(&id);
        for plane in ["mcp", "agent"] {
            let path = anchor_dir()
                .join("traces")
                .join(&id)
                .join(format!("{plane}.jsonl"));
            let mut got = json_of(&fitness(&[
                "tape",
                "stats",
                "--json",
                path.to_str().expect("utf8 path"),
            ]));
            assert_eq!(got["file"], path.to_str().expect("utf8 path"));
            got["file"] = Value::Null;
            assert_eq!(got, want["planes"][plane], "{id}: {plane}");
        }
    }
}

#[test]
fn json_of_both_tapes_reproduces_the_merged_block() {
    for id in run_ids() {
        let dir = anchor_dir().join("traces").join(&id);
        let (mcp, agent) = (dir.join("mcp.jsonl"), dir.join("agent.jsonl"));
        // Order on the command line does not matter: meta.kind picks the plane.
        let mut got = json_of(&fitness(&[
            "tape",
            "stats",
            agent.to_str().expect("utf8"),
            mcp.to_str().expect("utf8"),
            "--json",
        ]));
        got["planes"]["mcp"]["file"] = Value::Null;
        got["planes"]["agent"]["file"] = Value::Null;
        assert_eq!(got, trace_stats(&id), "{id}");
    }
}

#[test]
fn the_table_names_tools_models_and_cost() {
    let dir = anchor_dir()
        .join("traces")
        .join("docs-mcp-cloudflare-com-2026-08-19T20-56-16-949Z");
    let out = fitness(&[
        "tape",
        "stats",
        dir.join("mcp.jsonl").to_str().expect("utf8"),
        dir.join("agent.jsonl").to_str().expect("utf8"),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf8");
    assert!(
        text.contains(
            "records   86 lines: 2 meta, 28 message, 21 event, 33 turn, 2 end, 0 other; 0 skipped"
        ),
        "{text}"
    );
    let search = text
        .lines()
        .find(|l| l.starts_with("search_cloudflare_documentation"))
        .expect("a tool row");
    let cells: Vec<&str> = search.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "search_cloudflare_documentation",
            "5",
            "0",
            "0",
            "3897",
            "4683",
            "mcp"
        ]
    );
    assert!(
        text.contains("cost      $0.106106, list prices (bundled, as of 2026-08-19)"),
        "{text}"
    );
    assert!(text.contains("== agent plane =="));
}

#[test]
fn bad_lines_are_reported_on_stderr_and_counted() {
    let dir = std::env::temp_dir().join(format!("fitness-tape-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("broken.jsonl");
    std::fs::write(
        &path,
        "{\"v\":1,\"type\":\"meta\",\"startedAt\":\"2026-01-01T00:00:00.000Z\"}\nnot json\n{\"type\":\"end\",\"t\":\"2026-01-01T00:00:01.000Z\"}\n",
    )
    .expect("write");
    let out = fitness(&["tape", "stats", "--json", path.to_str().expect("utf8")]);
    let got = json_of(&out);
    assert_eq!(got["session"]["skippedLines"], 1);
    assert_eq!(got["session"]["records"]["total"], 2);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("broken.jsonl:2: line is not JSON"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_missing_file_fails_with_exit_code_1_and_names_it() {
    let out = fitness(&["tape", "stats", "/nonexistent/tape.jsonl"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("failed to open /nonexistent/tape.jsonl"),
        "{stderr}"
    );
}

#[test]
fn no_file_is_a_usage_error() {
    assert_eq!(fitness(&["tape", "stats"]).status.code(), Some(2));
}
