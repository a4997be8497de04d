//! The real servers and databases the tests run, as scripts/setup installs
//! them: where each is, a PostgreSQL cluster of a test's own, and a DuckDB
//! or SQLite database made and queried by their own Python libraries (no
//! database library of ours).

use std::path::{Path, PathBuf};
use std::process::Command;

use std::time::Duration;

use fitness_recorder::mcp::connect::{Session, Target};
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::model::types::ModelClient;
use fitness_recorder::suite::{GenerateOptions, GenerationReport, generate};
use sha2::Digest;

use super::s;

/// The tools folder scripts/setup installs into.
pub fn tools_dir() -> PathBuf {
    std::env::var_os("FITNESS_TOOLS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/fitness-report/tools"))
        })
        .expect("FITNESS_TOOLS or HOME")
}

/// A temp folder whose path is lower case and has no hidden part
/// (mcp-obsidian lowers the case of its vault's path before it reads it).
pub fn lower_case_temp(prefix: &str) -> tempfile::TempDir {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    tempfile::Builder::new()
        .prefix(&format!(
            "{prefix}-{}-{nanos}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        ))
        .rand_bytes(0)
        .tempdir()
        .expect("temp dir")
}

/// A program scripts/setup installed under the tools folder; a missing one
/// fails with the fix.
pub fn installed(relative: &str) -> PathBuf {
    let p = tools_dir().join(relative);
    assert!(
        p.is_file(),
        "{} is not installed: run scripts/setup (it installs the real MCP servers the discovery tests use)",
        p.display()
    );
    p
}

/// A PostgreSQL cluster of the test's own on 127.0.0.1, stopped on drop.
pub struct Postgres {
    data: PathBuf,
    bin: PathBuf,
    port: u16,
}

impl Postgres {
    pub fn start(dir: &Path) -> Postgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.path().join("bin"))
                    .find(|b| b.join("initdb").is_file())
            })
            .expect(
                "PostgreSQL is not installed: run scripts/setup (it installs Debian's postgresql)",
            );
        let data = dir.join("pg");
        let port = super::free_port();
        let as_postgres = |script: &str| {
            let out = Command::new("su")
                .args(["postgres", "-s", "/bin/sh", "-c", script])
                .output()
                .expect("su runs");
            assert!(
                out.status.success(),
                "{script}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        let made = Command::new("install")
            .args(["-d", "-o", "postgres", "-g", "postgres", s(&data)])
            .status()
            .expect("install runs");
        assert!(made.success());
        // The temp folder must be passable for the postgres user.
        let _ = Command::new("chmod").args(["755", s(dir)]).status();
        as_postgres(&format!(
            "{}/initdb -D {} -A trust -U postgres >/dev/null",
            s(&bin),
            s(&data)
        ));
        as_postgres(&format!(
            "{}/pg_ctl -D {} -o '-p {port} -k {} -c listen_addresses=127.0.0.1' -l {}/log -w start >/dev/null",
            s(&bin),
            s(&data),
            s(&data),
            s(&data)
        ));
        let pg = Postgres { data, bin, port };
        pg.sql("postgres", "CREATE DATABASE library");
        pg.sql(
            "library",
            "CREATE TABLE loans(id int PRIMARY KEY, borrower text, title text, due_on text); \
             INSERT INTO loans VALUES (1, 'Maren Holt', 'Kindred', '2026-12-19'), (2, 'Idris Vale', 'Solaris', '2027-01-08'); \
             CREATE TABLE branches(code text PRIMARY KEY, town text, opened int); \
             INSERT INTO branches VALUES ('NRD', 'Tromso', 1998), ('STH', 'Cardiff', 2004);",
        );
        pg
    }

    pub fn sql(&self, db: &str, sql: &str) {
        let out = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                db,
                "-q",
                "-c",
                sql,
            ])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Every row of the test's tables, hashed.
    pub fn dump(&self) -> String {
        let out = Command::new("psql")
            .args([
                "-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres", "-d", "library", "-At", "-c",
                "SELECT * FROM loans ORDER BY id; SELECT * FROM branches ORDER BY code; SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
            ])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        format!("{:x}", sha2::Sha256::digest(&out.stdout))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let _ = Command::new("su")
            .args([
                "postgres",
                "-s",
                "/bin/sh",
                "-c",
                &format!(
                    "{}/pg_ctl -D {} -m immediate stop >/dev/null",
                    s(&self.bin),
                    s(&self.data)
                ),
            ])
            .status();
    }
}

