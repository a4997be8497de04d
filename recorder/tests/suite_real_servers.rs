//! `schema-walk/1` against the real MCP servers installed by scripts/setup:
//! admitted counts, predicates against the real answers, the null screen
//! over a live generation, and `fitness suite` through the binary.

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::Duration;

use common::{require_tool, run_bounded, s};
use fitness_recorder::mcp::connect::{Session, Target};
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::model::types::{
    ChatRequest, ChatResponse, ContentBlock, LlmError, LlmErrorClass, ModelClient, ModelId,
    StopReason, Usage,
};
use fitness_recorder::suite::schema_walk::result_text;
use fitness_recorder::suite::task::{Predicate, Task};
use fitness_recorder::suite::{GenerateOptions, GenerationReport, GeneratorId, generate};
use futures::future::BoxFuture;
use serde_json::Value;

async fn connect(bin: &str, args: &[&str], env: Vec<(String, String)>) -> Session {
    let target = Target::Stdio(StdioTarget {
        program: bin.to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env,
    });
    Session::connect(&target, Tap::disabled(), None, Duration::from_secs(60))
        .await
        .expect("the server starts and completes the handshake")
}

async fn walk(
    session: &Session,
    opts: &GenerateOptions,
    runner: Option<&dyn ModelClient>,
    tape: &Tap,
) -> GenerationReport {
    let tools = session.list_tools().await.expect("tools/list");
    let instructions = session
        .service
        .peer_info()
        .and_then(|i| i.instructions.clone());
    generate(
        session,
        &tools,
        instructions.as_deref(),
        opts,
        None,
        runner,
        tape,
    )
    .await
    .expect("generation runs")
}

/// The observed answer with every occurrence of the answer key removed.
fn without_answer(observed: &str, key: &str) -> String {
    let lower = observed.to_lowercase();
    let k = key.to_lowercase();
    let mut out = String::new();
    let mut i = 0;
    while let Some(p) = lower[i..].find(&k) {
        out.push_str(&observed[i..i + p]);
        i += p + k.len();
    }
    out.push_str(&observed[i..]);
    out
}

/// Every task: single-call, templated prompt, real answer accepted both as
/// recorded and on a fresh call now, a wrong answer rejected.
async fn assert_tasks_are_real(session: &Session, report: &GenerationReport) {
    for t in &report.suite.tasks {
        assert_eq!(t.solution.len(), 1, "{t:?}");
        let call = &t.solution[0];
        assert_eq!(t.expected_tools, vec![call.tool.clone()]);
        let args = Value::Object(call.arguments.clone()).to_string();
        assert_eq!(
            t.prompt,
            format!(
                "Use the `{}` tool with arguments {args} and report the result.",
                call.tool
            )
        );
        let observed = report
            .observed
            .get(&t.id)
            .unwrap_or_else(|| panic!("{}: the real response is recorded", t.id));
        assert!(
            t.check.check(observed),
            "{}: {:?} must accept the recorded answer {observed:?}",
            t.id,
            t.check
        );
        let wrong = without_answer(observed, &t.answer_key);
        assert!(
            !t.check.check(&wrong),
            "{}: {:?} must reject {wrong:?}",
            t.id,
            t.check
        );
        assert!(!t.check.check("I don't know."));
        let again = session
            .call_tool(&call.tool, call.arguments.clone())
            .await
            .expect("the solution call works now");
        let again = result_text(&serde_json::to_value(&again).expect("a result"));
        assert!(
            t.check.check(&again),
            "{}: the answer comes back from the server: {again:?}",
            t.id
        );
        assert!(!t.prompt.contains(&t.answer_key), "{t:?}");
        match &t.check {
            Predicate::Substring { value, .. } => assert_eq!(value, &t.answer_key),
            Predicate::NumberWithin { value, .. } => {
                assert_eq!(*value, t.answer_key.parse::<f64>().expect("a number key"))
            }
            other => panic!("schema-walk writes substring or number_within, not {other:?}"),
        }
    }
}

