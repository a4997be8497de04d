//! `mcp-session-id` values are never published: not in the raw probes'
//! `fitness.http` events (the response header), and not when a server
//! echoes its request headers in a tool result. The sessionful (legacy
//! era) fixtures issue UUIDs; no UUID is left on any tape.

use crate::common;

use std::time::Duration;

use common::{http_fixture, probe, run_bounded, s, text};
use serde_json::Value;

fn uuids(tape: &str) -> Vec<String> {
    let re = regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("regex");
    re.find_iter(tape).map(|m| m.as_str().to_owned()).collect()
}

#[test]
fn the_probes_tape_that_a_session_id_came_back_but_not_its_value() {
    let server = http_fixture("legacy");
    let run = probe(&[server.url.as_str()], &[], Duration::from_secs(60));
    let tape = run.tape_text();
    let mut seen = 0;
    for line in tape.lines() {
        let v: Value = serde_json::from_str(line).expect("a JSON line");
        if v["kind"] == "fitness.http"
            && let Some(sid) = v["raw"]["responseHeaders"].get("mcp-session-id")
        {
            assert_eq!(sid, "[redacted:pattern credential-field]", "{line}");
            seen += 1;
        }
    }
    assert!(seen > 0, "the sessionful server issued a session id");
    assert_eq!(uuids(&tape), Vec::<String>::new());
}

#[test]
fn a_session_id_a_server_echoes_in_a_tool_result_is_not_published() {
    let server = http_fixture("echo");
    let dir = tempfile::tempdir().expect("tempdir");
    let out = run_bounded(
        &[
            "ask",
            &server.url,
            "--runner",
            "sim/diligent",
            "--out",
            s(dir.path()),
            "Call `request` with {}",
        ],
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "{}", text(&out));
    for name in ["mcp.jsonl", "agent.jsonl"] {
        let tape = std::fs::read_to_string(dir.path().join(name)).expect("tape");
        assert!(
            tape.contains(r#"\"mcp-session-id\":\"[redacted:pattern credential-field]\""#),
            "{name} shows the echoed header, redacted"
        );
        assert_eq!(uuids(&tape), Vec::<String>::new(), "{name}");
    }
    assert_eq!(uuids(&text(&out)), Vec::<String>::new(), "printed");
}
