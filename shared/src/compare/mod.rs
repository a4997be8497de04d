//! Comparing two runs of one server for CI (`fitness compare BEFORE AFTER`):
//! whether the two measurements can be read against each other at all, the
//! outcome change, the two stored first-try intervals with whether they are
//! separated ([`delta`]), and a verdict a workflow gates on.
//!
//! Only stored numbers are read; nothing here recomputes an interval. Two
//! runs are comparable when the same runner model ran them (as registered,
//! and as the provider reported it), the same generator built their suites
//! (with the same judge, for a generator that writes with one), and they ran
//! under the same credential context.

use serde::Serialize;

use crate::generators;
use crate::record::{Outcome, RewriteDelta, RunRecord};
use crate::stats::{Interval, separated};

/// The first-try interval a record stores, when it scored.
pub fn stored_interval(record: &RunRecord) -> Option<Interval> {
    match (&record.score, record.outcome) {
        (Some(score), Outcome::Scored) => Some(score.first_try),
        _ => None,
    }
}

/// The delta of two stored intervals: `difference = after.rate - before.rate`
/// and `separated` (the intervals do not overlap) when both exist.
pub fn delta(before: Option<Interval>, after: Option<Interval>) -> RewriteDelta {
    let (difference, separated) = match (&before, &after) {
        (Some(b), Some(a)) if b.rate.is_finite() && a.rate.is_finite() => {
            (Some(a.rate - b.rate), separated(b, a))
        }
        _ => (None, false),
    };
    RewriteDelta {
        before,
        after,
        difference,
        separated,
    }
}

/// The delta in words, naming a missing interval honestly.
pub fn explain(delta: &RewriteDelta) -> String {
    let show = Interval::text;
    match (&delta.before, &delta.after, delta.difference) {
        (Some(b), Some(a), Some(d)) => format!(
            "First-try success before {}, after {}: a difference of {:+.1} points, {}.",
            show(b),
            show(a),
            d * 100.0,
            if delta.separated {
                "and the intervals do not overlap"
            } else {
                "but the intervals overlap, so no change is established"
            }
        ),
        (Some(b), None, _) => format!(
            "No interval after: the after run did not score (before: {}).",
            show(b)
        ),
        (None, Some(a), _) => format!(
            "No interval before: the before run did not score (after: {}).",
            show(a)
        ),
        _ => "No interval before or after: neither run scored.".to_owned(),
    }
}

/// Why two runs cannot be read against each other.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Incomparable {
    /// `runner_model`, `runner_reported`, `generator`, `judge_model`, `credential_context`.
    pub field: &'static str,
    pub before: String,
    pub after: String,
}

impl std::fmt::Display for Incomparable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.field {
            "runner_model" => "the runner model differs",
            "runner_reported" => "the provider reported different runner models",
            "generator" => "the task generator differs",
            "judge_model" => "the judge that wrote the tasks differs",
            _ => "the credential context differs",
        };
        write!(f, "{what}: {} before, {} after", self.before, self.after)
    }
}

/// What the comparison concludes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The runs cannot be read against each other.
    Incomparable,
    /// One of the two measurements did not complete or was compromised
    /// (VOID, COMPROMISED), or a scored server's after run was refused for
    /// a reason about the measurement (a thin surface, a null baseline, an
    /// unresolved gate): nothing can be said about the server.
    Inconclusive,
    /// The after interval lies entirely below the before interval, or the
    /// server lost its score to a refusal the wire tape pins on it.
    Regressed,
    /// The after interval lies entirely above the before interval, or a
    /// refused server now scores.
    Improved,
    /// No change is established: overlapping intervals, or the same outcome.
    NoChangeEstablished,
    /// Both refused, with different outcomes: reported, not ranked.
    OutcomeChanged,
}

