use super::*;
use crate::stats::{BOARD_CONFIDENCE, wilson};

/// The anchor board's scored runs (real records of the reference).
fn anchor_scored() -> Vec<RunRecord> {
    crate::record::import::anchor_import()
        .records
        .into_iter()
        .filter(|r| r.outcome == Outcome::Scored)
        .collect()
}

fn with_first_try(mut r: RunRecord, k: u64, n: u64) -> RunRecord {
    if let Some(score) = r.score.as_mut() {
        score.first_try = wilson(k, n, BOARD_CONFIDENCE);
    }
    r
}

/// Another run of the same server that drove another suite.
fn another_suite(mut r: RunRecord) -> RunRecord {
    r.run.id.push_str("-again");
    r.run.suite_hash = format!("{}0", r.run.suite_hash);
    r
}

#[test]
fn two_suites_with_overlapping_intervals_establish_no_change() {
    let a = anchor_scored().remove(0);
    let first = stored_interval(&a).expect("scored");
    let b = with_first_try(another_suite(a.clone()), first.k - 1, first.n);
    let c = compare(&a, &b);
    assert!(c.incomparable.is_empty(), "{:?}", c.incomparable);
    let Some(Reading::Independent { why }) = &c.reading else {
        panic!(
            "two suites are read as independent samples: {:?}",
            c.reading
        );
    };
    assert!(why.contains("different suites"), "{why}");
    assert_eq!(c.verdict, Verdict::NoChangeEstablished, "{}", c.reason);
    assert_eq!(c.verdict.exit_code(), 0);
    assert_eq!(c.delta.before, stored_interval(&a));
    assert_eq!(c.delta.after, stored_interval(&b));
    assert!(!c.delta.separated);
}

#[test]
fn runs_of_two_servers_are_never_comparable() {
    let scored = anchor_scored();
    // Two real records of two servers, both scored, same runner.
    let c = compare(&scored[0], &scored[1]);
    let fields: Vec<&str> = c.incomparable.iter().map(|i| i.field).collect();
    assert_eq!(fields, ["server", "server_name"]);
    assert_eq!(c.verdict, Verdict::Incomparable);
    assert_eq!(c.verdict.exit_code(), 3);
    assert!(
        c.reason.contains("they measured different servers"),
        "{}",
        c.reason
    );
    assert!(c.reading.is_none());
    // Whatever else they share: the same record under another slug, and
    // the same slug for a server that names itself differently.
    let a = &scored[0];
    let mut other = a.clone();
    other.server.slug = "another-server".to_owned();
    assert_eq!(compare(a, &other).verdict, Verdict::Incomparable);
    let mut renamed = a.clone();
    renamed.server.server_info = Some(serde_json::json!({"name": "another", "version": "1"}));
    let c = compare(a, &renamed);
    assert_eq!(
        c.incomparable[0].field, "server_name",
        "{:?}",
        c.incomparable
    );
    assert_eq!(c.verdict.exit_code(), 3);
}

/// `r` with its tasks' per-trial first-try outcomes set (one string per
/// task, `1` passed, `0` failed) and its score to match.
fn with_trials(mut r: RunRecord, trials: &[&str]) -> RunRecord {
    let score = r.score.as_mut().expect("scored");
    let template = score.tasks[0].clone();
    score.tasks = trials
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let by_rep: Vec<bool> = t.chars().map(|c| c == '1').collect();
            crate::record::TaskResult {
                task_id: format!("t{}", i + 1),
                first_try_success: by_rep[0],
                reps: Some(by_rep.len() as u64),
                first_try_by_rep: by_rep,
                ..template.clone()
            }
        })
        .collect();
    let k = score.tasks.iter().filter(|t| t.first_try_success).count() as u64;
    score.first_try = wilson(k, trials.len() as u64, BOARD_CONFIDENCE);
    r
}

