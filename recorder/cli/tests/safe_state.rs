//! A measurement touches nothing it was not allowed to (issue 31): real
//! servers over real data (a directory, a git repository, a memory file),
//! hashed before and after. Read-only by default: `fitness suite` and
//! `fitness run` leave the data byte-identical and the record lists no
//! write. `--sandbox --sandbox-copy PATH` runs the server over a copy: the
//! suite may write, every write is listed, and the original is untouched.
//! Trials are independent: the same suite driven in other orders gives the
//! same counts.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::{git, git_state, require_tool, run_bounded, run_result, s, text, tree};
use serde_json::Value;

const LIMIT: Duration = Duration::from_secs(300);

/// A directory of three small files, as the issue's reproduction has it.
fn three_files(root: &Path) {
    std::fs::write(
        root.join("notes.md"),
        "Meeting with Halvorsen about the Kestrel pumps.",
    )
    .unwrap();
    std::fs::write(
        root.join("budget.csv"),
        "item,amount\nlanterns,4410\nropes,1275\n",
    )
    .unwrap();
    std::fs::write(
        root.join("letter.txt"),
        "Dear Mr Okonkwo, the Dunmore pontoon reopens in April.",
    )
    .unwrap();
}

/// `fitness run` with these flags, its summary's run directory and record.
fn run(
    runner: &str,
    out: &Path,
    extra: &[&str],
    server: &[&str],
) -> (std::path::PathBuf, Value, String) {
    let output = run_bounded(&common::run_args(runner, out, extra, server), LIMIT);
    let (dir, record) = run_result(&output);
    (
        dir,
        record,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn canonical(dir: &tempfile::TempDir) -> std::path::PathBuf {
    // The file-system server resolves symlinks; give it the real path.
    dir.path().canonicalize().expect("canonical")
}

#[test]
fn a_read_only_suite_and_run_leave_the_operators_directory_byte_identical() {
    let server = require_tool("mcp-server-filesystem");
    let data = tempfile::tempdir().expect("tempdir");
    let root = canonical(&data);
    three_files(&root);
    let before = tree(&root);

    // fitness suite --generator schema-walk/2
    let work = tempfile::tempdir().expect("tempdir");
    let suite = work.path().join("suite.json");
    let out = run_bounded(
        &[
            "suite",
            "--generator",
            "schema-walk/2",
            "--tasks",
            "8",
            "--out",
            s(&suite),
            "--",
            s(&server),
            s(&root),
        ],
        LIMIT,
    );
    assert!(suite.is_file(), "{}", text(&out));
    assert!(
        text(&out).contains("read-only: never calls"),
        "the mode is said before the suite starts: {}",
        text(&out)
    );
    assert_eq!(
        tree(&root),
        before,
        "fitness suite left the directory as it was"
    );

    // fitness run --runner sim/diligent --generator schema-walk/2
    let (dir, record, stderr) = run(
        "sim/diligent",
        work.path(),
        &["--generator", "schema-walk/2"],
        &[s(&server), s(&root)],
    );
    assert_eq!(
        tree(&root),
        before,
        "fitness run left the directory as it was"
    );
    assert!(stderr.contains("read-only: never calls"), "{stderr}");
    let access = &record["access"];
    assert_eq!(access["mode"], "read-only", "{access:#}");
    assert_eq!(access["writes_total"], 0, "{access:#}");
    assert!(access["writes"].is_null(), "{access:#}");
    let writers: Vec<&str> = access["writers"]
        .as_array()
        .expect("writers")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for tool in ["write_file", "edit_file", "move_file", "create_directory"] {
        assert!(writers.contains(&tool), "{tool} may write: {writers:?}");
    }
    assert_eq!(record["preregistration"]["access"], "read-only");
    // No call of a tool that may write is on the wire.
    let wire = std::fs::read_to_string(dir.join("mcp.jsonl")).expect("wire tape");
    for tool in &writers {
        assert!(!called(&wire, tool), "{tool} was called");
    }
}

/// Whether the wire tape holds a `tools/call` of `tool`.
fn called(wire: &str, tool: &str) -> bool {
    wire.lines().any(|l| {
        let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
        v["dir"] == "in" && v["raw"]["method"] == "tools/call" && v["raw"]["params"]["name"] == tool
    })
}

#[test]
fn a_sandbox_copy_may_write_lists_every_write_and_never_touches_the_original() {
    let server = require_tool("mcp-server-filesystem");
    let data = tempfile::tempdir().expect("tempdir");
    let root = canonical(&data);
    three_files(&root);
    let before = tree(&root);
    let work = tempfile::tempdir().expect("tempdir");
    let (dir, record, stderr) = run(
        "sim/diligent",
        work.path(),
        &[
            "--generator",
            "schema-walk/2",
            "--sandbox",
            "--sandbox-copy",
            s(&root),
        ],
        &[s(&server), s(&root)],
    );
    assert_eq!(tree(&root), before, "the original is untouched");
    assert!(stderr.contains("sandbox ("), "{stderr}");
    let access = &record["access"];
    assert_eq!(access["mode"], "sandbox", "{access:#}");
    assert_eq!(access["restore"], "copy");
    assert_eq!(access["copied_paths"][0], s(&root));
    // The walk added fresh state in the copy, and the record lists it.
    let total = access["writes_total"].as_u64().expect("writes_total");
    assert!(total > 0, "the sandboxed walk may write: {access:#}");
    let writes = access["writes"].as_array().expect("writes");
    assert_eq!(writes.len() as u64, total);
    let wire = std::fs::read_to_string(dir.join("mcp.jsonl")).expect("wire tape");
    for w in writes {
        assert!(called(&wire, w["tool"].as_str().expect("tool")), "{w}");
        assert!(w["corr_id"].is_string(), "{w}");
    }
    // The server never saw the original path (only the meta line, our own
    // command line, and our own restore events name it), and the copy is
    // gone.
    assert!(
        wire.lines()
            .skip(1)
            .filter(|l| !l.contains("\"kind\":\"fitness.restored\""))
            .all(|l| !l.contains(s(&root))),
        "the server was started over the original"
    );
    // This run's copy (named on its wire tape: the server was started
    // over it) is gone; other tests' copies may be live beside it.
    let copy_root = std::env::temp_dir().join("fitness-sandbox");
    let prefix = format!("{}/", copy_root.display());
    let ours: std::collections::BTreeSet<std::path::PathBuf> = wire
        .match_indices(&prefix)
        .filter_map(|(i, _)| {
            let id: String = wire[i + prefix.len()..]
                .chars()
                .take_while(char::is_ascii_alphanumeric)
                .collect();
            (!id.is_empty()).then(|| copy_root.join(id))
        })
        .collect();
    assert!(
        !ours.is_empty(),
        "the wire tape names the copy the server ran over"
    );
    let left: Vec<_> = ours.iter().filter(|p| p.join("work").exists()).collect();
    assert!(left.is_empty(), "copies left behind: {left:?}");
}

#[test]
fn a_read_only_run_leaves_a_git_repository_and_a_memory_file_as_they_were() {
    let git_server = require_tool("mcp-server-git");
    let memory_server = require_tool("mcp-server-memory");
    let data = tempfile::tempdir().expect("tempdir");
    let repo = canonical(&data);
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "dev@example.org"]);
    git(&repo, &["config", "user.name", "Grace Hopper"]);
    for (file, message) in [
        ("harbour.md", "Add the Dunmore tide tables"),
        ("ferry.md", "Publish the Oban ferry timetable"),
        ("charts.md", "Correct the Loch Fyne charts"),
    ] {
        std::fs::write(repo.join(file), format!("{message}.\n")).unwrap();
        git(&repo, &["add", file]);
        git(&repo, &["commit", "-q", "-m", message]);
    }
    std::fs::write(repo.join("draft.md"), "uncommitted work\n").unwrap();
    let before = git_state(&repo);
    let work = tempfile::tempdir().expect("tempdir");
    let (_dir, record, _) = run(
        "sim/diligent",
        work.path(),
        &["--generator", "schema-walk/2"],
        &[s(&git_server), "--repository", s(&repo)],
    );
    assert_eq!(
        git_state(&repo),
        before,
        "refs, index and working tree unchanged"
    );
    assert_eq!(record["access"]["writes_total"], 0);
    let writers = record["access"]["writers"].to_string();
    for tool in [
        "git_commit",
        "git_add",
        "git_checkout",
        "git_reset",
        "git_create_branch",
    ] {
        assert!(writers.contains(tool), "{tool} may write: {writers}");
    }
    for tool in ["git_log", "git_status", "git_show"] {
        assert!(
            !writers.contains(&format!("\"{tool}\"")),
            "{tool} only reads: {writers}"
        );
    }

    // server-memory over a file: read-only, then over a sandbox copy.
    let file = work.path().join("memory.json");
    std::fs::write(
        &file,
        concat!(
            r#"{"type":"entity","name":"Halvorsen","entityType":"engineer","observations":["maintains the Kestrel pumping station"]}"#,
            "\n",
            r#"{"type":"entity","name":"Okonkwo","entityType":"harbourmaster","observations":["keeps the Dunmore pontoon log"]}"#,
            "\n"
        ),
    )
    .unwrap();
    let before = std::fs::read(&file).unwrap();
    let env = format!("MEMORY_FILE_PATH={}", s(&file));
    let (_dir, record, _) = run(
        "sim/diligent",
        work.path(),
        &["--env", &env],
        &[s(&memory_server)],
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "read-only: the memory file is as it was"
    );
    assert_eq!(record["access"]["writes_total"], 0);
    let (_dir, record, _) = run(
        "sim/diligent",
        work.path(),
        &["--env", &env, "--sandbox", "--sandbox-copy", s(&file)],
        &[s(&memory_server)],
    );
    assert_eq!(
        std::fs::read(&file).unwrap(),
        before,
        "sandbox copy: the original is as it was"
    );
    assert!(
        record["access"]["writes_total"].as_u64() > Some(0),
        "{:#}",
        record["access"]
    );
}

