//! `fitness probe` against real MCP servers installed by scripts/setup (npm
//! and PyPI, pinned there). Each test connects, lists the tools, calls one,
//! checks the tape pairs every request, and asserts the probe results the
//! server really gives. A missing server fails the test, naming the fix.

use crate::common;

use std::time::Duration;

use common::{probe, require_tool};

const LIMIT: Duration = Duration::from_secs(180);

/// Facts every one of these servers shows, whatever its era.
fn assert_common(run: &common::ProbeRun) {
    assert_eq!(run.call(0)["ok"], true, "{:#}", run.report);
    assert_ne!(run.call(0)["isError"], true, "{:#}", run.report);
    assert_eq!(run.pending(), 0, "every request got its response");
    // All of them counter-offer or refuse rather than echo 1999-01-01.
    assert_eq!(run.status("bogus_version"), "pass");
    assert_eq!(run.status("unknown_method"), "pass");
}

#[test]
fn server_everything_over_stdio() {
    let bin = require_tool("mcp-server-everything");
    let bin = bin.to_str().expect("utf-8 path");
    let run = probe(&["--", bin], &["--call", r#"echo={"message":"hi"}"#], LIMIT);
    assert_eq!(run.tools().len(), 13, "{:?}", run.tools());
    assert_eq!(run.call(0)["detail"], "Echo: hi");
    assert_common(&run);
    assert_eq!(run.report["server"]["era"], "legacy");
    assert_eq!(run.report["server"]["negotiatedVersion"], "2025-11-25");
    assert_eq!(run.status("spec_currency"), "fail");
    assert_eq!(run.status("server_discover"), "fail");
    assert_eq!(run.status("cache_hints"), "unknown");
    assert_eq!(run.status("deprecation_surface"), "pass");
    // It drops a batch without a word: the ping sent behind the batch
    // tells so at once, never a wait for the timeout.
    let deprecation = run.report["probes"]
        .as_array()
        .expect("probes")
        .iter()
        .find(|p| p["id"] == "deprecation_surface")
        .expect("the probe")
        .to_string();
    assert!(
        deprecation.contains("a request sent after it was answered first"),
        "{deprecation}"
    );
    assert_eq!(run.status("header_mismatch"), "unknown");
    assert_eq!(run.status("origin"), "unknown");
    assert_eq!(run.status("dns_rebinding"), "unknown");
}

#[test]
fn server_everything_over_streamable_http() {
    let server = common::everything_over_http();
    let run = probe(
        &[server.url.as_str()],
        &["--call", r#"echo={"message":"hi"}"#],
        LIMIT,
    );
    assert_eq!(run.tools().len(), 13, "{:?}", run.tools());
    assert_common(&run);
    assert_eq!(run.report["server"]["era"], "legacy");
    assert_eq!(
        run.report["server"]["transportShape"],
        "streamable-http+sse"
    );
    assert_eq!(run.report["server"]["sessionful"], true);
    assert_eq!(run.status("spec_currency"), "fail");
    assert_eq!(run.status("header_mismatch"), "unknown");
    // Findings: it answers a batched request and accepts a foreign Origin.
    assert_eq!(run.status("deprecation_surface"), "fail");
    assert_eq!(run.status("origin"), "fail");
    // It accepts a foreign Host as well: the official suite's variant fails too.
    assert_eq!(run.status("dns_rebinding"), "fail");
    assert!(run.tape_text().contains(r#""kind":"fitness.http""#));
}

#[test]
fn server_memory_over_stdio() {
    let bin = require_tool("mcp-server-memory");
    let bin = bin.to_str().expect("utf-8 path");
    let dir = tempfile::tempdir().expect("temp dir");
    let memory = format!(
        "MEMORY_FILE_PATH={}",
        dir.path().join("memory.jsonl").display()
    );
    let run = probe(
        &["--", bin],
        &["--env", &memory, "--call", "read_graph={}"],
        LIMIT,
    );
    assert_eq!(run.tools().len(), 9, "{:?}", run.tools());
    assert_common(&run);
    assert_eq!(run.report["server"]["era"], "legacy");
    assert_eq!(run.status("spec_currency"), "fail");
    assert_eq!(run.status("deprecation_surface"), "pass");
    // The env var is the child's; it is not taped.
    assert!(!run.tape_text().contains("memory.jsonl"));
}

#[test]
fn mcp_server_time_over_stdio_is_modern() {
    let bin = require_tool("mcp-server-time");
    let bin = bin.to_str().expect("utf-8 path");
    let run = probe(
        &["--", bin],
        &["--call", r#"get_current_time={"timezone":"UTC"}"#],
        LIMIT,
    );
    assert_eq!(run.tools().len(), 2, "{:?}", run.tools());
    assert!(run.call(0)["detail"].as_str().unwrap_or("").contains("UTC"));
    assert_common(&run);
    assert_eq!(run.report["server"]["era"], "modern");
    assert_eq!(run.report["server"]["negotiatedVersion"], "2026-07-28");
    assert_eq!(run.status("spec_currency"), "pass");
    assert_eq!(run.status("server_discover"), "pass");
    assert_eq!(run.status("cache_hints"), "pass");
}
