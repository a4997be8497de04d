//! `judge-walk/1` against a real MCP server over a real database
//! (`mcp-server-sqlite`, installed by scripts/setup): the judge proposes
//! inputs and words the tasks, the harness makes every call and builds
//! every check. A scripted judge stands in for the model (its answers are
//! computed from what it is asked), so what is asserted is the harness's
//! part: which proposals reach the server, what the judge is shown on its
//! second asking, which wordings stand, and that nothing is written.

use crate::common;

use std::path::Path;
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
use fitness_recorder::suite::{GenerateOptions, GenerationReport, GeneratorId, generate};
use futures::future::BoxFuture;
use sha2::Digest;

/// A four-order shop database, made with Python's own sqlite3.
fn shop(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("shop.db");
    common::sqlite_db(
        &db,
        "c.execute('create table orders (id integer primary key, customer text, item text, status text, total real)')\n\
         c.executemany('insert into orders values (?,?,?,?,?)', [(1,'Ada Quill','lamp','shipped',49.5),(2,'Bo Lind','desk','pending',310.0),(3,'Cy Moss','chair','shipped',120.25),(4,'Di Park','rug','cancelled',89.99)])",
    );
    db
}

fn sha256(p: &Path) -> String {
    format!(
        "{:x}",
        sha2::Sha256::digest(std::fs::read(p).expect("read"))
    )
}

async fn connect(db: &Path, wire: Tap) -> Session {
    let target = Target::Stdio(StdioTarget {
        program: s(&require_tool("mcp-server-sqlite")).to_owned(),
        args: vec!["--db-path".into(), s(db).to_owned()],
        env: vec![],
    });
    Session::connect(&target, wire, None, Duration::from_secs(60))
        .await
        .expect("the server starts and completes the handshake")
}

/// The judge, scripted: what a competent model would answer, computed from
/// the request. `fail`: every call fails, as an API that is down.
struct ScriptedJudge {
    id: ModelId,
    fail: bool,
    /// Every (system, user) it was sent.
    seen: Mutex<Vec<(String, String)>>,
}

impl ScriptedJudge {
    fn new(fail: bool) -> Self {
        ScriptedJudge {
            id: "openai/judge-fake".parse().expect("model id"),
            fail,
            seen: Mutex::default(),
        }
    }

