//! `fitness run --conformance` against `@modelcontextprotocol/server-everything`
//! in streamableHttp mode (it binds every interface: we connect through
//! 127.0.0.1 only and kill it by PID). The official suite runs first; its
//! counts in the record equal its own checks.json files, which are kept
//! beside the tapes, hashed and signed with the record, published with it,
//! and shown on the board in their own column, apart from our probes.

mod common;

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
    let entry =
        tools.join("conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js");
    assert!(
        entry.is_file(),
        "the official conformance suite is not installed at {}: run scripts/setup",
        entry.display()
    );
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
        probes.len() as u64,
        "the probe column counts our probes only"
    );

    let tampered = run_dir.join(dns["path"].as_str().unwrap());
    std::fs::write(&tampered, b"[]").unwrap();
    let failed_verify = common::fitness(&["verify", s(&run_dir.join("record.json"))]);
    assert!(!failed_verify.status.success());
    assert!(text(&failed_verify).contains("dns-rebinding-protection/checks.json"));
    let _ = FITNESS;
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
