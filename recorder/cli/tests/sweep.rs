//! `fitness sweep` over a roster of real servers (the demo servers, the npm
//! and PyPI servers scripts/setup installs, an in-tree fixture, and one that
//! cannot start): `-j 4`, killed midway (the whole process group, SIGKILL,
//! as a lost CI runner dies) and resumed; and three shards published together
//! against one unsharded sweep.
//!
//! "The same board" is defined in `board_signature`: equal counts, equal
//! groups (id, title, statement, separation, size), and equal rows as a
//! multiset once each row's run identity is set aside (run id, start time,
//! record and tape paths and hashes, and the attempt numbering, which follows
//! start times). Everything a reader compares is kept.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{FITNESS, require_tool, s};
use serde_json::Value;

const SECRET: &str = "sweep-secret-value-7f3a91";

struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("fsroot");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("notes.txt"), "sweep fixture\n").unwrap();
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(&repo).unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(args)
                .current_dir(&repo)
                .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
                .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
                .stdout(Stdio::null())
                .status()
                .expect("git runs")
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(repo.join("README"), "fixture repository\n").unwrap();
        git(&["add", "README"]);
        git(&[
            "-c",
            "user.email=sweep@example.invalid",
            "-c",
            "user.name=sweep",
            "commit",
            "-qm",
            "first commit",
        ]);
        Fixture { dir }
    }

    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }

    /// The roster: demo servers, real servers, a fixture, and (with
    /// `failing`) one target whose command does not exist.
    fn roster(&self, name: &str, with_slow: bool, failing: bool) -> PathBuf {
        let tool = |n: &str| require_tool(n).display().to_string();
        let demo = |label: &str, server: &str, extra: &str| {
            format!(
                "[[target]]\nlabel = \"{label}\"\ncommand = [\"{FITNESS}\", \"demo-server\", \"{server}\"]\n{extra}\n"
            )
        };
        let mut text = String::from(
            "runners = [\"sim/diligent\"]\n[run]\ngenerator = \"schema-walk/1\"\nseed = 7\n\n",
        );
        if with_slow {
            // First, so it is in flight whenever the sweep is killed.
            text += &demo("demo-broken", "broken", "[target.run]\ntimeout = 1");
        }
        text += &demo("demo-good", "good", "");
        text += &demo(
            "demo-careless",
            "good",
            "runners = [\"sim/careless\"]\nruns = 2",
        );
        text += &demo("demo-thin", "thin", "");
        text += &demo("demo-trivia", "trivia", "");
        text += &demo("demo-constant", "constant", "");
        text += &demo("demo-canary", "canary", "[target.run]\nmax_extensions = 0");
        text += &format!(
            "[[target]]\nlabel = \"everything\"\ncommand = [\"{}\"]\n\n",
            tool("mcp-server-everything")
        );
        text += &format!(
            "[[target]]\nlabel = \"memory\"\ncommand = [\"{}\"]\nenv = {{ MEMORY_FILE_PATH = \"SWEEP_TEST_MEMORY_FILE\" }}\n\n",
            tool("mcp-server-memory")
        );
        text += &format!(
            "[[target]]\nlabel = \"filesystem\"\ncommand = [\"{}\", \"{}\"]\n\n",
            tool("mcp-server-filesystem"),
            self.path("fsroot").display()
        );
        text += &format!(
            "[[target]]\nlabel = \"time\"\ncommand = [\"{}\"]\n\n",
            tool("mcp-server-time")
        );
        text += &format!(
            "[[target]]\nlabel = \"git\"\ncommand = [\"{}\", \"--repository\", \"{}\"]\n\n",
            tool("mcp-server-git"),
            self.path("repo").display()
        );
        text += &format!(
            "[[target]]\nlabel = \"fixture\"\ncommand = [\"{FITNESS}\", \"fixture-server\", \"correct\"]\nenv = {{ FIXTURE_TOKEN = \"SWEEP_TEST_SECRET\" }}\n\n"
        );
        if failing {
            text += "[[target]]\nlabel = \"missing\"\ncommand = [\"/nonexistent/mcp-server\"]\n\n";
        }
        let path = self.path(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// A `fitness sweep` child in its own process group, its output in files.
struct Sweep {
    child: std::process::Child,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Sweep {
    fn start(roster: &Path, out: &Path, extra: &[&str], memory: &Path) -> Sweep {
        use std::os::unix::process::CommandExt as _;
        let stdout = out.with_extension("stdout");
        let stderr = out.with_extension("stderr");
        let child = Command::new(FITNESS)
            .args(["sweep", s(roster), "-j", "4", "--out", s(out), "--json"])
            .args(extra)
            .env("SWEEP_TEST_MEMORY_FILE", memory)
            .env("SWEEP_TEST_SECRET", SECRET)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&stdout).unwrap())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .process_group(0)
            .spawn()
            .expect("fitness sweep starts");
        Sweep {
            child,
            stdout,
            stderr,
        }
    }

    /// Wait for the sweep; its exit code and JSON summary.
    fn finish(mut self, limit: Duration) -> (Option<i32>, Value) {
        let started = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > limit {
                self.kill_group();
                panic!(
                    "the sweep did not finish within {limit:?}: {}",
                    std::fs::read_to_string(&self.stderr).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let text = std::fs::read_to_string(&self.stdout).unwrap();
        let summary: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "the summary is JSON ({e}): {text}\n{}",
                std::fs::read_to_string(&self.stderr).unwrap_or_default()
            )
        });
        (status.code(), summary)
    }

    /// SIGKILL the sweep and every process in its group: the runs it started
    /// and their servers die with it, leaving what a lost machine leaves.
    fn kill_group(&mut self) {
        let pgid = self.child.id();
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{pgid}")])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Sweep {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.kill_group();
        }
    }
}