    fn answer(system: &str, user: &str) -> String {
        if system.contains("You pick inputs") && user.contains("search_nodes") {
            // A knowledge graph: a search for words its resource holds.
            return r#"{"search_nodes": [{"query": "Project manager"}]}"#.to_owned();
        }
        if system.contains("You pick inputs") {
            if user.contains("have not answered yet") && user.contains("`orders`") {
                // Shown the table the listing named, and what failed.
                return r#"{"read_query": [{"query": "SELECT * FROM orders"},
                                           {"query": "SELECT customer, total FROM orders WHERE status = 'shipped'"}],
                           "describe_table": [{"table_name": "orders"}]}"#
                    .to_owned();
            }
            // First asking: a guess at a table that is not there, and two
            // writes that must never reach the server (one by a writing
            // tool, one a statement given to a reading tool).
            return r#"{"list_tables": [{}],
                       "read_query": [{"query": "SELECT * FROM products"},
                                      {"query": "UPDATE orders SET status = 'lost'"}],
                       "describe_table": [{"table_name": "products"}],
                       "write_query": [{"query": "DELETE FROM orders"}]}"#
                .to_owned();
        }
        if system.contains("You reword test tasks") {
            let mut requests = Vec::new();
            for (i, line) in user
                .lines()
                .filter_map(|l| l.strip_prefix("- id "))
                .enumerate()
            {
                let (id, goal) = line.split_once(": ").expect("id: goal");
                let goal = goal.trim_end_matches('.');
                let request = if i == 0 {
                    // Dictates the call: the harness keeps its own wording.
                    format!("Use read_query to {goal}.")
                } else {
                    format!("Could you {goal}?")
                };
                requests.push(serde_json::json!({"id": id, "request": request}));
            }
            return serde_json::json!({ "requests": requests }).to_string();
        }
        if system.contains("You plan one change") {
            // The word to write and the tool: an order placed through the
            // SQL writer, read back by a query; nothing usable for others.
            let word = user
                .split("The word to write: `")
                .nth(1)
                .and_then(|r| r.split('`').next())
                .expect("the word to write");
            if user.starts_with("The change: - write_query:") {
                return serde_json::json!({
                    "arguments": {"query": format!(
                        "INSERT INTO orders (customer, item, status, total) VALUES ('{word}', 'lamp', 'pending', 12.5)"
                    )},
                    "read": {"tool": "read_query", "arguments": {
                        "query": format!("SELECT customer, status FROM orders WHERE customer = '{word}'")
                    }}
                })
                .to_string();
            }
            return r#"{"arguments": {"name": "nothing to find"}}"#.to_owned();
        }
        // The destructiveness labels: nothing declared, none destructive.
        "{}".to_owned()
    }
}

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
            let user = request
                .messages
                .iter()
                .flat_map(|m| m.content.iter())
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            self.seen
                .lock()
                .expect("lock")
                .push((system.clone(), user.clone()));
            if self.fail && !system.contains("You label MCP tools") {
                return Err(LlmError::local(
                    LlmErrorClass::Server,
                    "503 the judge's API is down",
                ));
            }
            Ok(ChatResponse {
                content: vec![ContentBlock::Text {
                    text: ScriptedJudge::answer(&system, &user),
                }],
                stop: StopReason::EndTurn,
                usage: Some(Usage {
                    input_tokens: 200,
                    output_tokens: 50,
                    ..Usage::default()
                }),
                usage_rejected: None,
                model: "judge-fake".into(),
                duration_ms: 2,
                ttft_ms: None,
                attempts: 1,
                log: Vec::new(),
            })
        })
    }
}

