//! The verdicts that outcomes decide before any score is read: a run whose
//! measurement did not hold, a refusal of the measurement rather than of
//! the server, a refusal the wire tape pins on the server, a server that
//! now scores, two refusals.

use crate::record::{Outcome, RunRecord};

use super::verdict::Verdict;

/// Outcomes that say the measurement itself did not hold.
fn incomplete(o: Outcome) -> bool {
    matches!(o, Outcome::Void | Outcome::Compromised)
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

/// The verdict of two comparable runs where their outcomes decide it;
/// `None` when both scored (their scores decide).
pub fn decided(before: &RunRecord, after: &RunRecord) -> Option<(Verdict, String)> {
    let (b, a) = (before.outcome, after.outcome);
    if incomplete(b) || incomplete(a) {
        return Some(inconclusive(b, a));
    }
    let scored = |r: &RunRecord| r.outcome == Outcome::Scored && r.score.is_some();
    Some(match (scored(before), scored(after)) {
        (true, true) => return None,
        (true, false) if !server_finding(after) => measurement_refused(after),
        (true, false) => (
            Verdict::Regressed,
            format!(
                "The server lost its score: the after run was refused ({}), and the wire tape shows the server's calls failing.",
                a.code()
            ),
        ),
        (false, true) => (
            Verdict::Improved,
            format!(
                "The server now scores: the before run was refused ({}).",
                b.code()
            ),
        ),
        (false, false) if a == b => (
            Verdict::NoChangeEstablished,
            format!("Both runs were refused with {}.", a.code()),
        ),
        (false, false) => (
            Verdict::OutcomeChanged,
            format!(
                "Both runs were refused, {} before and {} after; neither has a score to compare.",
                b.code(),
                a.code()
            ),
        ),
    })
}