impl Verdict {
    /// The process exit code `fitness compare` ends with.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Improved | Verdict::NoChangeEstablished | Verdict::OutcomeChanged => 0,
            Verdict::Incomparable => 3,
            Verdict::Regressed => 4,
            Verdict::Inconclusive => 5,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Incomparable => "incomparable",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Regressed => "regressed",
            Verdict::Improved => "improved",
            Verdict::NoChangeEstablished => "no change established",
            Verdict::OutcomeChanged => "outcome changed",
        }
    }
}

/// One side of the comparison, as stored in its record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub run: String,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_at: Option<String>,
    pub runner_model: String,
    pub generator: String,
    pub suite_hash: String,
}

/// The comparison of two records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub before: Side,
    pub after: Side,
    /// Empty when the runs are comparable.
    pub incomparable: Vec<Incomparable>,
    /// The stored first-try intervals, their difference and separation.
    pub delta: RewriteDelta,
    pub verdict: Verdict,
    /// The verdict in one sentence.
    pub reason: String,
}

/// Outcomes that say the measurement itself did not hold.
fn incomplete(o: Outcome) -> bool {
    matches!(o, Outcome::Void | Outcome::Compromised)
}

/// What stands in the way of reading `after` against `before`.
pub fn comparability(before: &RunRecord, after: &RunRecord) -> Vec<Incomparable> {
    let mut out = Vec::new();
    let mut differ = |field: &'static str, b: String, a: String| {
        if b != a {
            out.push(Incomparable {
                field,
                before: b,
                after: a,
            });
        }
    };
    let (b, a) = (&before.run, &after.run);
    differ(
        "runner_model",
        b.runner_model.clone(),
        a.runner_model.clone(),
    );
    // A provider that upgrades the model behind one name changes what ran.
    if let (Some(rb), Some(ra)) = (&b.runner_reported, &a.runner_reported) {
        differ("runner_reported", rb.clone(), ra.clone());
    }
    differ(
        "generator",
        b.generator_label().to_owned(),
        a.generator_label().to_owned(),
    );
    let judged = b
        .generator
        .as_deref()
        .is_some_and(generators::judge_writes_tasks);
    if judged {
        differ("judge_model", b.judge_model.clone(), a.judge_model.clone());
    }
    let credential = |r: &RunRecord| {
        serde_json::to_value(r.server.credential_context)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    };
    differ("credential_context", credential(before), credential(after));
    out
}

fn side(r: &RunRecord) -> Side {
    Side {
        run: r.run.id.clone(),
        outcome: r.outcome,
        refused_at: r.gates.refused_at.clone(),
        runner_model: r.run.runner_model.clone(),
        generator: r.run.generator_label().to_owned(),
        suite_hash: r.run.suite_hash.clone(),
    }
}

/// Compare `after` against the baseline `before`.
pub fn compare(before: &RunRecord, after: &RunRecord) -> Comparison {
    let incomparable = comparability(before, after);
    let d = delta(stored_interval(before), stored_interval(after));
    let (b, a) = (before.outcome, after.outcome);
    let (verdict, reason) = if !incomparable.is_empty() {
        not_comparable(&incomparable)
    } else if incomplete(b) || incomplete(a) {
        inconclusive(b, a)
    } else if d.before.is_some() && d.after.is_none() && !server_finding(after) {
        measurement_refused(after)
    } else {
        read_scores(&d, b, a)
    };
    Comparison {
        before: side(before),
        after: side(after),
        incomparable,
        delta: d,
        verdict,
        reason,
    }
}

/// The verdict when the runs differ in what makes them comparable.
fn not_comparable(incomparable: &[Incomparable]) -> (Verdict, String) {
    (
        Verdict::Incomparable,
        format!(
            "The runs cannot be read against each other: {}.",
            incomparable
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ),
    )
}

/// The verdict when either run's measurement did not hold (the after run
/// named first when both did not).
fn inconclusive(b: Outcome, a: Outcome) -> (Verdict, String) {
    let which = if incomplete(a) {
        ("after", a)
    } else {
        ("before", b)
    };
    (
        Verdict::Inconclusive,
        format!(
            "The {} run is {}: that measurement did not hold, so nothing is said about the server.",
            which.0,
            which.1.code()
        ),
    )
}

