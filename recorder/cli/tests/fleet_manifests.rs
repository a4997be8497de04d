//! The shipped fan-out manifests (`.github/workflows/sweep.yml` and
//! `deploy/kubernetes/*.yaml`) run as written: their shard commands, one per
//! index, and their publish command, against a small roster of demo servers.
//! Each shard takes exactly the slots `k mod N`, the shard count written in
//! each manifest matches its fan-out, and the merged board has every slot
//! once, with unique run ids.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{FITNESS, s};
use serde_json::Value;

fn repo_file(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

/// The one line of `text` that starts (after spaces) with `prefix`, from the prefix on.
fn line_starting(text: &str, prefix: &str) -> String {
    let found: Vec<&str> = text
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with(prefix))
        .collect();
    assert_eq!(found.len(), 1, "one line starts with {prefix:?}: {found:?}");
    found[0][prefix.len()..].trim().to_owned()
}

fn roster(dir: &Path) -> PathBuf {
    let demo = |label: &str, server: &str, extra: &str| {
        format!(
            "[[target]]\nlabel = \"{label}\"\ncommand = [\"fitness\", \"demo-server\", \"{server}\"]\n{extra}\n"
        )
    };
    let mut text =
        String::from("runners = [\"sim/diligent\"]\n[run]\ngenerator = \"schema-walk/1\"\n\n");
    text += &demo("demo-good", "good", "");
    text += &demo(
        "demo-careless",
        "good",
        "runners = [\"sim/careless\"]\nruns = 2",
    );
    text += &demo("demo-thin", "thin", "");
    text += &demo("demo-trivia", "trivia", "");
    text += &demo("demo-constant", "constant", "");
    let path = dir.join("roster.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const SLOTS: usize = 6;

/// `sh -c SCRIPT` with `fitness` first on PATH and `env`.
fn shell(script: &str, env: &[(&str, String)]) {
    let bin = Path::new(FITNESS).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", script])
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("sh runs");
    assert!(
        out.status.success(),
        "{script}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The shard's own summary: the slot indices it ran.
fn shard_slots(dir: &Path, i: usize, n: usize) -> Vec<usize> {
    let path = dir.join(format!(".sweep/summary-shard-{i}-of-{n}.json"));
    let summary: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    summary["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            assert_eq!(s["status"], "ran", "{s:#}");
            s["index"].as_u64().unwrap() as usize
        })
        .collect()
}

fn board_of(site: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(site.join("data/board.json")).unwrap()).unwrap()
}

fn assert_every_slot_once(board: &Value) {
    let rows = board["rows"].as_array().unwrap();
    assert_eq!(rows.len(), SLOTS, "every slot once");
    let ids: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), SLOTS, "run ids are unique across shards");
}

#[test]
fn the_kubernetes_indexed_job_runs_its_shards_and_publishes_them_together() {
    let job = repo_file("deploy/kubernetes/sweep-job.yaml");
    let completions: usize = line_starting(&job, "completions:").parse().unwrap();
    let shards_value = job
        .split("name: FITNESS_SHARDS")
        .nth(1)
        .map(|rest| line_starting(rest.lines().nth(1).unwrap_or(""), "value:"))
        .expect("FITNESS_SHARDS is set");
    let shards: usize = shards_value.trim_matches('"').parse().unwrap();
    assert_eq!(
        shards, completions,
        "FITNESS_SHARDS matches spec.completions"
    );
    assert!(job.contains("completionMode: Indexed"));
    let sweep = line_starting(&job, "- exec fitness sweep");
    let publish = line_starting(
        &repo_file("deploy/kubernetes/publish-job.yaml"),
        "- exec fitness publish",
    );

    let dir = tempfile::tempdir().unwrap();
    let roster = roster(dir.path());
    let runs = dir.path().join("runs");
    let mut seen = Vec::new();
    for index in 0..completions {
        shell(
            &format!("exec fitness sweep {sweep}"),
            &[
                ("JOB_COMPLETION_INDEX", index.to_string()),
                ("FITNESS_SHARDS", shards.to_string()),
                ("FITNESS_JOBS", "3".to_owned()),
                ("FITNESS_ROSTER", s(&roster).to_owned()),
                ("FITNESS_RUNS", s(&runs).to_owned()),
            ],
        );
        let mine = shard_slots(&runs.join(format!("shard-{index}")), index, shards);
        assert!(mine.iter().all(|k| k % shards == index), "{mine:?}");
        seen.extend(mine);
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..SLOTS).collect::<Vec<_>>());
    shell(
        &format!("exec fitness publish {publish}"),
        &[("FITNESS_RUNS", s(&runs).to_owned())],
    );
    assert_every_slot_once(&board_of(&runs.join("site")));
}

#[test]
fn the_github_workflow_runs_its_matrix_and_publishes_the_artifacts_together() {
    let flow = repo_file(".github/workflows/sweep.yml");
    let matrix = line_starting(&flow, "shard: [");
    let matrix = format!("[{matrix}");
    let shards: Vec<usize> = matrix
        .trim_matches(['[', ']'])
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect();
    let n = shards.len();
    assert_eq!(
        shards,
        (0..n).collect::<Vec<_>>(),
        "the matrix lists 0..N-1"
    );
    let sweep = line_starting(&flow, "run: fitness sweep");
    assert!(sweep.contains("${{ matrix.shard }}/${{ strategy.job-total }}"));
    let artifact = line_starting(&flow, "name: runs-shard-");
    let uploaded = line_starting(&flow, "path: runs/shard-");
    assert_eq!(artifact, "${{ matrix.shard }}");
    assert_eq!(uploaded, "${{ matrix.shard }}");
    assert!(flow.contains("pattern: runs-shard-*"));
    let publish = line_starting(&flow, "run: fitness publish");

    let dir = tempfile::tempdir().unwrap();
    let roster = roster(dir.path());
    let work = dir.path().join("job");
    std::fs::create_dir_all(&work).unwrap();
    let downloaded = dir.path().join("publish-job");
    for shard in &shards {
        let script = format!("cd {} && exec fitness sweep {sweep}", s(&work))
            .replace("${{ matrix.shard }}", &shard.to_string())
            .replace("${{ strategy.job-total }}", &n.to_string());
        shell(&script, &[("FITNESS_ROSTER", s(&roster).to_owned())]);
        let mine = shard_slots(&work.join(format!("runs/shard-{shard}")), *shard, n);
        assert!(mine.iter().all(|k| k % n == *shard));
        // download-artifact with a pattern puts each artifact in its own directory.
        let to = downloaded.join(format!("runs/runs-shard-{shard}"));
        copy_dir(&work.join(format!("runs/shard-{shard}")), &to);
    }
    // The site is published from the downloaded artifacts (data only here:
    // the workflow builds the viewer first).
    let script = format!(
        "cd {} && exec fitness publish {}",
        s(&downloaded),
        publish.replace("--viewer dist", "--no-viewer")
    );
    shell(&script, &[]);
    assert_every_slot_once(&board_of(&downloaded.join("site")));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let dst = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &dst);
        } else {
            std::fs::copy(entry.path(), dst).unwrap();
        }
    }
}
