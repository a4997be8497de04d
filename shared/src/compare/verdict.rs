//! What a comparison concludes, and the exit code a workflow gates on.

use serde::Serialize;

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
    /// First-try success fell: the paired interval of the drop lies
    /// entirely above 0 (one suite), or the after interval lies entirely
    /// below the before interval (two suites); or the server lost its score
    /// to a refusal the wire tape pins on it.
    Regressed,
    /// First-try success rose (the mirror of a regression), or a refused
    /// server now scores.
    Improved,
    /// No change is established: an interval that holds 0, overlapping
    /// intervals, or the same outcome.
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
