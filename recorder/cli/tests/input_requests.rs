//! Driving servers as a current client does (issue 46): a server's
//! requests for input in the middle of a call, in both eras: `server-everything` (2025-11-25) sends `sampling/createMessage`
//! and `elicitation/create` as requests on the session; the in-tree `asks`
//! fixture (2026-07-28) answers `tools/call` with an `InputRequiredResult`
//! the client fulfils and retries. Sampling is answered by the runner, on
//! both tapes and in the cost; elicitation by the registered policy; a
//! walk, which spends nothing, gets no model's help, and the record counts
//! every request. A long-running call's task is polled to its end.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{fitness, require_tool, run_bounded, s, text};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(120);

/// `fitness ask` with the sim runner against `server`, its tapes in `dir`,
/// read-writes allowed, elicitation by `policy`: what it printed.
fn ask(dir: &Path, policy: &str, prompt: &str, server: &[&str]) -> String {
    ask_with(dir, &["--sandbox", "--elicitation", policy], prompt, server)
}

/// `fitness ask` with the sim runner and `extra` flags: what it printed.
fn ask_with(dir: &Path, extra: &[&str], prompt: &str, server: &[&str]) -> String {
    let mut args = vec!["ask", "--runner", "sim/diligent", "--out", s(dir)];
    args.extend_from_slice(extra);
    args.push(prompt);
    args.push("--");
    args.extend_from_slice(server);
    let out = run_bounded(&args, LIMIT);
    let printed = text(&out);
    assert!(out.status.success(), "{printed}");
    printed
}

#[test]
fn the_2026_form_is_fulfilled_and_retried_with_the_runners_and_the_policys_answers() {
    let fixture = [common::FITNESS, "fixture-server", "asks"];

    // Sampling: the call answers input_required, the runner writes the
    // summary (on the agent tape under the trial's corr_id), the client
    // retries with it and the echoed state.
    let dir = tempfile::tempdir().expect("tempdir");
    let printed = ask(
        dir.path(),
        "decline",
        "Call `summarize_notes` with {}",
        &fixture,
    );
    assert!(
        printed.contains("answer: Summary (written by sim/diligent)"),
        "{printed}"
    );
    assert!(
        printed.contains("requests for input: 1 sampling (1 answered by sim/diligent)"),
        "{printed}"
    );
    let wire = common::jsonl_lines(&dir.path().join("mcp.jsonl"));
    assert!(
        wire.iter()
            .any(|l| l["dir"] == "out" && l["raw"]["result"]["resultType"] == "input_required"),
        "the server asked in the 2026-07-28 form"
    );
    let retry = wire
        .iter()
        .find(|l| l["dir"] == "in" && l["raw"]["params"]["inputResponses"].is_object())
        .expect("the call was made again with the answers");
    assert_eq!(retry["raw"]["params"]["requestState"], "notes-v1");
    assert!(
        retry["raw"]["params"]["inputResponses"]["summary"]["model"] == "sim/diligent",
        "the runner answered: {retry}"
    );
    assert!(
        wire.iter().any(|l| l["kind"] == "fitness.input"
            && l["raw"]["kind"] == "sampling"
            && l["raw"]["answered_by"] == "sim/diligent"),
        "the tape says who answered"
    );
    let agent = common::jsonl_lines(&dir.path().join("agent.jsonl"));
    let sampled: Vec<&Value> = agent
        .iter()
        .filter(|l| l["type"] == "turn" && l["corr_id"] == "ask::sampling")
        .collect();
    assert!(
        sampled.iter().any(|t| t["role"] == "user"
            && t["blocks"][0]["text"]
                .as_str()
                .is_some_and(|x| x.contains("Berth 4 was dredged"))),
        "the server's prompt is on the agent tape: {sampled:?}"
    );
    assert!(
        sampled
            .iter()
            .any(|t| t["role"] == "assistant" && t["usage"]["input_tokens"].as_u64() > Some(0)),
        "the runner's answer, with its usage: {sampled:?}"
    );

    // Elicitation, by the registered policy: accepted with the form's own
    // values, or declined.
    let dir = tempfile::tempdir().expect("tempdir");
    let printed = ask(dir.path(), "accept", "Call `check_room` with {}", &fixture);
    assert!(
        printed.contains("answer: The North room is free for 4 people"),
        "{printed}"
    );
    assert!(
        printed.contains("1 elicitation (1 accepted, 0 declined)"),
        "{printed}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let printed = ask(dir.path(), "decline", "Call `check_room` with {}", &fixture);
    assert!(printed.contains("answer: No room was chosen"), "{printed}");
    assert!(
        printed.contains("1 elicitation (0 accepted, 1 declined)"),
        "{printed}"
    );
}

#[test]
fn server_everything_samples_and_elicits_in_the_2025_form() {
    let everything = require_tool("mcp-server-everything");
    let server = [s(&everything), "stdio"];
    let dir = tempfile::tempdir().expect("tempdir");
    let printed = ask(
        dir.path(),
        "decline",
        r#"Call `trigger-sampling-request` with {"prompt": "Name one harbour town", "maxTokens": 30}"#,
        &server,
    );
    assert!(
        printed.contains("requests for input: 1 sampling (1 answered by sim/diligent)"),
        "{printed}"
    );
    let wire = common::jsonl_lines(&dir.path().join("mcp.jsonl"));
    let asked = wire
        .iter()
        .find(|l| l["dir"] == "out" && l["raw"]["method"] == "sampling/createMessage")
        .expect("the server's request is on the wire tape");
    let id = &asked["raw"]["id"];
    let answered = wire
        .iter()
        .find(|l| l["dir"] == "in" && &l["raw"]["id"] == id && l["raw"].get("result").is_some())
        .expect("the client's answer is on the wire tape");
    assert_eq!(answered["raw"]["result"]["model"], "sim/diligent");
    assert_eq!(answered["corr_id"], "ask", "under the trial's corr_id");
    let agent = common::jsonl_lines(&dir.path().join("agent.jsonl"));
    assert!(
        agent
            .iter()
            .any(|l| l["corr_id"] == "ask::sampling" && l["role"] == "assistant"),
        "the runner's answer is on the agent tape"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let printed = ask(
        dir.path(),
        "accept",
        "Call `trigger-elicitation-request` with {}",
        &server,
    );
    assert!(
        printed.contains("1 elicitation (1 accepted, 0 declined)"),
        "{printed}"
    );
    let wire = common::jsonl_lines(&dir.path().join("mcp.jsonl"));
    let answer = wire
        .iter()
        .find(|l| l["dir"] == "in" && l["raw"]["result"]["action"] == "accept")
        .expect("the policy's answer is on the wire tape");
    assert!(
        answer["raw"]["result"]["content"].is_object(),
        "accepted with the form's values: {answer}"
    );
}

/// A walk spends nothing: a server that samples while the suite is made
/// is refused (a tool error of the server's), never answered by a model,
/// and the record counts the request and that none was answered.
#[test]
fn generation_gets_no_models_help_and_the_record_counts_the_requests() {
    let out = tempfile::tempdir().expect("tempdir");
    let run = fitness(&[
        "run",
        "--runner",
        "sim/diligent",
        "--generator",
        "schema-walk/2",
        "--out",
        s(out.path()),
        "--json",
        "--",
        common::FITNESS,
        "fixture-server",
        "asks",
    ]);
    let summary: Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|_| panic!("a JSON summary: {}", text(&run)));
    let dir = Path::new(summary["dir"].as_str().expect("the run's directory"));
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("record.json")).expect("the record"),
    )
    .expect("JSON");
    let asked = &record["input_requests"];
    assert!(asked["sampling"].as_u64() >= Some(1), "{asked}");
    assert_eq!(asked["sampling_answered"], 0, "{asked}");
    assert_eq!(
        record["preregistration"]["input"],
        serde_json::json!({"sampling": true, "elicitation": "decline"}),
        "the pre-registration says how requests are answered"
    );
    let agent = common::jsonl_lines(&dir.join("agent.jsonl"));
    assert!(
        !agent.iter().any(|l| l["corr_id"]
            .as_str()
            .is_some_and(|c| c.ends_with("::sampling"))),
        "no model answered for the walk"
    );
}

