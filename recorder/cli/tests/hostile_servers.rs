//! `fitness run` end to end against hostile servers: one that hangs mid-call,
//! floods notifications (for a while, and without end), sends one 200 MB
//! line, writes garbage on stdout, exits mid-call, lists hostile schemas, or
//! redirects; and a launcher whose grandchildren must end with it. Each run
//! ends within a bounded time in an honest outcome with readable tapes
//! (valid JSONL closed by an `end` line), and the recorder's peak memory
//! (VmHWM, read from /proc while it runs) stays far below what holding the
//! flood would take.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{FITNESS, s, tape_stats};
use serde_json::Value;

/// What a hostile run left, and what it cost.
struct Hostile {
    record: Value,
    dir: PathBuf,
    elapsed: Duration,
    /// The recorder's peak resident set, in KiB.
    peak_rss_kib: u64,
    code: Option<i32>,
    _out: tempfile::TempDir,
}

impl Hostile {
    fn outcome(&self) -> &str {
        self.record["outcome"].as_str().unwrap_or_default()
    }

    fn tape(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).expect("the tape is readable")
    }

    fn notes(&self) -> String {
        self.record["notes"].to_string()
    }
}

/// The peak resident set of `pid` so far (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// `fitness run --runner sim/diligent ... -- SERVER`, bounded by `limit`,
/// with the recorder's peak memory sampled while it runs.
fn run_against(server: &[&str], extra: &[&str], limit: Duration) -> Hostile {
    let out = tempfile::tempdir().expect("tempdir");
    let args = common::run_args("sim/diligent", out.path(), extra, server);
    let started = Instant::now();
    let mut child = Command::new(FITNESS)
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fitness starts");
    let pid = child.id();
    let mut peak = 0;
    let status = loop {
        if let Some(kib) = peak_rss_kib(pid) {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().expect("wait works") {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "fitness {args:?} did not finish within {limit:?}; stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let elapsed = started.elapsed();
    let output = child.wait_with_output().expect("output");
    let (dir, record) = common::run_result(&output);
    assert_tapes_readable(&dir);
    eprintln!(
        "{server:?}: {} in {elapsed:.1?}, peak RSS {} KiB",
        record["outcome"], peak
    );
    Hostile {
        record,
        dir,
        elapsed,
        peak_rss_kib: peak,
        code: status.code(),
        _out: out,
    }
}

/// Both tapes: every line JSON, the last one the `end` line, and the tape
/// reader skips nothing.
fn assert_tapes_readable(dir: &Path) {
    for name in ["mcp.jsonl", "agent.jsonl"] {
        let path = dir.join(name);
        let text = std::fs::read_to_string(&path).expect("the tape is UTF-8");
        let mut last = Value::Null;
        for (i, line) in text.lines().enumerate() {
            last = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{name} line {} is not JSON: {e}", i + 1));
        }
        assert_eq!(last["type"], "end", "{name} is closed by an end line");
        tape_stats(&path);
    }
}

fn fixture(name: &str) -> [&str; 3] {
    [FITNESS, "fixture-server", name]
}

const LIMIT: Duration = Duration::from_secs(180);

#[test]
fn a_server_that_hangs_mid_call_is_refused_in_bounded_time_with_the_calls_pending() {
    let run = run_against(&fixture("hang"), &["--timeout", "1"], LIMIT);
    // No call ever answered: no task could be made, so the suite is too small.
    assert_eq!(run.outcome(), "INSUFFICIENT_SURFACE", "{}", run.record);
    assert!(run.record.get("score").is_none());
    let stats = tape_stats(&run.dir.join("mcp.jsonl"));
    let pending: u64 = stats["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["pending"].as_u64().unwrap_or(0))
        .sum();
    assert!(pending > 0, "the unanswered calls are on the tape: {stats}");
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

#[test]
fn a_server_that_floods_without_end_ends_the_run_void_at_the_registered_tape_cap() {
    let run = run_against(
        &fixture("flood-forever"),
        &["--timeout", "5", "--max-tape-mb", "8"],
        LIMIT,
    );
    assert_eq!(run.outcome(), "VOID", "{}", run.record);
    assert!(run.record.get("score").is_none());
    assert_eq!(run.code, Some(1));
    let cap = 8 * 1024 * 1024;
    assert_eq!(run.record["preregistration"]["max_tape_bytes"], cap);
    assert!(
        run.notes().contains("registered cap of 8388608 bytes"),
        "{}",
        run.notes()
    );
    let tape = run.tape("mcp.jsonl");
    assert!(tape.contains("\"kind\":\"fitness.tape_cap\""));
    let end: Value = serde_json::from_str(tape.lines().last().expect("an end line")).expect("json");
    assert_eq!(end["reason"], "tape_cap");
    assert!(end["dropped_lines"].as_u64().is_some(), "{end}");
    // The cap is checked before each line: at most one line and the
    // harness's closing events past it.
    let bytes = std::fs::metadata(run.dir.join("mcp.jsonl"))
        .expect("tape")
        .len();
    assert!(bytes < cap + (2 << 20), "{bytes} bytes");
    // Loose: the recorder holds none of the flood.
    assert!(
        run.peak_rss_kib < 300 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );
    assert!(run.elapsed < Duration::from_secs(90), "{:?}", run.elapsed);
}

#[test]
fn a_server_that_floods_notifications_mid_call_is_still_measured() {
    // 5,000 notifications before every answer.
    let run = run_against(&fixture("flood"), &["--timeout", "10"], LIMIT);
    assert_ne!(run.outcome(), "VOID", "{}", run.record);
    let tape = run.tape("mcp.jsonl");
    assert!(tape.matches("flood 4999").count() >= 1);
    assert!(
        run.peak_rss_kib < 300 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );
}

#[test]
fn one_200_mb_line_is_dropped_not_held_and_the_run_goes_on() {
    // The dropped line never answers its call. The session's timeout is
    // shorter than the walk's own (5 s), so the call fails and the walk
    // goes on to the tool's next call; at 5 s each the two raced, and when
    // the walk's won the tool was taken for hung and never called again.
    let run = run_against(&fixture("huge-line"), &["--timeout", "3"], LIMIT);
    let tape = run.tape("mcp.jsonl");
    assert!(
        tape.contains("\"kind\":\"fitness.oversized_line\""),
        "the dropped line is on the tape"
    );
    // The line itself is not: the tape is a small fraction of it.
    let bytes = std::fs::metadata(run.dir.join("mcp.jsonl"))
        .expect("tape")
        .len();
    assert!(bytes < 20 << 20, "{bytes} bytes");
    // Later calls are answered: the walk goes on past the dropped line.
    assert!(
        tape.contains("\"isError\":false"),
        "later calls were answered"
    );
    // Holding the line would take 200 MB.
    assert!(
        run.peak_rss_kib < 150 * 1024,
        "peak RSS {} KiB",
        run.peak_rss_kib
    );
}

#[test]
fn garbage_on_stdout_is_taped_as_events_and_the_run_goes_on() {
    let run = run_against(&fixture("garbage"), &["--timeout", "5"], LIMIT);
    assert_ne!(run.outcome(), "VOID", "{}", run.record);
    let tape = run.tape("mcp.jsonl");
    assert!(tape.contains("fitness.unparsable"));
    assert!(tape.contains("this is not json"));
}

#[test]
fn a_server_that_exits_mid_call_ends_the_run_void_as_a_lost_server() {
    let run = run_against(&fixture("crash"), &["--timeout", "3"], LIMIT);
    assert_eq!(run.outcome(), "VOID", "{}", run.record);
    assert!(run.record.get("score").is_none());
    assert!(run.notes().contains("lost the server"), "{}", run.notes());
    assert!(run.tape("mcp.jsonl").contains("about to crash"));
    assert!(run.elapsed < Duration::from_secs(120), "{:?}", run.elapsed);
}

#[test]
fn hostile_schemas_are_dropped_with_why_in_seconds() {
    let run = run_against(&fixture("hostile-schemas"), &["--timeout", "5"], LIMIT);
    let notes = run.notes();
    for (tool, why) in [
        (
            "long_text",
            "`minLength` asks for 20000000, over the cap of 10000",
        ),
        (
            "many_items",
            "`minItems` asks for 18446744073709551615, over the cap of 100",
        ),
        ("array_bomb", "more than 262144 bytes"),
        ("all_of", "more than 262144 bytes"),
        ("impossible", "no multiple of 5"),
    ] {
        assert!(
            notes.contains(&format!("the tool `{tool}` was dropped from the walk"))
                && notes.contains(why),
            "{tool}: {notes}"
        );
    }
    // The satisfiable ones are called, the vast range included.
    let tape = run.tape("mcp.jsonl");
    assert!(
        tape.contains("\"name\":\"wide_range\""),
        "wide_range was called"
    );
    assert!(run.elapsed < Duration::from_secs(60), "{:?}", run.elapsed);

    // `fitness suite` on the same server: no 100% CPU past 30 s.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("suite.json");
    let started = Instant::now();
    let suite = common::run_bounded(
        &[
            "suite",
            "--generator",
            "schema-walk/1",
            "--out",
            s(&out),
            "--",
            FITNESS,
            "fixture-server",
            "hostile-schemas",
        ],
        Duration::from_secs(60),
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    let printed = common::text(&suite);
    assert!(printed.contains("walk: dropped `long_text`"), "{printed}");
    let written: Value =
        serde_json::from_slice(&std::fs::read(&out).expect("suite.json")).expect("json");
    assert_eq!(
        written["walk"]["unsatisfiable"].as_array().map(Vec::len),
        Some(5),
        "{}",
        written["walk"]
    );
}

/// A streamable HTTP endpoint that answers everything with a redirect to
/// `location` (an absolute URL, or a path on itself).
fn redirecting_server(
    location: &'static str,
) -> (std::net::SocketAddr, std::thread::JoinHandle<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    listener.set_nonblocking(true).expect("nonblocking");
    let handle = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let app = axum::Router::new().fallback(move || async move {
                (
                    axum::http::StatusCode::TEMPORARY_REDIRECT,
                    [(axum::http::header::LOCATION, location)],
                )
            });
            let serve = axum::serve(listener, app);
            let _ = tokio::time::timeout(Duration::from_secs(150), serve).await;
        });
    });
    (addr, handle)
}

#[test]
fn redirects_off_the_origin_are_not_followed_and_redirect_loops_end() {
    // Another origin (here: a port nobody listens on), and a loop on itself.
    for location in ["http://127.0.0.1:9/mcp", "/mcp"] {
        let (addr, _server) = redirecting_server(location);
        let url = format!("http://{addr}/mcp");
        let out = tempfile::tempdir().expect("tempdir");
        let started = Instant::now();
        let output = common::run_bounded(
            &[
                "run",
                &url,
                "--runner",
                "sim/diligent",
                "--out",
                s(out.path()),
                "--timeout",
                "5",
                "--json",
            ],
            LIMIT,
        );
        let summary: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|e| panic!("no summary ({e}): {}", common::text(&output)));
        assert_eq!(summary["outcome"], "VOID", "{location}: {summary}");
        let dir = PathBuf::from(summary["dir"].as_str().expect("dir"));
        assert_tapes_readable(&dir);
        let record: Value =
            serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record"))
                .expect("json");
        assert!(
            record["notes"].to_string().contains("could not be reached"),
            "{location}: {}",
            record["notes"]
        );
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{:?}",
            started.elapsed()
        );
    }
}

