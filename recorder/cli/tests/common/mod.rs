//! Helpers shared by the `fitness probe` tests: run the binary with a bound
//! on its run time, read its report and its tape, and start servers that are
//! killed by PID when the guard drops; and for the CLI tests, the anchor
//! fixtures and a plain run of the binary.
#![allow(dead_code, reason = "each test file uses a different subset")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod servers;

pub const FITNESS: &str = env!("CARGO_BIN_EXE_fitness");

/// Run `fitness ARGS`, killing it after `limit`; fails the test on a hang.
pub fn run_bounded(args: &[&str], limit: Duration) -> Output {
    run_bounded_in(None, &[], args, limit)
}

/// [`run_bounded`] in directory `cwd` (else the test's), with `env` set.
pub fn run_bounded_in(
    cwd: Option<&Path>,
    env: &[(&str, String)],
    args: &[&str],
    limit: Duration,
) -> Output {
    let mut cmd = Command::new(FITNESS);
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("fitness starts");
    let started = Instant::now();
    loop {
        if child.try_wait().expect("wait works").is_some() {
            return child.wait_with_output().expect("output is readable");
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output is readable");
            panic!(
                "fitness {args:?} did not finish within {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `fitness probe --json` run: its report and its tape.
pub struct ProbeRun {
    pub report: Value,
    pub tape: PathBuf,
    pub elapsed: Duration,
    _dir: tempfile::TempDir,
}

impl ProbeRun {
    /// Probe statuses by id.
    pub fn statuses(&self) -> BTreeMap<String, String> {
        self.report["probes"]
            .as_array()
            .expect("probes is a list")
            .iter()
            .map(|p| {
                (
                    p["id"].as_str().expect("id").to_owned(),
                    p["status"].as_str().expect("status").to_owned(),
                )
            })
            .collect()
    }

    pub fn status(&self, id: &str) -> String {
        self.statuses()
            .get(id)
            .cloned()
            .unwrap_or_else(|| panic!("no probe {id} in {:#}", self.report))
    }

    pub fn tools(&self) -> Vec<String> {
        self.report["tools"]
            .as_array()
            .expect("tools is a list")
            .iter()
            .map(|t| t.as_str().expect("tool name").to_owned())
            .collect()
    }

    pub fn call(&self, index: usize) -> &Value {
        &self.report["calls"][index]
    }

    /// `fitness tape stats --json` on the tape.
    pub fn tape_stats(&self) -> Value {
        tape_stats(&self.tape)
    }

    /// Requests without a response, summed over tools.
    pub fn pending(&self) -> u64 {
        self.tape_stats()["tools"]
            .as_array()
            .expect("tools is a list")
            .iter()
            .map(|t| t["pending"].as_u64().unwrap_or(0))
            .sum()
    }

    pub fn tape_text(&self) -> String {
        std::fs::read_to_string(&self.tape).expect("the tape is readable")
    }
}

/// Probe `target` (a URL, or `--` and a command line) with `extra` options.
pub fn probe(target: &[&str], extra: &[&str], limit: Duration) -> ProbeRun {
    let dir = tempfile::tempdir().expect("temp dir");
    let tape_dir = dir.path().join("tape");
    let mut args = vec![
        "probe",
        "--json",
        "--tape",
        tape_dir.to_str().expect("utf-8 path"),
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(target);
    let started = Instant::now();
    let out = run_bounded(&args, limit);
    let elapsed = started.elapsed();
    assert!(
        out.status.success(),
        "fitness probe exited {:?}; stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the report is JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    ProbeRun {
        report,
        tape: tape_dir.join("mcp.jsonl"),
        elapsed,
        _dir: dir,
    }
}

/// Every line of a JSON-lines file (a tape), parsed; a test fails on a line
/// that is not JSON.
pub fn jsonl_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("every tape line is JSON"))
        .collect()
}

pub fn tape_stats(tape: &Path) -> Value {
    let out = run_bounded(
        &[
            "tape",
            "stats",
            tape.to_str().expect("utf-8 path"),
            "--json",
        ],
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "tape stats failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats: Value = serde_json::from_slice(&out.stdout).expect("stats are JSON");
    assert_eq!(
        stats["session"]["skippedLines"], 0,
        "every tape line is readable"
    );
    stats
}

/// A server process killed by PID when dropped.
pub struct ServerGuard {
    child: Child,
    pub url: String,
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start an in-tree HTTP fixture on 127.0.0.1 and read its URL.
pub fn http_fixture(name: &str) -> ServerGuard {
    let mut child = Command::new(FITNESS)
        .args(["fixture-server", name, "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the fixture starts");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut line = String::new();
    let read = BufReader::new(stdout).read_line(&mut line);
    let mut guard = ServerGuard {
        child,
        url: String::new(),
    };
    match (read, line.trim().strip_prefix("listening ")) {
        (Ok(_), Some(url)) => guard.url = url.to_owned(),
        _ => panic!("the {name} fixture did not report its address: {line:?}"),
    }
    guard
}

/// Start `program args` with `env`, as a guarded process.
pub fn spawn_guarded(
    program: &Path,
    args: &[&str],
    env: &[(&str, String)],
    url: String,
) -> ServerGuard {
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(Stdio::null()).stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    ServerGuard {
        child: cmd
            .spawn()
            .unwrap_or_else(|e| panic!("{} starts: {e}", program.display())),
        url,
    }
}

/// `mcp-server-everything streamableHttp` on a free port. It binds every
/// interface and has no host option: we connect through 127.0.0.1 only, and
/// the guard kills it by PID.
pub fn everything_over_http() -> ServerGuard {
    let bin = require_tool("mcp-server-everything");
    let port = free_port();
    let server = spawn_guarded(
        &bin,
        &["streamableHttp"],
        &[("PORT", port.to_string())],
        format!("http://127.0.0.1:{port}/mcp"),
    );
    wait_for_port(port, Duration::from_secs(60));
    server
}

/// Find an installed tool on PATH or under $FITNESS_TOOLS; a missing one
/// fails the test with the fix, never a silent skip.
pub fn require_tool(name: &str) -> PathBuf {
    let tools = std::env::var_os("FITNESS_TOOLS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/fitness-report/tools"))
        });
    let mut candidates: Vec<PathBuf> = tools
        .iter()
        .flat_map(|t| [t.join("node_modules/.bin"), t.join("venv/bin")])
        .map(|d| d.join(name))
        .collect();
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|d| d.join(name)));
    }
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("{name} is not installed: run scripts/setup (it installs the real MCP servers the tests use)")
        })
}