/// The drive's trial corr_ids in the order the agent tape has them.
fn drive_order(dir: &Path) -> Vec<String> {
    let agent = std::fs::read_to_string(dir.join("agent.jsonl")).expect("agent tape");
    let mut order: Vec<String> = Vec::new();
    for l in agent.lines() {
        let v: Value = serde_json::from_str(l).unwrap_or(Value::Null);
        if let Some(c) = v["corr_id"].as_str()
            && v["type"] == "turn"
            && !c.contains("::")
            && order.last().map(String::as_str) != Some(c)
        {
            order.push(c.to_owned());
        }
    }
    order
}

#[test]
fn the_same_suite_in_other_trial_orders_gives_the_same_counts() {
    let memory_server = require_tool("mcp-server-memory");
    let work = tempfile::tempdir().expect("tempdir");
    let file = work.path().join("memory.json");
    std::fs::write(&file, MEMORY_GRAPH).unwrap();
    let env = format!("MEMORY_FILE_PATH={}", s(&file));
    let (first, record, _) = run(
        "sim/diligent",
        work.path(),
        &["--env", &env],
        &[s(&memory_server)],
    );
    assert_eq!(record["outcome"], "SCORED", "{:#}", record["gates"]);
    let suite = first.join("suite.json");
    let score = |r: &Value| {
        (
            r["score"]["first_try"]["k"].clone(),
            r["score"]["first_try"]["n"].clone(),
            r["score"]["eventual"]["k"].clone(),
            r["score"]["tasks"].clone(),
        )
    };
    let mut orders = vec![drive_order(&first)];
    for seed in ["8", "9"] {
        let output = run_bounded(
            &[
                "run",
                "--runner",
                "sim/diligent",
                "--out",
                s(work.path()),
                "--json",
                "--env",
                &env,
                "--suite",
                s(&suite),
                "--seed",
                seed,
                "--",
                s(&memory_server),
            ],
            LIMIT,
        );
        let (dir, again) = run_result(&output);
        assert_eq!(again["run"]["suite_hash"], record["run"]["suite_hash"]);
        assert_eq!(
            again["outcome"], "SCORED",
            "seed {seed}: {:#}",
            again["gates"]
        );
        assert_eq!(score(&again), score(&record), "seed {seed}");
        orders.push(drive_order(&dir));
    }
    assert!(
        orders[0] != orders[1] && orders[1] != orders[2],
        "the trials ran in other orders: {orders:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), MEMORY_GRAPH);

    // A suite whose generation wrote (a sandbox's) read its keys from the
    // state that generation left: another run may not drive it.
    let sandboxed = [
        "--env",
        env.as_str(),
        "--sandbox",
        "--sandbox-copy",
        s(&file),
    ];
    let (dir, record, _) = run(
        "sim/diligent",
        work.path(),
        &sandboxed,
        &[s(&memory_server)],
    );
    assert!(record["access"]["writes_total"].as_u64() > Some(0));
    let mut again = vec![
        "run",
        "--runner",
        "sim/diligent",
        "--out",
        s(work.path()),
        "--json",
    ];
    again.extend(sandboxed);
    let suite = dir.join("suite.json");
    again.extend(["--suite", s(&suite), "--", s(&memory_server)]);
    let out = run_bounded(&again, LIMIT);
    assert!(!out.status.success());
    assert!(text(&out).contains("generation wrote"), "{}", text(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), MEMORY_GRAPH);
}

const MEMORY_GRAPH: &str = concat!(
    r#"{"type":"entity","name":"Halvorsen","entityType":"engineer","observations":["maintains the Kestrel pumping station"]}"#,
    "\n",
    r#"{"type":"entity","name":"Okonkwo","entityType":"harbourmaster","observations":["keeps the Dunmore pontoon log"]}"#,
    "\n",
    r#"{"type":"entity","name":"Vasquez","entityType":"treasurer","observations":["audits the Orvieto plant ledger"]}"#,
    "\n",
    r#"{"type":"entity","name":"Macphail","entityType":"pilot","observations":["boards tankers beyond the Cumbrae buoy"]}"#,
    "\n",
    r#"{"type":"entity","name":"Quill","entityType":"founder","observations":["drafted the Brisbane launch charter"]}"#,
    "\n",
    r#"{"type":"relation","from":"Macphail","to":"Okonkwo","relationType":"reports_to"}"#,
    "\n"
);

/// `fitness suite` over `server`, its printed listing and written report.
fn suite(out: &Path, extra: &[&str], server: &[&str]) -> (String, Value) {
    let file = out.join("suite.json");
    let mut args = vec![
        "suite",
        "--generator",
        "schema-walk/2",
        "--tasks",
        "10",
        "--out",
        s(&file),
    ];
    args.extend(extra);
    args.push("--");
    args.extend(server);
    let output = run_bounded(&args, LIMIT);
    assert!(output.status.success(), "{}", text(&output));
    let report: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("suite file")).expect("json");
    (text(&output), report)
}

