//! `schema-walk/2` against real MCP servers (installed by scripts/setup):
//! every admitted task needs the server's work. Its answer was read from a
//! successful call, it is no arithmetic on the numbers the task gives, its
//! prompt states a goal instead of dictating a call, its predicate accepts
//! the recorded answer and a fresh one and rejects every neighbour's
//! answer, and the tasks spread over at least three tools.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::{git, require_tool, s};
use fitness_recorder::mcp::connect::{Session, Target};
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::suite::admission::derivable;
use fitness_recorder::suite::generators::walk::result_text;
use fitness_recorder::suite::reading::reads_as_error;
use fitness_recorder::suite::{GenerateOptions, GenerationReport, GeneratorId, generate};
use fitness_shared::record::AccessMode;
use serde_json::Value;

/// A read-only walk (the default); [`walk2_writing`] for a sandbox's.
async fn walk2(
    bin: &Path,
    args: &[&str],
    env: Vec<(String, String)>,
) -> (Session, GenerationReport) {
    walk2_with(bin, args, env, false).await
}

/// A walk in a sandbox whose generation may write.
async fn walk2_writing(
    bin: &Path,
    args: &[&str],
    env: Vec<(String, String)>,
) -> (Session, GenerationReport) {
    walk2_with(bin, args, env, true).await
}

async fn walk2_with(
    bin: &Path,
    args: &[&str],
    env: Vec<(String, String)>,
    writes: bool,
) -> (Session, GenerationReport) {
    let target = Target::Stdio(StdioTarget {
        program: s(bin).to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env,
    });
    let session = Session::connect(&target, Tap::disabled(), None, Duration::from_secs(60))
        .await
        .expect("the server starts and completes the handshake");
    let tools = session.list_tools().await.expect("tools/list");
    let instructions = session
        .service
        .peer_info()
        .and_then(|i| i.instructions.clone());
    let mut opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    opts.seed_handles = target.operator_paths();
    if writes {
        opts.access = AccessMode::Sandbox;
        opts.writes = true;
    }
    let report = generate(
        &session,
        &tools,
        instructions.as_deref(),
        &opts,
        None,
        None,
        &Tap::disabled(),
    )
    .await
    .expect("generation runs");
    (session, report)
}

/// The tool a task's solution ends at.
fn final_tool(t: &fitness_recorder::suite::task::Task) -> &str {
    t.solution.last().map_or("", |c| c.tool.as_str())
}