async fn judge_walk(db: &Path, judge: &ScriptedJudge, dir: &Path) -> GenerationReport {
    let wire = Tap::create_kind(&dir.join("mcp.jsonl"), "test", vec![], "mcp").expect("tape");
    let agent = Tap::create_kind(&dir.join("agent.jsonl"), "test", vec![], "agent").expect("tape");
    let session = connect(db, wire.clone()).await;
    let tools = session.list_tools().await.expect("tools/list");
    let opts = GenerateOptions::new(GeneratorId::JudgeWalk1, 8, 1);
    let report = generate(&session, &tools, None, &opts, Some(judge), None, &agent)
        .await
        .expect("generation runs");
    session.close().await;
    wire.end("done");
    agent.end("done");
    report
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_guided_walk_reads_a_real_database_it_never_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = shop(dir.path());
    let before = sha256(&db);
    let judge = ScriptedJudge::new(false);
    let report = judge_walk(&db, &judge, dir.path()).await;
    assert_eq!(sha256(&db), before, "the database is as it was");

    // The write the judge proposed never reached the server.
    let wire = std::fs::read_to_string(dir.path().join("mcp.jsonl")).expect("wire tape");
    assert!(
        wire.contains("SELECT * FROM orders"),
        "the judge's query was made"
    );
    assert!(!wire.contains("DELETE FROM orders"), "no write was sent");
    assert!(
        !wire.contains("UPDATE orders"),
        "no writing statement was sent"
    );
    let walk = report.walk.as_ref().expect("walk stats");
    assert_eq!(walk.writing_arguments, 1, "{walk:?}");

    // Asked first, the judge was shown the catalogue discovery read through
    // the query tool: the real table and its columns.
    let seen = judge.seen.lock().expect("lock").clone();
    let first = seen
        .iter()
        .find(|(s, _)| s.contains("You pick inputs"))
        .expect("a first asking");
    assert!(
        first
            .1
            .contains("Tables (through `read_query`, the sqlite_master dialect): orders(id, customer, item, status, total)"),
        "{}",
        first.1
    );
    // Asked again, the judge was shown the table the listing named and
    // what the failed calls said.
    let again = seen
        .iter()
        .find(|(_, u)| u.contains("have not answered yet"))
        .expect("a second asking");
    assert!(again.1.contains("`orders`"), "{}", again.1);

    // Eight tasks over the tools that read (the listing's own, worded from
    // a template, gives way to questions a person would ask), every
    // answer read from a real, successful result.
    let tasks = &report.suite.tasks;
    assert_eq!(report.suite.generator, "judge-walk/1");
    assert_eq!(tasks.len(), 8, "{:#?}", report.rejections);
    let mut tools: Vec<&str> = tasks
        .iter()
        .filter_map(|t| t.solution.last())
        .map(|c| c.tool.as_str())
        .collect();
    tools.sort_unstable();
    tools.dedup();
    assert!(
        tools.len() >= 2
            && tools
                .iter()
                .all(|t| ["describe_table", "list_tables", "read_query"].contains(t)),
        "{tools:?}"
    );
    for t in tasks {
        let source = &report.observed[&t.id];
        assert!(t.check.check(source), "{}: {source}", t.id);
        assert!(!source.contains("error"), "{}: {source}", t.id);
        assert!(!t.prompt.contains("read_query"), "{}", t.prompt);
    }
    // The judge's wording stands where it keeps the task; where it named a
    // tool, the harness's own does.
    assert!(
        tasks.iter().any(|t| t.prompt.starts_with("Could you find")),
        "{tasks:#?}"
    );
    assert!(
        tasks.iter().any(|t| t
            .rationale
            .as_deref()
            .is_some_and(|r| r.contains("the judge's wording was not used: it names a tool"))),
        "{tasks:#?}"
    );

    // Every judge call counted, on the tape and in the spend.
    let calls = report.ledger.judge_calls.as_ref().expect("judge calls");
    let synthesis = report
        .spend
        .iter()
        .find(|p| p.phase == "synthesis")
        .expect("synthesis spend");
    assert_eq!(calls.failed, 0);
    assert_eq!(calls.made, synthesis.calls);
    assert_eq!(synthesis.usage.input_tokens, 200 * synthesis.calls);
    let asked = seen
        .iter()
        .filter(|(sys, _)| !sys.contains("You label MCP tools"))
        .count() as u64;
    assert_eq!(calls.made, asked);
    let agent = std::fs::read_to_string(dir.path().join("agent.jsonl")).expect("agent tape");
    let answered = agent
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| {
            v["role"] == "assistant"
                && v["corr_id"].as_str().is_some_and(|c| {
                    c.starts_with("suite::propose") || c.starts_with("suite::phrase")
                })
        })
        .count() as u64;
    assert_eq!(
        answered, calls.made,
        "every judge call is on the agent tape"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_judge_that_fails_is_counted_as_ours_and_the_walk_goes_on() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = shop(dir.path());
    let judge = ScriptedJudge::new(true);
    let report = judge_walk(&db, &judge, dir.path()).await;
    let calls = report.ledger.judge_calls.as_ref().expect("judge calls");
    // Two failures in a row, then the judge is not asked again.
    assert_eq!((calls.made, calls.failed), (2, 2));
    assert!(
        calls
            .last_error
            .as_deref()
            .is_some_and(|e| e.contains("503")),
        "{calls:?}"
    );
    // The walk went on from the schema alone: the listing was called and
    // the suite was built.
    let wire = std::fs::read_to_string(dir.path().join("mcp.jsonl")).expect("wire tape");
    assert!(
        wire.lines()
            .any(|l| l.contains("\"tools/call\"") && l.contains("\"list_tables\"")),
        "the listing was called"
    );
    assert!(report.suite.tasks.len() >= 4, "{:#?}", report.suite.tasks);
}

