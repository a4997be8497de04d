//! The numbers a run registers before its first model call.

use serde::{Deserialize, Serialize};

use super::outcome::{GateError, check_detectable, check_open_unit, check_threshold};
use super::published::{PublishedVerdict, published_verdict};

/// The statistical part of a pre-registration (SPEC R-PREREG): fixed and
/// hashed before the first model call, read by [`super::plan_power_gate`]
/// and [`super::resolve_extensions`]. The record module embeds it as is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PreRegistration {
    /// Tasks in the registered suite.
    pub n_tasks: u64,
    /// Trials per task; a gate's n counts trials (`n_tasks * reps`).
    pub reps: u64,
    /// Significance level of the FAIL test.
    pub alpha: f64,
    /// The rate the gate requires (0.90 for the construct gate).
    pub threshold: f64,
    /// The true rate the gate must be able to FAIL (threshold - 0.10 by default).
    pub detectable: f64,
    /// The power the design must reach against `detectable` (0.80).
    pub planned_power: f64,
    /// Tasks per extension batch.
    pub extension_size: u64,
    /// Extension batches the run may consume.
    pub max_extensions: u64,
}

/// The largest pooled trial count a registration may reach. The statistics
/// are tested to n = 10,000; this bound keeps every gate's cost bounded
/// (a tail sum costs about `9 sqrt(n p q)` terms).
pub const MAX_REGISTERED_TRIALS: u64 = 1_000_000;

/// The gates' significance level when none is registered (every run
/// registers one; a record imported from the reference may not).
pub const DEFAULT_ALPHA: f64 = 0.05;

/// The power a design asks for when none is registered: the chance that the
/// gate FAILs a server whose true rate is the detectable one.
pub const DEFAULT_PLANNED_POWER: f64 = 0.80;

/// The detectable rate a design uses when none is registered:
/// `threshold - 0.10`, or `threshold / 2` when that is not positive
/// (`default_detectable(0.90) = 0.80`, `default_detectable(0.05) = 0.025`).
///
/// Reference: the reference implementation's `defaultDetectable`.
pub fn default_detectable(threshold: f64) -> f64 {
    let d = threshold - 0.10;
    if d > 0.0 { d } else { threshold / 2.0 }
}

impl PreRegistration {
    /// Checks every field's domain: counts at least 1, `alpha` and
    /// `planned_power` in `(0, 1)`, `0 < detectable < threshold <= 1`, and
    /// at most [`MAX_REGISTERED_TRIALS`] pooled trials after every batch.
    pub fn validate(&self) -> Result<(), GateError> {
        if self.n_tasks == 0 {
            return Err(GateError::ZeroInRegistration { field: "n_tasks" });
        }
        if self.reps == 0 {
            return Err(GateError::ZeroInRegistration { field: "reps" });
        }
        check_threshold(self.threshold)?;
        check_detectable(self.detectable, self.threshold)?;
        check_open_unit("alpha", self.alpha)?;
        check_open_unit("planned_power", self.planned_power)?;
        let max_trials = self.max_trials();
        if max_trials > MAX_REGISTERED_TRIALS {
            return Err(GateError::OutOfDomain {
                name: "pooled trials after every batch",
                value: max_trials as f64,
                domain: "[1, 1000000]",
            });
        }
        Ok(())
    }

    /// Pooled trials after every registered batch (saturating).
    pub fn max_trials(&self) -> u64 {
        let batches = if self.buys_extensions() {
            self.max_extensions
        } else {
            0
        };
        self.registered_trials()
            .saturating_add(batches.saturating_mul(self.batch_trials()))
    }

    /// [`published_verdict`] at this registration's threshold, alpha,
    /// detectable rate and planned power: the six-number call with no room
    /// to swap two of them.
    pub fn published_verdict(&self, k: u64, n: u64) -> Result<PublishedVerdict, GateError> {
        published_verdict(
            k,
            n,
            self.threshold,
            self.alpha,
            self.detectable,
            self.planned_power,
        )
    }

    /// Trials at the registered size: `n_tasks * reps`.
    pub fn registered_trials(&self) -> u64 {
        self.n_tasks.saturating_mul(self.reps)
    }

    /// Trials one full extension batch adds: `extension_size * reps`.
    pub fn batch_trials(&self) -> u64 {
        self.extension_size.saturating_mul(self.reps)
    }

    /// True when the registration bought at least one non-empty batch.
    pub fn buys_extensions(&self) -> bool {
        self.extension_size > 0 && self.max_extensions > 0
    }

    /// Pooled trial counts the design can reach: the registered size, then
    /// after each full batch (at most 1,000,001 sizes).
    pub fn reachable_trials(&self) -> Vec<u64> {
        let batches = if self.buys_extensions() {
            self.max_extensions.min(MAX_REGISTERED_TRIALS)
        } else {
            0
        };
        (0..=batches)
            .map(|j| {
                self.registered_trials()
                    .saturating_add(j.saturating_mul(self.batch_trials()))
            })
            .collect()
    }
}
