//! `fitness ask` through the binary: one trial against the in-tree fixture,
//! both tapes written and agreeing, the answer, calls and cost printed; a
//! missing key is a clear error naming the variable.

use crate::common;

use std::process::Command;
use std::time::Duration;

use common::{FITNESS, http_fixture, run_bounded, tape_stats, text};
use serde_json::Value;

#[test]
fn ask_runs_one_trial_and_writes_both_tapes() {
    let dir = tempfile::tempdir().expect("dir");
    let out_dir = dir.path().join("ask");
    let out = run_bounded(
        &[
            "ask",
            "--runner",
            "sim/diligent",
            // The fixture's `add` is unannotated, so it may write: a
            // read-only ask would withhold it.
            "--sandbox",
            "--out",
            out_dir.to_str().expect("utf-8"),
            "Call `add` with {\"a\": 19, \"b\": 23}",
            "--",
            FITNESS,
            "fixture-server",
            "correct",
        ],
        Duration::from_secs(60),
    );
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("answer: 42"), "{printed}");
    assert!(printed.contains("add ok"), "{printed}");
    assert!(printed.contains("cost: $0.000000"), "{printed}");
    let mcp = out_dir.join("mcp.jsonl");
    let agent = out_dir.join("agent.jsonl");
    let wire = tape_stats(&mcp);
    let turns = tape_stats(&agent);
    assert_eq!(wire["tools"][0]["name"], "add");
    assert_eq!(wire["tools"][0]["calls"], 1);
    assert_eq!(turns["tools"][0]["calls"], 1);
    assert_eq!(turns["models"]["perModel"][0]["model"], "sim/diligent");
    let agent_text = std::fs::read_to_string(&agent).expect("agent tape");
    let first: Value =
        serde_json::from_str(agent_text.lines().next().expect("meta")).expect("json");
    assert_eq!(first["kind"], "llm");
    for line in agent_text.lines().skip(1) {
        let v: Value = serde_json::from_str(line).expect("json");
        if v["type"] != "end" {
            assert_eq!(v["corr_id"], "ask", "{line}");
        }
    }
}

#[test]
fn a_missing_key_names_the_variable_and_unknown_profiles_list_the_real_ones() {
    let out = Command::new(FITNESS)
        .args([
            "ask",
            "--runner",
            "anthropic/claude-sonnet-4-5",
            "hello",
            "--",
            FITNESS,
            "fixture-server",
            "correct",
        ])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(text(&out).contains("ANTHROPIC_API_KEY"), "{}", text(&out));
    let out = Command::new(FITNESS)
        .args([
            "ask",
            "--runner",
            "openai/gpt-4o",
            "hello",
            "--",
            FITNESS,
            "fixture-server",
            "correct",
        ])
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(text(&out).contains("OPENAI_API_KEY"), "{}", text(&out));
    let out = Command::new(FITNESS)
        .args([
            "ask",
            "--runner",
            "sim/genius",
            "hello",
            "--",
            FITNESS,
            "fixture-server",
            "correct",
        ])
        .output()
        .expect("runs");
    assert!(!out.status.success());
    assert!(text(&out).contains("sim/diligent"), "{}", text(&out));
}

#[test]
fn ask_over_streamable_http_tags_the_trial_frames() {
    let server = http_fixture("correct");
    let dir = tempfile::tempdir().expect("dir");
    let out_dir = dir.path().join("ask");
    let out = run_bounded(
        &[
            "ask",
            &server.url,
            "--sandbox",
            "--runner",
            "sim/careless",
            "--seed",
            "1",
            "--out",
            out_dir.to_str().expect("utf-8"),
            "Please `reverse` {\"text\": \"abc\"}",
        ],
        Duration::from_secs(60),
    );
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");
    assert!(printed.contains("answer: cba"), "{printed}");
    let wire = std::fs::read_to_string(out_dir.join("mcp.jsonl")).expect("tape");
    let mut calls = 0;
    for line in wire.lines() {
        let v: Value = serde_json::from_str(line).expect("json");
        if v["raw"]["method"] == "tools/call" {
            calls += 1;
            assert_eq!(v["corr_id"], "ask", "{line}");
        }
        if v["raw"]["method"] == "tools/list" {
            assert!(v.get("corr_id").is_none(), "{line}");
        }
    }
    assert!(calls >= 1);
    let stats = tape_stats(&out_dir.join("agent.jsonl"));
    assert_eq!(stats["tools"][0]["calls"], calls);
}
