//! Shared vocabulary of the gates: the three-outcome rule's outcomes,
//! counts, and the error for inputs a gate cannot judge. A gate that refuses
//! names the run's outcome in the record's own terms
//! ([`crate::record::Outcome`]).

use serde::{Deserialize, Serialize};

/// One gate's outcome under the three-outcome rule (evalgate): PASS, FAIL
/// with evidence, or EXTEND. Not the run's outcome ([`crate::record::Outcome`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum GateOutcome {
    /// Observed rate at or above the threshold.
    Pass,
    /// The exact binomial test rejects "rate >= threshold" at alpha.
    Fail,
    /// Neither: below the threshold without evidence that it is below.
    Extend,
}

/// `k` successes in `n` trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Successes.
    pub k: u64,
    /// Trials.
    pub n: u64,
}

/// Inputs a gate refuses to judge. Messages read after "failed to ...".
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GateError {
    /// `k > n`.
    #[error("judge counts: k = {k} exceeds n = {n}")]
    CountsExceedTrials {
        /// Successes.
        k: u64,
        /// Trials.
        n: u64,
    },
    /// A verdict needs at least one trial.
    #[error("judge an empty sample: n must be at least 1")]
    EmptySample,
    /// A parameter outside its domain.
    #[error("use {name} = {value}: it must lie in {domain}")]
    OutOfDomain {
        /// Parameter name.
        name: &'static str,
        /// Value given.
        value: f64,
        /// The domain, in words.
        domain: &'static str,
    },
    /// `plan` scanned to its limit without reaching the power asked for.
    #[error("plan a sample size: no n <= {max_n} reaches power {power}")]
    PlanUnreachable {
        /// Largest n scanned.
        max_n: u64,
        /// Power asked for.
        power: f64,
    },
    /// A pre-registration field that must be positive is zero.
    #[error("accept the pre-registration: {field} must be at least 1")]
    ZeroInRegistration {
        /// Field name.
        field: &'static str,
    },
    /// The extension ledger contradicts itself or the pre-registration.
    #[error("read the extension ledger: {0}")]
    Ledger(String),
}

/// `value` in the open interval `(0, 1)`.
pub(crate) fn check_open_unit(name: &'static str, value: f64) -> Result<(), GateError> {
    if value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(GateError::OutOfDomain {
            name,
            value,
            domain: "(0, 1)",
        })
    }
}

/// A threshold in `(0, 1]`.
pub(crate) fn check_threshold(value: f64) -> Result<(), GateError> {
    if value > 0.0 && value <= 1.0 {
        Ok(())
    } else {
        Err(GateError::OutOfDomain {
            name: "threshold",
            value,
            domain: "(0, 1]",
        })
    }
}

/// A detectable rate in `(0, threshold)`.
pub(crate) fn check_detectable(detectable: f64, threshold: f64) -> Result<(), GateError> {
    if detectable > 0.0 && detectable < threshold {
        Ok(())
    } else {
        Err(GateError::OutOfDomain {
            name: "detectable",
            value: detectable,
            domain: "(0, threshold)",
        })
    }
}