#[test]
fn fitness_suite_prints_every_task_and_writes_them_as_markdown() {
    let bin = require_tool("mcp-server-everything");
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("suite.json");
    let run = run_bounded(
        &[
            "suite",
            "--generator",
            "schema-walk/2",
            "--tasks",
            "4",
            "--out",
            s(&out),
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
    let suite: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("suite.json")).expect("json");
    let md = std::fs::read_to_string(dir.path().join("suite.md")).expect("suite.md beside it");
    let tasks = suite["suite"]["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 4);
    for t in tasks {
        let prompt = t["prompt"].as_str().expect("prompt");
        let tool = t["solution"][0]["tool"].as_str().expect("a call");
        for text in [&*stdout, &*md] {
            assert!(text.contains(prompt), "{prompt} in {text}");
            assert!(text.contains(tool), "{tool} in {text}");
        }
    }
    for r in suite["rejections"].as_array().expect("rejections") {
        let line = md
            .lines()
            .find(|l| l.starts_with(&format!("| {} |", r["candidate"].as_str().expect("id"))))
            .unwrap_or_else(|| panic!("{r} listed in {md}"));
        assert!(line.contains(&format!("`{}`", r["rule"].as_str().expect("rule"))));
    }
    assert!(md.contains("## Rejected candidates"));
}

/// A server whose tools all declare they read, one of which creates a table
/// on its first call (as `@executeautomation/database-server`'s
/// `list_insights` does): the walk watches the listing, names the tool, and
/// admits no task about the table it made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_walk_asks_nothing_about_state_it_created() {
    let dir = tempfile::tempdir().expect("temp dir");
    let wire =
        Tap::create_kind(&dir.path().join("mcp.jsonl"), "test", vec![], "mcp").expect("tape");
    let agent =
        Tap::create_kind(&dir.path().join("agent.jsonl"), "test", vec![], "agent").expect("tape");
    let target = Target::Stdio(StdioTarget {
        program: common::FITNESS.to_owned(),
        args: vec!["fixture-server".into(), "read-that-writes".into()],
        env: vec![],
    });
    let session = Session::connect(&target, wire.clone(), None, Duration::from_secs(60))
        .await
        .expect("the fixture starts");
    let tools = session.list_tools().await.expect("tools/list");
    let judge = ScriptedJudge::new(true);
    let opts = GenerateOptions::new(GeneratorId::JudgeWalk1, 8, 1);
    let report = generate(&session, &tools, None, &opts, Some(&judge), None, &agent)
        .await
        .expect("generation runs");
    session.close().await;
    wire.end("done");
    agent.end("done");

    let walk = report.walk.as_ref().expect("walk stats");
    assert_eq!(walk.changed_state, ["list_insights"], "{walk:?}");
    assert!(walk.created_state >= 1, "{walk:?}");
    // The walk did see the new table (described it), and asked nothing
    // about it.
    let wire = std::fs::read_to_string(dir.path().join("mcp.jsonl")).expect("wire tape");
    assert!(
        wire.contains("CURRENT_TIMESTAMP"),
        "the new table was described"
    );
    let tasks = &report.suite.tasks;
    assert!(
        tasks.iter().any(|t| t
            .solution
            .iter()
            .any(|c| c.arguments.get("table_name") == Some(&serde_json::json!("orders")))),
        "the table that was there is asked about: {tasks:#?}"
    );
    for t in tasks {
        let text = serde_json::to_string(t).expect("task json");
        for made in [
            "mcp_insights",
            "CURRENT_TIMESTAMP",
            "created_at",
            "Unwritten",
            "CLOB",
        ] {
            assert!(!text.contains(made), "{made} in {text}");
        }
    }
}

/// A copy sandbox as `--sandbox-copy` keeps one: the database copied back
/// from the original and the server started again on every restore.
struct CopySandbox {
    original: std::path::PathBuf,
    copy: std::path::PathBuf,
    wire: Tap,
    session: std::cell::RefCell<Option<std::rc::Rc<Session>>>,
}

impl fitness_recorder::suite::act::SandboxState for CopySandbox {
    async fn restore(&self, _why: &str) -> anyhow::Result<()> {
        let old = self.session.borrow_mut().take();
        if let Some(old) = old.and_then(|o| std::rc::Rc::try_unwrap(o).ok()) {
            old.close().await;
        }
        std::fs::copy(&self.original, &self.copy)?;
        let session = connect(&self.copy, self.wire.clone()).await;
        *self.session.borrow_mut() = Some(std::rc::Rc::new(session));
        Ok(())
    }

    fn session(&self) -> anyhow::Result<std::rc::Rc<Session>> {
        self.session
            .borrow()
            .clone()
            .ok_or_else(|| anyhow::anyhow!("no session"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_judge_proposes_a_change_and_the_read_that_shows_it_and_the_harness_checks_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    let original = shop(dir.path());
    let before = sha256(&original);
    let copy = dir.path().join("copy.db");
    std::fs::copy(&original, &copy).expect("copy");
    let wire =
        Tap::create_kind(&dir.path().join("mcp.jsonl"), "test", vec![], "mcp").expect("tape");
    let agent =
        Tap::create_kind(&dir.path().join("agent.jsonl"), "test", vec![], "agent").expect("tape");
    let judge = ScriptedJudge::new(false);
    let sandbox = CopySandbox {
        original: original.clone(),
        copy: copy.clone(),
        wire: wire.clone(),
        session: Default::default(),
    };
    use fitness_recorder::suite::act::SandboxState as _;
    sandbox.restore("start").await.expect("the sandbox starts");
    let session = sandbox.session().expect("a session");
    let tools = session.list_tools().await.expect("tools/list");
    let mut opts = GenerateOptions::new(GeneratorId::JudgeWalk1, 8, 1);
    opts.access = fitness_recorder::access::AccessMode::Sandbox;
    let mut report = generate(&session, &tools, None, &opts, Some(&judge), None, &agent)
        .await
        .expect("generation runs");
    drop(session);
    let judge_calls_before = report.ledger.judge_calls.as_ref().map_or(0, |c| c.made);
    fitness_recorder::suite::add_act_tasks(
        &mut report,
        &tools,
        &opts,
        Some(fitness_recorder::access::RestoreKind::Copy),
        &sandbox,
        Duration::from_secs(30),
        Some((&judge, &agent)),
    )
    .await
    .expect("act generation runs");
    let act = report.ledger.act.clone().expect("an act ledger");
    assert!(act.judge_proposed >= 1, "{act:?}");
    assert_eq!(act.judge_admitted, 1, "{act:?}");
    let order = report
        .suite
        .tasks
        .iter()
        .find(|t| {
            t.kind == fitness_recorder::suite::task::TaskKind::Act
                && t.expected_tools == ["write_query"]
        })
        .expect("the judge's change is an act task");
    let query = order.solution[0].arguments["query"]
        .as_str()
        .expect("a query");
    assert!(query.starts_with("INSERT INTO orders"), "{query}");
    assert!(query.contains(&order.answer_key), "{query}");
    let check = order.state_check.as_ref().expect("a state check");
    assert_eq!(check.reads[0].tool, "read_query");
    assert!(
        check.reads[0].arguments["query"]
            .as_str()
            .is_some_and(|q| q.starts_with("SELECT customer, status FROM orders WHERE customer")),
        "{check:?}"
    );
    // Where the judge gave nothing usable, the harness's own change stands.
    assert!(
        report
            .suite
            .tasks
            .iter()
            .any(|t| t.kind == fitness_recorder::suite::task::TaskKind::Act
                && t.expected_tools == ["create_table"]),
        "{:?}",
        report
            .suite
            .tasks
            .iter()
            .map(|t| &t.prompt)
            .collect::<Vec<_>>()
    );
    // The judge's act calls are the suite's synthesis calls, counted.
    let asked = judge
        .seen
        .lock()
        .expect("lock")
        .iter()
        .filter(|(system, _)| system.contains("You plan one change"))
        .count() as u64;
    assert!(asked >= 2, "asked for each writer");
    assert_eq!(
        report.ledger.judge_calls.as_ref().map_or(0, |c| c.made),
        judge_calls_before + asked
    );
    let config = report.suite.config.to_string();
    assert!(
        config.contains("You plan one change"),
        "registered: {config}"
    );
    let session = sandbox.session.borrow_mut().take();
    if let Some(s) = session.and_then(|s| std::rc::Rc::try_unwrap(s).ok()) {
        s.close().await;
    }
    wire.end("done");
    agent.end("done");
    assert_eq!(sha256(&original), before, "the original is untouched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_for_words_discovery_read_is_no_listing_of_everything() {
    let dir = tempfile::tempdir().expect("temp dir");
    // Six relations; a search for Marta's words finds the three that
    // touch her.
    let graph = dir.path().join("graph.jsonl");
    common::servers::memory_graph(
        &graph,
        &[
            ("Harbour Glass", "company", &["Glazing contractor"]),
            ("Marta Silva", "person", &["Project manager"]),
            ("Tomas Berg", "person", &["Site engineer"]),
            ("Northgate Library", "project", &["Due March 2027"]),
            ("Quayside Offices", "project", &["Completed 2025"]),
            ("Leith Studio", "project", &["Budget 85k"]),
        ],
        &[
            ("Marta Silva", "Harbour Glass", "works_at"),
            ("Tomas Berg", "Harbour Glass", "works_at"),
            ("Marta Silva", "Northgate Library", "manages"),
            ("Marta Silva", "Quayside Offices", "manages"),
            ("Tomas Berg", "Leith Studio", "manages"),
            ("Harbour Glass", "Northgate Library", "supplies"),
        ],
    );
    let before = sha256(&graph);
    let wire =
        Tap::create_kind(&dir.path().join("mcp.jsonl"), "test", vec![], "mcp").expect("tape");
    let agent =
        Tap::create_kind(&dir.path().join("agent.jsonl"), "test", vec![], "agent").expect("tape");
    let target = Target::Stdio(StdioTarget {
        program: s(&require_tool("mcp-server-memory")).to_owned(),
        args: vec![],
        env: vec![("MEMORY_FILE_PATH".into(), s(&graph).to_owned())],
    });
    let session = Session::connect(&target, wire.clone(), None, Duration::from_secs(60))
        .await
        .expect("the server starts");
    let tools = session.list_tools().await.expect("tools/list");
    let judge = ScriptedJudge::new(false);
    let mut opts = GenerateOptions::new(GeneratorId::JudgeWalk1, 12, 1);
    opts.fresh = Some(target.clone());
    let report = generate(&session, &tools, None, &opts, Some(&judge), None, &agent)
        .await
        .expect("generation runs");
    session.close().await;
    assert_eq!(sha256(&graph), before, "the graph is as it was");
    let wire = std::fs::read_to_string(dir.path().join("mcp.jsonl")).expect("wire tape");
    assert!(
        wire.contains("Project manager"),
        "the judge's search was made"
    );
    // The relations are the six the graph holds, never the three the
    // search found.
    let model = &report.suite.config["holdings"];
    let relations: Vec<&serde_json::Value> = model
        .as_array()
        .into_iter()
        .flatten()
        .filter(|k| k["kind"] == "relations")
        .collect();
    assert!(
        !relations.is_empty() && relations.iter().all(|k| k["records"] == 6),
        "{model}"
    );
}
