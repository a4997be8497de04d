//! `fitness run` end to end against the bundled demo servers with the sim
//! runners: every outcome family, the order the tapes prove, signing, an
//! interrupted run, and a real server.

use crate::common;
use crate::model_fake;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{FITNESS, require_tool, run_bounded, s, text};
use serde_json::Value;

struct Run {
    record: Value,
    dir: PathBuf,
    _out: tempfile::TempDir,
}

impl Run {
    fn outcome(&self) -> &str {
        self.record["outcome"].as_str().unwrap_or_default()
    }
    fn refused_at(&self) -> &str {
        self.record["gates"]["refused_at"].as_str().unwrap_or("")
    }
    fn gate(&self, id: &str) -> &Value {
        self.record["gates"]["records"]
            .as_array()
            .and_then(|g| g.iter().find(|r| r["id"] == id))
            .unwrap_or_else(|| panic!("no {id} gate in {}", self.record["gates"]))
    }
    fn lines(&self, tape: &str) -> Vec<Value> {
        let text = std::fs::read_to_string(self.dir.join(tape)).expect("tape is readable");
        text.lines()
            .map(|l| serde_json::from_str(l).expect("every tape line is JSON"))
            .collect()
    }
}

fn fitness_run(server: &[&str], runner: &str, extra: &[&str], limit: Duration) -> Run {
    let out = tempfile::tempdir().expect("tempdir");
    let output = run_bounded(&common::run_args(runner, out.path(), extra, server), limit);
    let (dir, record) = common::run_result(&output);
    Run {
        record,
        dir,
        _out: out,
    }
}

fn demo(server: &str, runner: &str, extra: &[&str]) -> Run {
    fitness_run(
        &[FITNESS, "demo-server", server],
        runner,
        extra,
        Duration::from_secs(240),
    )
}

#[test]
fn a_good_server_is_scored_with_its_interval_and_every_gate_on_record() {
    let run = demo("good", "sim/diligent", &[]);
    assert_eq!(run.outcome(), "SCORED", "{:#}", run.record["gates"]);
    let order: Vec<&str> = run.record["gates"]["order"]
        .as_array()
        .expect("gate order")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        order,
        [
            "plan_power",
            "screen",
            "structural",
            "answer_leak",
            "null_baseline",
            "construct",
            "drive"
        ]
    );
    let first = &run.record["score"]["first_try"];
    let n = first["n"].as_u64().expect("n");
    assert!(n >= 12, "the registered 12 tasks are driven: {first}");
    assert!(first["low"].as_f64() <= first["rate"].as_f64());
    assert!(first["rate"].as_f64() <= first["high"].as_f64());
    assert_eq!(run.gate("null_baseline")["detail"]["decision"], "PROCEED");
    assert_eq!(run.record["run"]["generator"], "schema-walk/1");
    assert_eq!(run.record["run"]["runner_model"], "sim/diligent");
    assert!(run.record["cost"]["kind"].is_string());
    // The gates reached are the pipeline's, in its order (the JUnit file
    // lists the ones not reached from the same list).
    let pipeline: Vec<&str> = fitness_shared::gates::PIPELINE
        .iter()
        .copied()
        .filter(|g| order.contains(g))
        .collect();
    assert_eq!(pipeline, order);

    // Each task kept its repetitions; consistency follows from them.
    let tasks = run.record["score"]["tasks"].as_array().unwrap();
    let reps = run.record["preregistration"]["reps"].as_u64().unwrap();
    assert!(tasks.iter().all(|t| t["reps"].as_u64() == Some(reps)));
    let consistency = &run.record["score"]["consistency"];
    assert_eq!(consistency["tasks"].as_u64(), Some(tasks.len() as u64));
    assert_eq!(consistency["reps"].as_u64(), Some(reps));

    // The tool list's cost per turn: the first turns of the stubbed-empty
    // and no-tools arms as the agent tape holds them (the model's own
    // usage lines), paired by task, agree with the record's median; the
    // sim's counts are labelled an estimate.
    let first_input = |corr: &str| {
        run.lines("agent.jsonl")
            .into_iter()
            .find(|l| l["corr_id"] == corr && l["role"] == "assistant")
            .map(|l| {
                let u = &l["usage"];
                [
                    "input_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                ]
                .iter()
                .map(|k| u[k].as_u64().unwrap_or(0))
                .sum::<u64>()
            })
    };
    let mut differences: Vec<i64> = tasks
        .iter()
        .filter_map(|t| {
            let id = t["task_id"].as_str().unwrap();
            let with = first_input(&format!("{id}::null-stubbed-empty"))?;
            let without = first_input(&format!("{id}::null-no-tools"))?;
            Some(with as i64 - without as i64)
        })
        .collect();
    differences.sort_unstable();
    let tool_list = &run.record["tool_list"];
    assert_eq!(tool_list["pairs"].as_u64(), Some(differences.len() as u64));
    assert_eq!(
        tool_list["tokens_per_turn"].as_i64(),
        Some(differences[(differences.len() - 1) / 2]),
        "{tool_list}"
    );
    assert!(tool_list["tokens_per_turn"].as_i64() > Some(0));
    assert_eq!(tool_list["estimate"], true);
}