/// A long-running call (the 2026-07-28 tasks extension): the server
/// answers with a task, the client polls `tasks/get` at the interval the
/// server asks for and reads the result; a task that never finishes is
/// cancelled at its deadline (ten request timeouts) and the trial's call
/// fails, in words.
#[test]
fn a_long_running_call_is_polled_to_its_end_and_one_that_never_ends_is_cancelled() {
    let fixture = [common::FITNESS, "fixture-server", "asks"];
    let dir = tempfile::tempdir().expect("tempdir");
    let printed = ask_with(
        dir.path(),
        &["--max-turns", "2", "--timeout", "1"],
        "Call `survey_depths` with {}",
        &fixture,
    );
    assert!(
        printed.contains("answer: Depth at berth 4: 11.2 m"),
        "{printed}"
    );
    let wire = common::jsonl_lines(&dir.path().join("mcp.jsonl"));
    assert!(
        wire.iter()
            .any(|l| l["dir"] == "out" && l["raw"]["result"]["resultType"] == "task"),
        "the server made a task of the call"
    );
    let polls = wire
        .iter()
        .filter(|l| l["dir"] == "in" && l["raw"]["method"] == "tasks/get")
        .count();
    assert!(polls >= 2, "polled until it completed: {polls}");
    assert!(
        wire.iter()
            .any(|l| l["kind"] == "fitness.task" && l["raw"]["outcome"] == "completed"),
        "the tape says how the task ended"
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let printed = ask_with(
        dir.path(),
        &["--max-turns", "2", "--timeout", "1"],
        "Call `survey_forever` with {}",
        &fixture,
    );
    assert!(
        printed.contains("survey_forever protocol_error"),
        "{printed}"
    );
    let agent = std::fs::read_to_string(dir.path().join("agent.jsonl")).expect("agent tape");
    assert!(
        agent.contains("did not finish within 10s") && agent.contains("the client cancelled it"),
        "the trial's call failed, in words"
    );
    let wire = common::jsonl_lines(&dir.path().join("mcp.jsonl"));
    assert!(
        wire.iter().any(|l| l["kind"] == "fitness.task"
            && l["raw"]["outcome"] == "cancelled by the client at its deadline"),
        "the tape says how the task ended"
    );
    assert!(
        wire.iter()
            .any(|l| l["dir"] == "in" && l["raw"]["method"] == "tasks/cancel"),
        "the client cancelled the task at its deadline"
    );
}
