//! Discovery that reads what the server says (issue 57), against a real
//! code-analysis server (installed by scripts/setup) over a project the
//! test makes: every tool of it needs a project registered first, a step
//! whose words say it writes; the walk makes it once, shows that no file
//! and no listing it watches changed, and names it a setup step the run
//! may make. Without the step, every project tool fails ("Project ... not
//! found"). Its `language` parameter takes the values its own
//! `list_languages` lists, never an invented word.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::servers::{installed, suite};
use common::{s, tree};
use fitness_recorder::suite::{GenerateOptions, GeneratorId};
use serde_json::Value;

/// A small Python project under git.
fn project(dir: &Path) {
    let files = [
        (
            "stock.py",
            "class Item:\n    def __init__(self, sku, qty):\n        self.sku = sku\n        self.qty = qty\n\n\ndef total(items):\n    return sum(i.qty for i in items)\n",
        ),
        (
            "report.py",
            "from stock import total\n\n\ndef show(items):\n    print(total(items))\n",
        ),
        (
            "prices.py",
            "RATES = {'EUR': 1.0, 'GBP': 0.86}\n\n\ndef convert(amount, to):\n    return amount * RATES[to]\n",
        ),
        (
            "cli.py",
            "import sys\nfrom report import show\n\n\ndef main():\n    show([])\n\n\nif __name__ == '__main__':\n    main()\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dir.join(name), text).expect("a file");
    }
    common::git(dir, &["init", "-q", "."]);
    common::git(dir, &["add", "."]);
    common::git(
        dir,
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "init",
        ],
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_is_registered_as_a_setup_step_and_languages_come_from_the_servers_list() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("shop");
    std::fs::create_dir(&root).expect("the project");
    project(&root);
    let before = tree(&root);
    let server = installed("venv-tree-sitter/bin/mcp-server-tree-sitter");
    let mut opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    // The operator's folder, as a command line would give it.
    opts.seed_handles = vec![s(&root).to_owned()];
    let tape_dir = dir.path().join("tape");
    std::fs::create_dir(&tape_dir).expect("tape dir");
    let (report, tape) = suite(&server, &[], opts, None, &tape_dir).await;
    assert_eq!(tree(&root), before, "the project is as it was");

    let walk = report.walk.as_ref().expect("walk stats");
    assert_eq!(
        walk.setup_steps,
        ["register_project_tool"],
        "{:#?}",
        walk.discovery
    );
    assert!(
        !report.writers.contains("register_project_tool"),
        "the run may make the setup step"
    );
    let setup = walk
        .discovery
        .iter()
        .find(|m| m.name == "setup")
        .expect("the ledger names the step");
    assert!(
        setup.worked && setup.found.contains("as it was"),
        "{setup:?}"
    );

    // After the step, project tools answer about the project by its name.
    let answered: BTreeSet<String> = tape
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["dir"] == "in" && v["raw"]["method"] == "tools/call")
        .filter(|v| v["raw"]["params"]["arguments"]["project"] == "shop")
        .filter_map(|v| v["raw"]["params"]["name"].as_str().map(str::to_owned))
        .collect();
    assert!(
        answered.len() >= 3,
        "project tools called with the registered project: {answered:?}"
    );
    let covered: BTreeSet<&str> = report
        .suite
        .tasks
        .iter()
        .filter_map(|t| t.solution.last().map(|c| c.tool.as_str()))
        .collect();
    assert!(
        covered.iter().any(|t| [
            "get_file",
            "get_file_metadata",
            "analyze_project",
            "get_symbols",
            "get_ast",
            "list_files"
        ]
        .contains(t)),
        "a task about the code: {covered:?}"
    );

    // Every language the walk gave a tool is one the server listed.
    let listed: Vec<String> = tape
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| {
            let text = v["raw"]["result"]["content"][0]["text"]
                .as_str()?
                .to_owned();
            let parsed: Value = serde_json::from_str(&text).ok()?;
            parsed["available"].as_array().map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect::<Vec<_>>()
            })
        })
        .next()
        .expect("list_languages answered");
    for t in &report.suite.tasks {
        for call in &t.solution {
            if let Some(language) = call.arguments.get("language").and_then(Value::as_str) {
                assert!(
                    listed.iter().any(|l| l == language),
                    "{}: the language {language:?} is not one the server lists",
                    t.prompt
                );
            }
        }
    }
}