fn records_in(out: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path().join("record.json"))
        .filter(|p| p.is_file())
        .collect()
}

fn slots(summary: &Value) -> &Vec<Value> {
    summary["slots"].as_array().expect("slots")
}

fn by_tag(summary: &Value) -> BTreeMap<String, Value> {
    slots(summary)
        .iter()
        .map(|s| (s["tag"].as_str().unwrap().to_owned(), s.clone()))
        .collect()
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_sweep_killed_midway_resumes_skipping_what_completed() {
    let fx = Fixture::new();
    let roster = fx.roster("roster.toml", true, true);
    let out = fx.path("runs");
    let memory = fx.path("memory.jsonl");

    let mut first = Sweep::start(&roster, &out, &[], &memory);
    let started = Instant::now();
    while records_in(&out).len() < 4 {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "no progress: {}",
            std::fs::read_to_string(&first.stderr).unwrap_or_default()
        );
        assert!(
            first.child.try_wait().unwrap().is_none(),
            "the sweep ended before it was killed"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    first.kill_group();
    drop(first);
    let before: Vec<String> = records_in(&out)
        .iter()
        .map(|p| {
            p.parent()
                .unwrap()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    // The slow target was in flight: its run directory has no record.
    let unfinished: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir() && p.join("mcp.jsonl").is_file() && !p.join("record.json").exists())
        .collect();
    assert!(
        unfinished.iter().any(|p| p
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("demo-broken-")),
        "the slow run was interrupted: {unfinished:?}"
    );

    let (code, summary) =
        Sweep::start(&roster, &out, &[], &memory).finish(Duration::from_secs(900));
    assert_eq!(code, Some(0), "{summary:#}");
    let slots = slots(&summary);
    assert_eq!(slots.len(), 15, "14 targets, one with two reruns");
    let labels: std::collections::BTreeSet<&str> =
        slots.iter().map(|s| s["label"].as_str().unwrap()).collect();
    assert!(labels.len() >= 12, "{labels:?}");
    for slot in slots {
        let id = slot["run_id"].as_str().unwrap_or_default();
        let tag = slot["tag"].as_str().unwrap();
        match slot["status"].as_str().unwrap() {
            "skipped" => {
                assert!(before.iter().any(|b| b == id), "{slot:#}");
                assert!(id.ends_with(&format!("{tag}-a1")), "{slot:#}");
            }
            "re-run" => {
                assert!(
                    id.ends_with(&format!("{tag}-a2")),
                    "a new attempt: {slot:#}"
                );
                assert!(slot["detail"].as_str().unwrap().contains("interrupted"));
            }
            "ran" => assert!(id.ends_with(&format!("{tag}-a1")), "{slot:#}"),
            other => panic!("slot {slot:#} ended {other}"),
        }
    }
    let count = |status: &str| slots.iter().filter(|s| s["status"] == status).count();
    assert_eq!(count("skipped"), before.len(), "{summary:#}");
    assert!(count("re-run") >= 1, "{summary:#}");
    let outcome = |label: &str| {
        slots
            .iter()
            .find(|s| s["label"] == label)
            .map(|s| s["outcome"].as_str().unwrap_or_default().to_owned())
            .unwrap()
    };
    assert_eq!(outcome("demo-good"), "SCORED");
    assert_eq!(outcome("demo-thin"), "INSUFFICIENT_SURFACE");
    assert_eq!(outcome("demo-trivia"), "DEGENERATE");
    assert_eq!(outcome("demo-constant"), "DEGENERATE");
    assert_eq!(outcome("demo-broken"), "GATE_FAILED");
    assert_eq!(outcome("demo-canary"), "EXTEND_EXHAUSTED");
    // The real servers were reached and measured (whatever their outcome).
    for real in [
        "everything",
        "memory",
        "filesystem",
        "time",
        "git",
        "fixture",
    ] {
        assert_ne!(outcome(real), "VOID", "{real}: {summary:#}");
    }
    // One target that cannot start is an honest VOID; it stopped no other.
    assert_eq!(outcome("missing"), "VOID");

    // A third sweep has nothing left to do.
    // (Written as JUnit too: a suite per slot, its run gate by gate.)
    let junit = fx.path("sweep-junit.xml");
    let (code, again) = Sweep::start(&roster, &out, &["--junit", s(&junit)], &memory)
        .finish(Duration::from_secs(120));
    assert_eq!(code, Some(0));
    assert!(all_slots(&again, |s| s["status"] == "skipped"), "{again:#}");
    let suites = junit_parser::from_reader(std::io::BufReader::new(
        std::fs::File::open(&junit).unwrap(),
    ))
    .unwrap();
    assert_eq!(suites.suites.len(), 15, "a suite per slot");
    let outcome_case = |label: &str| {
        let suite = suites
            .suites
            .iter()
            .find(|s| s.name.starts_with(&format!("{label} (")))
            .unwrap_or_else(|| panic!("{label}'s suite"));
        suite
            .cases
            .iter()
            .find(|c| c.original_name == "outcome")
            .unwrap()
            .status
            .clone()
    };
    assert!(outcome_case("demo-good").is_success());
    assert!(outcome_case("demo-thin").is_failure());
    assert!(outcome_case("missing").is_failure());

    // Every run directory publishes; the interrupted attempts that left no
    // record are not runs, the completed ones all are.
    let site = fx.path("site");
    let published = common::fitness(&["publish", s(&out), "--out", s(&site), "--no-viewer"]);
    assert!(published.status.success(), "{}", common::text(&published));
    let board: Value =
        serde_json::from_slice(&std::fs::read(site.join("data/board.json")).unwrap()).unwrap();
    assert_eq!(
        board["rows"].as_array().unwrap().len(),
        records_in(&out).len()
    );

    // The secret was given by name; its value is in no file the sweep wrote.
    for file in files_under(&out) {
        let bytes = std::fs::read(&file).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(SECRET),
            "{} holds the secret",
            file.display()
        );
    }
}

fn all_slots(summary: &Value, pred: impl Fn(&Value) -> bool) -> bool {
    slots(summary).iter().all(pred)
}

/// The board with each row's run identity set aside (see the module docs).
fn board_signature(board: &Value) -> Value {
    let mut rows: Vec<String> = board["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let mut row = row.clone();
            let obj = row.as_object_mut().unwrap();
            for key in ["id", "started_at", "record", "tapes"] {
                obj.remove(key);
            }
            let attempt = obj.remove("attempt").unwrap();
            let mut others: Vec<String> = attempt["others"]
                .as_array()
                .map(|o| {
                    o.iter()
                        .map(|o| format!("{} {}", o["group"], o["outcome"]))
                        .collect()
                })
                .unwrap_or_default();
            others.sort();
            obj.insert(
                "attempt".into(),
                serde_json::json!({"of": attempt["of"], "others": others}),
            );
            serde_json::to_string(&row).unwrap()
        })
        .collect();
    rows.sort();
    let groups: Vec<Value> = board["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            serde_json::json!({
                "id": g["id"], "tier": g["tier"], "title": g["title"],
                "statement": g["statement"], "generators": g["generators"],
                "nothing_separates": g["nothing_separates"],
                "rows": g["rows"].as_array().unwrap().len(),
            })
        })
        .collect();
    serde_json::json!({"counts": board["counts"], "groups": groups, "rows": rows})
}

