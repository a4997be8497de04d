//! `schema-walk/1` against the real MCP servers installed by scripts/setup:
//! admitted counts, predicates against the real answers, the null screen
//! over a live generation, and `fitness suite` through the binary.

use crate::common;

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
use fitness_recorder::suite::generators::walk::result_text;
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
    // A sandbox whose generation may write: the walk fills the empty graph.
    let mut opts = GenerateOptions::new(GeneratorId::SchemaWalk1, 8, 1);
    opts.access = fitness_shared::record::AccessMode::Sandbox;
    opts.writes = true;
    let report = walk(&session, &opts, None, &Tap::disabled()).await;
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
    // The destructive tools were never called; the writers were, and the
    // walk says the tasks may rely on the state they made.
    let walk = report.walk.as_ref().expect("walk stats");
    assert!(walk.state_writes > 0);
    assert!(!walk.callable_tools.iter().any(|t| t.starts_with("delete")));
    session.close().await;
}

/// A runner with no tools that can add (it reads the prompt's JSON), knows
/// the answers it is given, and (when `fail_once`) fails its first call on a
/// task that is not a sum.
struct NullRunner {
    id: ModelId,
    known: BTreeMap<String, String>,
    fail_once: bool,
    calls: Mutex<u64>,
    failed: Mutex<Option<String>>,
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
            let fail = self.fail_once && !prompt.contains("`get-sum`") && {
                let mut failed = self.failed.lock().expect("lock");
                failed.is_none() && failed.replace(prompt.clone()).is_none()
            };
            if fail {
                return Err(LlmError {
                    class: LlmErrorClass::Server,
                    status: Some(503),
                    message: "overloaded".into(),
                    attempts: 3,
                    log: Vec::new(),
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
                usage_rejected: None,
                model: "null-runner".into(),
                duration_ms: 1,
                ttft_ms: None,
                attempts: 1,
                log: Vec::new(),
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
        fail_once: true,
        calls: Mutex::new(0),
        failed: Mutex::new(None),
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
    let failed = runner
        .failed
        .lock()
        .expect("lock")
        .clone()
        .expect("one call failed");
    assert!(
        !report.screened_out.is_empty() && !failed.contains("`get-sum`"),
        "{failed}"
    );
    assert!(!report.degenerate);
    let spend = report
        .spend
        .iter()
        .find(|p| p.phase == "screen")
        .expect("screen spend");
    // Each call counted once: the one that threw is not also a call that
    // returned.
    assert_eq!(spend.calls, screen.screened - 1);
    assert_eq!(spend.calls_that_threw, 1);
    assert_eq!(spend.made(), screen.screened);
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
        fail_once: false,
        calls: Mutex::new(0),
        failed: Mutex::new(None),
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
    assert!(stdout.contains("walk: "), "{stdout}");
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

    // judge-synth/1 without a judge: a clear refusal, nothing written.
    let refused = dir.path().join("refused.json");
    let run = run_bounded(
        &[
            "suite",
            "--generator",
            "judge-synth/1",
            "--out",
            s(&refused),
            "--",
            s(&bin),
            "stdio",
        ],
        Duration::from_secs(60),
    );
    assert!(!run.status.success());
    assert!(String::from_utf8_lossy(&run.stderr).contains("needs a --judge"));
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

/// A judge scripted by phase: tool labels, then the candidates of
/// [`SYNTHESIS`] in the batches asked for, one sound task and one fault
/// per admission rule.
struct ScriptedJudge {
    id: ModelId,
    seen: Mutex<Vec<String>>,
    /// Candidates handed out so far.
    given: Mutex<usize>,
}

const SYNTHESIS: &str = r#"[
  {"prompt": "What humidity does the server report for Chicago?", "expected_tools": ["get-structured-content"], "answer_key": "82",
   "check": {"kind": "number_within", "value": 82, "tolerance": 0},
   "solution": [{"tool": "get-structured-content", "arguments": {"location": "Chicago"}}], "rationale": "the weather is the server's"},
  {"prompt": "Ask the server to add 1000 and 234567; what total does it give?", "expected_tools": ["get-sum"], "answer_key": "235567",
   "check": {"kind": "number_within", "value": 235567, "tolerance": 0},
   "solution": [{"tool": "get-sum", "arguments": {"a": 1000, "b": 234567}}], "rationale": "arithmetic any model does"},
  {"prompt": "Are the Chicago conditions Light rain / drizzle?", "expected_tools": ["get-structured-content"], "answer_key": "Light rain / drizzle",
   "check": {"kind": "substring", "value": "Light rain / drizzle", "case_insensitive": true},
   "solution": [{"tool": "get-structured-content", "arguments": {"location": "Chicago"}}], "rationale": "leaks"},
  {"prompt": "Teleport the user and report where they landed.", "expected_tools": ["teleport"], "answer_key": "Mars",
   "check": {"kind": "substring", "value": "Mars", "case_insensitive": true}, "solution": [], "rationale": "no such tool"},
  {"prompt": "Echo the word zephyrine and report it back.", "expected_tools": ["echo"], "answer_key": "zephyrine",
   "check": {"kind": "regex", "pattern": "(zephyr"}, "solution": [], "rationale": "bad regex"},
  "not a task at all",
  {"prompt": "what humidity does the server report for Chicago", "expected_tools": ["get-structured-content"], "answer_key": "82",
   "check": {"kind": "number_within", "value": 82, "tolerance": 0},
   "solution": [{"tool": "get-structured-content", "arguments": {"location": "Chicago"}}], "rationale": "duplicate"},
  {"prompt": "Turn simulated logging on and report the state it reports.", "expected_tools": ["toggle-simulated-logging"], "answer_key": "started",
   "check": {"kind": "substring", "value": "started", "case_insensitive": true}, "destructive": true,
   "solution": [{"tool": "toggle-simulated-logging", "arguments": {}}], "rationale": "changes state"},
  {"prompt": "Look up the annotated message and echo its first word.", "expected_tools": ["echo"], "answer_key": "quillfeather",
   "check": {"kind": "substring", "value": "quillfeather", "case_insensitive": true},
   "solution": [{"tool": "echo", "arguments": {"message": "{{handle:first}}"}}], "rationale": "needs a handle"},
  {"prompt": "Get the structured content for Chicago and report anything.", "expected_tools": ["get-structured-content"], "answer_key": "x",
   "check": {"kind": "regex", "pattern": ".*"}, "solution": [], "rationale": "accepts all"},
  {"prompt": "Which HOME does the server's environment hold?", "expected_tools": ["get-env"], "answer_key": "/root",
   "check": {"kind": "substring", "value": "/root", "case_insensitive": false},
   "solution": [{"tool": "get-env", "arguments": {}}], "rationale": "the environment is the server's"},
  {"prompt": "What temperature does the server report for Los Angeles?", "expected_tools": ["get-structured-content"], "answer_key": "99",
   "check": {"kind": "number_within", "value": 99, "tolerance": 0},
   "solution": [{"tool": "get-structured-content", "arguments": {"location": "Los Angeles"}}], "rationale": "a wrong claim"}
]"#;

impl ModelClient for ScriptedJudge {
    fn id(&self) -> &ModelId {
        &self.id
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let system = request.system.clone().unwrap_or_default();
            self.seen.lock().expect("lock").push(system.clone());
            assert!(request.tools.is_empty(), "the judge is offered no tools");
            let (text, usage) = if system.contains("You label MCP tools") {
                (
                    r#"{"get-sum": "computes", "toggle-simulated-logging": "writes"}"#.to_owned(),
                    None,
                )
            } else {
                // The batch asked for: "Write K distinct tasks."
                let user = format!("{:?}", request.messages);
                let k: usize = user
                    .split("Write ")
                    .nth(1)
                    .and_then(|r| r.split(' ').next())
                    .and_then(|n| n.parse().ok())
                    .expect("the judge is told how many tasks");
                let all: Vec<Value> = serde_json::from_str(SYNTHESIS).expect("the script parses");
                let mut given = self.given.lock().expect("lock");
                let batch: Vec<Value> = all.iter().skip(*given).take(k).cloned().collect();
                *given += batch.len();
                (
                    format!(
                        "Sure, here are the tasks:\n```json\n{}\n```\nDone.",
                        serde_json::to_string_pretty(&batch).expect("json")
                    ),
                    Some(Usage {
                        input_tokens: 1000,
                        output_tokens: 300,
                        ..Usage::default()
                    }),
                )
            };
            Ok(ChatResponse {
                content: vec![ContentBlock::Text { text }],
                stop: StopReason::EndTurn,
                usage,
                usage_rejected: None,
                model: "judge-1".into(),
                duration_ms: 2,
                ttft_ms: None,
                attempts: 1,
                log: Vec::new(),
            })
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn judge_synth_candidates_meet_every_rule_through_generate() {
    let bin = require_tool("mcp-server-everything");
    let session = connect(s(&bin), &["stdio"], vec![]).await;
    let tools = session.list_tools().await.expect("tools/list");
    let instructions = session
        .service
        .peer_info()
        .and_then(|i| i.instructions.clone());
    let judge = ScriptedJudge {
        id: "anthropic/judge-fake".parse().expect("model id"),
        seen: Mutex::default(),
        given: Mutex::default(),
    };
    let mut opts = GenerateOptions::new(GeneratorId::JudgeSynth1, 1, 5);
    opts.overgen_factor = 12.0;
    let dir = tempfile::tempdir().expect("temp dir");
    let tape_path = dir.path().join("agent.jsonl");
    let tape = Tap::create_kind(&tape_path, "test", vec![], "agent").expect("tape");
    let report = generate(
        &session,
        &tools,
        instructions.as_deref(),
        &opts,
        Some(&judge),
        None,
        &tape,
    )
    .await
    .expect("generation runs");
    session.close().await;
    tape.end("done");

    let rules: BTreeMap<String, u64> = report
        .ledger
        .rejected_by_rule
        .iter()
        .map(|r| (r.rule.clone(), r.count))
        .collect();
    let expected: BTreeMap<String, u64> = [
        ("answer-not-reached", 1),
        ("secrets-tool", 1),
        ("answer-derivable", 1),
        ("answer-leak", 1),
        ("unknown-tool", 1),
        ("check-invalid", 1),
        ("malformed", 1),
        ("duplicate", 1),
        ("write-excluded", 1),
        ("unchained-handle", 1),
        ("check-too-permissive", 1),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(rules, expected, "{:#?}", report.rejections);
    assert_eq!(report.ledger.candidates, Some(12));
    assert_eq!(report.ledger.admitted, Some(1));
    assert_eq!(report.suite.tasks.len(), 1);
    assert_eq!(report.suite.tasks[0].answer_key, "82");
    assert_eq!(report.suite.generator, "judge-synth/1");
    assert_eq!(report.suite.config["judge"], "anthropic/judge-fake");
    assert_eq!(report.leaks_at_generation.len(), 1);

    // Spend by phase: the labels came without usage, the synthesis with.
    let phase = |p: &str| {
        report
            .spend
            .iter()
            .find(|s| s.phase == p)
            .unwrap_or_else(|| panic!("{p} spend"))
    };
    assert_eq!(phase("destructiveness").calls, 1);
    assert_eq!(phase("destructiveness").calls_without_usage, 1);
    // Asked in batches of four.
    assert_eq!(phase("synthesis").calls, 3);
    assert_eq!(phase("synthesis").usage.input_tokens, 3000);
    let calls = report
        .ledger
        .judge_calls
        .as_ref()
        .expect("the judge's calls");
    assert_eq!((calls.made, calls.failed), (3, 0));
    // The sound task's answer was read from the server at generation.
    let quality = report.ledger.quality.as_ref().expect("quality");
    assert_eq!(quality.answered_from_calls, 1);
    let wrong = report
        .rejections
        .iter()
        .find(|r| r.rule == "answer-not-reached")
        .expect("the wrong claim");
    assert!(
        wrong.detail.contains("no answer its check accepts"),
        "{}",
        wrong.detail
    );
    assert_eq!(phase("synthesis").model, "anthropic/judge-fake");

    // The judge's label is the inferred one; it disagrees with the
    // declaration, and the evidence says so.
    let toggle = report
        .destructiveness
        .iter()
        .find(|d| d.tool == "toggle-simulated-logging")
        .expect("labelled");
    assert_eq!(toggle.declared, Some(false));
    assert!(toggle.inferred && toggle.disagreement);
    assert!(
        toggle.evidence.contains("judge: writes"),
        "{}",
        toggle.evidence
    );
    assert_eq!(judge.seen.lock().expect("lock").len(), 4);
    let taped = std::fs::read_to_string(&tape_path).expect("tape");
    assert!(taped.contains("suite::destructiveness"));
    assert!(taped.contains("suite::synthesis"));
}

#[test]
fn environment_secrets_reach_neither_the_suite_nor_the_tapes() {
    let bin = require_tool("mcp-server-everything");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("suite.json");
    let tape = dir.path().join("tape");
    let canary = "fitness-canary-5f3a9c1e7b2d";
    // A credential handed to the server child (`--env`, where auth tokens
    // go) and one in fitness's own environment; `get-env` would return the
    // first.
    let env_arg = format!("DEMO_API_KEY={canary}");
    let mut child = std::process::Command::new(common::FITNESS)
        .args([
            "suite",
            "--generator",
            "schema-walk/1",
            "--tasks",
            "8",
            "--out",
            s(&out),
            "--tape",
            s(&tape),
            "--env",
            &env_arg,
            "--",
            s(&bin),
            "stdio",
        ])
        .env("OTHER_API_TOKEN", canary)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("fitness starts");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait works").is_none() {
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("fitness suite did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let run = child.wait_with_output().expect("output");
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for file in [
        out.clone(),
        tape.join("mcp.jsonl"),
        tape.join("agent.jsonl"),
    ] {
        let text = std::fs::read_to_string(&file).expect("written");
        assert!(
            !text.contains(canary),
            "{} holds the secret",
            file.display()
        );
    }
    let written: Value =
        serde_json::from_slice(&std::fs::read(&out).expect("suite")).expect("JSON");
    let not_called = written["walk"]["not_called"].to_string();
    assert!(not_called.contains("get-env"), "{not_called}");
    assert_eq!(written["ledger"]["tasks"], 8);
}
