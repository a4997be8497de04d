//! `fitness compare` on pairs of real runs of the demo servers (sim runners):
//! comparable and unchanged, a refusal of the measurement (inconclusive),
//! the reverse (improved), another runner model (incomparable), and a
//! spend-capped run (inconclusive); text, Markdown and JSON, with the
//! documented exit codes. The action's steps as written, around them.

use crate::common;

use std::path::Path;

use common::{FITNESS, demo_run as run, s};
use serde_json::Value;

/// Flags that register a suite the good demo server cannot fill: its run is
/// refused at the structural gate (INSUFFICIENT_SURFACE), a refusal of the
/// measurement of the same server.
const TOO_THIN: [&str; 6] = ["--tasks", "1000", "--min-suite", "1000", "--reps", "1"];

pub(crate) fn compare(before: &Path, after: &Path, format: &str) -> (i32, String) {
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
    let thin = run(out, "good", "sim/diligent", &TOO_THIN);
    let careless = run(out, "good", "sim/careless", &[]);
    let capped = run(out, "good", "sim/diligent", &["--max-model-calls", "60"]);

    // Comparable, both scored, overlapping: no change, exit 0. A record file
    // and a run directory are both accepted. Another seed made another
    // suite, so the runs are read as independent samples, and it says so.
    let (code, text) = compare(&good.join("record.json"), &good_again, "text");
    assert_eq!(code, 0, "{text}");
    assert!(
        text.starts_with("comparable  yes (runner sim/diligent, generator schema-walk/1)"),
        "{text}"
    );
    assert!(
        text.contains("reading     independent samples: the runs drove different suites"),
        "{text}"
    );
    assert!(text.contains("verdict     no change established"), "{text}");
    assert!(text.contains("12 of 12"), "{text}");

    // The after run's registration asks for a suite the server cannot fill:
    // a refusal of the measurement, not a regression of the server; exit 5.
    let (code, md) = compare(&good, &thin, "markdown");
    assert_eq!(code, 5, "{md}");
    assert!(md.starts_with("### Fitness Report: inconclusive"), "{md}");
    assert!(md.contains("not a regression of the server"), "{md}");
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

/// The composite action's steps as written in `action.yml`, run the way a
/// GitHub runner runs them (`bash -eo pipefail` on each step's `run`, its
/// `env` with the inputs substituted, `GITHUB_ACTION_PATH`, `GITHUB_OUTPUT`,
/// `GITHUB_STEP_SUMMARY`; a step whose `if:` is false skipped): a
/// measurement, the compare against a baseline, the job summary written by
/// `fitness` (the run, then the comparison), the outputs, JUnit files a real
/// JUnit parser reads, and a step that fails only on the verdicts asked.
#[test]
fn the_action_steps_as_written_measure_compare_report_and_fail_on_the_verdicts_asked() {
    let action = &common::action();
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    let steps = action["runs"]["steps"].as_vec().unwrap().clone();
    let declared: Vec<String> = action["outputs"]
        .as_hash()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect();
    for key in [
        "verdict",
        "exit-code",
        "record",
        "markdown",
        "outcome",
        "server",
        "low",
        "high",
        "junit",
    ] {
        assert!(declared.iter().any(|d| d == key), "output {key} declared");
    }
    // `fitness` on PATH, as an earlier install would leave it: the install
    // step then has nothing to do.
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(FITNESS, bin.join("fitness")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let baseline = run(dir.path(), "good", "sim/diligent", &[]).join("record.json");

    let gate = |flags: &str, fail_on: &str, tag: &str| {
        let work = dir.path().join(tag);
        std::fs::create_dir_all(&work).unwrap();
        let inputs = [
            (
                "run-args",
                format!(
                    "--runner sim/diligent --generator schema-walk/1 --label server {flags} -- fitness demo-server good"
                ),
            ),
            ("baseline", baseline.display().to_string()),
            ("fail-on", fail_on.to_owned()),
            ("out", "fitness-runs".to_owned()),
            ("comment", "false".to_owned()),
            ("site", String::new()),
        ];
        let substitute = |text: &str| {
            let mut text = text.to_owned();
            for (name, value) in &inputs {
                text = text.replace(&format!("${{{{ inputs.{name} }}}}"), value);
            }
            assert!(
                !text.contains("${{ inputs."),
                "every input is known: {text}"
            );
            text
        };
        let mut last = 0;
        for step in &steps {
            if let Some(condition) = step["if"].as_str() {
                // The only conditional step posts a comment when asked.
                assert!(
                    condition.contains("inputs.comment == 'true'"),
                    "{condition}"
                );
                continue;
            }
            let output = common::run_action_step(step, &work, &path, &[], &substitute);
            last = output.status.code().unwrap();
            if last != 0 {
                break;
            }
        }
        let read = |name: &str| std::fs::read_to_string(work.join(name)).unwrap_or_default();
        (last, read("outputs"), read("summary.md"), work)
    };
    let thin = TOO_THIN.join(" ");
    let (code, outputs, summary, work) =
        gate(&thin, "regressed incomparable inconclusive", "strict");
    assert_eq!(code, 5, "{outputs}");
    let output = |key: &str| {
        outputs
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("output {key}: {outputs}"))
            .to_owned()
    };
    assert_eq!(output("verdict"), "inconclusive");
    assert_eq!(output("exit-code"), "5");
    assert_eq!(output("outcome"), "INSUFFICIENT_SURFACE");
    assert_eq!(output("server"), "server");
    assert_eq!(
        (output("low"), output("high")),
        (String::new(), String::new())
    );
    assert!(work.join(output("record")).is_file());
    assert!(work.join(output("markdown")).is_file());
    // The job summary is fitness's own: the run, then the comparison.
    let run_at = summary.find("### Fitness Report run: `server`, INSUFFICIENT_SURFACE");
    let compare_at = summary.find("### Fitness Report: inconclusive");
    assert!(
        run_at.is_some() && compare_at.is_some() && run_at < compare_at,
        "{summary}"
    );
    assert!(
        summary.contains("| gate structural | failed |"),
        "{summary}"
    );
    // The JUnit files, read by a JUnit parser: the run gate by gate, the
    // refusal a failure with its reason string, the gates not reached
    // skipped; the regression a failure.
    let junit = |name: &str| {
        let file = std::fs::File::open(work.join("fitness-runs").join(name)).unwrap();
        junit_parser::from_reader(std::io::BufReader::new(file)).unwrap()
    };
    let runs = junit("junit-run.xml");
    let cases = &runs.suites[0].cases;
    let case = |name: &str| cases.iter().find(|c| c.original_name == name).unwrap();
    assert!(case("gate plan_power").status.is_success());
    let junit_parser::TestStatus::Failure(f) = &case("gate structural").status else {
        panic!("the refusal fails: {:?}", case("gate structural"));
    };
    assert_eq!(f.message, "suite_below_minimum");
    assert!(case("gate construct").status.is_skipped());
    assert!(case("outcome").status.is_failure());
    assert_eq!(runs.tests, cases.len() as u64);
    assert_eq!(
        runs.failures,
        cases.iter().filter(|c| c.status.is_failure()).count() as u64
    );
    let compared = junit("junit-compare.xml");
    let regression = compared.suites[0]
        .cases
        .iter()
        .find(|c| c.original_name == "no regression")
        .unwrap();
    // A refusal of the measurement is no regression: the case is skipped,
    // never failed.
    assert!(regression.status.is_skipped(), "{regression:?}");

    // The same refusal passes a gate that does not fail on it.
    let (code, outputs, _, _) = gate(&thin, "incomparable", "lenient");
    assert_eq!(code, 0, "{outputs}");
    // An unchanged server: a score, its interval in the outputs, every
    // JUnit case passing.
    let (code, outputs, _, work) = gate("", "regressed incomparable", "same");
    assert_eq!(code, 0, "{outputs}");
    assert!(
        outputs.contains("verdict=no_change_established"),
        "{outputs}"
    );
    assert!(outputs.contains("outcome=SCORED\n"), "{outputs}");
    let low: f64 = outputs
        .lines()
        .find_map(|l| l.strip_prefix("low="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(low > 0.0 && low < 1.0, "{outputs}");
    let file = std::fs::File::open(work.join("fitness-runs/junit-run.xml")).unwrap();
    let runs = junit_parser::from_reader(std::io::BufReader::new(file)).unwrap();
    assert_eq!((runs.failures, runs.errors), (0, 0));
    assert!(
        runs.suites[0]
            .cases
            .iter()
            .any(|c| c.original_name == "gate drive")
    );
}
