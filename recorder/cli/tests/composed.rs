//! Questions a person would set, composed over what real database servers
//! hold (installed by scripts/setup, each over data the test makes): a
//! count, a total, the largest, a link followed across two tables, a set,
//! each answer computed from every row the harness read and agreeing with
//! the reference query run through the server. Each answer is checked
//! here again by the database's own library, apart from the server and
//! from the composer. A question with two right answers and one whose
//! answer changes when the server starts again are refused by name; the
//! original data is left as it was. And a one-tool server's run is not
//! refused for its surface, with `fitness suite` and `fitness run` at the
//! same sizes generating the same suite (issue 61).

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::servers::{
    Postgres, duckdb_db, duckdb_query, installed, sha256, suite, suite_with_env,
};
use common::{s, text};
use fitness_recorder::suite::task::Task;
use fitness_recorder::suite::{GenerateOptions, GenerationReport, GeneratorId};
use fitness_shared::record::TaskShape;
use serde_json::Value;

/// A library: authors, books that name their author, members, loans.
const LIBRARY: &str = "\
c.execute(\"CREATE TABLE authors(id INTEGER, name VARCHAR, country VARCHAR)\")
c.execute(\"INSERT INTO authors VALUES (1, 'Octavia Butler', 'USA'), (2, 'Toni Morrison', 'USA'), (3, 'Stanislaw Lem', 'Poland'), (4, 'Mary Shelley', 'UK')\")
c.execute(\"CREATE TABLE books(id INTEGER, title VARCHAR, author_id INTEGER, shelf VARCHAR, pages INTEGER, published DATE)\")
c.execute(\"INSERT INTO books VALUES (1, 'Kindred', 1, 'B', 264, '1979-06-01'), (2, 'Dawn', 1, 'B', 248, '1987-05-01'), (3, 'Beloved', 2, 'M', 324, '1987-09-02'), (4, 'Sula', 2, 'M', 174, '1973-11-01'), (5, 'Solaris', 3, 'L', 204, '1961-01-01'), (6, 'The Cyberiad', 3, 'L', 295, '1965-01-01'), (7, 'Fiasco', 3, 'L', 322, '1986-01-01'), (8, 'Frankenstein', 4, 'S', 280, '1818-01-01'), (9, 'The Last Man', 4, 'S', 479, '1826-01-01'), (10, 'Parable of the Sower', 1, 'B', 345, '1993-10-01')\")
c.execute(\"CREATE TABLE members(id INTEGER, name VARCHAR, town VARCHAR)\")
c.execute(\"INSERT INTO members VALUES (1, 'Maren Holt', 'Tromso'), (2, 'Idris Vale', 'Cardiff'), (3, 'Ana Lucia Reyes', 'Tromso'), (4, 'Tobias Brandt', 'Leipzig')\")
c.execute(\"CREATE TABLE loans(id INTEGER, book_id INTEGER, member_id INTEGER, due DATE)\")
c.execute(\"INSERT INTO loans VALUES (1, 1, 1, '2026-12-19'), (2, 3, 2, '2027-01-08'), (3, 5, 1, '2026-12-30'), (4, 9, 3, '2027-01-15'), (5, 1, 4, '2027-02-01')\")
";

fn composed(report: &GenerationReport) -> Vec<&Task> {
    report
        .suite
        .tasks
        .iter()
        .filter(|t| {
            t.rationale
                .as_deref()
                .is_some_and(|r| r.starts_with("composed"))
        })
        .collect()
}

fn shapes(tasks: &[&Task]) -> Vec<TaskShape> {
    tasks.iter().filter_map(|t| t.shape).collect()
}

/// The statement a composed task's one call gives its query tool.
fn statement(t: &Task) -> String {
    assert_eq!(t.solution.len(), 1, "one query computes it: {t:#?}");
    t.solution[0]
        .arguments
        .values()
        .find_map(Value::as_str)
        .filter(|q| q.starts_with("SELECT"))
        .unwrap_or_else(|| panic!("a statement: {t:#?}"))
        .to_owned()
}

/// Does a database's own answer (rows one a line, values joined by `|`)
/// give `t`'s answer key? Numbers as numbers at the key's precision, a set
/// in any order.
fn gives(t: &Task, rows: &str) -> bool {
    let key = t.answer_key.trim();
    let lines: Vec<&str> = rows.lines().map(str::trim).collect();
    if let (Ok(k), [one]) = (key.parse::<f64>(), lines.as_slice())
        && let Ok(v) = one.parse::<f64>()
    {
        let decimals = key.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        return (k - v).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-9;
    }
    if t.shape == Some(TaskShape::Set) {
        let mut want: Vec<&str> = key.split(", ").collect();
        let mut got = lines.clone();
        want.sort_unstable();
        got.sort_unstable();
        return want == got;
    }
    lines.as_slice() == [key]
        || lines
            .first()
            .is_some_and(|l| l.starts_with(key) && lines.len() == 1)
}

/// What every composed suite must be: its prompts a person's words, its
/// answers those its own database gives, its shapes a mix.
fn holds(report: &GenerationReport, database: impl Fn(&str) -> String) {
    let tasks = composed(report);
    assert!(
        tasks.len() >= 8,
        "composed questions: {:#?}",
        report.suite.tasks
    );
    for t in &tasks {
        assert!(
            !t.prompt.contains("exactly as the server gives it")
                && !t.prompt.contains('_')
                && !t.prompt.to_lowercase().contains("the server"),
            "a person's words: {}",
            t.prompt
        );
        let sql = statement(t);
        let rows = database(&sql);
        assert!(
            gives(t, &rows),
            "{}: the key {:?}, the database {rows:?} ({sql})",
            t.prompt,
            t.answer_key
        );
        assert!(t.check.check(&t.answer_key), "the check takes the key");
    }
    let shapes = shapes(&tasks);
    for shape in [
        TaskShape::Aggregate,
        TaskShape::Comparison,
        TaskShape::MultiStep,
    ] {
        assert!(shapes.contains(&shape), "{shape:?} in {shapes:?}");
    }
    assert!(
        tasks
            .iter()
            .any(|t| t.prompt.starts_with("How many") && t.shape == Some(TaskShape::Aggregate)),
        "a count"
    );
    assert!(
        tasks
            .iter()
            .any(|t| t.shape == Some(TaskShape::MultiStep) && statement(t).contains(" JOIN ")),
        "a two-table answer"
    );
    let compose = report
        .ledger
        .discovery
        .as_ref()
        .and_then(|d| d.moves.iter().find(|m| m.name == "compose"))
        .expect("the ledger says what was composed");
    assert!(
        compose.found.contains(&format!("{} agreed", tasks.len()))
            || compose
                .found
                .split(' ')
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .is_some_and(|n| n >= tasks.len()),
        "every admitted question agreed with its reference query: {compose:?}"
    );
    assert!(
        compose.found.contains("fresh server process and unchanged")
            && !compose.found.contains("(none:"),
        "read again from a fresh process: {compose:?}"
    );
}

fn temp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("fitness-composed-")
        .tempdir()
        .expect("temp dir")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duckdb_library_gets_counts_ranks_links_and_sets_its_own_queries_agree_with() {
    let dir = temp();
    let db = dir.path().join("library.duckdb");
    duckdb_db(&db, LIBRARY);
    let before = sha256(&db);
    let server = installed("venv-duckdb/bin/mcp-server-duckdb");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(
        &server,
        &["--db-path", s(&db), "--readonly"],
        opts,
        None,
        dir.path(),
    )
    .await;
    assert_eq!(sha256(&db), before, "the database is as it was");
    holds(&report, |sql| duckdb_query(&db, sql));
    // The one book with the most pages, and the count of the shelf with
    // the most books, as the data says.
    let tasks = composed(&report);
    if let Some(t) = tasks
        .iter()
        .find(|t| t.prompt == "Which book has the highest pages?")
    {
        assert_eq!(t.answer_key, "The Last Man");
    }
    // The model is in the suite's config, and so its hash.
    let model = &report.suite.config["holdings"];
    assert!(
        model
            .as_array()
            .is_some_and(|k| k.iter().any(|k| k["kind"] == "books" && k["records"] == 10)),
        "{model}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_library_gets_questions_its_own_queries_agree_with() {
    let dir = temp();
    let pg = Postgres::start(dir.path());
    pg.sql("postgres", "CREATE DATABASE shelf");
    // The same library, in PostgreSQL's words.
    for line in LIBRARY.lines() {
        let sql = line
            .trim_start_matches("c.execute(\"")
            .trim_end_matches("\")")
            .replace("VARCHAR", "text");
        pg.sql("shelf", &sql);
    }
    let before = pg.query(
        "shelf",
        "SELECT md5(string_agg(t::text, ',')) FROM (SELECT * FROM books ORDER BY id) t",
    );
    let server = installed("discovery/node_modules/.bin/mcp-server-postgres");
    let url = format!("postgresql://postgres@127.0.0.1:{}/shelf", pg.port());
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(&server, &[&url], opts, None, dir.path()).await;
    holds(&report, |sql| pg.query("shelf", sql));
    assert_eq!(
        pg.query(
            "shelf",
            "SELECT md5(string_agg(t::text, ',')) FROM (SELECT * FROM books ORDER BY id) t"
        ),
        before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tie_and_an_answer_that_changes_on_restart_are_refused_by_name() {
    let dir = temp();
    let db = dir.path().join("scores.duckdb");
    // Two players share the top score: "who scored highest" has two
    // right answers. A wrapper adds a row each time the server starts, so
    // every count read again in a fresh process has changed.
    duckdb_db(
        &db,
        "c.execute(\"CREATE TABLE players(id INTEGER, name VARCHAR, team VARCHAR, score INTEGER)\")\n\
         c.execute(\"INSERT INTO players VALUES (1, 'Ines Alvarado', 'North', 41), (2, 'Kofi Mensah', 'North', 41), (3, 'Lena Sauer', 'South', 17), (4, 'Ravi Kumar', 'South', 23), (5, 'Yuki Mori', 'East', 30), (6, 'Noor Haddad', 'East', 12)\")",
    );
    let python = installed("venv-duckdb/bin/python");
    let server = installed("venv-duckdb/bin/mcp-server-duckdb");
    // Each start serves a copy of the scores with one more guest on the
    // North team than the start before, and the other teams numbered by the
    // start (`South 1`, then `South 2`).
    let wrapper = dir.path().join("grows.sh");
    let d = s(dir.path());
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nn=$(cat {d}/starts 2>/dev/null || echo 0); n=$((n+1)); echo $n > {d}/starts\n\
             cp {db} {d}/run$n.duckdb\n\
             {py} -c \"import duckdb, sys; c = duckdb.connect(sys.argv[1]); [c.execute(\\\"INSERT INTO players VALUES (?, 'Guest', 'North', 5)\\\", [100 + i]) for i in range(int(sys.argv[2]))]; c.execute(\\\"UPDATE players SET team = team || ' ' || ? WHERE id BETWEEN 3 AND 6\\\", [sys.argv[2]]); c.close()\" {d}/run$n.duckdb $n\n\
             exec {server} --db-path {d}/run$n.duckdb --readonly\n",
            db = s(&db),
            py = s(&python),
            server = s(&server),
        ),
    )
    .expect("the wrapper");
    std::process::Command::new("chmod")
        .args(["+x", s(&wrapper)])
        .status()
        .expect("chmod");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(&wrapper, &[], opts, None, dir.path()).await;
    let rule = |name: &str| {
        report
            .rejections
            .iter()
            .filter(|r| r.rule == name)
            .collect::<Vec<_>>()
    };
    assert!(
        rule("two-right-answers")
            .iter()
            .any(|r| r.detail.contains("share the highest score")),
        "{:#?}",
        report.rejections
    );
    assert!(
        rule("answer-changed").iter().any(|r| r
            .prompt
            .as_deref()
            .is_some_and(|p| p.starts_with("How many"))),
        "{:#?}",
        report.rejections
    );
    assert!(
        report
            .ledger
            .rejected_by_rule
            .iter()
            .any(|r| r.rule == "answer-changed"),
        "the ledger counts it"
    );
    // The walk's own lookups are read again there too: a southern or
    // eastern player's team is not what it was.
    assert!(
        rule("answer-changed").iter().any(|r| r
            .detail
            .starts_with("read again in a fresh server process, `query`")),
        "{:#?}",
        report.ledger.discovery
    );
    assert!(
        report.suite.tasks.iter().all(|t| !["South", "East"]
            .iter()
            .any(|team| t.answer_key.starts_with(team))),
        "{:#?}",
        report.suite.tasks
    );
}

/// `fitness` with `args`, within `limit`.
fn fitness_within(args: &[&str], limit: Duration) -> std::process::Output {
    common::run_bounded(args, limit)
}

fn library(dir: &Path) -> PathBuf {
    let db = dir.join("library.duckdb");
    duckdb_db(&db, LIBRARY);
    db
}

#[test]
fn a_one_tool_database_run_is_not_refused_for_its_surface_and_suite_and_run_agree() {
    let dir = temp();
    let db = library(dir.path());
    let before = sha256(&db);
    let server = installed("venv-duckdb/bin/mcp-server-duckdb");
    let command = [s(&server), "--db-path", s(&db), "--readonly"];
    let suite_file = dir.path().join("suite.json");
    let mut args = vec![
        "suite",
        "--generator",
        "schema-walk/2",
        "--runner",
        "sim/diligent",
        "--seed",
        "7",
        "--out",
        s(&suite_file),
        "--",
    ];
    args.extend(command);
    let out = fitness_within(&args, Duration::from_secs(300));
    assert!(out.status.success(), "{}", text(&out));
    let suite: Value =
        serde_json::from_str(&std::fs::read_to_string(&suite_file).expect("the suite"))
            .expect("json");
    let runs = dir.path().join("runs");
    let args = common::run_args(
        "sim/diligent",
        &runs,
        &["--generator", "schema-walk/2"],
        &command,
    );
    let (run_dir, record) = common::run_result(&fitness_within(&args, Duration::from_secs(900)));
    assert_eq!(sha256(&db), before, "the database is as it was");
    let structural = record["gates"]["records"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["id"] == "structural"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        structural["ok"], true,
        "not refused for its surface: {structural}"
    );
    assert_ne!(
        record["outcome"],
        "INSUFFICIENT_SURFACE",
        "{}",
        run_dir.display()
    );
    assert_eq!(
        suite["suite"]["hash"], record["run"]["suite_hash"],
        "one registration and seed, one suite"
    );
    assert_eq!(record["suite"]["tasks"], 12);

    // The record page says what the suite asks, shape by shape, and where
    // the run was scored, first-try success per shape from the record.
    let site = dir.path().join("site");
    common::publish_runs(dir.path(), &runs, &site);
    let id = run_dir.file_name().expect("run id").to_string_lossy();
    let page = common::page_text(
        &std::fs::read_to_string(site.join("runs").join(&*id).join("index.html"))
            .expect("the record page"),
    );
    let mix = record["suite"]["quality"]["per_shape"]
        .as_array()
        .expect("the suite's shapes");
    assert!(!mix.is_empty());
    let at = page
        .find("What the suite asks: shapes: ")
        .unwrap_or_else(|| panic!("the mix on the page: {page}"));
    let line = &page[at..];
    let line = &line[..line.find("worded from a template").expect("the mix's end")];
    for k in mix {
        let shown = format!("{} {}", k["kind"].as_str().expect("kind"), k["count"]);
        assert!(line.contains(&shown), "{shown} in {line}");
    }
    // The mix schema-walk/2 aims at is registered before the run, and the
    // page reads the suite against it.
    assert_eq!(
        record["preregistration"]["aimed_mix"]["computed_at_least"], 0.3,
        "{}",
        record["preregistration"]
    );
    assert!(
        page.contains("Registered mix: aimed at at least 50% two calls"),
        "{page}"
    );
    if let Some(per_shape) = record["score"]["per_shape"].as_array() {
        assert!(page.contains("Per shape"), "{page}");
        for sh in per_shape {
            let shape = TaskShape::parse(sh["shape"].as_str().expect("shape")).expect("a shape");
            let i = &sh["first_try"];
            let row = format!("{} {} {} of {}", shape.words(), sh["tasks"], i["k"], i["n"]);
            assert!(page.contains(&row), "{row} in {page}");
        }
    }
}

/// A team's notes: people, projects that name their lead by a link, and
/// meetings that link their project, each note's fields in its front
/// matter.
const NOTES: &[(&str, &str)] = &[
    (
        "people/Ana Costa.md",
        "---\nrole: engineer\ncity: Porto\n---\n# Ana Costa\n\nLeads structural reviews.\n",
    ),
    (
        "people/Bilal Khan.md",
        "---\nrole: surveyor\ncity: Leeds\n---\n# Bilal Khan\n\nField surveys.\n",
    ),
    (
        "people/Chen Wu.md",
        "---\nrole: planner\ncity: Porto\n---\n# Chen Wu\n\nTraffic planning.\n",
    ),
    (
        "projects/Harbour Wall.md",
        "---\nstatus: active\nlead: \"[[Ana Costa]]\"\nbudget: 420000\n---\n# Harbour Wall\n",
    ),
    (
        "projects/Ring Road.md",
        "---\nstatus: planning\nlead: \"[[Chen Wu]]\"\nbudget: 1250000\n---\n# Ring Road\n",
    ),
    (
        "projects/Old Bridge.md",
        "---\nstatus: done\nlead: \"[[Bilal Khan]]\"\nbudget: 310000\n---\n# Old Bridge\n",
    ),
    (
        "meetings/2026-03-02 kickoff.md",
        "---\nproject: \"[[Harbour Wall]]\"\nattendees: 5\n---\n# Kickoff\n",
    ),
    (
        "meetings/2026-04-11 review.md",
        "---\nproject: \"[[Ring Road]]\"\nattendees: 8\n---\n# Review\n",
    ),
    (
        "meetings/2026-06-08 site visit.md",
        "---\nproject: \"[[Harbour Wall]]\"\nattendees: 4\n---\n# Site visit\n",
    ),
];

/// The value of `field` in the front matter of the note `name` (its file
/// name less `.md`), as this test wrote it.
fn note_field(name: &str, field: &str) -> Option<String> {
    let (_, body) = NOTES
        .iter()
        .find(|(p, _)| p.rsplit('/').next() == Some(&format!("{name}.md")))?;
    body.lines().find_map(|l| {
        let v = l.strip_prefix(&format!("{field}: "))?;
        Some(
            v.trim_matches('"')
                .trim_start_matches("[[")
                .trim_end_matches("]]")
                .to_owned(),
        )
    })
}

/// A suite over the team's notes through `server` (given the vault's
/// path): each folder a kind read whole, a link followed from one note to
/// another and checked against the notes, and a question over several
/// notes; the notes are as they were after.
async fn notes_hold(server: &Path) {
    let dir = common::servers::lower_case_temp("fitness-composed-notes");
    let vault = dir.path().join("vault");
    for (path, body) in NOTES {
        let p = vault.join(path);
        std::fs::create_dir_all(p.parent().expect("a folder")).expect("mkdir");
        std::fs::write(p, body).expect("write");
    }
    let hash = |root: &Path| {
        NOTES
            .iter()
            .map(|(p, _)| sha256(&root.join(p)))
            .collect::<Vec<_>>()
    };
    let before = hash(&vault);
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(server, &[s(&vault)], opts, None, dir.path()).await;
    assert_eq!(hash(&vault), before, "the notes are as they were");
    let tasks = composed(&report);
    // Each folder is a kind of record, read whole note by note.
    let model = &report.suite.config["holdings"];
    for (kind, n) in [("people", 3), ("projects", 3), ("meetings", 3)] {
        assert!(
            model
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k["kind"] == kind && k["records"] == n)),
            "{kind}: {n} notes in {model}"
        );
    }
    // A link followed: a note found by its name, the note its link names
    // read, the answer that note's field, as the notes say.
    let followed: Vec<&&Task> = tasks
        .iter()
        .filter(|t| t.shape == Some(TaskShape::MultiStep) && t.solution.len() >= 2)
        .collect();
    assert!(
        !followed.is_empty(),
        "a link followed over two calls or more: {:#?}",
        report.suite.tasks
    );
    let mut checked = 0;
    for t in &followed {
        // "What is the role of the lead of the project "Harbour Wall"?"
        let Some((asked, rest)) = t
            .prompt
            .strip_prefix("What is the ")
            .and_then(|p| p.split_once(" of the "))
        else {
            continue;
        };
        let Some((via, rest)) = rest.split_once(" of the ") else {
            continue;
        };
        let Some(name) = rest.split('"').nth(1) else {
            continue;
        };
        let name = name
            .rsplit('/')
            .next()
            .unwrap_or(name)
            .trim_end_matches(".md");
        let target = note_field(name, via).unwrap_or_else(|| panic!("{name} has a {via}"));
        assert_eq!(
            Some(t.answer_key.clone()),
            note_field(&target, asked),
            "{}: the {asked} of {target}, the {via} of {name}",
            t.prompt
        );
        checked += 1;
    }
    assert!(
        checked >= 1,
        "a followed link checked against the notes: {followed:#?}"
    );
    // And a question over several notes: a count, a total, a rank or a set.
    assert!(
        shapes(&tasks).iter().any(|s| matches!(
            s,
            TaskShape::Aggregate | TaskShape::Comparison | TaskShape::Set
        )),
        "{:#?}",
        report.suite.tasks
    );
}

/// A notes server that lists a vault's notes by a search that matches
/// every name (`.`) and reads them in a list of one (mcp-obsidian).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notes_vault_gets_a_link_followed_from_one_note_to_another_and_counts_over_a_folder() {
    notes_hold(&installed("discovery/node_modules/.bin/mcp-obsidian")).await;
}

/// A file server that lists each folder's files by bare name (`[FILE] Ana
/// Costa.md`) and reads one by its folder's path joined to the name, and
/// describes the folders themselves too (their size and dates): the tool
/// that reads what the files hold is the one their records come from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_vault_through_a_file_server_is_read_folder_by_folder() {
    notes_hold(&installed("node_modules/.bin/mcp-server-filesystem")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_count_the_server_states_otherwise_is_refused_as_two_right_answers() {
    let dir = temp();
    // One todo of five is done: the listing leaves it out, the statistics
    // count it. "How many todos are there?" has two right answers.
    let todo = dir.path().join("todo.txt");
    std::fs::write(
        &todo,
        "(A) 2026-11-30 Replace hinge on greenhouse door +Greenhouse @shed\n\
         (B) 2026-12-01 Order seed catalogue +Planning @computer\n\
         2026-12-02 Call Marta about the compost delivery +Compost @phone\n\
         x 2026-12-04 2026-11-28 Clean gutters on the barn +Barn @outside\n\
         (C) 2026-12-05 Draft spring rota for volunteers +Planning @computer\n",
    )
    .expect("the todo file");
    let before = sha256(&todo);
    let server = installed("venv-todotxt/bin/todo-txt-mcp");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(&server, &[s(&todo)], opts, None, dir.path()).await;
    assert_eq!(sha256(&todo), before, "the todo file is as it was");
    assert!(
        report
            .rejections
            .iter()
            .any(|r| r.rule == "two-right-answers"
                && r.prompt.as_deref() == Some("How many todos are there?")
                && r.detail
                    .contains("`total_todos` 5, where 4 todos were read")),
        "{:#?}",
        report.rejections
    );
    // Nothing over all the todos is asked; a question about one named
    // todo still is.
    for t in &report.suite.tasks {
        assert!(
            !t.prompt.starts_with("How many todos") && !t.prompt.starts_with("Which todo has the"),
            "{}",
            t.prompt
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graphs_relations_are_followed_and_who_is_linked_to_a_record_is_asked() {
    let dir = temp();
    // A knowledge graph: people who work at two firms and manage projects.
    let graph = dir.path().join("graph.jsonl");
    common::servers::memory_graph(
        &graph,
        &[
            (
                "Harbour Glass",
                "company",
                &["Glazing contractor", "Founded 1998", "42 staff"],
            ),
            ("Kiln Works", "firm", &["Brick supplier"]),
            (
                "Marta Silva",
                "person",
                &["Project manager", "Speaks Portuguese"],
            ),
            ("Tomas Berg", "person", &["Site engineer"]),
            ("Ines Okafor", "person", &["Accountant", "Part time"]),
            (
                "Northgate Library",
                "project",
                &["Due March 2027", "Budget 1.2m"],
            ),
            ("Leith Studio", "project", &["Budget 85k"]),
        ],
        &[
            ("Marta Silva", "Harbour Glass", "works_at"),
            ("Tomas Berg", "Harbour Glass", "works_at"),
            ("Ines Okafor", "Kiln Works", "works_at"),
            ("Marta Silva", "Northgate Library", "manages"),
            ("Tomas Berg", "Leith Studio", "manages"),
            ("Harbour Glass", "Northgate Library", "supplies"),
        ],
    );
    let before = sha256(&graph);
    let server = common::require_tool("mcp-server-memory");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite_with_env(
        &server,
        &[],
        &[("MEMORY_FILE_PATH", s(&graph))],
        opts,
        None,
        dir.path(),
    )
    .await;
    assert_eq!(sha256(&graph), before, "the graph is as it was");
    let tasks = composed(&report);
    let prompts: Vec<&str> = tasks.iter().map(|t| t.prompt.as_str()).collect();
    // Who works at Harbour Glass: Marta and Tomas, not Ines.
    let who = tasks
        .iter()
        .find(|t| {
            t.prompt
                .starts_with("Which entities have a \"works_at\" relation to")
        })
        .unwrap_or_else(|| panic!("{prompts:#?}"));
    assert!(who.prompt.contains("Harbour Glass"), "{}", who.prompt);
    assert!(
        who.answer_key.contains("Marta Silva")
            && who.answer_key.contains("Tomas Berg")
            && !who.answer_key.contains("Ines"),
        "{}",
        who.answer_key
    );
    // A link followed: what the one record a person links to is.
    let followed = tasks
        .iter()
        .find(|t| t.shape == Some(TaskShape::MultiStep) && t.prompt.contains("relation to?"))
        .unwrap_or_else(|| panic!("{prompts:#?}"));
    let expected = [
        ("\"Marta Silva\" has a \"works_at\"", "company"),
        ("\"Tomas Berg\" has a \"works_at\"", "company"),
        ("\"Ines Okafor\" has a \"works_at\"", "firm"),
        ("\"Marta Silva\" has a \"manages\"", "project"),
        ("\"Tomas Berg\" has a \"manages\"", "project"),
        ("\"Harbour Glass\" has a \"supplies\"", "project"),
    ];
    let (_, answer) = expected
        .iter()
        .find(|(asked, _)| followed.prompt.contains(asked))
        .unwrap_or_else(|| panic!("{}", followed.prompt));
    assert_eq!(followed.answer_key, *answer, "{}", followed.prompt);
}