/// Each "How many <table> are there?" the suite asks about `tables` is
/// checked by the count SQLite gives, apart from the server.
fn counts_agree(report: &fitness_recorder::suite::GenerationReport, db: &Path, tables: &[&str]) {
    for t in &report.suite.tasks {
        if let Some(noun) = t
            .prompt
            .strip_prefix("How many ")
            .and_then(|r| r.strip_suffix(" are there?"))
            && tables.contains(&noun)
        {
            let count = common::servers::sqlite_query(db, &format!("SELECT COUNT(*) FROM {noun}"));
            let check = serde_json::to_string(&t.check).expect("check");
            assert!(check.contains(&count), "{}: {check}", t.prompt);
        }
    }
}

/// Tasks the suite composed over several records or two calls.
fn composed(report: &fitness_recorder::suite::GenerationReport) -> Vec<String> {
    report
        .suite
        .tasks
        .iter()
        .filter(|t| t.shape.is_some_and(|s| s.composed()))
        .map(|t| t.prompt.clone())
        .collect()
}

/// A small company's books in beancount's own language.
const LEDGER: &str = r#"option "title" "Harbour Glass Co."
option "operating_currency" "EUR"

2024-01-01 open Assets:Bank:Checking EUR
2024-01-01 open Income:Sales EUR
2024-01-01 open Expenses:Rent EUR
2024-01-01 open Expenses:Supplies EUR
2024-01-01 open Expenses:Travel EUR
2024-01-01 open Equity:Opening EUR

2024-01-02 * "Opening balance"
  Assets:Bank:Checking  12000.00 EUR
  Equity:Opening

2024-01-05 * "Northwind Traders" "Invoice 2024-101"
  Assets:Bank:Checking  3400.00 EUR
  Income:Sales

2024-01-10 * "Quay Properties" "January rent"
  Expenses:Rent  1800.00 EUR
  Assets:Bank:Checking

2024-01-14 * "Glassworks Supply" "Float glass sheets"
  Expenses:Supplies  640.50 EUR
  Assets:Bank:Checking

2024-02-03 * "Harbour Hotel" "Trade fair stay"
  Expenses:Travel  410.00 EUR
  Assets:Bank:Checking
"#;

/// The ledger server's query tool takes BQL, not SQL; its description
/// gives an example query. The walk tries the example first, reads the
/// accounts it answers as records, and composes questions over them;
/// without the example, every catalogue query fails and nothing is
/// composed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_example_the_description_gives_is_tried_and_its_answer_composed_over() {
    let dir = tempfile::tempdir().expect("temp dir");
    let ledger = dir.path().join("books.beancount");
    std::fs::write(&ledger, LEDGER).expect("the ledger");
    let before = common::servers::sha256(&ledger);
    let server = installed("venv-beancount/bin/beancount-mcp");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, tape) = suite(
        &server,
        &["--transport", "stdio", s(&ledger)],
        opts,
        None,
        dir.path(),
    )
    .await;
    assert_eq!(
        common::servers::sha256(&ledger),
        before,
        "the ledger is as it was"
    );
    let walk = report.walk.as_ref().expect("walk stats");
    let examples = walk
        .discovery
        .iter()
        .find(|m| m.name == "examples")
        .expect("the ledger names the examples move");
    assert!(examples.worked, "{examples:?}");
    assert!(
        tape.contains("GROUP BY account"),
        "the description's example query was sent"
    );
    let asked = composed(&report);
    assert!(
        asked.len() >= 3,
        "questions composed over the accounts: {asked:#?}"
    );
    // The largest account by its summed position is the bank account.
    if let Some(t) = report
        .suite
        .tasks
        .iter()
        .find(|t| t.prompt.contains("highest"))
    {
        let check = serde_json::to_string(&t.check).expect("check");
        assert!(
            check.contains("Assets:Bank:Checking"),
            "{}: {check}",
            t.prompt
        );
    }
}