#[test]
fn one_suite_is_read_pair_by_pair() {
    let base = anchor_scored().remove(0);
    // Eight tasks of three trials: t1..t5 pass throughout before; after,
    // t2 and t3 fail every trial and t4 its third; t8 passes after only.
    let before = with_trials(
        base.clone(),
        &["111", "111", "111", "111", "111", "000", "011", "000"],
    );
    let mut after = with_trials(
        base,
        &["111", "000", "000", "110", "111", "000", "011", "111"],
    );
    after.run.id.push_str("-after");
    let c = compare(&before, &after);
    let Some(Reading::Paired(p)) = &c.reading else {
        panic!("one suite is read pair by pair: {:?}", c.reading);
    };
    assert_eq!((p.tasks, p.trials_per_task, p.pairs), (8, 3, 24));
    assert_eq!(
        (p.both, p.before_only, p.after_only, p.neither),
        (10, 7, 3, 4)
    );
    assert_eq!(p.first_trials_only, None);
    let alpha = before
        .preregistration
        .alpha
        .unwrap_or(crate::gates::DEFAULT_ALPHA);
    assert_eq!(p.alpha, alpha);
    assert_eq!(
        (p.low, p.high),
        crate::stats::paired_difference_interval(10, 7, 3, 4, alpha)
    );
    assert_eq!(p.p_midp, crate::stats::mcnemar_midp(7, 3));
    assert_eq!(p.p_exact, crate::stats::mcnemar_exact(7, 3));
    assert_eq!(p.drop, 4.0 / 24.0);
    let lost: Vec<(&str, &[u64])> = p
        .lost
        .iter()
        .map(|f| (f.task_id.as_str(), f.trials.as_slice()))
        .collect();
    assert_eq!(
        lost,
        [("t2", &[1, 2, 3][..]), ("t3", &[1, 2, 3]), ("t4", &[3])]
    );
    assert_eq!(p.gained.len(), 1);
    assert_eq!(p.gained[0].trials, [1, 2, 3]);
    // Seven against three is no established change at 24 pairs.
    assert!(p.low <= 0.0);
    assert_eq!(c.verdict, Verdict::NoChangeEstablished, "{}", c.reason);

    // Every task's trials lost after: the paired interval lies above 0
    // although the two stored intervals still overlap.
    let worse = with_trials(
        after.clone(),
        &["011", "000", "000", "000", "011", "000", "011", "000"],
    );
    let c = compare(&before, &worse);
    let p = c.paired().expect("paired");
    assert!(p.low > 0.0, "{:?}", (p.low, p.high));
    assert_eq!(c.verdict, Verdict::Regressed, "{}", c.reason);
    assert_eq!(c.verdict.exit_code(), 4);
    assert!(!c.delta.separated, "the independent reading sees no change");
    assert!(c.reason.contains("read pair by pair"), "{}", c.reason);
    // The mirror is an improvement.
    assert_eq!(compare(&worse, &before).verdict, Verdict::Improved);
}

#[test]
fn a_record_without_per_trial_outcomes_pairs_first_trials() {
    let base = anchor_scored().remove(0);
    let before = with_trials(base.clone(), &["111", "111", "000", "111"]);
    let mut after = with_trials(base, &["011", "111", "100", "111"]);
    // The before record was made before per-trial outcomes were kept.
    let mut old = before;
    for task in &mut old.score.as_mut().expect("scored").tasks {
        task.first_try_by_rep.clear();
    }
    after.run.id.push_str("-after");
    let c = compare(&old, &after);
    let p = c.paired().expect("paired");
    assert_eq!((p.pairs, p.trials_per_task), (4, 1));
    assert_eq!(
        (p.both, p.before_only, p.after_only, p.neither),
        (2, 1, 1, 0)
    );
    let why = p.first_trials_only.as_deref().expect("says why");
    assert!(
        why.contains("before record keeps no per-trial outcomes"),
        "{why}"
    );
    assert!(p.pairs_text().contains("first trials only"));
}