async fn assert_tasks_need_the_server(session: &Session, report: &GenerationReport, min: usize) {
    let tasks = &report.suite.tasks;
    assert!(
        tasks.len() >= min,
        "at least {min} tasks, got {}: {:#?}\n{:#?}",
        tasks.len(),
        report.ledger,
        report.rejections
    );
    let tools: BTreeSet<&str> = tasks.iter().map(final_tool).collect();
    assert!(
        tools.len() >= 3,
        "spread over three tools or more: {tools:?}"
    );
    let tool_names: Vec<String> = session
        .list_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    for t in tasks {
        // A question composed over what the server holds computes its
        // answer over many records: its own tests read it (`composed`).
        let composed = t
            .rationale
            .as_deref()
            .is_some_and(|r| r.starts_with("composed"));
        if composed {
            assert!(t.check.check(&t.answer_key), "{t:?}");
            for name in &tool_names {
                assert!(
                    !t.prompt.contains(name.as_str()),
                    "{}: names {name}",
                    t.prompt
                );
            }
            continue;
        }
        let observed = report
            .observed
            .get(&t.id)
            .unwrap_or_else(|| panic!("{}: the answer came from a recorded call", t.id));
        assert!(
            !reads_as_error(observed),
            "{}: answered by an error: {observed}",
            t.id
        );
        assert_eq!(derivable(t), None, "{}: arithmetic alone: {t:?}", t.id);
        assert!(
            t.check.check(observed),
            "{}: accepts the recorded answer",
            t.id
        );
        assert!(t.check.check(&t.answer_key));
        assert!(!t.check.check("I don't know."));
        for other in tasks.iter().filter(|o| {
            o.id != t.id
                && !o
                    .rationale
                    .as_deref()
                    .is_some_and(|r| r.starts_with("composed"))
        }) {
            assert!(
                !t.check.check(&other.answer_key),
                "{}: {:?} also accepts {}'s answer {:?}",
                t.id,
                t.check,
                other.id,
                other.answer_key
            );
        }
        // The prompt states a goal: no tool named, no arguments dictated,
        // no answer given away.
        assert!(
            t.prompt.starts_with("Using the server's tools,"),
            "{}",
            t.prompt
        );
        for name in &tool_names {
            assert!(
                !t.prompt.contains(&format!("`{name}`")),
                "{}: names the tool {name}",
                t.prompt
            );
        }
        assert!(!t.prompt.contains("arguments {"), "{}", t.prompt);
        assert!(
            !t.prompt
                .to_lowercase()
                .contains(&t.answer_key.to_lowercase()),
            "{t:?}"
        );
        // The solution, made again now, reaches the answer.
        let mut last = String::new();
        for call in &t.solution {
            let result = session
                .call_tool(&call.tool, call.arguments.clone())
                .await
                .expect("the solution's calls work now");
            last = result_text(&serde_json::to_value(&result).expect("a result"));
        }
        assert!(
            t.check.check(&last),
            "{}: the answer comes back: {last}",
            t.id
        );
    }
    let q = report
        .ledger
        .quality
        .as_ref()
        .expect("the ledger's quality");
    assert_eq!(q.tasks, tasks.len() as u64);
    assert_eq!(q.answered_from_calls, q.tasks, "every answer from a call");
    assert!(q.tools_covered() >= 3, "{q:?}");
    assert_eq!(
        q.multi_call,
        tasks.iter().filter(|t| t.solution.len() > 1).count() as u64
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_tasks_need_its_work_and_none_is_its_adder() {
    let bin = require_tool("mcp-server-everything");
    let (session, report) = walk2(&bin, &["stdio"], vec![]).await;
    assert_tasks_need_the_server(&session, &report, 8).await;
    assert!(
        report
            .suite
            .tasks
            .iter()
            .all(|t| final_tool(t) != "get-sum"),
        "sums are arithmetic, not the server's work"
    );
    assert!(
        report
            .rejections
            .iter()
            .any(|r| r.rule == "answer-derivable" && r.detail.contains('+')),
        "the adder's answers were seen and refused: {:#?}",
        report.rejections
    );
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_memory_tasks_read_the_graph_the_walk_filled() {
    let bin = require_tool("mcp-server-memory");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("memory.json");
    // In a sandbox whose generation may write, the walk adds fresh
    // entities and the tasks read them back.
    let (session, report) = walk2_writing(
        &bin,
        &[],
        vec![("MEMORY_FILE_PATH".to_owned(), s(&file).to_owned())],
    )
    .await;
    assert_tasks_need_the_server(&session, &report, 8).await;
    // No task writes: the drive reads the state the walk created.
    let writers = ["create_entities", "create_relations", "add_observations"];
    for t in &report.suite.tasks {
        assert!(
            t.solution
                .iter()
                .all(|c| !writers.contains(&c.tool.as_str())),
            "{t:?}"
        );
    }
    session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_memory_read_only_reads_the_graph_it_is_given_and_writes_nothing() {
    let bin = require_tool("mcp-server-memory");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("memory.json");
    std::fs::write(&file, memory_graph()).expect("write the graph");
    let before = std::fs::read(&file).expect("read");
    let (session, report) = walk2(
        &bin,
        &[],
        vec![("MEMORY_FILE_PATH".to_owned(), s(&file).to_owned())],
    )
    .await;
    session.close().await;
    let walk = report.walk.as_ref().expect("walk stats");
    assert_eq!(walk.state_writes, 0, "a read-only walk writes nothing");
    assert!(
        walk.not_called
            .iter()
            .any(|n| n["tool"] == "create_entities"
                && n["why"].as_str().is_some_and(|w| w.contains("read-only"))),
        "{:?}",
        walk.not_called
    );
    assert!(
        !report.suite.tasks.is_empty(),
        "tasks read the graph it was given: {:#?}",
        report.rejections
    );
    assert_eq!(
        std::fs::read(&file).expect("read"),
        before,
        "the memory file is byte-identical"
    );
}

/// A small knowledge graph in server-memory's JSONL.
fn memory_graph() -> String {
    let people = [
        (
            "Halvorsen",
            "engineer",
            "maintains the Kestrel pumping station",
        ),
        ("Okonkwo", "harbourmaster", "keeps the Dunmore pontoon log"),
        ("Vasquez", "treasurer", "audits the Orvieto plant ledger"),
        (
            "Macphail",
            "pilot",
            "boards tankers beyond the Cumbrae buoy",
        ),
        ("Quill", "founder", "drafted the Brisbane launch charter"),
        (
            "Tobermory Yacht Club",
            "club",
            "charges eighteen pounds nightly",
        ),
    ];
    let mut out = String::new();
    for (name, kind, fact) in people {
        out.push_str(
            &serde_json::json!({"type": "entity", "name": name, "entityType": kind, "observations": [fact]})
                .to_string(),
        );
        out.push('\n');
    }
    out.push_str(
        &serde_json::json!({"type": "relation", "from": "Macphail", "to": "Okonkwo", "relationType": "reports_to"})
            .to_string(),
    );
    out.push('\n');
    out
}

/// A directory tree with files whose words exist nowhere else.
fn library(root: &Path) {
    let files = [
        (
            "notes.md",
            "Meeting with Halvorsen on Tuesday about the Kestrel migration.",
        ),
        (
            "docs/report.txt",
            "Quarterly revenue at the Orvieto plant grew after the Brisbane launch.",
        ),
        (
            "docs/budget.csv",
            "item,amount\nlanterns,4410\nropes,1275\n",
        ),
        (
            "archive/2019/minutes.txt",
            "The committee elected Ingrid Vasquez treasurer by acclamation.",
        ),
        (
            "archive/letters/harbour.txt",
            "Dear Mr Okonkwo, the pontoon at Dunmore reopens in April.",
        ),
    ];
    for (path, body) in files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("mkdir");
        std::fs::write(&p, body).expect("write");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_filesystem_tasks_read_files_that_are_really_there() {
    let bin = require_tool("mcp-server-filesystem");
    let dir = tempfile::tempdir().expect("tempdir");
    // The server resolves symlinks; give it the real path.
    let root = dir.path().canonicalize().expect("canonical");
    library(&root);
    let before = common::tree(&root);
    let (session, report) = walk2(&bin, &[s(&root)], vec![]).await;
    assert_tasks_need_the_server(&session, &report, 8).await;
    assert!(
        report.suite.tasks.iter().any(|t| t.solution.len() > 1),
        "a file found through its listing: {:#?}",
        report.suite.tasks
    );
    let walk = report.walk.as_ref().expect("walk stats");
    assert!(
        walk.error_results > 0,
        "calls on paths that are not there failed and were counted, never tasks"
    );
    session.close().await;
    // Read-only: the directory is as it was, no new directory in it.
    assert_eq!(walk.state_writes, 0);
    assert_eq!(common::tree(&root), before, "the tree is byte-identical");
}

/// A repository of eight commits, each adding a file of its own words.
fn repository(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["config", "user.email", "dev@example.org"]);
    git(dir, &["config", "user.name", "Grace Hopper"]);
    let commits = [
        (
            "harbour.md",
            "Add the Dunmore tide tables",
            "High water at Dunmore falls near the quay bollards.",
        ),
        (
            "lighthouse.md",
            "Record the Kilbrannan lamp schedule",
            "The Kilbrannan lantern rotates using a clockwork escapement.",
        ),
        (
            "ferry.md",
            "Publish the Oban ferry timetable",
            "Sailings to Craignure leave the pier hourly.",
        ),
        (
            "weather.md",
            "Note the Malin gale warnings",
            "Forecasters expect a northwesterly gale veering severe.",
        ),
        (
            "pilots.md",
            "List the Clyde pilot roster",
            "Captain Macphail boards inbound tankers beyond the Cumbrae buoy.",
        ),
        (
            "moorings.md",
            "Set the Tobermory mooring fees",
            "Visiting yachts pay eighteen pounds nightly at the pontoon.",
        ),
        (
            "charts.md",
            "Correct the Loch Fyne charts",
            "A new sounding near Otter Ferry shows shoaling gravel.",
        ),
        (
            "cargo.md",
            "Log the Hebridean cargo manifest",
            "Hold three carries whisky casks, peat bricks and a tractor.",
        ),
    ];
    for (file, message, body) in commits {
        std::fs::write(dir.join(file), body).expect("write");
        git(dir, &["add", file]);
        git(dir, &["commit", "-q", "-m", message]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_git_server_tasks_follow_the_log_to_the_commits() {
    let bin = require_tool("mcp-server-git");
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().canonicalize().expect("canonical");
    repository(&repo);
    let refs_before = common::git_state(&repo);
    let (session, report) = walk2(&bin, &["--repository", s(&repo)], vec![]).await;
    assert_tasks_need_the_server(&session, &report, 8).await;
    assert!(
        report
            .suite
            .tasks
            .iter()
            .any(|t| t.solution.len() > 1 && t.prompt.contains("whose message is")),
        "a commit named by its message, found through the log: {:#?}",
        report.suite.tasks
    );
    session.close().await;
    // The walk left the repository as it found it: no checkout, no commit.
    let head = Command::new("git")
        .args(["status", "--porcelain", "--branch"])
        .current_dir(&repo)
        .output()
        .expect("git status");
    let status = String::from_utf8_lossy(&head.stdout);
    assert!(status.starts_with("## main"), "{status}");
    let log = Command::new("git")
        .args(["rev-list", "--count", "HEAD"])
        .current_dir(&repo)
        .output()
        .expect("git rev-list");
    let count: Value = serde_json::from_slice(&log.stdout).unwrap_or(Value::Null);
    assert_eq!(count, 8, "no commit was added");
    assert_eq!(
        common::git_state(&repo),
        refs_before,
        "refs, index and working tree unchanged"
    );
}