/// A database server (mcp-alchemy) whose tool of table names answers
/// them split by commas and whose SQL tool is named a runner
/// (`execute_query`, "Execute a SQL query") with no word of reading only:
/// the names are read as a listing, the runner is called with reading
/// statements alone, and questions are composed over the tables; the
/// database file is byte-identical after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sql_runner_is_called_with_reading_statements_and_comma_listed_tables_are_read() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("clinic.db");
    common::servers::sqlite_db(
        &db,
        "CREATE TABLE owners(id INTEGER PRIMARY KEY, name TEXT, city TEXT);
         INSERT INTO owners VALUES (1,'Hannah Pike','Leeds'),(2,'Omar Said','York'),(3,'Greta Lund','Leeds'),(4,'Paul Achebe','Hull');
         CREATE TABLE pets(id INTEGER PRIMARY KEY, name TEXT, species TEXT, born TEXT, owner_id INTEGER REFERENCES owners(id));
         INSERT INTO pets VALUES (1,'Biscuit','dog','2017-05-02',1),(2,'Mochi','cat','2019-09-12',4),(3,'Pepper','dog','2020-02-20',2),(4,'Luna','cat','2016-11-30',3),(5,'Kiwi','parrot','2021-06-01',4),(6,'Rex','dog','2014-08-08',3);",
    );
    let before = common::servers::sha256(&db);
    let server = installed("venv-alchemy/bin/mcp-alchemy");
    let url = format!("sqlite:///{}", s(&db));
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, tape) = common::servers::suite_with_env(
        &server,
        &[],
        &[("DB_URL", url.as_str())],
        opts,
        None,
        dir.path(),
    )
    .await;
    assert_eq!(
        common::servers::sha256(&db),
        before,
        "the database is as it was"
    );
    assert!(
        !report.writers.contains("execute_query"),
        "the runner is judged by its statements: {:?}",
        report.writers
    );
    let statements: Vec<String> = tape
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["dir"] == "in" && v["raw"]["params"]["name"] == "execute_query")
        .filter_map(|v| {
            v["raw"]["params"]["arguments"]["query"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert!(!statements.is_empty(), "the runner was called");
    for q in &statements {
        let first = q.split_whitespace().next().unwrap_or("").to_uppercase();
        assert!(
            ["SELECT", "WITH", "PRAGMA", "SHOW", "EXPLAIN"].contains(&first.as_str()),
            "only reading statements reach the runner: {q}"
        );
    }
    let asked = composed(&report);
    assert!(asked.len() >= 4, "questions over the tables: {asked:#?}");
    counts_agree(&report, &db, &["owners", "pets"]);
}

/// A spreadsheet server reads a sheet as a grid whose first row names
/// the columns; the sheet is a place the server listed (its workbook's
/// description names it), not a filter, so its rows are records the
/// suite composes questions over; the workbook is byte-identical after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sheet_read_as_a_grid_under_its_header_is_a_kind_of_record() {
    let dir = tempfile::tempdir().expect("temp dir");
    let book = dir.path().join("sales.xlsx");
    common::servers::python(
        &installed("venv-excel/bin/python"),
        "import sys\nfrom openpyxl import Workbook\nwb = Workbook(); ws = wb.active; ws.title = 'Staff'\nws.append(['Name', 'Region', 'Role', 'Start'])\nfor r in [['Ines Duarte','North','Manager','2019-04-01'],['Karl Berg','South','Rep','2021-09-15'],['Lola Wren','East','Rep','2022-01-10'],['Musa Bello','West','Manager','2018-06-20'],['Nia Ford','North','Rep','2023-03-05']]: ws.append(r)\nwb.save(sys.argv[1])",
        &[s(&book)],
    );
    let before = common::servers::sha256(&book);
    let server = installed("venv-excel/bin/excel-mcp-server");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let folder = s(dir.path()).to_owned();
    let (report, _tape) = common::servers::suite_with_env(
        &server,
        &["stdio"],
        &[("EXCEL_FILES_PATH", folder.as_str())],
        opts,
        None,
        dir.path(),
    )
    .await;
    assert_eq!(
        common::servers::sha256(&book),
        before,
        "the workbook is as it was"
    );
    let over_rows = composed(&report);
    assert!(
        over_rows.len() >= 2,
        "questions over the sheet's rows: {:#?}",
        report
            .suite
            .tasks
            .iter()
            .map(|t| &t.prompt)
            .collect::<Vec<_>>()
    );
    // Two of five are managers.
    if let Some(t) = report
        .suite
        .tasks
        .iter()
        .find(|t| t.prompt.starts_with("How many") && t.prompt.contains("\"Manager\""))
    {
        let check = serde_json::to_string(&t.check).expect("check");
        assert!(check.contains('2'), "{}: {check}", t.prompt);
    }
}

/// A database server (mcp-dbutils) whose query tool needs a `connection`
/// that only its listing of connections names (`Connection: shop`): the
/// catalogue's first try invents one and fails, and after the walk has
/// read the listing it is tried again with the connection the server
/// named; its tables are read whole and questions composed over them
/// agree with the database. The file is byte-identical after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_tool_is_catalogued_again_with_the_connection_a_listing_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("workshop.db");
    common::servers::sqlite_db(
        &db,
        "CREATE TABLE members(id INTEGER PRIMARY KEY, name TEXT, town TEXT);
         INSERT INTO members VALUES (1,'Rhian Evans','Swansea'),(2,'Jonas Berg','Oslo'),(3,'Amara Obi','Swansea'),(4,'Kenji Mori','Kyoto');
         CREATE TABLE tools(id INTEGER PRIMARY KEY, title TEXT, kind TEXT, weight REAL);
         INSERT INTO tools VALUES (1,'Band Saw','power',41.5),(2,'Spokeshave','hand',0.4),(3,'Drill Press','power',56.0),(4,'Mallet','hand',0.9),(5,'Lathe','power',120.0);",
    );
    let before = common::servers::sha256(&db);
    let config = dir.path().join("connections.yaml");
    std::fs::write(
        &config,
        format!(
            "connections:\n  workshop:\n    type: sqlite\n    path: {}\n",
            s(&db)
        ),
    )
    .expect("write the config");
    let server = installed("venv-dbutils/bin/mcp-dbutils");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) =
        common::servers::suite(&server, &["--config", s(&config)], opts, None, dir.path()).await;
    assert_eq!(
        common::servers::sha256(&db),
        before,
        "the database is as it was"
    );
    let walk = report.walk.as_ref().expect("the walk's stats");
    let catalogue: Vec<_> = walk
        .discovery
        .iter()
        .filter(|m| m.name == "catalogue")
        .collect();
    assert!(
        catalogue
            .iter()
            .any(|m| m.worked && m.tried.contains("again with connection = \"workshop\"")),
        "the catalogue tried again with the named connection: {catalogue:#?}"
    );
    let asked = composed(&report);
    assert!(asked.len() >= 4, "questions over the tables: {asked:#?}");
    counts_agree(&report, &db, &["members", "tools"]);
}

