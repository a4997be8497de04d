//! `fitness publish` over a site that already exists: new runs are added,
//! a changed run is replaced, every earlier run (reruns included) is kept,
//! publishing the same runs twice changes no byte, and a publish that fails
//! midway leaves the old site exactly as it was.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{FITNESS, s, text};
use serde_json::Value;

fn run(out: &Path, server: &str, seed: &str) -> PathBuf {
    let output = common::fitness(&[
        "run",
        "--runner",
        "sim/diligent",
        "--label",
        "demo",
        "--seed",
        seed,
        "--out",
        s(out),
        "--json",
        "--",
        FITNESS,
        "demo-server",
        server,
    ]);
    let summary: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output)));
    PathBuf::from(summary["dir"].as_str().unwrap())
}

fn publish(runs: &Path, site: &Path, extra: &[&str]) -> (bool, String) {
    let mut args = vec!["publish", s(runs), "--out", s(site), "--no-viewer"];
    args.extend(extra);
    let out = common::fitness(&args);
    (out.status.success(), text(&out))
}

/// Change a run's record (same id, other bytes): add an own note.
fn add_note(run: &Path) {
    let path = run.join("record.json");
    let mut record: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    record["notes"]["own"]
        .as_array_mut()
        .unwrap()
        .push("Re-published with a note.".into());
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
}

/// Every file under `dir`: relative path -> sha256.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().display().to_string();
                out.insert(
                    rel,
                    fitness_shared::integrity::sha256_hex(&std::fs::read(&p).unwrap()),
                );
            }
        }
    }
    out
}

fn board(site: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(site.join("data/board.json")).unwrap()).unwrap()
}

fn only_site_left(parent: &Path) {
    let names: Vec<String> = std::fs::read_dir(parent)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("site"))
        .collect();
    assert_eq!(
        names,
        ["site"],
        "no staging or set-aside site is left: {names:?}"
    );
}

#[test]
fn publishing_over_a_site_adds_replaces_keeps_and_is_idempotent() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    let week1 = tmp.path().join("week1");
    let first = run(&week1, "good", "7");
    let (ok, out) = publish(&week1, &site, &[]);
    assert!(ok, "{out}");
    let first_id = first.file_name().unwrap().to_string_lossy().into_owned();
    let first_record =
        std::fs::read(site.join("runs").join(&first_id).join("record.json")).unwrap();

    // Week 2 publishes only its own runs: a rerun of the same server and a new one.
    let week2 = tmp.path().join("week2");
    let rerun = run(&week2, "good", "8");
    run(&week2, "thin", "7");
    let (ok, out) = publish(&week2, &site, &[]);
    assert!(ok, "{out}");
    assert!(
        out.contains("2 added, 0 replaced, 0 unchanged, 1 kept"),
        "{out}"
    );
    let b = board(&site);
    assert_eq!(
        b["rows"].as_array().unwrap().len(),
        3,
        "the earlier run is kept"
    );
    let demo: Vec<&Value> = b["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["server"]["slug"] == "demo")
        .collect();
    assert_eq!(demo.len(), 3, "three runs of the server named demo");
    assert!(
        demo.iter().all(|r| r["attempt"]["of"] == 3),
        "reruns are numbered together"
    );
    assert_eq!(
        std::fs::read(site.join("runs").join(&first_id).join("record.json")).unwrap(),
        first_record,
        "an earlier run is never rewritten"
    );
    assert!(
        site.join("runs")
            .join(rerun.file_name().unwrap())
            .join("mcp.jsonl.gz")
            .is_file()
    );
    only_site_left(tmp.path());

    // Idempotent: the same runs again change no byte of the site.
    let before = snapshot(&site);
    let (ok, out) = publish(&week2, &site, &[]);
    assert!(ok, "{out}");
    assert!(
        out.contains("0 added, 0 replaced, 2 unchanged, 1 kept"),
        "{out}"
    );
    assert_eq!(snapshot(&site), before);

    // A run whose record changed (same id, other bytes) is replaced.
    add_note(&rerun);
    let (ok, out) = publish(&week2, &site, &[]);
    assert!(ok, "{out}");
    assert!(
        out.contains("0 added, 1 replaced, 1 unchanged, 1 kept"),
        "{out}"
    );
    let published = std::fs::read_to_string(
        site.join("runs")
            .join(rerun.file_name().unwrap())
            .join("record.json"),
    )
    .unwrap();
    assert!(published.contains("Re-published with a note."));
    assert_eq!(board(&site)["rows"].as_array().unwrap().len(), 3);

    // --replace publishes the inputs alone.
    let (ok, out) = publish(&week1, &site, &["--replace"]);
    assert!(ok, "{out}");
    assert_eq!(board(&site)["rows"].as_array().unwrap().len(), 1);
}