fn assert_ledger(report: &GenerationReport, n: usize) {
    let l = &report.ledger;
    assert_eq!(l.tasks, Some(n as u64));
    assert_eq!(report.suite.tasks.len(), n);
    let candidates = l.candidates.expect("candidates");
    let admitted = l.admitted.expect("admitted");
    let rejected: u64 = l.rejected_by_rule.iter().map(|r| r.count).sum();
    assert_eq!(
        candidates,
        admitted + rejected,
        "every candidate has one fate"
    );
    assert_eq!(rejected, report.rejections.len() as u64);
    let screened = l.null_screened.as_ref().map_or(0, |s| s.dropped);
    assert_eq!(
        admitted,
        n as u64 + l.trimmed_surplus.expect("trimmed") + screened,
        "admitted = driven + trimmed surplus + null-screened"
    );
    let ids: Vec<String> = (1..=n).map(|i| format!("t{i}")).collect();
    let got: Vec<String> = report.suite.tasks.iter().map(|t| t.id.clone()).collect();
    assert_eq!(got, ids);
    assert_eq!(
        report.suite.hash,
        fitness_recorder::suite::suite_hash(
            &report.suite.config,
            report.suite.seed,
            &report.suite.tasks
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_walk_on_server_everything_admits_real_tasks() {
    let bin = require_tool("mcp-server-everything");
    let session = connect(s(&bin), &["stdio"], vec![]).await;
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk1, 8, 1);
    let report = walk(&session, &opts, None, &Tap::disabled()).await;
    eprintln!(
        "server-everything: ledger {:?}; walk {:?}",
        report.ledger, report.walk
    );
    assert!(
        report.ledger.admitted.expect("admitted") >= 8,
        "{:?}",
        report.ledger
    );
    assert_ledger(&report, 8);
    assert_tasks_are_real(&session, &report).await;
    assert!(report.spend.is_empty(), "schema-walk spends nothing");
    // The open-world tool is never called, the destructiveness of every tool
    // is recorded, and a declared/inferred disagreement is a finding.
    assert!(
        report
            .suite
            .tasks
            .iter()
            .all(|t| t.expected_tools[0] != "gzip-file-as-resource")
    );
    assert_eq!(report.destructiveness.len(), 13);
    let trigger = report
        .destructiveness
        .iter()
        .find(|d| d.tool == "trigger-long-running-operation")
        .expect("labelled");
    assert_eq!(trigger.declared, Some(false));
    assert!(trigger.disagreement && trigger.evidence.contains("trigger"));
    session.close().await;

    // Same seed, fresh server: the same suite, the same hash.
    let session = connect(s(&bin), &["stdio"], vec![]).await;
    let again = walk(&session, &opts, None, &Tap::disabled()).await;
    session.close().await;
    assert_eq!(again.suite.tasks, report.suite.tasks);
    assert_eq!(again.suite.hash, report.suite.hash);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schema_walk_on_server_memory_admits_real_tasks() {
    let bin = require_tool("mcp-server-memory");
    let dir = tempfile::tempdir().expect("temp dir");
    let memory = dir.path().join("memory.jsonl");
    let env = vec![(
        "MEMORY_FILE_PATH".to_owned(),
        memory.to_str().expect("utf-8").to_owned(),
    )];
    let session = connect(s(&bin), &[], env).await;
    let report = walk(
        &session,
        &GenerateOptions::new(GeneratorId::SchemaWalk1, 8, 1),
        None,
        &Tap::disabled(),
    )
    .await;
    eprintln!(
        "server-memory: ledger {:?}; walk {:?}",
        report.ledger, report.walk
    );
    assert!(
        report.ledger.admitted.expect("admitted") >= 8,
        "{:?}",
        report.ledger
    );
    assert_ledger(&report, 8);
    assert_tasks_are_real(&session, &report).await;
    // Only read tools answer: the writers' responses echo their arguments.
    for t in &report.suite.tasks {
        assert!(
            ["read_graph", "search_nodes", "open_nodes"].contains(&t.expected_tools[0].as_str()),
            "{t:?}"
        );
    }
    // The destructive tools were never called.
    let walk = report.walk.as_ref().expect("walk stats");
    assert!(!walk.callable_tools.iter().any(|t| t.starts_with("delete")));
    session.close().await;
}

/// A runner with no tools that can add (it reads the prompt's JSON), knows
/// the answers it is given, and fails on one tool.
struct NullRunner {
    id: ModelId,
    known: BTreeMap<String, String>,
    fail_on: Option<&'static str>,
    calls: Mutex<u64>,
}

impl ModelClient for NullRunner {
    fn id(&self) -> &ModelId {
        &self.id
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            *self.calls.lock().expect("lock") += 1;
            assert!(request.tools.is_empty(), "the screen offers no tools");
            let ContentBlock::Text { text: prompt } = &request.messages[0].content[0] else {
                panic!("the prompt is text");
            };
            if let Some(tool) = self.fail_on
                && prompt.contains(&format!("`{tool}`"))
            {
                return Err(LlmError {
                    class: LlmErrorClass::Server,
                    status: Some(503),
                    message: "overloaded".into(),
                    attempts: 3,
                });
            }
            let answer = if let Some(a) = self.known.get(prompt) {
                format!("The answer is {a}.")
            } else if prompt.contains("`get-sum`") {
                let args = fitness_recorder::suite::predicate::first_json_value(prompt)
                    .expect("the prompt holds the arguments");
                let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
                format!("Without the tool I can still add: {sum}")
            } else {
                "I have no tools, so I cannot say.".to_owned()
            };
            Ok(ChatResponse {
                content: vec![ContentBlock::Text { text: answer }],
                stop: StopReason::EndTurn,
                usage: Some(Usage {
                    input_tokens: 40,
                    output_tokens: 10,
                    ..Usage::default()
                }),
                model: "null-runner".into(),
                duration_ms: 1,
                ttft_ms: None,
                attempts: 1,
            })
        })
    }
}

fn prompts_of(tasks: &[Task]) -> Vec<&str> {
    tasks.iter().map(|t| t.prompt.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_screen_deletes_null_answerable_tasks_from_a_live_generation() {
    let bin = require_tool("mcp-server-everything");
    let mut opts = GenerateOptions::new(GeneratorId::SchemaWalk1, 8, 1);
    opts.overgen_factor = 3.0;
    let session = connect(s(&bin), &["stdio"], vec![]).await;
    let unscreened = walk(&session, &opts, None, &Tap::disabled()).await;
    session.close().await;
    let admitted_sums = unscreened.ledger.admitted.expect("admitted");

    opts.screen = true;
    let runner = NullRunner {
        id: "sim/null-runner".parse().expect("model id"),
        known: BTreeMap::new(),
        fail_on: Some("get-env"),
        calls: Mutex::new(0),
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let tape_path = dir.path().join("agent.jsonl");
    let tape = Tap::create_kind(&tape_path, "test", vec![], "agent").expect("tape");
    let session = connect(s(&bin), &["stdio"], vec![]).await;
    let report = walk(&session, &opts, Some(&runner), &tape).await;
    session.close().await;
    tape.end("done");

    let screen = report.ledger.null_screened.clone().expect("the screen ran");
    assert_eq!(screen.screened, report.ledger.admitted.expect("admitted"));
    assert_eq!(screen.screened, admitted_sums, "the same candidates");
    assert_eq!(*runner.calls.lock().expect("lock"), screen.screened);
    // Every get-sum task is answerable by adding: all deleted, none driven.
    assert!(screen.dropped >= 1, "{:?}", report.ledger);
    assert_eq!(screen.dropped, report.screened_out.len() as u64);
    assert!(
        !report
            .suite
            .tasks
            .iter()
            .any(|t| t.expected_tools[0] == "get-sum"),
        "{:?}",
        prompts_of(&report.suite.tasks)
    );
    // The failed screen call kept its candidate and was counted.
    assert_eq!(report.screen_errors, 1);
    assert!(!report.degenerate);
    let spend = report
        .spend
        .iter()
        .find(|p| p.phase == "screen")
        .expect("screen spend");
    assert_eq!(spend.calls, screen.screened);
    assert_eq!(spend.calls_that_threw, 1);
    assert_eq!(spend.usage.input_tokens, 40 * (screen.screened - 1));
    assert_ledger(&report, 8);
    let tape_text = std::fs::read_to_string(&tape_path).expect("tape");
    assert!(tape_text.contains("::screen"));
    assert!(tape_text.contains(r#""kind":"llm.error""#));

    // A runner that knows every answer empties the suite: DEGENERATE. With
    // factor 1 nothing is trimmed, so the unscreened run's tasks are every
    // admitted candidate, and the same seed walks the same candidates.
    let mut exact = GenerateOptions::new(GeneratorId::SchemaWalk1, 8, 1);
    exact.overgen_factor = 1.0;
    let session = connect(s(&bin), &["stdio"], vec![]).await;
    let plain = walk(&session, &exact, None, &Tap::disabled()).await;
    session.close().await;
    assert_eq!(plain.ledger.trimmed_surplus, Some(0));
    let oracle = NullRunner {
        id: "sim/oracle".parse().expect("model id"),
        known: plain
            .suite
            .tasks
            .iter()
            .map(|t| (t.prompt.clone(), t.answer_key.clone()))
            .collect(),
        fail_on: None,
        calls: Mutex::new(0),
    };
    exact.screen = true;
    let session = connect(s(&bin), &["stdio"], vec![]).await;
    let emptied = walk(&session, &exact, Some(&oracle), &Tap::disabled()).await;
    session.close().await;
    assert!(emptied.degenerate, "{:?}", emptied.ledger);
    assert!(emptied.suite.tasks.is_empty());
    let screen = emptied.ledger.null_screened.expect("the screen ran");
    assert_eq!(screen.dropped, screen.screened);
    assert_eq!(Some(screen.screened), plain.ledger.admitted);
    assert_eq!(emptied.ledger.tasks, Some(0));
}

#[test]
fn fitness_suite_writes_the_suite_and_prints_the_ledger() {
    let bin = require_tool("mcp-server-everything");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("suite.json");
    let tape = dir.path().join("tape");
    let run = run_bounded(
        &[
            "suite",
            "--generator",
            "schema-walk/1",
            "--tasks",
            "8",
            "--seed",
            "3",
            "--out",
            s(&out),
            "--tape",
            s(&tape),
            "--",
            s(&bin),
            "stdio",
        ],
        Duration::from_secs(120),
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        stdout.contains("generator schema-walk/1  seed 3"),
        "{stdout}"
    );
    assert!(stdout.contains("tasks 8"), "{stdout}");
    assert!(stdout.contains("trimmed surplus"), "{stdout}");
    let written: Value =
        serde_json::from_slice(&std::fs::read(&out).expect("the suite file")).expect("JSON");
    assert_eq!(written["suite"]["generator"], "schema-walk/1");
    assert_eq!(written["suite"]["tasks"].as_array().map(Vec::len), Some(8));
    assert_eq!(written["ledger"]["tasks"], 8);
    let hash = written["suite"]["hash"].as_str().expect("hash");
    assert!(stdout.contains(hash), "the printed ledger names the hash");
    let tasks: Vec<Task> =
        serde_json::from_value(written["suite"]["tasks"].clone()).expect("tasks parse back");
    assert_eq!(
        fitness_recorder::suite::suite_hash(&written["suite"]["config"], 3, &tasks),
        hash,
        "the written suite re-hashes to its hash"
    );
    let wire = std::fs::read_to_string(tape.join("mcp.jsonl")).expect("wire tape");
    assert!(wire.contains("tools/call"));

    // No model client in this build: a clear refusal, nothing written.
    let refused = dir.path().join("refused.json");
    let run = run_bounded(
        &[
            "suite",
            "--generator",
            "judge-synth/1",
            "--judge",
            "anthropic/claude-x",
            "--out",
            s(&refused),
            "--",
            s(&bin),
            "stdio",
        ],
        Duration::from_secs(60),
    );
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("need model clients"));
    assert!(!refused.exists());
    let run = run_bounded(
        &[
            "suite",
            "--generator",
            "guess/9",
            "--out",
            s(&refused),
            "--",
            s(&bin),
        ],
        Duration::from_secs(60),
    );
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("unknown generator"));
}
