//! The product with a real model in the loop: Qwen2.5-Coder-1.5B served by
//! llama.cpp's OpenAI-compatible server (scripts/local-model, installed by
//! scripts/test), started here on a free loopback port and stopped by its
//! PID. `fitness ask` and a small `fitness run` (a real runner and a real
//! judge) drive real MCP servers through it, and the model answers a
//! server's sampling request as the runner. The model is slow (about ten
//! tokens a second on two cores), so the run is capped at a handful of model
//! calls and ends VOID by its spend cap: an honest outcome whose ledger,
//! gates, costs and tapes are all real.

use crate::common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, require_tool, run_bounded, run_bounded_in, s, text};
use serde_json::Value;

const MODEL: &str = "openai/qwen2.5-coder-1.5b";

/// The local model server; killed when dropped.
struct ModelServer {
    child: Child,
    port: u16,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ModelServer {
    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// GET `path` on 127.0.0.1:`port`; the body, or `None` when nothing answers.
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut body = String::new();
    stream.read_to_string(&mut body).ok()?;
    Some(body)
}

/// Install (cached) and start the model; wait until it is healthy.
fn start_model() -> ModelServer {
    let install = repo().join("scripts/local-model/install");
    let out = Command::new(&install).output().expect("the installer runs");
    assert!(
        out.status.success(),
        "scripts/local-model/install: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let gguf = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let dir = std::env::var_os("FITNESS_LOCAL_MODEL_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/fitness-local-model"))
        })
        .expect("a home directory");
    let port = free_port();
    let log = std::fs::File::create(std::env::temp_dir().join(format!("fitness-model-{port}.log")))
        .expect("a log file");
    let child = Command::new(dir.join("venv/bin/python"))
        .arg(repo().join("scripts/local-model/serve.py"))
        .args([gguf.as_str(), &port.to_string(), "8192"])
        .env("OMP_WAIT_POLICY", "PASSIVE")
        .env("THREADS", "2")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the model server starts");
    let mut server = ModelServer { child, port };
    let started = Instant::now();
    loop {
        if http_get(port, "/health").is_some_and(|b| b.contains("\"ok\"")) {
            return server;
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("the model server exited: {status}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the model server did not become healthy"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The assistant turns of an agent tape: each has the model the server
/// reported and counted usage.
fn assistant_turns(agent: &[Value]) -> Vec<&Value> {
    agent
        .iter()
        .filter(|l| l["type"] == "turn" && l["role"] == "assistant")
        .collect()
}

#[test]
fn a_real_model_drives_real_servers_through_ask_and_run() {
    let model = start_model();
    let base = model.base_url();
    let env = [
        ("OPENAI_BASE_URL", base.clone()),
        ("OPENAI_API_KEY", "local".to_owned()),
    ];

    // fitness ask: one task, a real tools/call.
    let time = require_tool("mcp-server-time");
    let ask_dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let ask = run_bounded_in(
        None,
        &env,
        &[
            "ask",
            "--runner",
            MODEL,
            "--out",
            s(ask_dir.path()),
            "--timeout",
            "600",
            "What time is it in Tokyo right now?",
            "--",
            s(&time),
        ],
        Duration::from_secs(900),
    );
    let ask_secs = started.elapsed().as_secs();
    let stdout = String::from_utf8_lossy(&ask.stdout).into_owned();
    assert!(ask.status.success(), "{}", text(&ask));
    assert!(
        stdout.contains(&format!("model: {MODEL}, reported as")),
        "{stdout}"
    );
    assert!(
        stdout.contains("cost: none ("),
        "an unpriced model has no figure: {stdout}"
    );
    let wire = common::jsonl_lines(&ask_dir.path().join("mcp.jsonl"));
    let calls: Vec<&Value> = wire
        .iter()
        .filter(|l| l["dir"] == "in" && l["raw"]["method"] == "tools/call")
        .collect();
    assert!(!calls.is_empty(), "the model called a tool: {stdout}");
    let name = calls[0]["raw"]["params"]["name"].as_str().unwrap_or("");
    assert!(
        ["get_current_time", "convert_time"].contains(&name),
        "a tool the server lists: {name}"
    );
    let id = &calls[0]["raw"]["id"];
    assert!(
        wire.iter().any(|l| l["dir"] == "out"
            && &l["raw"]["id"] == id
            && l["raw"].get("result").is_some()),
        "the server answered the call"
    );
    let agent = common::jsonl_lines(&ask_dir.path().join("agent.jsonl"));
    let turns = assistant_turns(&agent);
    assert!(!turns.is_empty());
    for t in &turns {
        assert!(
            t["usage"]["input_tokens"].as_u64() > Some(0),
            "counted usage: {t}"
        );
        assert!(
            t["usage"]["output_tokens"].as_u64() > Some(0),
            "counted usage: {t}"
        );
        assert!(t["model"].is_string(), "the reported model: {t}");
        // The reply was streamed: its first token has a time.
        assert!(
            t["timing"]["ttft_ms"].as_u64().is_some(),
            "a streamed turn has a time to first token: {t}"
        );
    }
    eprintln!("fitness ask with the local model: {ask_secs} s");

    // fitness run: a real judge labels the tools, a real runner answers the
    // null arm's tasks, until the spend cap ends the run.
    let everything = require_tool("mcp-server-everything");
    let keys = tempfile::tempdir().expect("tempdir");
    let key = keys.path().join("publisher.key");
    let made = run_bounded(&["keygen", "--out", s(&key)], Duration::from_secs(30));
    assert!(made.status.success(), "{}", text(&made));
    let out = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let run = run_bounded_in(
        None,
        &env,
        &[
            "run",
            "--runner",
            MODEL,
            "--judge",
            MODEL,
            "--generator",
            "schema-walk/2",
            "--no-screen",
            "--max-model-calls",
            "4",
            "--model-timeout",
            "600",
            "--key",
            s(&key),
            "--out",
            s(out.path()),
            "--json",
            "--",
            s(&everything),
            "stdio",
        ],
        Duration::from_secs(1800),
    );
    let run_secs = started.elapsed().as_secs();
    let summary: Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|_| panic!("a JSON summary: {}", text(&run)));
    assert_eq!(
        summary["outcome"], "VOID",
        "the spend cap ends it: {summary}"
    );
    let dir = PathBuf::from(summary["dir"].as_str().expect("the run directory"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record"))
            .expect("json");

    // The models as registered and as reported.
    assert_eq!(record["run"]["runner_model"], MODEL);
    assert_eq!(record["preregistration"]["runner_model"], MODEL);
    assert_eq!(record["preregistration"]["judge_model"], MODEL);
    assert_eq!(record["preregistration"]["model_timeout_ms"], 600_000);
    let agent = common::jsonl_lines(&dir.join("agent.jsonl"));
    let turns = assistant_turns(&agent);
    assert!(
        turns.len() >= 2,
        "the judge's and the runner's turns: {}",
        turns.len()
    );
    // llama.cpp streams `"model": "-"`, which names nothing: the turn
    // carries the registered model's name, and the record reports none.
    // A name that is a model and differs from the registered one is kept.
    let reported = turns[turns.len() - 1]["model"].as_str().expect("reported");
    assert_ne!(reported, "-", "{}", turns[turns.len() - 1]);
    if reported == MODEL || Some(reported) == MODEL.strip_prefix("openai/") {
        assert!(
            record["run"].get("runner_reported").is_none(),
            "{}",
            record["run"]
        );
    } else {
        assert_eq!(
            record["run"]["runner_reported"], reported,
            "{}",
            record["run"]
        );
    }
    for t in &turns {
        assert!(
            t["usage"]["input_tokens"].as_u64() > Some(0),
            "counted usage: {t}"
        );
    }
    assert!(
        agent.iter().any(|l| l["corr_id"]
            .as_str()
            .is_some_and(|c| c.ends_with("::null-no-tools"))),
        "the runner answered a null arm's task"
    );

    // The ledger and the gates, filled from what happened.
    let suite = &record["suite"];
    assert!(suite["candidates"].as_u64() > Some(0), "{suite}");
    assert!(
        suite["quality"]["answered_from_calls"].as_u64() > Some(0),
        "{suite}"
    );
    let order = record["gates"]["order"].to_string();
    for gate in ["plan_power", "structural", "answer_leak"] {
        assert!(order.contains(gate), "{order}");
    }
    assert!(record.get("score").is_none());
    assert!(
        record["notes"]["own"].to_string().contains("spend cap"),
        "{}",
        record["notes"]["own"]
    );

    // Real calls on the wire: the walk's, and the random null arm's.
    let wire = common::jsonl_lines(&dir.join("mcp.jsonl"));
    assert!(
        wire.iter()
            .any(|l| l["dir"] == "in" && l["raw"]["method"] == "tools/call"),
        "real tools/call frames"
    );

    // An honest cost: the model has no price, so no figure.
    let cost = &record["cost"];
    assert_ne!(cost["kind"], "total", "{cost}");
    assert!(cost.to_string().contains("unpriced model"), "{cost}");

    // Signed, and the record and both tapes verify.
    assert!(record["signature"].is_object());
    let verify = run_bounded(
        &["verify", s(&dir.join("record.json"))],
        Duration::from_secs(60),
    );
    assert!(verify.status.success(), "{}", text(&verify));
    eprintln!(
        "fitness run with the local model: {run_secs} s, {} model turns, outcome {}",
        turns.len(),
        summary["outcome"]
    );

    // A tool that samples (issue 46): the server asks the client's model
    // to write its summary; the local model, as the runner, writes it, on
    // both tapes, in the cost.
    let sample_dir = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    let sampled = run_bounded_in(
        None,
        &env,
        &[
            "ask",
            "--runner",
            MODEL,
            "--out",
            s(sample_dir.path()),
            "--timeout",
            "600",
            "Summarise the harbour notes: call the summarize_notes tool and reply with what it returns.",
            "--",
            common::FITNESS,
            "fixture-server",
            "asks",
        ],
        Duration::from_secs(900),
    );
    let sample_secs = started.elapsed().as_secs();
    let printed = String::from_utf8_lossy(&sampled.stdout).into_owned();
    assert!(sampled.status.success(), "{}", text(&sampled));
    assert!(
        printed.contains(&format!(
            "requests for input: 1 sampling (1 answered by {MODEL})"
        )),
        "the local model answered the server's request: {printed}"
    );
    let wire = common::jsonl_lines(&sample_dir.path().join("mcp.jsonl"));
    let retry = wire
        .iter()
        .find(|l| l["dir"] == "in" && l["raw"]["params"]["inputResponses"].is_object())
        .expect("the call was made again with the model's answer");
    let written = retry["raw"]["params"]["inputResponses"]["summary"]["content"]["text"]
        .as_str()
        .unwrap_or("");
    assert!(
        !written.trim().is_empty(),
        "the model wrote a summary: {retry}"
    );
    let agent = common::jsonl_lines(&sample_dir.path().join("agent.jsonl"));
    let answer = agent
        .iter()
        .find(|l| l["corr_id"] == "ask::sampling" && l["role"] == "assistant")
        .expect("the model's answer is on the agent tape");
    assert!(
        answer["usage"]["output_tokens"].as_u64() > Some(0),
        "counted: {answer}"
    );
    eprintln!("fitness ask over a tool that samples, with the local model: {sample_secs} s");
    drop(model);
}