#[test]
fn a_refusal_of_the_measurement_is_no_regression_of_the_server() {
    let scored = anchor_scored().remove(0);
    let refused = |outcome: Outcome, gate: &str, tape: Option<(u64, u64)>| {
        let mut r = scored.clone();
        r.outcome = outcome;
        r.score = None;
        r.gates.refused_at = Some(gate.to_owned());
        let mut g = r.gates.records[0].clone();
        g.id = gate.to_owned();
        g.ok = false;
        g.detail = crate::record::GateDetail::Construct {
            n: 36,
            n_intended: Some(36),
            errors: 0,
            max_error_rate: None,
            compromised: false,
            reps: Some(3),
            published: None,
            pooled: None,
            extensions_consumed: 0,
            tape_reading: tape.map(|(errors, silent)| crate::record::TapeReading {
                calls_recorded: 36,
                call_errors: errors,
                no_response: silent,
            }),
        };
        r.gates.records.retain(|x| x.id != gate);
        r.gates.records.push(g);
        r
    };
    for (outcome, gate) in [
        (Outcome::InsufficientSurface, "structural"),
        (Outcome::Degenerate, "null_baseline"),
        (Outcome::ExtendExhausted, "construct"),
        (Outcome::Compromised, "drive"),
        (Outcome::Void, "drive"),
        (Outcome::GateFailed, "construct"),
    ] {
        let c = compare(&scored, &refused(outcome, gate, None));
        assert_eq!(
            c.verdict,
            Verdict::Inconclusive,
            "{outcome:?}: {}",
            c.reason
        );
        assert_eq!(c.verdict.exit_code(), 5);
    }
    // A construct failure the tape pins on the server is a regression.
    for tape in [(3, 0), (0, 36)] {
        let c = compare(
            &scored,
            &refused(Outcome::GateFailed, "construct", Some(tape)),
        );
        assert_eq!(c.verdict, Verdict::Regressed, "{tape:?}: {}", c.reason);
        assert_eq!(c.verdict.exit_code(), 4);
    }
    let clean = compare(
        &scored,
        &refused(Outcome::GateFailed, "construct", Some((0, 0))),
    );
    assert_eq!(clean.verdict, Verdict::Inconclusive, "{}", clean.reason);
    assert!(clean.reason.contains("not a regression of the server"));
}

#[test]
fn separated_intervals_of_two_suites_are_a_regression_or_an_improvement() {
    let base = anchor_scored().remove(0);
    let high = with_first_try(base.clone(), 12, 12);
    let low = with_first_try(another_suite(base), 3, 12);
    let down = compare(&high, &low);
    assert!(down.delta.separated);
    assert_eq!(down.verdict, Verdict::Regressed, "{}", down.reason);
    assert_eq!(down.verdict.exit_code(), 4);
    let up = compare(&low, &high);
    assert_eq!(up.verdict, Verdict::Improved);
    assert_eq!(up.verdict.exit_code(), 0);
    assert!((up.delta.difference.unwrap() - 0.75).abs() < 1e-12);
}

#[test]
fn another_runner_generator_or_credential_is_incomparable() {
    let a = anchor_scored().remove(0);
    let mut b = a.clone();
    b.run.runner_model = "openai/gpt-4o".to_owned();
    b.run.generator = Some("schema-walk/2".to_owned());
    b.server.credential_context = crate::record::CredentialContext::OwnerKey;
    let c = compare(&a, &b);
    let fields: Vec<&str> = c.incomparable.iter().map(|i| i.field).collect();
    assert_eq!(fields, ["runner_model", "generator", "credential_context"]);
    assert_eq!(c.verdict, Verdict::Incomparable);
    assert_eq!(c.verdict.exit_code(), 3);
    assert!(c.reason.contains("owner-key after"), "{}", c.reason);
    // judge-synth suites depend on their judge.
    let mut j1 = a.clone();
    j1.run.generator = Some("judge-synth/1".to_owned());
    let mut j2 = j1.clone();
    j2.run.judge_model = "anthropic/another-judge".to_owned();
    assert_eq!(compare(&j1, &j2).incomparable[0].field, "judge_model");
}

#[test]
fn delta_is_the_difference_of_the_stored_rates() {
    let b = wilson(6, 12, 0.95);
    let a = wilson(12, 12, 0.95);
    let d = delta(Some(b), Some(a));
    assert_eq!(d.difference, Some(a.rate - b.rate));
    assert!(d.separated == (a.low > b.high));
    assert!(explain(&d).contains("+50.0 points"), "{}", explain(&d));
}

#[test]
fn a_missing_interval_gives_no_difference() {
    let b = wilson(6, 12, 0.95);
    let d = delta(Some(b), None);
    assert_eq!(d.difference, None);
    assert!(!d.separated);
    assert!(explain(&d).starts_with("No interval after"));
}