#[test]
fn a_publish_that_fails_midway_leaves_the_old_site_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    let week1 = tmp.path().join("week1");
    run(&week1, "good", "7");
    let (ok, out) = publish(&week1, &site, &[]);
    assert!(ok, "{out}");
    let before = snapshot(&site);

    // Week 2: one good run, and one whose tape no longer matches its record.
    let week2 = tmp.path().join("week2");
    run(&week2, "thin", "7");
    let bad = run(&week2, "good", "9");
    let mut tape = std::fs::read(bad.join("agent.jsonl")).unwrap();
    tape.extend_from_slice(b"{\"appended\":true}\n");
    std::fs::write(bad.join("agent.jsonl"), tape).unwrap();
    let (ok, out) = publish(&week2, &site, &[]);
    assert!(!ok, "{out}");
    assert!(out.contains("does not match its record"), "{out}");
    assert_eq!(snapshot(&site), before, "the old site is untouched");
    only_site_left(tmp.path());
}

#[test]
fn an_unchanged_runs_page_is_kept_and_a_changed_runs_page_is_rendered_anew() {
    use std::os::unix::fs::MetadataExt as _;
    let tmp = tempfile::tempdir().unwrap();
    let site = tmp.path().join("site");
    let viewer = common::fake_viewer(tmp.path());
    let week = tmp.path().join("week");
    let kept = run(&week, "good", "7");
    let changed = run(&week, "thin", "7");
    let with_viewer = |extra: &[&str]| {
        let mut args = vec![
            "publish",
            s(&week),
            "--out",
            s(&site),
            "--viewer",
            s(&viewer),
        ];
        args.extend(extra);
        let out = common::fitness(&args);
        assert!(out.status.success(), "{}", text(&out));
        text(&out)
    };
    with_viewer(&[]);
    let page = |run: &Path| {
        site.join("runs")
            .join(run.file_name().unwrap())
            .join("index.html")
    };
    let (kept_ino, kept_bytes) = (
        std::fs::metadata(page(&kept)).unwrap().ino(),
        std::fs::read(page(&kept)).unwrap(),
    );
    let changed_ino = std::fs::metadata(page(&changed)).unwrap().ino();

    add_note(&changed);
    let out = with_viewer(&[]);
    assert!(
        out.contains("0 added, 1 replaced, 1 unchanged, 0 kept"),
        "{out}"
    );
    // The unchanged run's page is the old site's file itself (hard-linked,
    // never rendered or written again); the changed run's is a new file.
    let meta = std::fs::metadata(page(&kept)).unwrap();
    assert_eq!(meta.ino(), kept_ino);
    assert_eq!(std::fs::read(page(&kept)).unwrap(), kept_bytes);
    assert_ne!(
        std::fs::metadata(page(&changed)).unwrap().ino(),
        changed_ino
    );
    assert!(
        std::fs::read_to_string(page(&changed))
            .unwrap()
            .contains("Re-published with a note.")
    );
    only_site_left(tmp.path());
}