/// A Redis of its own, on a free port, with nothing saved to disk; killed
/// when dropped.
struct Redis {
    child: std::process::Child,
    port: u16,
}

impl Redis {
    fn start() -> Redis {
        let port = common::free_port();
        let child = std::process::Command::new("redis-server")
            .args([
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server runs (scripts/setup installs it)");
        common::wait_for_port(port, std::time::Duration::from_secs(20));
        Redis { child, port }
    }

    fn cli(&self, args: &[&str]) -> String {
        let out = std::process::Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .expect("redis-cli runs");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Every key and the bytes of its value, hashed.
    fn state(&self) -> String {
        let mut keys: Vec<String> = self.cli(&["--scan"]).lines().map(str::to_owned).collect();
        keys.sort();
        keys.iter()
            .map(|k| format!("{k}={}", self.cli(&["--no-raw", "DUMP", k])))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A key-value store (redis-mcp-server) whose listing of keys answers one
/// key a text block (`bike:101`, `shop:name`): the keys are read as names,
/// the keys of one namespace (`bike:`) are a kind read whole by the tool
/// that tells most about each (`hgetall` before `type`), and questions are
/// composed over them that agree with the store. Every key is as it was
/// after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_value_stores_keys_are_read_as_names_and_a_namespace_as_records() {
    let dir = tempfile::tempdir().expect("temp dir");
    let redis = Redis::start();
    for (key, fields) in [
        ("bike:101", ["Trail Roamer", "steel", "780"]),
        ("bike:102", ["City Glide", "aluminium", "540"]),
        ("bike:103", ["Gravel King", "titanium", "2150"]),
        ("bike:104", ["Kid Spark", "steel", "210"]),
    ] {
        redis.cli(&[
            "HSET", key, "model", fields[0], "frame", fields[1], "price", fields[2],
        ]);
    }
    redis.cli(&["SET", "shop:name", "Spoke and Chain"]);
    redis.cli(&[
        "RPUSH",
        "repairs",
        "puncture bike:102",
        "chain swap bike:101",
    ]);
    let before = redis.state();
    let server = installed("venv-redis/bin/redis-mcp-server");
    let url = format!("redis://127.0.0.1:{}/0", redis.port);
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(&server, &["--url", url.as_str()], opts, None, dir.path()).await;
    assert_eq!(redis.state(), before, "every key is as it was");
    let model = &report.suite.config["holdings"];
    assert!(
        model.as_array().is_some_and(|k| k
            .iter()
            .any(|k| k["kind"] == "bike" && k["records"] == 4 && k["tool"] == "hgetall")),
        "the bike keys read whole by hgetall: {model}"
    );
    let asked = composed(&report);
    assert!(asked.len() >= 3, "questions over the bikes: {asked:#?}");
    // Each question about the bikes' frames, checked against the store.
    for t in &report.suite.tasks {
        if t.prompt == "How many bike records have \"steel\" as their frame?" {
            let check = serde_json::to_string(&t.check).expect("check");
            assert!(check.contains('2'), "{}: {check}", t.prompt);
        }
        if t.prompt
            .starts_with("Which bike records have \"steel\" as their frame?")
        {
            assert!(
                t.answer_key.contains("bike:101") && t.answer_key.contains("bike:104"),
                "{}: {}",
                t.prompt,
                t.answer_key
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_the_servers_words_ask_for_is_made_and_what_asked_is_read_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("till");
    std::fs::create_dir_all(root.join("src")).expect("the project");
    for (name, text) in [
        (
            "src/geometry.rs",
            "pub fn area(w: f64, h: f64) -> f64 {\n    w * h\n}\n\npub fn perimeter(w: f64, h: f64) -> f64 {\n    2.0 * (w + h)\n}\n\npub fn square_area(s: f64) -> f64 {\n    area(s, s)\n}\n\npub fn describe(w: f64, h: f64) -> String {\n    format!(\"{} {}\", area(w, h), perimeter(w, h))\n}\n",
        ),
        (
            "src/money.rs",
            "pub fn convert(amount: f64, rate: f64) -> f64 {\n    amount * rate\n}\n\npub fn round_cents(x: f64) -> f64 {\n    (x * 100.0).round() / 100.0\n}\n\npub fn price(amount: f64, rate: f64) -> f64 {\n    round_cents(convert(amount, rate))\n}\n",
        ),
        (
            "src/main.rs",
            "mod geometry;\nmod money;\n\nfn main() {\n    println!(\"{}\", geometry::describe(2.0, 3.0));\n    println!(\"{}\", money::price(10.0, 0.86));\n}\n",
        ),
    ] {
        std::fs::write(root.join(name), text).expect("a file");
    }
    let before = tree(&root);
    let index = dir.path().join("index");
    let out = dir.path().join("out");
    std::fs::create_dir(&out).expect("out dir");
    let server = installed("venv-codeindex/bin/code-index-mcp");
    let opts = GenerateOptions::new(GeneratorId::SchemaWalk2, 12, 1);
    let (report, _) = suite(
        &server,
        &["--project-path", s(&root), "--indexer-path", s(&index)],
        opts,
        None,
        &out,
    )
    .await;
    assert_eq!(tree(&root), before, "the project is as it was");
    let walk = report.walk.as_ref().expect("walk stats");
    let step = walk
        .discovery
        .iter()
        .find(|m| m.name == "setup" && m.tool.as_deref() == Some("build_deep_index"))
        .unwrap_or_else(|| panic!("the step the server asked for: {:#?}", walk.discovery));
    assert!(
        step.worked
            && step.tried.starts_with("the server asks for it")
            && step.found.contains("made again"),
        "{step:?}"
    );
    // What asked for it, read again after it: each file's functions.
    let model = &report.suite.config["holdings"];
    assert!(
        model.as_array().is_some_and(|k| k
            .iter()
            .any(|k| k["kind"] == "functions in money.rs" && k["records"] == 3)),
        "{model}"
    );
    assert!(
        report
            .suite
            .tasks
            .iter()
            .any(|t| t.prompt.contains("functions in money.rs")
                || t.prompt.contains("functions in geometry.rs")),
        "{:#?}",
        report
            .suite
            .tasks
            .iter()
            .map(|t| &t.prompt)
            .collect::<Vec<_>>()
    );
}