/// Whether `pid` is gone (or a zombie nobody has reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

/// An `npx`-style launcher: a shell that starts a long-lived helper (the
/// grandchild whose pid it writes to `grandchild.pid`) and then runs `then`
/// (the real server) as its own child, not with `exec`.
fn launcher(dir: &Path, then: &str) -> (PathBuf, PathBuf) {
    let script = dir.join("launcher.sh");
    let pid_file = dir.join("grandchild.pid");
    let _ = std::fs::remove_file(&pid_file);
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nsleep 600 &\necho $! > '{}'\n{then}\n",
            pid_file.display()
        ),
    )
    .expect("script");
    let mut perms = std::fs::metadata(&script).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&script, perms).expect("chmod");
    (script, pid_file)
}

fn grandchild(pid_file: &Path) -> u32 {
    let started = Instant::now();
    loop {
        if let Some(pid) = std::fs::read_to_string(pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no grandchild pid"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run directory under `out` (beside `standing-notes/`).
fn run_dir(out: &Path) -> Option<PathBuf> {
    std::fs::read_dir(out)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.join("mcp.jsonl").is_file())
}

fn assert_gone_soon(pid: u32, when: &str) {
    let started = Instant::now();
    while !gone(pid) {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the grandchild {pid} outlived the session ({when})"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_stdio_servers_grandchildren_end_with_it_on_close_timeout_and_ctrl_c() {
    let dir = tempfile::tempdir().expect("tempdir");

    // Close: a probe that completes.
    let server = |name: &str| format!("'{FITNESS}' fixture-server {name}");
    let (script, pid_file) = launcher(dir.path(), &server("correct"));
    let probe = common::run_bounded(&["probe", "--json", "--", s(&script)], LIMIT);
    assert!(probe.status.success(), "{}", common::text(&probe));
    assert_gone_soon(grandchild(&pid_file), "close");

    // Timeout: a handshake that never completes.
    let (script, pid_file) = launcher(dir.path(), "sleep 600");
    let probe = common::run_bounded(&["probe", "--timeout", "2", "--", s(&script)], LIMIT);
    assert!(!probe.status.success());
    assert_gone_soon(grandchild(&pid_file), "handshake timeout");

    // Ctrl-C in the middle of a run, while a tools/call hangs.
    let (script, pid_file) = launcher(dir.path(), &server("hang"));
    let out = tempfile::tempdir().expect("tempdir");
    let mut run = Command::new(FITNESS)
        .args(common::run_args(
            "sim/diligent",
            out.path(),
            &["--timeout", "30"],
            &[s(&script)],
        ))
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fitness starts");
    let pid = grandchild(&pid_file);
    // Wait until a tools/call hangs, then interrupt.
    let started = Instant::now();
    loop {
        let called = run_dir(out.path())
            .and_then(|d| std::fs::read_to_string(d.join("mcp.jsonl")).ok())
            .is_some_and(|t| t.contains("\"method\":\"tools/call\""));
        if called {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no tools/call");
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = common::interrupt(&mut run, Duration::from_secs(60));
    assert_eq!(status.code(), Some(130));
    let mut summary = String::new();
    let _ = BufReader::new(run.stdout.take().expect("stdout")).read_line(&mut summary);
    assert_gone_soon(pid, "Ctrl-C");
    let run_dir = run_dir(out.path()).expect("a run dir");
    let record: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("record.json")).expect("record"))
            .expect("json");
    assert_eq!(record["outcome"], "VOID");
    assert_tapes_readable(&run_dir);
}

#[test]
fn fitness_suite_stops_on_ctrl_c_mid_generation_and_closes_its_tapes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tape = dir.path().join("tape");
    let mut suite = Command::new(FITNESS)
        .args([
            "suite",
            "--generator",
            "schema-walk/1",
            "--timeout",
            "60",
            "--tape",
            s(&tape),
            "--out",
            s(&dir.path().join("suite.json")),
            "--",
            FITNESS,
            "fixture-server",
            "hang",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("fitness starts");
    // Wait for the walk's first (never answered) call.
    let started = Instant::now();
    while !std::fs::read_to_string(tape.join("mcp.jsonl"))
        .is_ok_and(|t| t.contains("\"method\":\"tools/call\""))
    {
        assert!(started.elapsed() < Duration::from_secs(60), "no tools/call");
        std::thread::sleep(Duration::from_millis(50));
    }
    let interrupted = Instant::now();
    let status = common::interrupt(&mut suite, Duration::from_secs(20));
    assert_eq!(status.code(), Some(130));
    assert!(interrupted.elapsed() < Duration::from_secs(10));
    assert!(
        !dir.path().join("suite.json").exists(),
        "no suite is written"
    );
    for name in ["mcp.jsonl", "agent.jsonl"] {
        let text = std::fs::read_to_string(tape.join(name)).expect("tape");
        let end: Value =
            serde_json::from_str(text.lines().last().expect("a last line")).expect("json");
        assert_eq!(end["type"], "end", "{name}");
        assert_eq!(end["reason"], "interrupted", "{name}");
    }
}
