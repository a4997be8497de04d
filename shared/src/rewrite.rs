//! The delta of a rewrite check: the first-try intervals of the run before
//! and the run after the proposed descriptions were substituted, as stored in
//! the two records. A pure function of the stored intervals; nothing here
//! reads a tape or recomputes an interval.

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
    let show = |i: &Interval| {
        format!(
            "{} of {} ({:.1}%, 95% CI {:.1}% to {:.1}%)",
            i.k,
            i.n,
            i.rate * 100.0,
            i.low * 100.0,
            i.high * 100.0
        )
    };
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::wilson;

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
