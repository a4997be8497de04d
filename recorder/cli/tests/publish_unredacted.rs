//! `fitness publish` names every run recorded before the redaction policy
//! existed (its record has no `redactions`): such a run's files cannot be
//! redacted without breaking their hashes, so the operator is told.

use crate::common;

use std::time::Duration;

use common::{FITNESS, run_bounded, run_summary, s, text};
use serde_json::Value;

#[test]
fn a_run_recorded_before_redaction_is_named_and_a_new_one_is_not() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("runs");
    let args = [
        "run",
        "--runner",
        "sim/diligent",
        "--out",
        s(&runs),
        "--json",
        "--",
        FITNESS,
        "demo-server",
        "thin",
    ];
    let (summary, run_dir) = run_summary(&args, Duration::from_secs(120));
    let id = summary["run"].as_str().expect("run id").to_owned();
    let publish = || {
        run_bounded(
            &[
                "publish",
                s(&runs),
                "--out",
                s(&dir.path().join("site")),
                "--no-viewer",
            ],
            Duration::from_secs(60),
        )
    };
    let out = publish();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        !text(&out).contains("recorded before redaction"),
        "{}",
        text(&out)
    );

    // The same run as an older recorder wrote it: no `redactions`.
    let path = run_dir.join("record.json");
    let mut record: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("record")).expect("JSON");
    assert!(
        record["redactions"].is_object(),
        "a new run counts its redactions"
    );
    record.as_object_mut().expect("object").remove("redactions");
    std::fs::write(&path, serde_json::to_vec(&record).expect("JSON")).expect("written");
    let out = publish();
    assert!(out.status.success(), "{}", text(&out));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("note: run {id} was recorded before redaction")),
        "{said}"
    );
}