/// A free port on 127.0.0.1 (bound and released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Wait until `port` on 127.0.0.1 accepts connections.
pub fn wait_for_port(port: u16, limit: Duration) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < limit,
            "nothing listens on 127.0.0.1:{port} after {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The anchor board fixtures: `$FITNESS_ANCHOR_DIR`, else the copy at
/// `<workspace>/fixtures/anchor-board`. Fails loudly when missing.
pub fn anchor_dir() -> PathBuf {
    let dir = std::env::var_os("FITNESS_ANCHOR_DIR").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/anchor-board"
            ))
        },
        PathBuf::from,
    );
    assert!(
        dir.join("runs.json").is_file(),
        "anchor fixtures not found at {}; set FITNESS_ANCHOR_DIR",
        dir.display()
    );
    dir
}

/// Run the `fitness` binary built for these tests.
pub fn fitness(args: &[&str]) -> Output {
    Command::new(FITNESS)
        .args(args)
        .output()
        .expect("the fitness binary runs")
}

/// `fitness run ... --json` (or `rewrite-check --json`): its JSON summary
/// and the run directory the summary names.
pub fn run_summary(args: &[&str], limit: Duration) -> (Value, PathBuf) {
    let output = run_bounded(args, limit);
    let summary: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {}", text(&output)));
    let dir = summary["dir"]
        .as_str()
        .or_else(|| summary["after_dir"].as_str())
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("the summary names no run directory: {summary}"));
    (summary, dir)
}

/// `fitness run` of the canary demo server with `sim/diligent`, seed 7,
/// `extra` flags, into `out`: its directory. The canary has proposals, so
/// the run can be rewrite-checked.
pub fn canary_run(out: &Path, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "run",
        "--runner",
        "sim/diligent",
        "--out",
        s(out),
        "--seed",
        "7",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--", FITNESS, "demo-server", "canary"]);
    run_summary(&args, Duration::from_secs(240)).1
}

