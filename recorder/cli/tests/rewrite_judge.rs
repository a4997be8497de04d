//! With a judge model given, proposals come from the judge: one call carrying
//! the tools and the findings, a JSON reply read robustly; findings the judge
//! leaves unanswered get the rule set's proposal. The judge is a fake
//! Anthropic API on 127.0.0.1 that checks what it receives.

use crate::common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::IntoResponse;
use common::{FITNESS, s};
use serde_json::{Value, json};

type Seen = Arc<Mutex<Vec<Value>>>;

const KEY: &str = "sk-fake-judge-key-0123456789";

fn reply(text: &str) -> axum::response::Response {
    axum::Json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "fake-judge",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 20}
    }))
    .into_response()
}

async fn handle(State(seen): State<Seen>, body: Bytes) -> axum::response::Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock().unwrap().push(body.clone());
    let system = body["system"].to_string();
    if !system.contains("You rewrite MCP tool descriptions") {
        // The destructiveness labelling call: no usable labels, so the rule
        // set's inference stands.
        return reply("I cannot tell.");
    }
    let user = body["messages"][0]["content"]
        .as_array()
        .and_then(|b| b.first())
        .and_then(|b| b["text"].as_str())
        .or_else(|| body["messages"][0]["content"].as_str())
        .unwrap_or("{}");
    let asked: Value = serde_json::from_str(user).unwrap_or(Value::Null);
    let mut out = Vec::new();
    for f in asked["findings"].as_array().into_iter().flatten() {
        if f["kind"] == "ambiguous_parameter" {
            out.push(json!({
                "tool": f["tool"],
                "answers": [f["id"]],
                "parameter_descriptions": {f["parameter"].as_str().unwrap_or("x"): "JUDGE: the numeric user id, e.g. \"42\"."},
                "rationale": "ids are numbers"
            }));
        }
    }
    reply(&format!(
        "Proposals:\n```json\n{}\n```",
        serde_json::to_string_pretty(&out).unwrap()
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_writes_the_proposals_it_answers_and_the_rules_fill_the_rest() {
    let seen: Seen = Arc::default();
    let app = Router::new().fallback(handle).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let out = tempfile::tempdir().expect("tempdir");
    let out_path = out.path().to_path_buf();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(FITNESS)
            .args([
                "run",
                "--runner",
                "sim/diligent",
                "--judge",
                "anthropic/fake-judge",
                "--generator",
                "schema-walk/1",
                "--out",
                s(&out_path),
                "--seed",
                "7",
                "--json",
                "--",
                FITNESS,
                "demo-server",
                "canary",
            ])
            .env("ANTHROPIC_BASE_URL", &base)
            .env("ANTHROPIC_API_KEY", KEY)
            .output()
            .expect("fitness runs")
    });
    let output = tokio::time::timeout(Duration::from_secs(240), output)
        .await
        .expect("the run finishes")
        .expect("joined");
    server.abort();
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON summary ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let dir = PathBuf::from(summary["dir"].as_str().expect("dir"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join("record.json")).unwrap()).unwrap();

    // The judge was asked once for proposals, with the findings and the tools.
    let seen = seen.lock().unwrap().clone();
    let asks: Vec<&Value> = seen
        .iter()
        .filter(|b| {
            b["system"]
                .to_string()
                .contains("You rewrite MCP tool descriptions")
        })
        .collect();
    assert_eq!(
        asks.len(),
        1,
        "one rewrite call; outcome {}, notes {}, {} calls seen",
        record["outcome"],
        record["notes"]["own"],
        seen.len()
    );
    let asked = asks[0].to_string();
    assert!(asked.contains("ambiguous_parameter") && asked.contains("get_profile"));
    assert!(asked.contains("unannotated_destructive") && asked.contains("purge_cache"));

    let findings = record["findings"].as_array().expect("findings");
    let proposals = record["proposals"].as_array().expect("proposals");
    let ambiguous = findings
        .iter()
        .find(|f| f["kind"] == "ambiguous_parameter" && f["tool"] == "get_profile")
        .expect("the ambiguous user parameter");
    let judged = proposals
        .iter()
        .find(|p| p["answers"].as_array().unwrap().contains(&ambiguous["id"]))
        .expect("a proposal for it");
    assert_eq!(judged["source"], "judge:anthropic/fake-judge");
    assert_eq!(
        judged["change"]["parameter_descriptions"]["user"],
        "JUDGE: the numeric user id, e.g. \"42\"."
    );
    assert_eq!(judged["evidence"], ambiguous["evidence"]);
    // The judge left purge_cache unanswered: the rule set answers it.
    let purge = proposals
        .iter()
        .find(|p| p["tool"] == "purge_cache")
        .expect("a purge_cache proposal");
    assert_eq!(purge["source"], "rules/1");
    assert_eq!(purge["change"]["annotations"]["destructiveHint"], true);
    // The key reaches neither the record nor the tapes.
    for file in ["record.json", "mcp.jsonl", "agent.jsonl"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(!text.contains(KEY), "the API key is in {file}");
    }
    // Every finding is answered exactly once.
    for f in findings {
        let n = proposals
            .iter()
            .filter(|p| p["answers"].as_array().unwrap().contains(&f["id"]))
            .count();
        assert_eq!(n, 1, "{}", f["id"]);
    }
}
