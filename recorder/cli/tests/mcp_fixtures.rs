//! `fitness probe` against the in-tree fixture servers: each gives the probe
//! results its one fault implies, and the faulty ones end in bounded time
//! with a readable tape.

use crate::common;

use std::time::Duration;

use common::{FITNESS, http_fixture, probe};

const LIMIT: Duration = Duration::from_secs(120);

fn stdio(name: &str) -> Vec<&str> {
    vec!["--", FITNESS, "fixture-server", name]
}

#[test]
fn correct_stdio_server_is_modern_and_passes_what_applies() {
    let run = probe(
        &stdio("correct"),
        &["--call", r#"add={"a":2,"b":40}"#],
        LIMIT,
    );
    assert_eq!(run.report["server"]["era"], "modern");
    assert_eq!(run.report["server"]["negotiatedVersion"], "2026-07-28");
    assert_eq!(run.report["server"]["transportShape"], "stdio");
    assert_eq!(run.tools(), ["add", "echo", "reverse"]);
    assert_eq!(run.call(0)["detail"], "42");
    for pass in [
        "spec_currency",
        "bogus_version",
        "server_discover",
        "cache_hints",
        "unknown_method",
        "deprecation_surface",
    ] {
        assert_eq!(run.status(pass), "pass", "{pass}: {:#}", run.report);
    }
    // Headers and Origin do not exist on stdio: unknown, never pass.
    assert_eq!(run.status("header_mismatch"), "unknown");
    assert_eq!(run.status("method_header_mismatch"), "unknown");
    assert_eq!(run.status("origin"), "unknown");
    assert_eq!(run.status("dns_rebinding"), "unknown");
    assert_eq!(run.pending(), 0);
    // Probe frames carry their probe's corr_id.
    assert!(
        run.tape_text()
            .contains(r#""corr_id":"probe::bogus_version""#)
    );
}

#[test]
fn stdio_frames_are_taped_byte_exact() {
    let run = probe(&stdio("bogus-echo"), &[], LIMIT);
    // The fixture writes its frames in this exact key order and spacing.
    let tape = run.tape_text();
    assert!(
        tape.contains(
            r#""raw":{"jsonrpc":"2.0","id":"probe-bogus","result":{"protocolVersion":"1999-01-01","#
        ),
        "{tape}"
    );
    assert!(
        tape.lines()
            .last()
            .is_some_and(|l| l.contains(r#""type":"end""#))
    );
}

#[test]
fn legacy_only_server_falls_back_to_initialize() {
    let run = probe(&stdio("legacy"), &[], LIMIT);
    assert_eq!(run.report["server"]["era"], "legacy");
    assert_eq!(run.report["server"]["negotiatedVersion"], "2025-11-25");
    assert_eq!(run.status("spec_currency"), "fail");
    assert_eq!(run.status("server_discover"), "fail");
    assert_eq!(run.status("bogus_version"), "pass");
    assert_eq!(run.status("cache_hints"), "unknown");
    assert_eq!(run.status("unknown_method"), "pass");
    assert_eq!(run.tools().len(), 3);
}

#[test]
fn echoing_a_bogus_version_fails_that_probe() {
    let run = probe(&stdio("bogus-echo"), &[], LIMIT);
    assert_eq!(run.status("bogus_version"), "fail");
    assert_eq!(run.status("unknown_method"), "pass");
    assert_eq!(run.status("deprecation_surface"), "pass");
}

#[test]
fn a_server_that_never_answers_tools_call_ends_in_bounded_time() {
    let run = probe(
        &stdio("hang"),
        &["--timeout", "3", "--call", r#"echo={"message":"hi"}"#],
        LIMIT,
    );
    assert_eq!(run.call(0)["ok"], false);
    assert!(
        run.call(0)["detail"]
            .as_str()
            .unwrap_or("")
            .contains("no answer"),
        "{:#}",
        run.report
    );
    assert!(
        run.elapsed < Duration::from_secs(60),
        "took {:?}",
        run.elapsed
    );
    // The unanswered call is on the tape as pending.
    assert_eq!(run.pending(), 1);
}

#[test]
fn a_server_that_crashes_mid_call_leaves_a_readable_tape() {
    let run = probe(
        &stdio("crash"),
        &["--timeout", "5", "--call", r#"echo={"message":"hi"}"#],
        LIMIT,
    );
    assert_eq!(run.call(0)["ok"], false);
    let tape = run.tape_text();
    assert!(tape.contains("about to crash"));
    assert!(tape.contains("fitness.stdio_closed"));
    assert_eq!(run.pending(), 1);
    // The probes still ran, each on a fresh process.
    assert_eq!(run.status("unknown_method"), "pass");
}

#[test]
fn garbage_on_stdout_is_taped_as_events_and_ignored() {
    let run = probe(
        &stdio("garbage"),
        &["--timeout", "5", "--call", r#"reverse={"text":"abc"}"#],
        LIMIT,
    );
    assert_eq!(run.call(0)["detail"], "cba");
    assert!(run.tape_text().contains("fitness.unparsable"));
    assert_eq!(run.pending(), 0);
    assert_eq!(run.status("bogus_version"), "pass");
}

#[test]
fn a_notification_flood_is_taped_and_the_call_still_answers() {
    let run = probe(
        &stdio("flood"),
        &["--timeout", "20", "--call", r#"echo={"message":"after"}"#],
        LIMIT,
    );
    assert_eq!(run.call(0)["detail"], "after");
    let floods = run.tape_text().matches("flood ").count();
    assert!(floods >= 5_000, "{floods} flood notifications on the tape");
    assert_eq!(run.pending(), 0);
}

#[test]
fn correct_http_server_passes_every_probe() {
    let server = http_fixture("correct");
    let run = probe(
        &[server.url.as_str()],
        &["--call", r#"echo={"message":"hi"}"#],
        LIMIT,
    );
    assert_eq!(run.report["server"]["era"], "modern");
    assert!(
        run.report["server"]["transportShape"]
            .as_str()
            .unwrap_or("")
            .starts_with("streamable-http")
    );
    for (id, status) in run.statuses() {
        assert_eq!(status, "pass", "{id}: {:#}", run.report);
    }
    assert_eq!(run.pending(), 0);
    let tape = run.tape_text();
    assert!(tape.contains(r#""kind":"fitness.http""#));
    assert!(
        tape.contains(r#""status":400"#),
        "the header probe's refusal is taped"
    );
}

#[test]
fn a_server_that_accepts_mismatched_headers_fails_that_probe() {
    let server = http_fixture("lax-headers");
    let run = probe(&[server.url.as_str()], &[], LIMIT);
    assert_eq!(run.status("header_mismatch"), "fail");
    assert_eq!(run.status("method_header_mismatch"), "pass");
    assert_eq!(run.status("origin"), "pass");
    assert_eq!(run.status("bogus_version"), "pass");
}

#[test]
fn a_server_that_accepts_a_mismatched_method_header_fails_that_probe_alone() {
    let server = http_fixture("lax-method");
    let run = probe(&[server.url.as_str()], &[], LIMIT);
    assert_eq!(
        run.status("method_header_mismatch"),
        "fail",
        "{:#}",
        run.report
    );
    assert_eq!(run.status("header_mismatch"), "pass");
    // The probe's own frame carries the mismatched header's name in its detail.
    let detail = run.report["probes"]
        .as_array()
        .and_then(|p| p.iter().find(|p| p["id"] == "method_header_mismatch"))
        .map(|p| p["detail"].to_string())
        .unwrap_or_default();
    assert!(detail.contains("Mcp-Method"), "{detail}");
}

#[test]
fn a_legacy_http_server_has_no_header_rules_to_check() {
    let server = http_fixture("legacy");
    let run = probe(&[server.url.as_str()], &[], LIMIT);
    assert_eq!(run.report["server"]["era"], "legacy");
    assert_eq!(run.status("header_mismatch"), "unknown");
    assert_eq!(run.status("method_header_mismatch"), "unknown");
    assert_eq!(run.status("origin"), "pass");
}

#[test]
fn an_unreachable_server_is_a_clear_error() {
    let out = common::run_bounded(
        &["probe", "http://127.0.0.1:9/mcp", "--timeout", "3"],
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("could not connect"), "{stderr}");
    let out = common::run_bounded(&["probe", "--", "/nonexistent/fitness-server"], LIMIT);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("could not start"));
}

#[test]
fn credentials_never_reach_the_tape() {
    let server = http_fixture("correct");
    let run = probe(
        &[server.url.as_str()],
        &["--header", "X-Api-Key: s3cret-header-value"],
        LIMIT,
    );
    assert!(!run.tape_text().contains("s3cret-header-value"));
    // An authenticated server that marks tools/list public is a finding.
    assert_eq!(run.status("cache_hints"), "fail");
}

#[test]
fn a_server_that_checks_host_but_not_origin_splits_the_two_rebinding_probes() {
    // Our origin probe (foreign Origin, valid Host) gets in; the official
    // suite's dns-rebinding variant (both foreign) is refused.
    let server = http_fixture("host-only");
    let run = probe(&[server.url.as_str()], &[], LIMIT);
    assert_eq!(run.status("origin"), "fail", "{:#}", run.report);
    assert_eq!(run.status("dns_rebinding"), "pass", "{:#}", run.report);
    // A server that checks Origin refuses both.
    let server = http_fixture("correct");
    let run = probe(&[server.url.as_str()], &[], LIMIT);
    assert_eq!(run.status("origin"), "pass");
    assert_eq!(run.status("dns_rebinding"), "pass");
    assert!(run.tape_text().contains(r#""host":"evil.example.com""#));
}