/// One `fitness run` of a demo server (`fitness demo-server SERVER`) with
/// `schema-walk/1`, labelled `server`, `extra` flags, into `out`: its run
/// directory. Runs of two demo servers share the label, so only the name
/// each server gives itself tells them apart.
pub fn demo_run(out: &Path, server: &str, runner: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec![
        "run",
        "--runner",
        runner,
        "--generator",
        "schema-walk/1",
        "--label",
        "server",
        "--out",
        s(out),
        "--json",
    ];
    args.extend(extra);
    args.extend(["--", FITNESS, "demo-server", server]);
    run_summary(&args, Duration::from_secs(240)).1
}

/// Everything the command printed, stdout then stderr.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Send `child` SIGINT (as Ctrl-C does) and wait for it to exit; fails the
/// test when it is still running after `limit`.
pub fn interrupt(child: &mut Child, limit: Duration) -> std::process::ExitStatus {
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(kill.success(), "kill -INT failed");
    let sent = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait works") {
            return status;
        }
        if sent.elapsed() > limit {
            let _ = child.kill();
            panic!("no exit within {limit:?} of SIGINT");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `run --runner RUNNER --out OUT --seed 7 --json EXTRA... -- SERVER...`
pub fn run_args<'a>(
    runner: &'a str,
    out: &'a Path,
    extra: &[&'a str],
    server: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--runner",
        runner,
        "--out",
        s(out),
        "--seed",
        "7",
        "--json",
    ];
    args.extend_from_slice(extra);
    args.push("--");
    args.extend_from_slice(server);
    args
}

/// The run directory a `fitness run --json` summary names, and its record.
pub fn run_result(output: &Output) -> (PathBuf, Value) {
    let summary: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("no JSON summary ({e}): {}", text(output)));
    let dir = PathBuf::from(
        summary["dir"]
            .as_str()
            .expect("the summary names the run dir"),
    );
    let record: Value = serde_json::from_slice(
        &std::fs::read(dir.join("record.json")).expect("record.json is written"),
    )
    .expect("the record is JSON");
    (dir, record)
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 temp path")
}

/// A minimal viewer build for `fitness publish --viewer`, in the shape
/// Trunk writes: a page shell with a module bootstrap, a stylesheet link and
/// preloads of the JavaScript and the wasm.
pub fn fake_viewer(dir: &Path) -> PathBuf {
    let viewer = dir.join("dist");
    std::fs::create_dir_all(&viewer).unwrap();
    std::fs::write(
        viewer.join("index.html"),
        concat!(
            "<!doctype html><html><head><title>Fitness Report</title>",
            "<script type=\"module\">import init from './v.js'; init({ module_or_path: './v_bg.wasm' });</script>",
            "<link rel=\"stylesheet\" href=\"./style.css\"/>",
            "<link rel=\"modulepreload\" href=\"./v.js\" crossorigin=\"anonymous\">",
            "<link rel=\"preload\" href=\"./v_bg.wasm\" crossorigin=\"anonymous\" as=\"fetch\" type=\"application/wasm\">",
            "</head><body><div id=\"fitness-root\"></div></body></html>"
        ),
    )
    .unwrap();
    std::fs::write(viewer.join("v.js"), "export default function init() {}").unwrap();
    std::fs::write(viewer.join("v_bg.wasm"), b"\0asm\x01\0\0\0").unwrap();
    std::fs::write(viewer.join("style.css"), "main { margin: 0 }").unwrap();
    viewer
}

/// `fitness run` against the demo's good server with `openai/fake-runner`
/// answered by `fake`, and `flags`: the output dir (kept while the result
/// is read), the run's dir and its record.
pub async fn run_on_fake_api(
    fake: &crate::model_fake::FakeApi,
    flags: &'static [&'static str],
) -> (tempfile::TempDir, std::path::PathBuf, Value) {
    let base = format!("{}/v1", fake.base);
    let out = tempfile::tempdir().expect("tempdir");
    let path = out.path().to_owned();
    let output = tokio::task::spawn_blocking(move || {
        run_bounded_in(
            None,
            &[
                ("OPENAI_BASE_URL", base),
                ("OPENAI_API_KEY", "sk-fake".to_owned()),
            ],
            &run_args(
                "openai/fake-runner",
                &path,
                flags,
                &[FITNESS, "demo-server", "good"],
            ),
            Duration::from_secs(180),
        )
    })
    .await
    .expect("the run");
    let (dir, record) = run_result(&output);
    (out, dir, record)
}