impl Postgres {
    /// The port the cluster listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `sql`'s rows in `db`, as psql prints them unaligned (`-At`).
    pub fn query(&self, db: &str, sql: &str) -> String {
        let out = Command::new("psql")
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                "-d",
                db,
                "-At",
                "-c",
                sql,
            ])
            .output()
            .expect("psql runs");
        assert!(
            out.status.success(),
            "{sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

/// Run the Python `program` with `python`, `args` after it; a failure
/// fails the test with what Python said. Its standard output, trimmed.
pub fn python(python: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(python)
        .arg("-c")
        .arg(program)
        .args(args)
        .output()
        .expect("python runs");
    assert!(
        out.status.success(),
        "{program}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A DuckDB database at `db`, made by the DuckDB server's own Python
/// library: `script` runs with `c` the connection.
pub fn duckdb_db(db: &Path, script: &str) {
    let program =
        format!("import duckdb, sys\nc = duckdb.connect(sys.argv[1])\n{script}\nc.close()");
    python(&installed("venv-duckdb/bin/python"), &program, &[s(db)]);
}

/// A SQLite database at `db`, made by Python's sqlite3 from `script`.
pub fn sqlite_db(db: &Path, script: &str) {
    python(
        Path::new("python3"),
        "import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\nc.executescript(sys.argv[2])\nc.commit()\nc.close()",
        &[s(db), script],
    );
}

/// `sql`'s rows in the DuckDB database `db`, one a line, values joined by
/// `|`, read by DuckDB's own library.
pub fn duckdb_query(db: &Path, sql: &str) -> String {
    python_rows(&installed("venv-duckdb/bin/python"), "duckdb", db, sql)
}

/// `sql`'s rows in the SQLite database `db`, read by Python's sqlite3.
pub fn sqlite_query(db: &Path, sql: &str) -> String {
    python_rows(Path::new("python3"), "sqlite3", db, sql)
}

fn python_rows(interpreter: &Path, module: &str, db: &Path, sql: &str) -> String {
    let program = format!(
        "import {module}, sys\nc = {module}.connect(sys.argv[1]{})\nfor r in c.execute(sys.argv[2]).fetchall(): print('|'.join(str(x) for x in r))",
        if module == "duckdb" {
            ", read_only=True"
        } else {
            ""
        }
    );
    python(interpreter, &program, &[s(db), sql])
}

/// The sha256 of a file's bytes.
/// A knowledge graph as @modelcontextprotocol/server-memory keeps it at
/// `path` (one JSON object a line): entities (name, type, observations)
/// and relations (from, to, type).
pub fn memory_graph(
    path: &Path,
    entities: &[(&str, &str, &[&str])],
    relations: &[(&str, &str, &str)],
) {
    let lines: Vec<String> = entities
        .iter()
        .map(|(name, kind, notes)| {
            serde_json::json!({"type": "entity", "name": name, "entityType": kind, "observations": notes})
                .to_string()
        })
        .chain(relations.iter().map(|(from, to, kind)| {
            serde_json::json!({"type": "relation", "from": from, "to": to, "relationType": kind})
                .to_string()
        }))
        .collect();
    std::fs::write(path, lines.join("\n") + "\n").expect("the graph");
}

pub fn sha256(p: &Path) -> String {
    format!(
        "{:x}",
        sha2::Sha256::digest(std::fs::read(p).expect("read"))
    )
}

/// Generate a suite from a stdio server with `opts`, the wire tape kept in
/// `dir`: the report and the tape's text.
pub async fn suite(
    program: &Path,
    args: &[&str],
    opts: GenerateOptions,
    judge: Option<&dyn ModelClient>,
    dir: &Path,
) -> (GenerationReport, String) {
    suite_with_env(program, args, &[], opts, judge, dir).await
}

/// [`suite`], the server started with `env` beside the harness's own.
pub async fn suite_with_env(
    program: &Path,
    args: &[&str],
    env: &[(&str, &str)],
    opts: GenerateOptions,
    judge: Option<&dyn ModelClient>,
    dir: &Path,
) -> (GenerationReport, String) {
    let target = Target::Stdio(StdioTarget {
        program: s(program).to_owned(),
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    });
    let tape = dir.join("mcp.jsonl");
    let wire = Tap::create_kind(&tape, "test", vec![], "mcp").expect("tape");
    let session = Session::connect(&target, wire.clone(), None, Duration::from_secs(60))
        .await
        .expect("the server starts and completes the handshake");
    let tools = session.list_tools().await.expect("tools/list");
    let instructions = session
        .service
        .peer_info()
        .and_then(|i| i.instructions.clone());
    let mut opts = opts;
    if opts.seed_handles.is_empty() {
        opts.seed_handles = target.operator_paths();
    }
    opts.fresh = Some(target.clone());
    let report = generate(
        &session,
        &tools,
        instructions.as_deref(),
        &opts,
        judge,
        None,
        &Tap::disabled(),
    )
    .await
    .expect("generation runs");
    session.close().await;
    wire.end("done");
    (report, std::fs::read_to_string(&tape).expect("the tape"))
}
