//! The free plan-power gate: refuse a pre-registration that could never
//! publish a PASS, before anything is spent.

use serde::{Deserialize, Serialize};

use super::outcome::GateError;
use super::prereg::PreRegistration;
use super::verdict::{MAX_PLAN_N, achieved_power, plan_remembered};
use crate::record::Outcome as RunOutcome;
use crate::stats::{BOARD_CONFIDENCE, wilson};

/// Why. Rendered verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanPowerReason {
    /// Some reachable n can publish a PASS.
    Ok,
    /// No reachable n can publish a PASS, even with every trial a success.
    NeverPublishable,
}

/// The plan-power gate's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanPowerReport {
    /// Pooled trial counts the registration can reach (registered size, then
    /// after each full extension batch).
    pub reachable_trials: Vec<u64>,
    /// The first of those at which `k = n` would be published as PASS.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub publishable_at: Option<u64>,
    /// The smallest n at which a perfect agent (`k = n`) publishes a PASS at
    /// this design, reachable or not.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub perfect_agent_min_trials: Option<u64>,
    /// The n [`plan`](super::plan) asks for (powered whatever k turns out to be).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub required_n: Option<u64>,
    /// True unless refused.
    pub ok: bool,
    /// Why.
    pub reason: PlanPowerReason,
    /// `Some(GATE_FAILED)` when refused.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refusal: Option<RunOutcome>,
}

/// True when `k = n` successes would be published as PASS at this n:
/// Wilson-95 low of `n/n` (which is `n / (n + z^2)`) `>= threshold`, or
/// `achieved_power(n) >= planned_power`. Those are the only two ways a raw
/// PASS stands, and `k = n` maximises the first while the second does not
/// depend on k, so if `k = n` cannot publish, no k can.
fn perfect_agent_publishes(n: u64, prereg: &PreRegistration) -> bool {
    n > 0
        && (wilson(n, n, BOARD_CONFIDENCE).low >= prereg.threshold
            || achieved_power(n, prereg.threshold, prereg.detectable, prereg.alpha)
                >= prereg.planned_power)
}

/// The smallest n (up to `MAX_PLAN_N`) at which a perfect reference agent,
/// passing every trial, would have its PASS published at this design.
///
/// At threshold 0.90 the Wilson route needs `n / (n + 1.95996^2) >= 0.90`,
/// i.e. n >= 35 (34/34 has low 0.8985; 35/35 has 0.9011), well before the
/// power route (n = 78 at detectable 0.80, power 0.80). So a construct gate
/// at 0.90 needs at least 35 trials (e.g. 12 tasks x 3 reps = 36) before a
/// flawless reference agent can pass it without extensions.
pub fn perfect_agent_min_trials(prereg: &PreRegistration) -> Option<u64> {
    (1..=MAX_PLAN_N).find(|&n| perfect_agent_publishes(n, prereg))
}

/// The nearest registrations a flawless reference agent could publish: the
/// fewest tasks at the registered reps and extensions, and the fewest reps
/// at the registered tasks and extensions. `None` when no size up to
/// [`MAX_PLAN_N`] pooled trials would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublishableSizes {
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub min_tasks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub min_reps: Option<u64>,
}

/// See [`PublishableSizes`]. Errors when the pre-registration is invalid.
pub fn publishable_sizes(prereg: &PreRegistration) -> Result<PublishableSizes, GateError> {
    prereg.validate()?;
    let publishes = |p: &PreRegistration| {
        p.reachable_trials()
            .iter()
            .any(|&n| perfect_agent_publishes(n, p))
    };
    let min_tasks = (1..=MAX_PLAN_N / prereg.reps.max(1))
        .find(|&n_tasks| publishes(&PreRegistration { n_tasks, ..*prereg }));
    let min_reps = (1..=MAX_PLAN_N / prereg.n_tasks.max(1))
        .find(|&reps| publishes(&PreRegistration { reps, ..*prereg }));
    Ok(PublishableSizes {
        min_tasks,
        min_reps,
    })
}

/// The plan-power gate: refuses, for free, a pre-registration none of whose
/// reachable pooled sizes ([`PreRegistration::reachable_trials`]) could
/// publish a PASS even if every trial succeeded (GATE_FAILED,
/// `never_publishable`). Such a run could only ever FAIL or EXTEND, so
/// spending on it would buy a refusal. See [`perfect_agent_min_trials`] for
/// the n a perfect reference agent needs.
///
/// Errors when the pre-registration is invalid.
///
/// Reference: SPEC R-RUN-1 step 4 (plan-power); the publication rule is
/// [`super::published_verdict`].
pub fn plan_power_gate(prereg: &PreRegistration) -> Result<PlanPowerReport, GateError> {
    prereg.validate()?;
    let reachable_trials = prereg.reachable_trials();
    let publishable_at = reachable_trials
        .iter()
        .copied()
        .find(|&n| perfect_agent_publishes(n, prereg));
    let ok = publishable_at.is_some();
    Ok(PlanPowerReport {
        reachable_trials,
        publishable_at,
        perfect_agent_min_trials: perfect_agent_min_trials(prereg),
        required_n: plan_remembered(
            prereg.threshold,
            prereg.detectable,
            prereg.alpha,
            prereg.planned_power,
        )
        .ok()
        .map(|p| p.n),
        ok,
        reason: if ok {
            PlanPowerReason::Ok
        } else {
            PlanPowerReason::NeverPublishable
        },
        refusal: (!ok).then_some(RunOutcome::GateFailed),
    })
}