/// `fitness publish` of the run directories in `runs` to `site`, with a
/// stand-in viewer made in `tmp`.
pub fn publish_runs(tmp: &Path, runs: &Path, site: &Path) {
    let viewer = fake_viewer(tmp);
    let published = fitness(&["publish", "--out", s(site), "--viewer", s(&viewer), s(runs)]);
    assert!(published.status.success(), "{}", text(&published));
}

/// A published site's board index.
pub fn board_of(site: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(site.join("data/board.json")).expect("board.json"))
        .expect("json")
}

/// A page's text: its tags dropped, its spaces folded.
pub fn page_text(html: &str) -> String {
    let tags = regex::Regex::new(r"<[^>]*>").expect("pattern");
    tags.replace_all(html, " ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every file under `root` with its bytes, and every directory: a tree
/// that gained an empty directory differs.
pub fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable").flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .expect("below")
                .display()
                .to_string();
            if path.is_dir() {
                out.push((format!("{rel}/"), Vec::new()));
                stack.push(path);
            } else {
                out.push((rel, std::fs::read(&path).expect("readable")));
            }
        }
    }
    out.sort();
    out
}

/// A repository's refs, HEAD, status (untracked and ignored files too) and
/// working tree, as text: any change to them changes it.
pub fn git_state(repo: &Path) -> String {
    let mut state = String::new();
    for args in [
        &["for-each-ref", "--format=%(refname) %(objectname)"][..],
        &["symbolic-ref", "HEAD"][..],
        &[
            "status",
            "--porcelain=v1",
            "--ignored",
            "--untracked-files=all",
        ][..],
        &["ls-files", "--stage"][..],
    ] {
        let out = Command::new("git")
            .args(args)
            .current_dir(repo)
            .output()
            .expect("git runs");
        state.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    for (path, bytes) in tree(repo)
        .into_iter()
        .filter(|(p, _)| !p.starts_with(".git"))
    {
        state.push_str(&format!("{path} {}\n", bytes.len()));
        state.push_str(&String::from_utf8_lossy(&bytes));
    }
    state
}

/// Run git in `dir` with fixed dates (so commits hash the same), and fail
/// the test on an error.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_DATE", "2026-11-01T10:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-11-01T10:00:00Z")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// An SQLite database at `db` made by Python's own sqlite3 (no SQLite
/// library of ours): `script` runs with `c` the connection, then commits.
pub fn sqlite_db(db: &Path, script: &str) {
    let program =
        format!("import sqlite3, sys\nc = sqlite3.connect(sys.argv[1])\n{script}\nc.commit()");
    let made = Command::new("python3")
        .arg("-c")
        .arg(program)
        .arg(db)
        .status()
        .expect("python3 runs");
    assert!(made.success(), "the database {} is made", db.display());
}

/// The repository root (where `action.yml` and `scripts/` are).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// The composite action as `action.yml` writes it.
pub fn action() -> yaml_rust2::Yaml {
    let text = std::fs::read_to_string(repo_root().join("action.yml")).expect("action.yml");
    let mut docs = yaml_rust2::YamlLoader::load_from_str(&text).expect("action.yml is YAML");
    docs.remove(0)
}

/// Run one step of the action the way a GitHub runner runs it: `bash -eo
/// pipefail` on its `run` in `work`, with `PATH`, `GITHUB_ACTION_PATH` (the
/// repository), `GITHUB_OUTPUT` and `GITHUB_STEP_SUMMARY` (files in
/// `work`), `extra` variables, and the step's `env` with its `${{ ... }}`
/// expressions replaced by `substitute` (which fails the test on one it
/// does not know).
pub fn run_action_step(
    step: &yaml_rust2::Yaml,
    work: &Path,
    path: &str,
    extra: &[(&str, &str)],
    substitute: &dyn Fn(&str) -> String,
) -> Output {
    let script = step["run"].as_str().expect("a run step");
    let mut cmd = Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
        .current_dir(work)
        .env("PATH", path)
        .env("GITHUB_ACTION_PATH", repo_root())
        .env("GITHUB_OUTPUT", work.join("outputs"))
        .env("GITHUB_STEP_SUMMARY", work.join("summary.md"))
        .envs(extra.iter().copied());
    if let Some(env) = step["env"].as_hash() {
        for (k, v) in env {
            cmd.env(
                k.as_str().expect("a name"),
                substitute(v.as_str().expect("a value")),
            );
        }
    }
    cmd.output().expect("bash runs the step")
}
