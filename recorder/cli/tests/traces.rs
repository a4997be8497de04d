//! Trace context (issue 46): every `tools/call` of a run carries a W3C
//! `traceparent` in its `_meta` (one trace per trial, a span per call),
//! the record keeps each trial's trace id, and `--otlp URL` sends the spans
//! to an OpenTelemetry collector over OTLP/HTTP. The collector here is the
//! test's own receiver on 127.0.0.1, which decodes what it is sent with the
//! OpenTelemetry protobuf types (`opentelemetry-proto`).

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{FITNESS, run_bounded};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message as _;
use serde_json::Value;

/// An OTLP/HTTP receiver on 127.0.0.1: the URL of its traces endpoint, and
/// every request body it was sent.
fn receiver() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!(
        "http://{}/v1/traces",
        listener.local_addr().expect("its address")
    );
    let bodies: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let kept = bodies.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" {
                    break;
                }
                if let Some((k, v)) = line.split_once(':')
                    && k.eq_ignore_ascii_case("content-length")
                {
                    length = v.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length.min(16 << 20)];
            if reader.read_exact(&mut body).is_ok() {
                kept.lock().expect("lock").push(body);
            }
            let mut stream = reader.into_inner();
            let _ = stream.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
            );
        }
    });
    (url, bodies)
}

#[test]
fn each_trial_is_one_trace_on_the_wire_in_the_record_and_at_the_collector() {
    let (url, bodies) = receiver();
    let out = tempfile::tempdir().expect("tempdir");
    let run = run_bounded(
        &common::run_args(
            "sim/diligent",
            out.path(),
            &["--otlp", &url],
            &[FITNESS, "demo-server", "good"],
        ),
        Duration::from_secs(240),
    );
    let (dir, record) = common::run_result(&run);
    assert_eq!(record["outcome"], "SCORED", "{:#}", record["gates"]);

    // The record: each trial's trace id.
    let traces: BTreeMap<String, String> =
        serde_json::from_value(record["traces"].clone()).expect("the record keeps the traces");
    assert!(traces.len() >= 8, "{traces:?}");
    let hex = regex::Regex::new("^[0-9a-f]{32}$").expect("pattern");
    assert!(traces.values().all(|t| hex.is_match(t)), "{traces:?}");
    let distinct: BTreeSet<&String> = traces.values().collect();
    assert_eq!(distinct.len(), traces.len(), "one trace a trial");

    // The wire: every call carries its trial's trace, each span once.
    let wire = std::fs::read_to_string(dir.join("mcp.jsonl")).expect("the wire tape");
    let mut spans_on_wire = BTreeSet::new();
    let mut calls = 0;
    for line in wire.lines() {
        let v: Value = serde_json::from_str(line).expect("a tape line");
        if v["dir"] != "in" || v["raw"]["method"] != "tools/call" {
            continue;
        }
        calls += 1;
        let corr = v["corr_id"].as_str().expect("a call's corr_id");
        let parent = v["raw"]["params"]["_meta"]["traceparent"]
            .as_str()
            .unwrap_or_else(|| panic!("a traceparent: {line}"));
        let parts: Vec<&str> = parent.split('-').collect();
        assert_eq!(parts.len(), 4, "{parent}");
        assert_eq!((parts[0], parts[3]), ("00", "01"), "{parent}");
        assert_eq!(Some(&parts[1].to_owned()), traces.get(corr), "{corr}");
        assert!(spans_on_wire.insert(parts[2].to_owned()), "each span once");
    }
    assert!(calls >= 8, "{calls} calls");

    // The collector: the same spans, one trace a trial.
    let received = bodies.lock().expect("lock").clone();
    assert!(!received.is_empty(), "the collector was sent the spans");
    let mut exported = 0;
    let mut by_trial: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for body in &received {
        let request =
            ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP trace request");
        for span in request
            .resource_spans
            .iter()
            .flat_map(|r| &r.scope_spans)
            .flat_map(|s| &s.spans)
        {
            exported += 1;
            let trace = hex_of(&span.trace_id);
            assert!(spans_on_wire.contains(&hex_of(&span.span_id)), "{span:?}");
            assert!(span.name.starts_with("tools/call "), "{}", span.name);
            let corr = span
                .attributes
                .iter()
                .find(|a| a.key == "fitness.corr_id")
                .and_then(|a| a.value.as_ref())
                .and_then(|v| match &v.value {
                    Some(Any::StringValue(s)) => Some(s.clone()),
                    _ => None,
                })
                .expect("the trial is an attribute");
            assert_eq!(traces.get(&corr), Some(&trace), "{corr}");
            by_trial.entry(corr).or_default().insert(trace);
        }
    }
    assert_eq!(exported, spans_on_wire.len(), "every span exported");
    assert!(by_trial.values().all(|t| t.len() == 1), "{by_trial:?}");
    assert!(
        record["notes"]["own"]
            .to_string()
            .contains("exported over OTLP/HTTP"),
        "{}",
        record["notes"]["own"]
    );
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
