//! `fitness compare` on pairs of real runs of the demo servers (sim runners):
//! comparable and unchanged, a server that lost its tools (regressed), the
//! reverse (improved), another runner model (incomparable), and a spend-capped
//! run (inconclusive); text, Markdown and JSON, with the documented exit codes.

mod common;

use std::path::{Path, PathBuf};

use common::{FITNESS, s, text};
use serde_json::Value;

/// One `fitness run` of a demo server; its run directory.
fn run(out: &Path, server: &str, runner: &str, extra: &[&str]) -> PathBuf {
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
    let output = common::fitness(&args);
    let summary: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&output)));
    PathBuf::from(summary["dir"].as_str().unwrap())
}

fn compare(before: &Path, after: &Path, format: &str) -> (i32, String) {
    let out = common::fitness(&["compare", s(before), s(after), "--format", format]);
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn compare_reads_pairs_of_real_runs_and_exits_with_its_verdict() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let good = run(out, "good", "sim/diligent", &["--seed", "7"]);
    let good_again = run(out, "good", "sim/diligent", &["--seed", "8"]);
    let thin = run(out, "thin", "sim/diligent", &[]);
    let careless = run(out, "good", "sim/careless", &[]);
    let capped = run(out, "good", "sim/diligent", &["--max-model-calls", "60"]);

    // Comparable, both scored, overlapping: no change, exit 0. A record file
    // and a run directory are both accepted.
    let (code, text) = compare(&good.join("record.json"), &good_again, "text");
    assert_eq!(code, 0, "{text}");
    assert!(
        text.starts_with("comparable  yes (runner sim/diligent, generator schema-walk/1)"),
        "{text}"
    );
    assert!(text.contains("verdict     no change established"), "{text}");
    assert!(text.contains("12 of 12"), "{text}");

    // The server lost its tools: its score is gone, exit 4.
    let (code, md) = compare(&good, &thin, "markdown");
    assert_eq!(code, 4, "{md}");
    assert!(md.starts_with("### Fitness Report: regressed"), "{md}");
    assert!(md.contains("| after | `"), "{md}");
    assert!(
        md.contains("INSUFFICIENT_SURFACE at `structural` | no score |"),
        "{md}"
    );
    assert!(md.contains("Intervals separated: **no**"), "{md}");

    // The reverse: a refused server now scores, exit 0.
    let (code, json) = compare(&thin, &good, "json");
    assert_eq!(code, 0);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["verdict"], "improved");
    assert_eq!(v["exit_code"], 0);
    assert_eq!(v["delta"]["after"]["k"], 12);
    assert!(
        v["delta"].get("before").is_none(),
        "a refusal has no interval"
    );

    // Another runner model: not comparable, and it says why; exit 3.
    let (code, text) = compare(&good, &careless, "text");
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains("no: the runner model differs: sim/diligent before, sim/careless after"),
        "{text}"
    );
    assert!(!text.contains("intervals"), "no intervals are read: {text}");

    // A spend-capped (VOID) run says nothing about the server: exit 5.
    let (code, text) = compare(&good, &capped, "text");
    assert_eq!(code, 5, "{text}");
    assert!(text.contains("The after run is VOID"), "{text}");

    // An unreadable record is an error, exit 1.
    let (code, _) = compare(&good, &dir.path().join("missing"), "text");
    assert_eq!(code, 1);
}

/// The composite action's gate (`action.yml` runs `scripts/fitness-gate`):
/// a measurement, the compare against a baseline, the Markdown in the job
/// summary, the outputs, and a step that fails only on the verdicts asked.
#[test]
fn the_action_gate_measures_compares_and_fails_on_the_verdicts_asked() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let action = std::fs::read_to_string(root.join("action.yml")).unwrap();
    assert!(action.contains("using: composite"));
    assert!(action.contains("$GITHUB_ACTION_PATH/scripts/fitness-gate"));
    for (input, env) in [
        ("run-args", "FITNESS_RUN_ARGS"),
        ("baseline", "FITNESS_BASELINE"),
        ("fail-on", "FITNESS_FAIL_ON"),
        ("out", "FITNESS_OUT"),
    ] {
        assert!(
            action.contains(&format!("{env}: ${{{{ inputs.{input} }}}}")),
            "{input} reaches the gate as {env}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let baseline = run(dir.path(), "good", "sim/diligent", &[]).join("record.json");
    let gate = |target: &str, fail_on: &str, tag: &str| {
        let work = dir.path().join(tag);
        std::fs::create_dir_all(&work).unwrap();
        let output = std::process::Command::new(root.join("scripts/fitness-gate"))
            .current_dir(&work)
            .env("FITNESS_BIN", FITNESS)
            .env("FITNESS_BASELINE", &baseline)
            .env(
                "FITNESS_RUN_ARGS",
                format!("--runner sim/diligent --label server -- '{FITNESS}' demo-server {target}"),
            )
            .env("FITNESS_FAIL_ON", fail_on)
            .env("GITHUB_OUTPUT", work.join("outputs"))
            .env("GITHUB_STEP_SUMMARY", work.join("summary.md"))
            .output()
            .unwrap();
        let outputs = std::fs::read_to_string(work.join("outputs")).unwrap_or_default();
        let summary = std::fs::read_to_string(work.join("summary.md")).unwrap_or_default();
        (output.status.code().unwrap(), outputs, summary)
    };
    let (code, outputs, summary) = gate("thin", "regressed incomparable", "strict");
    assert_eq!(code, 4, "{outputs}");
    assert!(
        outputs.contains("verdict=regressed\nexit-code=4\n"),
        "{outputs}"
    );
    assert!(
        summary.starts_with("### Fitness Report: regressed"),
        "{summary}"
    );
    let record = outputs
        .lines()
        .find_map(|l| l.strip_prefix("record="))
        .unwrap();
    assert!(dir.path().join("strict").join(record).is_file());
    // The same regression passes a gate that does not fail on it.
    let (code, outputs, _) = gate("thin", "incomparable", "lenient");
    assert_eq!(code, 0, "{outputs}");
    let (code, outputs, _) = gate("good", "regressed incomparable", "same");
    assert_eq!(code, 0, "{outputs}");
    assert!(
        outputs.contains("verdict=no_change_established"),
        "{outputs}"
    );
}
