//! Divergence 2 from evalgate: a published PASS carries the same burden of
//! evidence as a published FAIL.

use serde::{Deserialize, Serialize};

use super::outcome::{GateError, GateOutcome, check_detectable, check_open_unit};
use super::verdict::{achieved_power, plan_remembered, verdict};
use crate::stats::{BOARD_CONFIDENCE, wilson};

/// Why a published verdict reads as it does. Rendered verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PublishedReason {
    /// A PASS that was resolved (Wilson low >= threshold) or powered.
    Ok,
    /// A raw PASS from a sample that could not have resolved it; published as EXTEND.
    DowngradedUnderpowered,
    /// A FAIL (the exact test rejected the threshold).
    Failed,
    /// A raw EXTEND.
    UnderResolved,
}

/// A verdict under the publication rule, with the numbers the rule used.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PublishedVerdict {
    /// What the board publishes.
    pub outcome: GateOutcome,
    /// What the three-outcome rule alone said.
    pub raw_outcome: GateOutcome,
    /// Successes.
    pub k: u64,
    /// Trials.
    pub n: u64,
    /// The rate the gate requires.
    pub threshold: f64,
    /// Significance level.
    pub alpha: f64,
    /// `P(X <= k | n, threshold)`.
    pub p_value: f64,
    /// True when a raw PASS was downgraded to EXTEND.
    pub downgraded: bool,
    /// Wilson 95% lower bound (exact z).
    pub wilson_low: f64,
    /// Wilson 95% upper bound (exact z).
    pub wilson_high: f64,
    /// The n [`plan`](super::plan) asks for at this design (`None` past `MAX_PLAN_N`).
    pub required_n: Option<u64>,
    /// The power this run's own n achieves against `detectable`.
    pub achieved_power: f64,
    /// The true rate the gate must be able to FAIL.
    pub detectable: f64,
    /// The power the pre-registration asked for.
    pub planned_power: f64,
    /// Why it reads as it does.
    pub reason: PublishedReason,
}

/// The three-outcome rule plus the publication rule (divergence 2):
/// a raw PASS stands only if
///
/// * the Wilson 95% lower bound is `>= threshold` (this run resolved it), or
/// * `achieved_power(n, threshold, detectable, alpha) >= planned_power`
///   (this run's own n is powered; the sawtooth means n >= plan n is not enough);
///
/// otherwise it is published as EXTEND with reason `downgraded_underpowered`.
/// FAIL and EXTEND are published as they are. No PASS is published from a
/// small lucky n: 33/36 at 0.90 is EXTEND (Wilson low 0.782, power 0.434).
///
/// Reference: `../shared/seed` "Two documented divergences from evalgate" (2);
/// reference implementation `publishedVerdict`, with the exact normal
/// quantile in place of 1.96.
pub fn published_verdict(
    k: u64,
    n: u64,
    threshold: f64,
    alpha: f64,
    detectable: f64,
    planned_power: f64,
) -> Result<PublishedVerdict, GateError> {
    let raw = verdict(k, n, threshold, alpha)?;
    check_detectable(detectable, threshold)?;
    check_open_unit("planned_power", planned_power)?;
    let interval = wilson(k, n, BOARD_CONFIDENCE);
    let power = achieved_power(n, threshold, detectable, alpha);
    let resolved = interval.low >= threshold;
    let powered = power >= planned_power;
    let (outcome, downgraded, reason) = match raw.outcome {
        GateOutcome::Pass if resolved || powered => (GateOutcome::Pass, false, PublishedReason::Ok),
        GateOutcome::Pass => (
            GateOutcome::Extend,
            true,
            PublishedReason::DowngradedUnderpowered,
        ),
        GateOutcome::Fail => (GateOutcome::Fail, false, PublishedReason::Failed),
        GateOutcome::Extend => (GateOutcome::Extend, false, PublishedReason::UnderResolved),
    };
    Ok(PublishedVerdict {
        outcome,
        raw_outcome: raw.outcome,
        k,
        n,
        threshold,
        alpha,
        p_value: raw.p_value,
        downgraded,
        wilson_low: interval.low,
        wilson_high: interval.high,
        required_n: plan_remembered(threshold, detectable, alpha, planned_power)
            .ok()
            .map(|p| p.n),
        achieved_power: power,
        detectable,
        planned_power,
        reason,
    })
}