#[test]
fn a_registration_that_could_never_publish_is_refused_after_the_probes_with_no_model_call() {
    let out = tempfile::tempdir().expect("tempdir");
    let started = Instant::now();
    // 8 tasks x 2 reps with two batches of 4 reach at most 32 trials: a
    // flawless reference agent needs 35 at threshold 0.90.
    let output = run_bounded(
        &[
            "run",
            "--runner",
            "sim/diligent",
            "--tasks",
            "8",
            "--reps",
            "2",
            "--out",
            s(out.path()),
            "--",
            FITNESS,
            "demo-server",
            "good",
        ],
        Duration::from_secs(60),
    );
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{}", text(&output));
    assert!(
        stdout.contains("GATE_FAILED (gate plan_power: never_publishable)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("--tasks 10 --reps 2") && stdout.contains("--tasks 8 --reps 3"),
        "the refusal names the nearest publishable sizes: {stdout}"
    );
    let dir = std::fs::read_dir(out.path())
        .expect("the out dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("record.json").is_file())
        .expect("a run directory with a record");
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record"))
            .expect("json");
    assert_eq!(record["outcome"], "GATE_FAILED");
    assert_eq!(record["gates"]["refused_at"], "plan_power");
    assert_eq!(record["gates"]["order"], serde_json::json!(["plan_power"]));
    assert!(record.get("score").is_none());
    let lines = |tape: &str| -> Vec<Value> {
        std::fs::read_to_string(dir.join(tape))
            .expect("tape")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
    };
    // The probes cost zero tokens and run first, so the refusal reports
    // them: every frame on the wire is a probe's or the connection's.
    let mcp = lines("mcp.jsonl");
    let frames: Vec<&Value> = mcp
        .iter()
        .filter(|l| l["dir"] == "in" || l["dir"] == "out")
        .collect();
    assert!(!frames.is_empty(), "the probes reached the server");
    assert!(
        frames.iter().all(|l| l["corr_id"]
            .as_str()
            .is_some_and(|c| c.starts_with("probe::"))),
        "only probe frames: {frames:?}"
    );
    assert!(
        record["probes"]["findings"]
            .as_array()
            .is_some_and(|f| !f.is_empty()),
        "{}",
        record["probes"]
    );
    let agent = lines("agent.jsonl");
    assert!(
        agent.iter().all(|l| l["type"] != "turn"),
        "not one model call: {agent:?}"
    );
    assert!(
        agent.iter().any(|l| l["kind"] == "fitness.preregistration"),
        "the registration it refused is on the tape"
    );
    assert!(
        elapsed < Duration::from_secs(20),
        "refused at once, not after generation: {elapsed:?}"
    );
}

#[test]
fn a_registration_refused_against_an_unreachable_server_keeps_its_refusal() {
    let out = tempfile::tempdir().expect("tempdir");
    // A port nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let output = run_bounded(
        &[
            "run",
            "--runner",
            "sim/diligent",
            "--tasks",
            "8",
            "--reps",
            "2",
            "--timeout",
            "2",
            "--out",
            s(out.path()),
            "--json",
            &url,
        ],
        Duration::from_secs(60),
    );
    let summary: Value = serde_json::from_slice(&output.stdout).expect("summary");
    assert_eq!(summary["outcome"], "GATE_FAILED", "{}", text(&output));
    assert_eq!(summary["refused_at"], "plan_power");
    let dir = PathBuf::from(summary["dir"].as_str().expect("dir"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record"))
            .expect("json");
    let unreachable = record["probes"]["unreachable"].as_str().unwrap_or_default();
    assert!(
        unreachable.contains("could not be reached"),
        "{}",
        record["probes"]
    );
}

#[test]
fn a_real_runner_never_gets_a_suite_that_dictates_the_calls_by_default() {
    let out = tempfile::tempdir().expect("tempdir");
    let output = run_bounded(
        &[
            "run",
            "--runner",
            "openai/gpt-4o",
            "--out",
            s(out.path()),
            "--",
            FITNESS,
            "demo-server",
            "good",
        ],
        Duration::from_secs(30),
    );
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--judge") && stderr.contains("--generator schema-walk/2"),
        "{stderr}"
    );
    assert!(stderr.contains("relay, not fitness"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(out.path())
            .map(|d| d.count())
            .unwrap_or(0),
        0,
        "nothing was started"
    );
}

#[test]
fn a_judge_that_cannot_write_the_suite_is_our_failure_not_a_thin_surface() {
    // Nothing listens on port 1: every judge call fails to connect.
    let out = tempfile::tempdir().expect("tempdir");
    let output = common::run_bounded_in(
        None,
        &[
            ("OPENAI_BASE_URL", "http://127.0.0.1:1/v1".to_owned()),
            ("OPENAI_API_KEY", "unused".to_owned()),
        ],
        &[
            "run",
            "--runner",
            "sim/diligent",
            "--judge",
            "openai/absent-judge",
            "--out",
            s(out.path()),
            "--json",
            "--",
            FITNESS,
            "demo-server",
            "good",
        ],
        Duration::from_secs(120),
    );
    let summary: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("a JSON summary: {}", text(&output)));
    assert_eq!(summary["outcome"], "COMPROMISED", "{summary}");
    assert_eq!(summary["refused_at"], "synthesis");
    let dir = PathBuf::from(summary["dir"].as_str().expect("dir"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record"))
            .expect("json");
    let calls = &record["suite"]["judge_calls"];
    assert!(calls["made"].as_u64() >= Some(1), "{calls}");
    assert_eq!(calls["made"], calls["failed"], "{calls}");
    assert_eq!(
        record["suite"]["candidates"], 0,
        "a failed judge call is never a candidate: {}",
        record["suite"]
    );
    assert!(
        record["suite"]["rejected_by_rule"]
            .as_array()
            .is_some_and(Vec::is_empty),
        "nothing is counted malformed for our failure"
    );
    let gate = record["gates"]["records"]
        .as_array()
        .and_then(|g| g.iter().find(|r| r["id"] == "synthesis"))
        .expect("the synthesis gate");
    assert_eq!(gate["reason"], "judge_failed");
    assert!(record.get("score").is_none());
    assert!(
        !record["gates"]["order"].to_string().contains("structural"),
        "the surface was never judged on our failure"
    );
}

#[test]
fn a_thin_server_is_refused_for_insufficient_surface_with_no_score_field() {
    let run = demo("thin", "sim/diligent", &[]);
    assert_eq!(run.outcome(), "INSUFFICIENT_SURFACE");
    assert_eq!(run.refused_at(), "structural");
    assert_eq!(run.gate("structural")["reason"], "suite_below_minimum");
    assert!(
        run.record.get("score").is_none(),
        "a refusal has no score field"
    );
    let tasks = run.record["suite"]["tasks"].as_u64().unwrap_or(0);
    assert!(tasks < 8, "thin has under 8 tasks: {}", run.record["suite"]);
}

#[test]
fn a_suite_the_null_screen_empties_is_degenerate() {
    let run = demo("trivia", "sim/diligent", &[]);
    assert_eq!(run.outcome(), "DEGENERATE");
    assert_eq!(run.refused_at(), "structural");
    assert_eq!(
        run.gate("structural")["reason"],
        "all_candidates_null_answerable"
    );
    let screened = &run.record["suite"]["null_screened"];
    assert!(screened["dropped"].as_u64() > Some(0), "{screened}");
    assert!(run.record.get("score").is_none());
}

#[test]
fn answers_that_ignore_their_arguments_are_killed_by_the_null_baseline() {
    let run = demo("constant", "sim/diligent", &[]);
    assert_eq!(run.outcome(), "DEGENERATE");
    assert_eq!(run.refused_at(), "null_baseline");
    let gate = run.gate("null_baseline");
    assert_eq!(gate["reason"], "noise_exceeds_signal");
    assert_eq!(gate["detail"]["decision"], "KILL");
    let random = gate["detail"]["rates"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["label"] == "random-valid-args"))
        .expect("the random arm is recorded");
    assert!(random["rate"].as_f64() >= Some(0.5), "{random}");
    // Decided before any paid call: no construct gate ran.
    assert!(
        run.record["gates"]["order"]
            .as_array()
            .is_some_and(|o| !o.iter().any(|g| g == "construct"))
    );
}

#[test]
fn a_server_that_stops_answering_fails_the_construct_gate_and_the_tape_says_so() {
    let run = demo("broken", "sim/diligent", &["--timeout", "1"]);
    assert_eq!(run.outcome(), "GATE_FAILED", "{:#}", run.record["gates"]);
    assert_eq!(run.refused_at(), "construct");
    let gate = run.gate("construct");
    let verdict = &gate["verdict"];
    assert!(verdict["k"].as_u64() < verdict["n"].as_u64(), "{verdict}");
    assert_eq!(verdict["threshold"], 0.9);
    let reading = &gate["detail"]["tape_reading"];
    assert!(
        reading["no_response"].as_u64() > Some(0),
        "the tape shows requests with no response: {reading}"
    );
}

#[test]
fn an_unresolved_construct_gate_with_no_registered_batch_is_extend_exhausted() {
    let run = demo("canary", "sim/diligent", &["--max-extensions", "0"]);
    assert_eq!(
        run.outcome(),
        "EXTEND_EXHAUSTED",
        "{:#}",
        run.record["gates"]
    );
    assert_eq!(run.refused_at(), "construct");
    assert_eq!(
        run.gate("construct")["reason"],
        "unresolved_no_batches_registered"
    );
}

#[test]
fn a_failing_model_api_compromises_the_measurement() {
    // One model call in four fails: the screen's own failures are counted
    // in the ledger, kept unscreened, and gated as our measurement's.
    let run = demo("good", "sim/unstable", &[]);
    assert_eq!(run.outcome(), "COMPROMISED", "{:#}", run.record["gates"]);
    assert_eq!(run.refused_at(), "screen");
    let gate = run.gate("screen");
    let failures = gate["detail"]["failures"].as_u64().unwrap_or(0);
    let screen = &run.record["suite"]["null_screened"];
    assert!(failures > 0, "{gate}");
    assert_eq!(screen["errors"].as_u64(), Some(failures), "{screen}");
    // The tape holds exactly the screen calls the ledger counts, each once.
    let agent = run.lines("agent.jsonl");
    let asked = agent
        .iter()
        .filter(|l| {
            l["type"] == "turn"
                && l["role"] == "user"
                && l["corr_id"]
                    .as_str()
                    .is_some_and(|c| c.ends_with("::screen"))
        })
        .count() as u64;
    assert_eq!(asked, screen["screened"].as_u64().unwrap_or(0), "{screen}");
    let failed = agent
        .iter()
        .filter(|l| l["kind"] == "llm.error" && l["raw"]["phase"] == "screen")
        .count() as u64;
    assert_eq!(failed, failures);
    // Nothing is paid after the refusal: no trial of any arm ran.
    assert!(
        !agent.iter().any(|l| l["corr_id"]
            .as_str()
            .is_some_and(|c| c.contains("::null-") || c.contains("::construct"))),
        "no trial after the screen gate refused"
    );
    // A cap of exactly the screen calls lets the run reach its verdict: the
    // failed calls were counted once, not twice (which would have spent the
    // cap before the screen gate could speak).
    let capped = demo(
        "good",
        "sim/unstable",
        &["--max-model-calls", &screen["screened"].to_string()],
    );
    assert_eq!(
        capped.outcome(),
        "COMPROMISED",
        "{:#}",
        capped.record["notes"]
    );
    assert_eq!(capped.refused_at(), "screen");
}

#[test]
fn a_null_arm_whose_calls_fail_is_gated_on_its_own() {
    // With no screen, the unstable runner's failures land in the null arms:
    // they are gated apart, never dropped from the arm's denominator unseen.
    let run = demo("good", "sim/unstable", &["--no-screen"]);
    assert_eq!(run.outcome(), "COMPROMISED", "{:#}", run.record["gates"]);
    assert_eq!(run.refused_at(), "null_baseline");
    let gate = run.gate("null_baseline");
    assert_eq!(gate["reason"], "compromised");
    let errors: u64 = gate["detail"]["rates"]
        .as_array()
        .expect("rates")
        .iter()
        .filter_map(|r| r["errors"].as_u64())
        .sum();
    assert!(errors > 0, "{gate}");
    assert!(
        gate["detail"]["explain"]
            .as_str()
            .unwrap_or("")
            .contains("our measurement failed"),
        "{gate}"
    );
}

/// A model API that answers one null-arm trial with a reply repeating
/// itself (streamed: the harness cuts it) and another with llama.cpp's 500
/// for a tool call it could not parse. Both are the model's replies, not the
/// API failing: neither is retried, each is taped with its reason, and in
/// a null arm they are our measurement's errors, gated apart.
#[tokio::test(flavor = "multi_thread")]
async fn unusable_replies_in_a_null_arm_are_gated_apart_and_never_retried() {
    use model_fake::{FakeApi, Reply};
    let chunk = |t: &str| {
        format!(
            "data: {}\n\n",
            serde_json::json!({"choices": [{"index": 0, "delta": {"content": t}}]})
        )
    };
    let mut pieces = vec![(Duration::ZERO, chunk("The file is "))];
    pieces.extend((0..2_000).map(|_| (Duration::ZERO, chunk("fs2"))));
    let malformed = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 2, column 29","type":"server_error"}}"#;
    let mut script = vec![Reply::stream(pieces), Reply::status(500, malformed)];
    script.extend((0..80).map(|_| {
        Reply::json(serde_json::json!({
            "model": "fake-runner",
            "choices": [{"message": {"role": "assistant", "content": "I do not know."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 5}
        }))
    }));
    let fake = FakeApi::start(script).await;
    let (out, dir, record) = common::run_on_fake_api(
        &fake,
        &[
            "--generator",
            "schema-walk/2",
            "--no-screen",
            "--concurrency",
            "1",
        ],
    )
    .await;
    let run = Run {
        record,
        dir,
        _out: out,
    };
    assert_eq!(run.outcome(), "COMPROMISED", "{:#}", run.record["gates"]);
    assert_eq!(run.refused_at(), "null_baseline");
    let gate = run.gate("null_baseline");
    let explain = gate["detail"]["explain"].as_str().unwrap_or_default();
    assert!(
        explain.contains("The model wrote a reply the harness could not use")
            && explain.contains("in 2 of the")
            && explain.contains("no-tools arm"),
        "{explain}"
    );
    let no_tools = gate["detail"]["rates"]
        .as_array()
        .and_then(|r| r.iter().find(|r| r["label"] == "no-tools"))
        .expect("the no-tools arm");
    assert_eq!(no_tools["errors"], 2, "{no_tools}");
    assert!(run.record.get("score").is_none());
    let agent = run.lines("agent.jsonl");
    let kinds = |kind: &str| -> Vec<&str> {
        agent
            .iter()
            .filter(|l| l["kind"] == kind)
            .filter_map(|l| l["corr_id"].as_str())
            .collect()
    };
    let runaway = kinds("llm.runaway");
    let malformed = kinds("llm.malformed_reply");
    assert_eq!(runaway.len(), 1, "{runaway:?}");
    assert_eq!(malformed.len(), 1, "{malformed:?}");
    assert!(
        runaway
            .iter()
            .chain(&malformed)
            .all(|c| c.ends_with("::null-no-tools")),
        "{runaway:?} {malformed:?}"
    );
    // The 500 was sent once: the model's reply, not a failing API.
    let model_output_errors = agent
        .iter()
        .filter(|l| l["kind"] == "llm.error" && l["raw"]["class"] == "model_output")
        .count();
    assert_eq!(model_output_errors, 1);
    assert!(
        !agent
            .iter()
            .any(|l| l["kind"] == "llm.error" && l["raw"]["class"] == "server"),
        "nothing was classed as the API failing"
    );
    // Nothing after the refusal: the stubbed arm and the construct gate never ran.
    assert!(!agent.iter().any(|l| {
        l["corr_id"]
            .as_str()
            .is_some_and(|c| c.contains("::null-stubbed") || c.contains("::construct"))
    }));
    let tasks = run.record["suite"]["tasks"].as_u64().unwrap_or(0);
    assert!(tasks >= 12, "{}", run.record["suite"]);
    assert_eq!(
        fake.seen().len() as u64,
        tasks,
        "one call per no-tools trial"
    );
}

/// A refusal for rate in the screen (the first stage that calls a model)
/// holds the calls in flight beside it: the record counts those waits, from
/// whichever stage made them, not only the trials'.
#[tokio::test(flavor = "multi_thread")]
async fn rate_waits_of_the_screen_are_counted_in_the_record() {
    use model_fake::{FakeApi, Reply};
    let mut script =
        vec![Reply::status(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "3")];
    // The three calls sent beside the refused one answer slowly (0.8 s), so
    // the calls that take their slots start after the refusal is known and
    // well inside its 3 s hold, however loaded the machine.
    script.extend((0..40).map(|i| {
        let reply = Reply::json(serde_json::json!({
            "model": "fake-runner",
            "choices": [{"message": {"role": "assistant", "content": "I do not know."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 5}
        }));
        if i < 3 {
            reply.delayed(Duration::from_millis(800))
        } else {
            reply
        }
    }));
    let fake = FakeApi::start(script).await;
    let (_out, dir, record) = common::run_on_fake_api(
        &fake,
        &[
            "--generator",
            "schema-walk/2",
            "--concurrency",
            "4",
            "--max-model-calls",
            "30",
        ],
    )
    .await;
    let agent = std::fs::read_to_string(dir.join("agent.jsonl")).expect("tape");
    let waited: Vec<u64> = agent
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| {
            l["kind"] == "llm.request"
                && l["corr_id"]
                    .as_str()
                    .is_some_and(|c| c.ends_with("::screen"))
        })
        .filter_map(|l| l["raw"]["rate_wait_ms"].as_u64())
        .filter(|&w| w > 0)
        .collect();
    assert!(
        !waited.is_empty(),
        "screen calls waited on the shared budget"
    );
    let waits = &record["run"]["rate_waits"];
    assert_eq!(
        waits["attempts"].as_u64(),
        Some(waited.len() as u64),
        "{waits}"
    );
    assert_eq!(
        waits["waited_ms"].as_u64(),
        Some(waited.iter().sum()),
        "{waits}"
    );
}

#[test]
fn a_suite_that_cannot_reach_its_floor_is_never_screened() {
    let run = demo("thin", "sim/diligent", &[]);
    assert_eq!(run.outcome(), "INSUFFICIENT_SURFACE");
    let skipped = run.record["suite"]["screen_skipped"].as_str().unwrap_or("");
    assert!(skipped.contains("not run"), "{}", run.record["suite"]);
    assert!(run.record["suite"].get("null_screened").is_none());
    let screen_calls = run
        .lines("agent.jsonl")
        .iter()
        .filter(|l| {
            l["corr_id"]
                .as_str()
                .is_some_and(|c| c.ends_with("::screen"))
        })
        .count();
    assert_eq!(screen_calls, 0, "zero screen calls on the tape");
}

#[test]
fn a_spend_cap_reached_mid_run_leaves_a_void_record() {
    let out = tempfile::tempdir().expect("tempdir");
    let output = run_bounded(
        &[
            "run",
            "--runner",
            "sim/diligent",
            "--out",
            s(out.path()),
            "--seed",
            "7",
            "--max-model-calls",
            "40",
            "--concurrency",
            "8",
            "--json",
            "--",
            FITNESS,
            "demo-server",
            "good",
        ],
        Duration::from_secs(240),
    );
    assert_eq!(output.status.code(), Some(1), "{}", text(&output));
    let summary: Value = serde_json::from_slice(&output.stdout).expect("summary");
    assert_eq!(summary["outcome"], "VOID");
    let dir = PathBuf::from(summary["dir"].as_str().expect("dir"));
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record"))
            .expect("json");
    assert!(record.get("score").is_none());
    assert!(
        record["notes"]["own"].to_string().contains("spend cap"),
        "{}",
        record["notes"]
    );
    // Exactly the cap was sent, with eight trials in flight: each call is
    // reserved before it is sent, and the calls past it never were.
    let agent = std::fs::read_to_string(dir.join("agent.jsonl")).expect("agent tape");
    let kinds: Vec<Value> = agent
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    // Every call that returned is an assistant turn (the screen's and the
    // trials' alike); sim/diligent never fails one.
    let sent = kinds
        .iter()
        .filter(|l| l["type"] == "turn" && l["role"] == "assistant")
        .count();
    assert_eq!(sent, 40, "calls sent");
    assert!(
        kinds
            .iter()
            .any(|l| l["kind"] == "llm.error" && l["raw"]["class"] == "spend_cap"),
        "a refused call says why"
    );
}

#[test]
fn the_tapes_prove_the_order_and_carry_every_trials_corr_id_and_the_record_verifies() {
    let keydir = tempfile::tempdir().expect("tempdir");
    let key = keydir.path().join("publisher.key");
    let out = run_bounded(&["keygen", "--out", s(&key)], Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out));
    let run = demo("good", "sim/diligent", &["--key", s(&key)]);
    assert_eq!(run.outcome(), "SCORED");

    let agent = run.lines("agent.jsonl");
    let prereg = agent
        .iter()
        .position(|l| l["kind"] == "fitness.preregistration")
        .expect("the pre-registration is on the agent tape");
    let first_turn = agent
        .iter()
        .position(|l| l["type"] == "turn")
        .expect("model turns are on the agent tape");
    assert!(
        prereg < first_turn,
        "registered before the first model call"
    );
    assert!(
        agent[prereg]["t"].as_str() <= agent[first_turn]["t"].as_str(),
        "and the timestamps say so"
    );
    assert_eq!(
        agent[prereg]["raw"]["hash"], run.record["preregistration"]["hash"],
        "the taped registration is the recorded one"
    );
    for turn in agent.iter().filter(|l| l["type"] == "turn") {
        assert!(
            turn["corr_id"].is_string(),
            "every turn carries its trial: {turn}"
        );
    }
    // Every tools/call on the wire belongs to a trial or a probe.
    let mcp = run.lines("mcp.jsonl");
    let calls: Vec<&Value> = mcp
        .iter()
        .filter(|l| l["dir"] == "in" && l["raw"]["method"] == "tools/call")
        .collect();
    assert!(!calls.is_empty());
    for call in &calls {
        assert!(call["corr_id"].is_string(), "untagged tools/call: {call}");
    }
    for suffix in ["::construct", "::null-random"] {
        assert!(
            calls
                .iter()
                .any(|c| c["corr_id"].as_str().is_some_and(|id| id.ends_with(suffix))),
            "no {suffix} frames on the wire"
        );
    }
    assert!(
        calls
            .iter()
            .any(|c| c["corr_id"].as_str().is_some_and(|id| !id.contains("::"))),
        "no drive frames on the wire"
    );
    assert!(run.record["signature"].is_object());
}

#[test]
fn every_rejected_candidate_is_listed_beside_the_record_and_signed() {
    let keydir = tempfile::tempdir().expect("tempdir");
    let key = keydir.path().join("publisher.key");
    let out = run_bounded(&["keygen", "--out", s(&key)], Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out));
    let run = demo("canary", "sim/diligent", &["--key", s(&key)]);
    // Every rejected candidate is listed beside the record, with its rule.
    let file = &run.record["suite"]["candidates_file"];
    assert_eq!(file["path"], "candidates.json", "{}", run.record["suite"]);
    let list: Value =
        serde_json::from_slice(&std::fs::read(run.dir.join("candidates.json")).expect("the list"))
            .expect("json");
    assert_eq!(list["schema"], "fitness-candidates/1");
    let rejected = list["rejected"].as_array().expect("rejected");
    let by_rule: u64 = run.record["suite"]["rejected_by_rule"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["count"].as_u64())
        .sum();
    // Extension batches' rule rejections are listed too.
    let in_batches: u64 = run.record["extensions"]
        .as_array()
        .map(|b| {
            b.iter()
                .map(|x| {
                    ["admission", "answer_leak", "duplicate"]
                        .iter()
                        .filter_map(|k| x["dropped"][k].as_u64())
                        .sum::<u64>()
                })
                .sum()
        })
        .unwrap_or(0);
    assert!(
        by_rule + in_batches > 0,
        "the canary's batches reject duplicates"
    );
    // Each batch's own screen calls are counted as the suite's are (and a
    // failed one would be gated: `extension_screen`).
    for batch in run.record["extensions"].as_array().expect("batches") {
        assert!(
            batch["dropped"]["screen_calls"].as_u64() > Some(0),
            "{batch}"
        );
        assert_eq!(batch["dropped"]["screen_errors"].as_u64().unwrap_or(0), 0);
    }
    assert_eq!(
        rejected.len() as u64,
        by_rule + in_batches,
        "every rejection listed: {list}"
    );
    assert!(
        rejected
            .iter()
            .all(|c| c["rule"].is_string() && c["detail"].is_string())
    );
    assert!(rejected.iter().any(|c| c["prompt"].is_string()), "{list}");
    let verify = run_bounded(
        &["verify", s(&run.dir.join("record.json"))],
        Duration::from_secs(30),
    );
    assert!(verify.status.success(), "{}", text(&verify));
    assert!(
        String::from_utf8_lossy(&verify.stdout).contains("candidates.json"),
        "verify checks the candidate list: {}",
        text(&verify)
    );
    assert!(run.record["signature"].is_object());
    // A changed list no longer verifies, and verify names it.
    let path = run.dir.join("candidates.json");
    let mut bytes = std::fs::read(&path).expect("the list");
    let at = bytes.iter().position(|&b| b == b'e').expect("an e");
    bytes[at] = b'E';
    std::fs::write(&path, bytes).expect("write");
    let tampered = run_bounded(
        &["verify", s(&run.dir.join("record.json"))],
        Duration::from_secs(30),
    );
    assert!(!tampered.status.success());
    assert!(
        text(&tampered).contains("candidates.json"),
        "{}",
        text(&tampered)
    );
}

#[test]
fn an_interrupted_run_leaves_a_void_record_and_readable_tapes() {
    let out = tempfile::tempdir().expect("tempdir");
    // A slow server keeps the drive busy long enough to interrupt it.
    let mut child = Command::new(FITNESS)
        .args([
            "run",
            "--runner",
            "sim/diligent",
            "--out",
            s(out.path()),
            "--seed",
            "7",
            "--json",
            "--",
            FITNESS,
            "demo-server",
            "good",
            "--delay-ms",
            "150",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fitness starts");
    // Wait until the drive has started (a trial without `::` in its corr_id).
    let started = Instant::now();
    let agent_tape = loop {
        assert!(
            started.elapsed() < Duration::from_secs(180),
            "the drive never started"
        );
        std::thread::sleep(Duration::from_millis(100));
        let found = std::fs::read_dir(out.path()).ok().and_then(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.path().join("agent.jsonl"))
                .find(|p| p.is_file())
        });
        if let Some(tape) = found
            && std::fs::read_to_string(&tape).is_ok_and(|t| {
                t.lines().any(|l| {
                    l.contains("\"type\":\"turn\"")
                        && serde_json::from_str::<Value>(l)
                            .is_ok_and(|v| v["corr_id"].as_str().is_some_and(|c| !c.contains("::")))
                })
            })
        {
            break tape;
        }
    };
    let status = common::interrupt(&mut child, Duration::from_secs(240));
    assert_eq!(status.code(), Some(130));
    let mut summary = String::new();
    let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut summary);
    let dir = agent_tape.parent().expect("run dir").to_owned();
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record"))
            .expect("json");
    assert_eq!(record["outcome"], "VOID");
    assert!(record.get("score").is_none());
    for tape in ["mcp.jsonl", "agent.jsonl"] {
        let stats = common::tape_stats(&dir.join(tape));
        assert!(stats.is_object());
        let last = std::fs::read_to_string(dir.join(tape))
            .expect("tape")
            .lines()
            .last()
            .map(|l| serde_json::from_str::<Value>(l).expect("json"))
            .expect("a last line");
        assert_eq!(last["type"], "end", "{tape} is closed");
        assert_eq!(last["reason"], "interrupted");
    }
}

#[test]
fn a_full_run_against_server_everything_completes_with_a_verified_record() {
    let server = require_tool("mcp-server-everything");
    let keydir = tempfile::tempdir().expect("tempdir");
    let key = keydir.path().join("publisher.key");
    let out = run_bounded(&["keygen", "--out", s(&key)], Duration::from_secs(30));
    assert!(out.status.success(), "{}", text(&out));
    let run = fitness_run(
        &[s(&server)],
        "sim/diligent",
        &["--key", s(&key), "--timeout", "10"],
        Duration::from_secs(420),
    );
    let outcome = run.outcome();
    assert!(
        [
            "SCORED",
            "GATE_FAILED",
            "EXTEND_EXHAUSTED",
            "DEGENERATE",
            "INSUFFICIENT_SURFACE"
        ]
        .contains(&outcome),
        "{outcome}: {:#}",
        run.record["gates"]
    );
    assert!(run.record["suite"]["candidates"].as_u64() > Some(0));
    let verify = run_bounded(
        &["verify", s(&run.dir.join("record.json"))],
        Duration::from_secs(30),
    );
    assert!(verify.status.success(), "{}", text(&verify));
    let stats = common::tape_stats(&run.dir.join("mcp.jsonl"));
    // Only the walk's call to the long-running operation (it outlives the
    // 10 s timeout by design) may be left without a response.
    let pending: Vec<&str> = stats["tools"]
        .as_array()
        .expect("tools is a list")
        .iter()
        .filter(|t| t["pending"].as_u64() > Some(0))
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        pending
            .iter()
            .all(|t| *t == "trigger-long-running-operation"),
        "requests left without a response: {pending:?}"
    );
    let _: &Path = &run.dir;
}

#[test]
fn trials_in_flight_together_give_the_record_one_at_a_time_gives() {
    let one = demo("good", "sim/diligent", &["--concurrency", "1"]);
    let eight = demo("good", "sim/diligent", &["--concurrency", "8"]);
    assert_eq!(one.outcome(), "SCORED", "{:#}", one.record["gates"]);
    // Registered, and read the same way at both widths.
    assert_eq!(one.record["preregistration"]["concurrency"], 1);
    assert_eq!(eight.record["preregistration"]["concurrency"], 8);
    assert_eq!(eight.outcome(), one.outcome());
    assert_eq!(
        eight.record["run"]["suite_hash"],
        one.record["run"]["suite_hash"]
    );
    assert_eq!(eight.record["gates"], one.record["gates"]);
    assert_eq!(
        eight.record["score"]["first_try"],
        one.record["score"]["first_try"]
    );
    assert_eq!(eight.record["score"]["tasks"], one.record["score"]["tasks"]);

    // The trials were in flight together: some trial's agent lines are
    // broken by another trial's.
    let agent = eight.lines("agent.jsonl");
    let corrs: Vec<&str> = agent
        .iter()
        .filter_map(|l| l["corr_id"].as_str())
        .filter(|c| !c.contains("::screen") && !c.starts_with("generate"))
        .collect();
    let interleaved = corrs.iter().enumerate().any(|(i, c)| {
        corrs[i + 1..]
            .iter()
            .skip_while(|d| *d == c)
            .any(|d| d == c)
    });
    assert!(interleaved, "no two trials were in flight together");

    // Every response on the wire carries the corr_id of the request it
    // answers, though the trials interleave.
    let mcp = eight.lines("mcp.jsonl");
    let mut asked = std::collections::HashMap::new();
    let mut paired = 0;
    for l in &mcp {
        let msg = &l["raw"];
        let Some(id) = msg.get("id").map(Value::to_string) else {
            continue;
        };
        if l["dir"] == "in" && msg.get("method").is_some() {
            asked.insert(id, l["corr_id"].clone());
        } else if l["dir"] == "out"
            && msg.get("method").is_none()
            && let Some(corr) = asked.get(&id)
        {
            assert_eq!(
                &l["corr_id"], corr,
                "response {id} is tagged as its request"
            );
            paired += 1;
        }
    }
    assert!(paired > 50, "{paired} responses paired");

    // The tape statistics read the interleaved tapes as they read the
    // sequential ones: every tool's calls and errors (latencies differ).
    let counts = |stats: &Value| -> Vec<(String, u64, u64)> {
        let mut rows: Vec<_> = stats["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap_or_default().to_owned(),
                    t["calls"].as_u64().unwrap_or_default(),
                    t["errors"].as_u64().unwrap_or_default(),
                )
            })
            .collect();
        rows.sort();
        rows
    };
    for tape in ["mcp.jsonl", "agent.jsonl"] {
        let a = common::tape_stats(&one.dir.join(tape));
        let b = common::tape_stats(&eight.dir.join(tape));
        assert!(!counts(&a).is_empty(), "{tape}");
        assert_eq!(counts(&a), counts(&b), "{tape}");
    }
}