/// Does the after run's refusal pin something on the server: a construct
/// gate that failed where the wire tape shows the server's calls answered
/// with errors or never answered? A refusal about the suite or the
/// measurement (a thin surface, a null baseline, a degenerate suite, an
/// unresolved gate) is not.
fn server_finding(r: &RunRecord) -> bool {
    if r.outcome != Outcome::GateFailed {
        return false;
    }
    let Some(gate) = r
        .gates
        .refused_at
        .as_deref()
        .and_then(|id| r.gates.record(id))
    else {
        return false;
    };
    matches!(
        &gate.detail,
        crate::record::GateDetail::Construct {
            tape_reading: Some(t),
            ..
        } if t.call_errors + t.no_response > 0
    )
}

/// The verdict when the server scored before and the after run's
/// measurement was refused for a reason the tape does not pin on the
/// server: not a regression of the server, and nothing said about it.
fn measurement_refused(after: &RunRecord) -> (Verdict, String) {
    (
        Verdict::Inconclusive,
        format!(
            "The after run was refused ({}{}): a refusal of the measurement, not a regression of the server, so nothing is said about the server.",
            after.outcome.code(),
            after
                .gates
                .refused_at
                .as_deref()
                .map(|g| format!(" at {g}"))
                .unwrap_or_default()
        ),
    )
}

/// The verdict of two comparable, completed runs: their stored intervals,
/// or what a refusal on either side means.
fn read_scores(d: &RewriteDelta, b: Outcome, a: Outcome) -> (Verdict, String) {
    match (&d.before, &d.after, d.difference) {
        (Some(_), Some(_), Some(diff)) if d.separated && diff < 0.0 => (
            Verdict::Regressed,
            "First-try success fell: the after interval lies entirely below the before interval."
                .to_owned(),
        ),
        (Some(_), Some(_), Some(_)) if d.separated => (
            Verdict::Improved,
            "First-try success rose: the after interval lies entirely above the before interval."
                .to_owned(),
        ),
        (Some(_), Some(_), _) => (
            Verdict::NoChangeEstablished,
            "The intervals overlap, so no change in first-try success is established.".to_owned(),
        ),
        (Some(_), None, _) => (
            Verdict::Regressed,
            format!(
                "The server lost its score: the after run was refused ({}), and the wire tape shows the server's calls failing.",
                a.code()
            ),
        ),
        (None, Some(_), _) => (
            Verdict::Improved,
            format!(
                "The server now scores: the before run was refused ({}).",
                b.code()
            ),
        ),
        _ if a == b => (
            Verdict::NoChangeEstablished,
            format!("Both runs were refused with {}.", a.code()),
        ),
        _ => (
            Verdict::OutcomeChanged,
            format!(
                "Both runs were refused, {} before and {} after; neither has a score to compare.",
                b.code(),
                a.code()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{BOARD_CONFIDENCE, wilson};

    /// The anchor board's scored runs (real records of the reference).
    fn anchor_scored() -> Vec<RunRecord> {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/anchor-board/runs.json"
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("anchor runs.json"))
                .expect("anchor runs.json is JSON");
        crate::record::import::import_runs(&doc)
            .expect("anchor imports")
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

    #[test]
    fn overlapping_anchor_intervals_establish_no_change() {
        let scored = anchor_scored();
        let (a, b) = (&scored[0], &scored[1]);
        let c = compare(a, b);
        assert!(c.incomparable.is_empty(), "{:?}", c.incomparable);
        assert_eq!(c.verdict, Verdict::NoChangeEstablished, "{}", c.reason);
        assert_eq!(c.verdict.exit_code(), 0);
        assert_eq!(c.delta.before, stored_interval(a));
        assert_eq!(c.delta.after, stored_interval(b));
        assert!(!c.delta.separated);
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
    fn separated_intervals_are_a_regression_or_an_improvement() {
        let base = anchor_scored().remove(0);
        let high = with_first_try(base.clone(), 12, 12);
        let low = with_first_try(base, 3, 12);
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
}
