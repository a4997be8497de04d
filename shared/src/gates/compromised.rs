//! Divergence 1 from evalgate: errors are gated on their own, never dropped
//! from the denominator.

use serde::{Deserialize, Serialize};

use crate::record::Outcome as RunOutcome;

/// The error-rate limit every run registers: above 5% the run is COMPROMISED.
pub const MAX_ERROR_RATE: f64 = 0.05;

/// The error-rate check on one gate's calls.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ErrorRateCheck {
    /// Calls that completed (and were judged).
    pub completed: u64,
    /// Calls that errored (threw, timed out, never answered).
    pub errors: u64,
    /// `errors / (completed + errors)`, 0 when nothing was attempted.
    pub error_rate: f64,
    /// The limit it was held to.
    pub max_error_rate: f64,
    /// `error_rate > max_error_rate`.
    pub compromised: bool,
}

impl ErrorRateCheck {
    /// `Some(COMPROMISED)` when the check failed.
    pub fn refusal(&self) -> Option<RunOutcome> {
        self.compromised.then_some(RunOutcome::Compromised)
    }
}

/// `errors / (n_completed + errors) > max_error_rate` resolves the run to
/// COMPROMISED: a refusal to score because the measurement did not complete,
/// not a verdict on the server. evalgate instead counts only completed calls,
/// so 3 of 3 completed reads as 100% when forty calls errored.
///
/// A `max_error_rate` that is NaN fails closed (compromised).
///
/// Reference: `../shared/seed` "Two documented divergences from evalgate" (1).
pub fn compromised(n_completed: u64, errors: u64, max_error_rate: f64) -> ErrorRateCheck {
    let attempted = n_completed.saturating_add(errors);
    let error_rate = if attempted == 0 {
        0.0
    } else {
        errors as f64 / attempted as f64
    };
    ErrorRateCheck {
        completed: n_completed,
        errors,
        error_rate,
        max_error_rate,
        compromised: max_error_rate.is_nan() || error_rate > max_error_rate,
    }
}
