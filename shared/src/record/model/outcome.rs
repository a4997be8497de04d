//! What the run resolved to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the run resolved to, as published; the gates refuse in these terms.
/// Everything but `Scored` is a refusal and carries no score field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    /// Every gate passed; the drive's score is published.
    Scored,
    /// Suite below the minimum size or admission rate below its floor.
    InsufficientSurface,
    /// The measurement cannot see the server: the null baseline killed or
    /// could not decide, or the null screen emptied the suite.
    Degenerate,
    /// A gate resolved to FAIL (including unresolved after the last batch).
    GateFailed,
    /// A gate resolved neither way and the pre-registration bought no batch.
    ExtendExhausted,
    /// Errors exceeded the error-rate limit; the measurement did not complete.
    Compromised,
    /// The run did not complete its registered size.
    Void,
}

impl Outcome {
    pub const ALL: [Outcome; 7] = [
        Outcome::Scored,
        Outcome::InsufficientSurface,
        Outcome::Degenerate,
        Outcome::GateFailed,
        Outcome::ExtendExhausted,
        Outcome::Compromised,
        Outcome::Void,
    ];

    pub fn is_refusal(self) -> bool {
        self != Outcome::Scored
    }

    /// The code as written in the JSON.
    pub fn code(self) -> &'static str {
        match self {
            Outcome::Scored => "SCORED",
            Outcome::InsufficientSurface => "INSUFFICIENT_SURFACE",
            Outcome::Degenerate => "DEGENERATE",
            Outcome::GateFailed => "GATE_FAILED",
            Outcome::ExtendExhausted => "EXTEND_EXHAUSTED",
            Outcome::Compromised => "COMPROMISED",
            Outcome::Void => "VOID",
        }
    }
}