/// The act tasks of a suite report: (tool changed, tool reading the state).
fn act_tasks(report: &Value) -> Vec<(String, String)> {
    report["suite"]["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .filter(|t| t["kind"] == "act")
        .map(|t| {
            (
                t["solution"][0]["tool"].as_str().expect("tool").to_owned(),
                t["state_check"]["reads"][0]["tool"]
                    .as_str()
                    .expect("a state check read")
                    .to_owned(),
            )
        })
        .collect()
}

#[test]
fn changes_are_asked_in_a_sandbox_and_checked_by_the_state_they_leave() {
    let work = tempfile::tempdir().expect("tempdir");
    // A folder of files: read-only asks no change; a sandbox copy does.
    let fs_server = require_tool("mcp-server-filesystem");
    let data = tempfile::tempdir().expect("tempdir");
    let root = canonical(&data);
    three_files(&root);
    let before = tree(&root);
    let (_, report) = suite(work.path(), &[], &[s(&fs_server), s(&root)]);
    assert!(act_tasks(&report).is_empty(), "read-only: no change");
    assert!(
        report["ledger"]["act"]["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("write-excluded")),
        "{:#}",
        report["ledger"]["act"]
    );
    let (printed, report) = suite(
        work.path(),
        &["--sandbox", "--sandbox-copy", s(&root)],
        &[s(&fs_server), s(&root)],
    );
    let acts = act_tasks(&report);
    assert!(
        acts.iter()
            .any(|(w, r)| w == "write_file" && r == "read_file"),
        "{acts:?}\n{printed}"
    );
    assert!(printed.contains("Act tasks:"), "{printed}");
    assert!(
        printed.contains("after the trial, what read_file"),
        "{printed}"
    );
    assert_eq!(tree(&root), before, "the folder is untouched");

    // A git repository: a branch made, seen by listing the branches.
    let git_server = require_tool("mcp-server-git");
    let data = tempfile::tempdir().expect("tempdir");
    let repo = canonical(&data);
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["config", "user.email", "dev@example.org"]);
    git(&repo, &["config", "user.name", "Grace Hopper"]);
    std::fs::write(repo.join("harbour.md"), "The Dunmore tide tables.\n").unwrap();
    git(&repo, &["add", "harbour.md"]);
    git(
        &repo,
        &["commit", "-q", "-m", "Add the Dunmore tide tables"],
    );
    let before = git_state(&repo);
    let (_, report) = suite(
        work.path(),
        &["--sandbox", "--sandbox-copy", s(&repo)],
        &[s(&git_server), "--repository", s(&repo)],
    );
    let acts = act_tasks(&report);
    assert!(
        acts.iter()
            .any(|(w, r)| w == "git_create_branch" && r == "git_branch"),
        "{acts:?}"
    );
    assert_eq!(git_state(&repo), before, "the repository is untouched");

    // An SQLite database: a table made, seen in the table list.
    let sqlite_server = require_tool("mcp-server-sqlite");
    let db = work.path().join("shop.db");
    common::sqlite_db(
        &db,
        "c.execute('create table books(title text, author text)')\nc.execute(\"insert into books values('Kindred','Octavia Butler')\")",
    );
    let before = std::fs::read(&db).unwrap();
    let (_, report) = suite(
        work.path(),
        &["--sandbox", "--sandbox-copy", s(&db)],
        &[s(&sqlite_server), "--db-path", s(&db)],
    );
    let acts = act_tasks(&report);
    assert!(
        acts.iter()
            .any(|(w, r)| w == "create_table" && r == "list_tables"),
        "{acts:?}"
    );
    assert_eq!(
        std::fs::read(&db).unwrap(),
        before,
        "the database is untouched"
    );

    // A memory graph, driven: every trial of a change starts from the
    // restored copy (its hash on the wire tape), the harness reads the
    // state after it on the wire tape alone, the reference agent that
    // makes the change passes, and the null arms that cannot do not.
    let memory_server = require_tool("mcp-server-memory");
    let file = work.path().join("memory.json");
    std::fs::write(&file, MEMORY_GRAPH).unwrap();
    let env = format!("MEMORY_FILE_PATH={}", s(&file));
    let (dir, record, _) = run(
        "sim/diligent",
        work.path(),
        &["--env", &env, "--sandbox", "--sandbox-copy", s(&file)],
        &[s(&memory_server)],
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), MEMORY_GRAPH);
    let act = &record["suite"]["act"];
    assert_eq!(act["restore"], "copy", "{act:#}");
    assert!(act["tasks"].as_u64() > Some(0), "{act:#}");
    let suite_file: Value =
        serde_json::from_slice(&std::fs::read(dir.join("suite.json")).unwrap()).unwrap();
    let ids: Vec<String> = suite_file["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == "act")
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect();
    assert!(!ids.is_empty());
    let wire = std::fs::read_to_string(dir.join("mcp.jsonl")).expect("wire tape");
    let agent = std::fs::read_to_string(dir.join("agent.jsonl")).expect("agent tape");
    let lines = |tape: &str| -> Vec<Value> {
        tape.lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    };
    let wire = lines(&wire);
    let agent = lines(&agent);
    let mut hashes = std::collections::BTreeSet::new();
    for id in &ids {
        let trials: std::collections::BTreeSet<&str> = agent
            .iter()
            .filter(|l| l["kind"] == "fitness.task_end" && l["raw"]["taskId"] == id.as_str())
            .filter_map(|l| l["corr_id"].as_str())
            .collect();
        assert!(trials.len() >= 3, "{id}: {trials:?}");
        for corr in &trials {
            let restored: Vec<&Value> = wire
                .iter()
                .filter(|l| l["kind"] == "fitness.restored" && l["corr_id"] == *corr)
                .collect();
            assert!(!restored.is_empty(), "{corr} started from a restored copy");
            hashes.extend(
                restored
                    .iter()
                    .map(|l| l["raw"]["state_sha256"].to_string()),
            );
        }
        let state = format!("{id}::state");
        assert!(
            wire.iter()
                .any(|l| l["corr_id"] == state.as_str() && l["dir"] == "in"),
            "{id}: the state check's reads are on the wire tape"
        );
        assert!(
            agent.iter().all(|l| l["corr_id"] != state.as_str()),
            "{id}: and never on the agent's"
        );
        let passed = |arm: &str| {
            agent.iter().any(|l| {
                l["kind"] == "fitness.task_end"
                    && l["corr_id"] == format!("{id}{arm}").as_str()
                    && l["raw"]["success"] == true
            })
        };
        assert!(
            passed("::construct"),
            "{id}: the reference agent made the change"
        );
        for arm in ["::null-no-tools", "::null-stubbed-empty"] {
            assert!(!passed(arm), "{id}{arm} cannot make a change");
        }
    }
    assert_eq!(
        hashes.len(),
        1,
        "every trial started from the same state: {hashes:?}"
    );

    // More changes admitted than half a small suite holds: the rest are
    // trimmed as surplus, and every candidate still has one fate (a run
    // whose fates do not add up is refused as VOID).
    let small = work.path().join("small.json");
    let out = run_bounded(
        &[
            "suite",
            "--generator",
            "schema-walk/2",
            "--tasks",
            "2",
            "--out",
            s(&small),
            "--env",
            &env,
            "--sandbox",
            "--sandbox-copy",
            s(&file),
            "--",
            s(&memory_server),
        ],
        LIMIT,
    );
    assert!(out.status.success(), "{}", text(&out));
    let report: Value = serde_json::from_slice(&std::fs::read(&small).unwrap()).unwrap();
    let ledger = &report["ledger"];
    assert!(ledger["act"]["admitted"].as_u64() > Some(1), "{ledger:#}");
    assert_eq!(ledger["act"]["tasks"], 1, "{ledger:#}");
    let rejected: u64 = ledger["rejected_by_rule"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["count"].as_u64())
        .sum();
    assert_eq!(
        ledger["candidates"].as_u64(),
        Some(
            rejected
                + ledger["trimmed_surplus"].as_u64().unwrap_or(0)
                + ledger["tasks"].as_u64().unwrap_or(0)
        ),
        "{ledger:#}"
    );
    assert!(
        ledger["act"]["notes"]
            .to_string()
            .contains("trimmed as surplus"),
        "{ledger:#}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), MEMORY_GRAPH);
}

/// A tool can read by every word and still write: the read-that-writes
/// fixture declares `list_insights` read-only and writes `insights.db` in
/// the folder on its command line on the first call, as a database server
/// creates its file. A walk that only reads cannot stop that, and says it:
/// the walk's line names the tool and the file, and the recorder's own
/// tapes in the working folder are not taken for the server's writes.
#[test]
fn a_reading_tool_that_writes_a_file_is_named_with_the_file() {
    let work = tempfile::tempdir().expect("temp dir");
    let data = tempfile::tempdir().expect("temp dir");
    std::fs::write(data.path().join("orders.csv"), "id,item\n1,Parcel\n").expect("data");
    let out = work.path().join("suite.json");
    let tapes = work.path().join("tapes");
    let output = common::run_bounded_in(
        Some(work.path()),
        &[],
        &[
            "suite",
            "--generator",
            "schema-walk/2",
            "--tasks",
            "6",
            "--out",
            s(&out),
            "--tape",
            s(&tapes),
            "--",
            common::FITNESS,
            "fixture-server",
            "read-that-writes",
            "--data",
            s(data.path()),
        ],
        LIMIT,
    );
    let printed = text(&output);
    assert!(output.status.success(), "{printed}");
    assert!(
        data.path().join("insights.db").is_file(),
        "the fixture wrote its file"
    );
    let line = printed
        .lines()
        .find(|l| l.contains("the server's state changed in a walk that only reads"))
        .unwrap_or_else(|| panic!("the walk says the state changed: {printed}"));
    assert!(line.contains("`list_insights`"), "{line}");
    let written = data.path().join("insights.db");
    assert!(
        line.contains(&format!("files written: `{}`", s(&written))),
        "the file is named, and nothing else: {line}"
    );
    assert!(
        !line.contains("mcp.jsonl"),
        "the recorder's own tape: {line}"
    );
}