fn publish_board(site: &Path, dirs: &[&Path]) -> Value {
    let mut args = vec!["publish".to_owned()];
    args.extend(dirs.iter().map(|d| s(d).to_owned()));
    args.extend(["--out".into(), s(site).into(), "--no-viewer".into()]);
    args.extend(["--published-at".into(), "2026-12-01T00:00:00Z".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = common::fitness(&args);
    assert!(out.status.success(), "{}", common::text(&out));
    serde_json::from_slice(&std::fs::read(site.join("data/board.json")).unwrap()).unwrap()
}

#[test]
fn three_shards_published_together_give_the_board_of_one_sweep() {
    let fx = Fixture::new();
    let roster = fx.roster("roster.toml", false, false);

    let whole = fx.path("whole");
    let (code, all) = Sweep::start(&roster, &whole, &[], &fx.path("memory-whole.jsonl"))
        .finish(Duration::from_secs(900));
    assert_eq!(code, Some(0), "{all:#}");

    let mut shard_dirs = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for i in 0..3 {
        let dir = fx.path(&format!("shard-{i}"));
        let shard = format!("{i}/3");
        let (code, summary) = Sweep::start(
            &roster,
            &dir,
            &["--shard", &shard],
            &fx.path(&format!("memory-{i}.jsonl")),
        )
        .finish(Duration::from_secs(900));
        assert_eq!(code, Some(0), "{summary:#}");
        assert_eq!(summary["shard"], shard);
        for slot in slots(&summary) {
            let index = slot["index"].as_u64().unwrap() as usize;
            assert_eq!(index % 3, i, "slot k goes to shard k mod 3");
            *seen
                .entry(slot["tag"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        shard_dirs.push(dir);
    }
    // The shards partition the sweep: each slot ran exactly once.
    let whole_tags = by_tag(&all);
    assert_eq!(seen.len(), whole_tags.len());
    assert!(seen.values().all(|&n| n == 1), "{seen:?}");
    assert!(seen.keys().all(|t| whole_tags.contains_key(t)));

    let one = publish_board(&fx.path("site-whole"), &[whole.as_path()]);
    let dirs: Vec<&Path> = shard_dirs.iter().map(PathBuf::as_path).collect();
    let merged = publish_board(&fx.path("site-shards"), &dirs);
    // Ids stay unique across shards that never talked to each other.
    let ids: std::collections::BTreeSet<&str> = merged["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), merged["rows"].as_array().unwrap().len());
    assert_eq!(ids.len(), whole_tags.len());
    assert_eq!(board_signature(&one), board_signature(&merged));
}

/// The slow target and a quick one, for the stop paths.
fn slow_roster(fx: &Fixture) -> PathBuf {
    let text = format!(
        "runners = [\"sim/diligent\"]\n[run]\ngenerator = \"schema-walk/1\"\n\n\
         [[target]]\nlabel = \"demo-broken\"\ncommand = [\"{FITNESS}\", \"demo-server\", \"broken\"]\n[target.run]\ntimeout = 1\n\n\
         [[target]]\nlabel = \"demo-thin\"\ncommand = [\"{FITNESS}\", \"demo-server\", \"thin\"]\n"
    );
    let path = fx.path("slow.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn status_of<'a>(summary: &'a Value, label: &str) -> &'a Value {
    slots(summary).iter().find(|s| s["label"] == label).unwrap()
}

#[test]
fn sigterm_and_run_timeout_stop_runs_with_void_records_that_resume_as_new_attempts() {
    let fx = Fixture::new();
    let roster = slow_roster(&fx);
    let memory = fx.path("memory.jsonl");

    // --run-timeout: the slow run is asked to stop, writes a VOID record,
    // and its slot has no completed run (exit 1); the other slot completes.
    let out = fx.path("timeout");
    let (code, summary) = Sweep::start(&roster, &out, &["--run-timeout", "6"], &memory)
        .finish(Duration::from_secs(300));
    assert_eq!(code, Some(1), "{summary:#}");
    let slow = status_of(&summary, "demo-broken");
    assert_eq!(slow["status"], "failed", "{slow:#}");
    assert!(
        slow["detail"].as_str().unwrap().contains("--run-timeout"),
        "{slow:#}"
    );
    assert_eq!(slow["outcome"], "VOID", "{slow:#}");
    assert_eq!(status_of(&summary, "demo-thin")["status"], "ran");

    // SIGTERM to the sweep: running slots stop and write VOID records, the
    // sweep exits 130 and says so; a resumed sweep re-runs them as attempt 2.
    let out = fx.path("term");
    let sweep = Sweep::start(&roster, &out, &[], &memory);
    let started = Instant::now();
    while records_in(&out).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the quick slot never finished"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let ok = Command::new("kill")
        .args(["-TERM", &sweep.child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let (code, summary) = sweep.finish(Duration::from_secs(60));
    assert_eq!(code, Some(130), "{summary:#}");
    let slow = status_of(&summary, "demo-broken");
    assert_eq!(slow["status"], "interrupted", "{slow:#}");
    assert_eq!(
        slow["outcome"], "VOID",
        "a VOID record was written: {slow:#}"
    );
    let first = slow["run_id"].as_str().unwrap().to_owned();
    assert!(first.ends_with("-a1"));

    let (_, again) = Sweep::start(&roster, &out, &["--run-timeout", "3"], &memory)
        .finish(Duration::from_secs(120));
    let slow = status_of(&again, "demo-broken");
    assert!(
        slow["run_id"].as_str().unwrap().ends_with("-a2"),
        "never continued, always a new attempt: {slow:#}"
    );
    assert!(
        slow["detail"]
            .as_str()
            .unwrap()
            .contains("earlier attempt 1 interrupted"),
        "{slow:#}"
    );
    assert_eq!(status_of(&again, "demo-thin")["status"], "skipped");
}
