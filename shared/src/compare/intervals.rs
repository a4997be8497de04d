//! The independent reading: the two first-try intervals the records store,
//! their difference, and whether they are separated. Only stored numbers
//! are read; nothing here recomputes an interval.

use crate::record::{Outcome, RewriteDelta, RunRecord};
use crate::stats::{Interval, separated};

use super::verdict::Verdict;

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

/// The verdict of two scored runs read as independent samples: a change
/// only where the stored intervals do not overlap.
pub fn read(delta: &RewriteDelta) -> (Verdict, String) {
    match delta.difference {
        Some(diff) if delta.separated && diff < 0.0 => (
            Verdict::Regressed,
            "First-try success fell: the after interval lies entirely below the before interval."
                .to_owned(),
        ),
        Some(_) if delta.separated => (
            Verdict::Improved,
            "First-try success rose: the after interval lies entirely above the before interval."
                .to_owned(),
        ),
        _ => (
            Verdict::NoChangeEstablished,
            "The intervals overlap, so no change in first-try success is established.".to_owned(),
        ),
    }
}
