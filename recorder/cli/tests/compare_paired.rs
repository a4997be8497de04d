//! `fitness compare` reading two runs of one suite pair by pair: a baseline
//! run of the good demo server with `sim/careless`, then reruns of its
//! suite (`--suite`) under other seeds, where the careless runner slips on
//! other tasks, so some tasks flip each way. Every printed figure is
//! checked against the statistics functions, on a 2x2 table this test
//! tallies itself from the two records' per-trial outcomes. Also
//! `compare --plan`, and runs of two servers (never comparable).

use crate::common;

use std::path::{Path, PathBuf};

use common::{FITNESS, demo_run, s};
use fitness_shared::stats::{
    mcnemar_exact, mcnemar_midp, paired_detectable_drop, paired_difference_interval,
    paired_pairs_for_drop,
};
use serde_json::Value;

fn record(dir: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(dir.join("record.json")).expect("record.json"))
        .expect("the record is JSON")
}

fn compare(args: &[&str]) -> (i32, String) {
    let out = common::fitness(&[&["compare"], args].concat());
    (
        out.status.code().expect("an exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The paired table as this test reads the two records: trial k of task t
/// before against trial k of task t after, over the tasks both drove.
struct Table {
    a: u64,
    b: u64,
    c: u64,
    d: u64,
    /// Tasks with a trial that passed before and failed after, and the
    /// other way, each with its trials numbered from 1.
    lost: Vec<(String, Vec<u64>)>,
    gained: Vec<(String, Vec<u64>)>,
}

fn tally(before: &Value, after: &Value) -> Table {
    let mut t = Table {
        a: 0,
        b: 0,
        c: 0,
        d: 0,
        lost: Vec::new(),
        gained: Vec::new(),
    };
    let outcomes = |task: &Value| -> Vec<bool> {
        task["first_try_by_rep"]
            .as_array()
            .expect("every task keeps its per-trial outcomes")
            .iter()
            .map(|v| v.as_bool().expect("a bool"))
            .collect()
    };
    for tb in before["score"]["tasks"].as_array().expect("tasks") {
        let id = tb["task_id"].as_str().expect("an id");
        let Some(ta) = after["score"]["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .find(|x| x["task_id"] == id)
        else {
            continue;
        };
        let (mut down, mut up) = (Vec::new(), Vec::new());
        for (k, (pb, pa)) in outcomes(tb).into_iter().zip(outcomes(ta)).enumerate() {
            let trial = k as u64 + 1;
            match (pb, pa) {
                (true, true) => t.a += 1,
                (true, false) => {
                    t.b += 1;
                    down.push(trial);
                }
                (false, true) => {
                    t.c += 1;
                    up.push(trial);
                }
                (false, false) => t.d += 1,
            }
        }
        if !down.is_empty() {
            t.lost.push((id.to_owned(), down));
        }
        if !up.is_empty() {
            t.gained.push((id.to_owned(), up));
        }
    }
    t
}

/// A p-value as the documented rule prints it.
fn p4(p: f64) -> String {
    if p >= 1e-4 {
        format!("{p:.4}")
    } else {
        format!("{p:.1e}")
    }
}

fn trials_words(trials: &[u64]) -> String {
    let list: Vec<String> = trials.iter().map(ToString::to_string).collect();
    if trials.len() == 1 {
        format!("trial {}", list[0])
    } else {
        format!("trials {}", list.join(", "))
    }
}

/// Check one paired comparison, in all three formats, against the table
/// this test tallied and the statistics functions; its verdict.
fn check_paired(before: &Path, after: &Path) -> (String, Table) {
    let (rb, ra) = (record(before), record(after));
    assert_eq!(rb["run"]["suite_hash"], ra["run"]["suite_hash"]);
    let t = tally(&rb, &ra);
    let n = t.a + t.b + t.c + t.d;
    assert_eq!(n, 36, "12 tasks x 3 trials");
    let alpha = ra["preregistration"]["alpha"].as_f64().expect("alpha");
    let (low, high) = paired_difference_interval(t.a, t.b, t.c, t.d, alpha);
    let (midp, exact) = (mcnemar_midp(t.b, t.c), mcnemar_exact(t.b, t.c));
    let drop = (t.b as f64 - t.c as f64) / n as f64;
    let (verdict, exit) = if low > 0.0 {
        ("regressed", 4)
    } else if high < 0.0 {
        ("improved", 0)
    } else {
        ("no_change_established", 0)
    };

    // JSON: every figure is the statistics functions' on this table.
    let (code, json) = compare(&[s(before), s(after), "--format", "json"]);
    assert_eq!(code, exit, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    let p = &v["reading"];
    assert_eq!(p["kind"], "paired", "{json}");
    assert_eq!(v["verdict"], verdict);
    assert_eq!(v["exit_code"], exit);
    let u = |k: &str| p[k].as_u64().unwrap_or_else(|| panic!("{k}: {p}"));
    let f = |k: &str| p[k].as_f64().unwrap_or_else(|| panic!("{k}: {p}"));
    assert_eq!(
        (u("both"), u("before_only"), u("after_only"), u("neither")),
        (t.a, t.b, t.c, t.d)
    );
    assert_eq!((u("pairs"), u("tasks"), u("trials_per_task")), (36, 12, 3));
    assert_eq!((f("low"), f("high")), (low, high));
    assert_eq!((f("p_midp"), f("p_exact")), (midp, exact));
    assert_eq!(f("drop"), drop);
    assert_eq!(f("alpha"), alpha);
    let flips = |k: &str| -> Vec<(String, Vec<u64>)> {
        p[k].as_array()
            .expect("flips")
            .iter()
            .map(|x| {
                let trials = x["trials"].as_array().expect("trials");
                (
                    x["task_id"].as_str().expect("id").to_owned(),
                    trials.iter().map(|n| n.as_u64().expect("n")).collect(),
                )
            })
            .collect()
    };
    assert_eq!(flips("lost"), t.lost);
    assert_eq!(flips("gained"), t.gained);

    // Text: the table, the drop with its interval, p, the flips, the verdict.
    let (code, text) = compare(&[s(before), s(after)]);
    assert_eq!(code, exit, "{text}");
    for line in [
        "reading     paired: trial k of task t before against trial k of task t after, 36 pairs over the 12 tasks both runs drove, 3 trials each".to_owned(),
        format!(
            "table       both passed {}, before only {}, after only {}, neither {} (36 pairs)",
            t.a, t.b, t.c, t.d
        ),
        format!(
            "drop        {:.1} points (before {:.1}%, after {:.1}%), 95% CI {:.1} to {:.1} points",
            drop * 100.0,
            (t.a + t.b) as f64 / 36.0 * 100.0,
            (t.a + t.c) as f64 / 36.0 * 100.0,
            low * 100.0,
            high * 100.0
        ),
        format!("p           McNemar mid-p {} (exact {})", p4(midp), p4(exact)),
        format!("verdict     {}", verdict.replace('_', " ")),
        format!("exit        {exit}"),
    ] {
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
    for (name, flips) in [("lost", &t.lost), ("gained", &t.gained)] {
        let listed: Vec<String> = flips
            .iter()
            .map(|(id, trials)| format!("{id} ({})", trials_words(trials)))
            .collect();
        let line = format!("{name:<12}{}", listed.join("; "));
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
    assert!(!text.contains("\nintervals "), "one reading: {text}");

    // Markdown: the 2x2 table with its margins, the drop, p, and each
    // flipped task linked to its trials' replays in both runs.
    let site = "https://example.org/board";
    let (_, md) = compare(&[s(before), s(after), "--format", "markdown", "--site", site]);
    for row in [
        format!("| **before passed** | {} | {} | {} |", t.a, t.b, t.a + t.b),
        format!("| **before failed** | {} | {} | {} |", t.c, t.d, t.c + t.d),
        format!("| **total** | {} | {} | 36 |", t.a + t.c, t.b + t.d),
        format!("Drop in first-try success: {:.1} points", drop * 100.0),
        format!("95% CI {:.1} to {:.1} points", low * 100.0, high * 100.0),
        format!("McNemar mid-p {} (exact {})", p4(midp), p4(exact)),
    ] {
        assert!(md.contains(&row), "missing {row:?} in\n{md}");
    }
    let (run_b, run_a) = (
        rb["run"]["id"].as_str().unwrap(),
        ra["run"]["id"].as_str().unwrap(),
    );
    for (id, trials) in t.lost.iter().chain(&t.gained) {
        let line = format!(
            "- `{id}`, {}: replay [before]({site}/runs/{run_b}/?view=replay&trial={id}) · [after]({site}/runs/{run_a}/?view=replay&trial={id})",
            trials_words(trials)
        );
        assert!(md.contains(&line), "missing {line:?} in\n{md}");
        // The link opens a trial the run's agent tape holds.
        let tape = common::jsonl_lines(&after.join("agent.jsonl"));
        assert!(
            tape.iter().any(|l| l["corr_id"] == id.as_str()),
            "no trial {id} on the after tape"
        );
    }
    // Without --site the links are paths from the site's root.
    let (_, md) = compare(&[s(before), s(after), "--format", "markdown"]);
    if let Some((id, _)) = t.lost.first() {
        assert!(
            md.contains(&format!("[after](runs/{run_a}/?view=replay&trial={id})")),
            "{md}"
        );
    }
    (verdict.to_owned(), t)
}

#[test]
fn a_rerun_of_one_suite_is_read_pair_by_pair_and_every_figure_is_the_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    let before = demo_run(out, "good", "sim/careless", &["--seed", "1"]);
    let suite = before.join("suite.json");
    let rerun = |seed: &str| -> PathBuf {
        demo_run(
            out,
            "good",
            "sim/careless",
            &["--seed", seed, "--suite", s(&suite)],
        )
    };

    // Seed 22 slips on five tasks seed 1 got right and gets one right that
    // seed 1 slipped on: a regression the paired reading establishes.
    let worse = rerun("22");
    let (verdict, t) = check_paired(&before, &worse);
    assert_eq!(verdict, "regressed");
    assert!(t.b > 0 && t.c > 0, "tasks flip both ways");
    // The two stored intervals overlap: read as independent samples, the
    // same runs would establish nothing.
    let v: Value =
        serde_json::from_str(&compare(&[s(&before), s(&worse), "--format", "json"]).1).unwrap();
    assert_eq!(v["delta"]["separated"], false, "{v}");

    // Seed 2 slips on as many tasks as it recovers: flips each way, and no
    // change established.
    let (verdict, t) = check_paired(&before, &rerun("2"));
    assert_eq!(verdict, "no_change_established");
    assert!(t.b > 0 && t.c > 0, "tasks flip both ways");

    // The help says when the reading is paired.
    let help = common::text(&common::fitness(&["compare", "--help"]));
    assert!(
        help.contains("The reading is paired whenever both runs scored on the same suite"),
        "{help}"
    );
}

#[test]
fn compare_plan_prints_what_a_paired_rerun_of_the_suite_can_establish() {
    let dir = tempfile::tempdir().unwrap();
    let before = demo_run(dir.path(), "good", "sim/careless", &["--seed", "1"]);
    let prereg = record(&before)["preregistration"].clone();
    let alpha = prereg["alpha"].as_f64().expect("alpha");
    let power = prereg["planned_power"].as_f64().expect("planned power");

    let plan = [
        "--plan",
        s(&before),
        "--discordance",
        "0.3",
        "--drop",
        "0.15",
    ];
    let (code, json) = compare(&[&plan[..], &["--format", "json"]].concat());
    assert_eq!(code, 0, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (v["tasks"].as_u64(), v["trials_per_task"].as_u64()),
        (Some(12), Some(3))
    );
    assert_eq!(v["pairs"], 36);
    let detectable = paired_detectable_drop(36, 0.3, alpha, power).expect("a drop at 36 pairs");
    assert_eq!(v["detectable_drop"].as_f64(), Some(detectable));
    let needed = paired_pairs_for_drop(0.15, 0.3, alpha, power).expect("a size");
    assert_eq!(v["pairs_for_drop"].as_u64(), Some(needed));
    assert_eq!(v["tasks_for_drop"].as_u64(), Some(needed.div_ceil(3)));

    let (_, text) = compare(&plan);
    for line in [
        format!(
            "Smallest drop a paired rerun of 36 pairs (12 tasks x 3 trials) establishes, at alpha {alpha} (95% interval), power {:.0}%, with 30.0% of pairs disagreeing: {:.1} points of first-try success.",
            power * 100.0,
            detectable * 100.0
        ),
        format!(
            "A drop of 15.0 points needs {needed} pairs: {} tasks at 3 trials each.",
            needed.div_ceil(3)
        ),
    ] {
        assert!(text.contains(&line), "missing {line:?} in\n{text}");
    }
    // At the default discordance (20%) 36 pairs are too few for any drop.
    assert_eq!(paired_detectable_drop(36, 0.2, alpha, power), None);
    let (_, text) = compare(&["--plan", s(&before)]);
    assert!(
        text.contains("No drop of up to 20.0 points is established"),
        "{text}"
    );
    // A share out of range, or a plan with an after run, is a usage error.
    assert_eq!(compare(&["--plan", s(&before), "--discordance", "0"]).0, 2);
    assert_eq!(compare(&["--plan", s(&before), s(&before)]).0, 2);
}

/// `fitness run` of a demo server under its own name (no `--label`): the
/// slug `demo-NAME`, as `fitness demo` records it.
fn unlabelled_run(out: &Path, server: &[&str]) -> PathBuf {
    let server = [&[FITNESS, "demo-server"][..], server].concat();
    let args = common::run_args(
        "sim/diligent",
        out,
        &["--generator", "schema-walk/1"],
        &server,
    );
    common::run_summary(&args, std::time::Duration::from_secs(240)).1
}

#[test]
fn runs_of_two_servers_are_never_comparable() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path();
    // The broken demo answering every call (it scores), against the good one.
    let broken = unlabelled_run(out, &["broken", "--answer-first", "100000"]);
    let good = unlabelled_run(out, &["good"]);
    let (code, text) = compare(&[s(&broken), s(&good)]);
    assert_eq!(code, 3, "{text}");
    assert!(
        text.contains(
            "comparable  no: they measured different servers: demo-broken before, demo-good after; the server names itself differently: fitness-demo-broken before, fitness-demo-good after"
        ),
        "{text}"
    );
    assert!(
        text.contains("verdict     incomparable: The runs are not comparable"),
        "{text}"
    );
    assert!(!text.contains("reading"), "nothing is read: {text}");

    // One label over two servers: the name each gives itself tells them
    // apart, whatever else the runs share (runner, generator, seed).
    let trivia = demo_run(out, "trivia", "sim/diligent", &[]);
    let labelled = demo_run(out, "good", "sim/diligent", &[]);
    let (code, json) = compare(&[s(&trivia), s(&labelled), "--format", "json"]);
    assert_eq!(code, 3, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["verdict"], "incomparable");
    let fields: Vec<&str> = v["incomparable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["server_name"], "{json}");
    let (code, md) = compare(&[s(&trivia), s(&labelled), "--format", "markdown"]);
    assert_eq!(code, 3);
    assert!(md.starts_with("### Fitness Report: incomparable"), "{md}");
    assert!(
        md.contains("- the server names itself differently: fitness-demo-trivia before, fitness-demo-good after"),
        "{md}"
    );
}
