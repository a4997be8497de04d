//! The cheap gate: null-model baselines and the kill rule.
//!
//! Three null models run the suite before any paid tier (no tools,
//! stubbed-empty tool results, random schema-valid arguments). If they pass
//! a large share of it, the suite measures what the model already knows,
//! not the server.

use serde::{Deserialize, Serialize};

use super::outcome::{Counts, GateError};
use crate::record::Outcome as RunOutcome;
use crate::stats::percentile_nearest_rank;

/// The noise floor is this nearest-rank percentile of the null pass rates
/// (of three rates, the largest).
pub const NULL_PERCENTILE: f64 = 95.0;

/// Kill when `t_null >= NULL_KILL_RATIO * t_agent`.
pub const NULL_KILL_RATIO: f64 = 0.5;

/// One null model's measured counts. `n = 0` means it was not measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NullArm {
    /// `no-tools`, `stubbed-empty`, `random-valid-args`, ...
    pub label: String,
    /// Tasks the null model passed.
    pub k: u64,
    /// Tasks it was run on (0 = not measured).
    pub n: u64,
}

/// The real agent's rate, if it exists yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum AgentSignal {
    /// Before any paid call: the agent has not run.
    NotYetMeasured,
    /// The agent's counts (`n = 0` means its run produced nothing).
    Measured {
        /// Tasks passed.
        k: u64,
        /// Tasks run.
        n: u64,
    },
}

/// What the kill rule concluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum NullOutcome {
    /// Noise is below half the signal: go on.
    Proceed,
    /// Noise at or above half the signal: halt.
    Kill,
    /// A rate is missing or the agent passed nothing: halts exactly like KILL.
    Indeterminate,
    /// Not decidable until the agent's rate exists, and no agent rate could
    /// make it a KILL yet: proceed to the paid tier, then decide again.
    Deferred,
}

/// Why, in the words printed on the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NullReason {
    /// PROCEED.
    Ok,
    /// KILL.
    NoiseExceedsSignal,
    /// A null rate or the agent rate is missing.
    NoMeasurements,
    /// The agent passed nothing: no signal to compare noise against.
    DegenerateNoSignal,
    /// DEFERRED: waiting for the agent's rate.
    AwaitingAgentRate,
}

/// Which signal the decision was taken against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecidedAgainst {
    /// Every possible agent rate: `t_null >= 0.5` kills even an agent at 1.0,
    /// so it is decided before any paid call.
    EveryPossibleAgentRate,
    /// The agent's measured rate.
    AgentRate,
    /// Nothing could be decided (INDETERMINATE or DEFERRED).
    Undecided,
}

/// One null arm's rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NullRate {
    /// Arm label.
    pub label: String,
    /// Passed.
    pub k: u64,
    /// Run (0 = not measured).
    pub n: u64,
    /// `k / n`, absent when not measured.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub rate: Option<f64>,
}

/// The null-baseline gate's full report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NullBaseline {
    /// Each arm's rate, in the order given.
    pub rates: Vec<NullRate>,
    /// Noise floor: the nearest-rank 95th percentile of the measured null
    /// rates; absent when none was measured.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub t_null: Option<f64>,
    /// The agent's rate, absent before it is measured.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub t_agent: Option<f64>,
    /// The line between them: `0.5 * t_agent`, or `0.5` (the line for an
    /// agent at 1.0) when decided against every possible agent rate.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub kill_threshold: Option<f64>,
    /// The conclusion.
    pub outcome: NullOutcome,
    /// Why.
    pub reason: NullReason,
    /// Which signal it was decided against.
    pub decided_against: DecidedAgainst,
    /// True for KILL and INDETERMINATE.
    pub halts: bool,
    /// `Some(DEGENERATE)` when the run halts here.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refusal: Option<RunOutcome>,
    /// The percentile used (95).
    pub percentile: f64,
    /// The kill ratio used (0.5).
    pub ratio: f64,
}

/// The kill rule, decided at the cheapest point where its outcome is certain.
///
/// `t_null` = nearest-rank 95th percentile of the measured null rates,
/// `t_agent = k / n` of the real agent. In order:
///
/// 1. no null rate measured -> INDETERMINATE (`no_measurements`);
/// 2. `t_null_low >= 0.5` -> KILL against every possible agent rate, where
///    `t_null_low` is the percentile with any unmeasured arm counted as 0
///    (a missing arm can only raise the percentile). Since `t_agent <= 1`,
///    `0.5 * t_agent <= 0.5`: this is decided before any paid call;
/// 3. agent not yet measured -> DEFERRED (re-decide once it is), or
///    INDETERMINATE if some null arm is missing (the run may not spend with
///    its noise floor unknown);
/// 4. agent measured with n = 0 -> INDETERMINATE (`no_measurements`);
///    `t_agent = 0` -> INDETERMINATE (`degenerate_no_signal`);
/// 5. `t_null_low >= 0.5 * t_agent` -> KILL against the agent rate;
/// 6. an arm missing -> INDETERMINATE (`no_measurements`);
/// 7. otherwise PROCEED.
///
/// INDETERMINATE halts exactly like KILL; both refuse as DEGENERATE.
/// Errors only for counts with `k > n`.
///
/// Reference: foil `nulls.py` `_verdict` (PREREGISTRATION 5.1, amendment A6)
/// via the reference implementation's `nullBaselineGate`; the early decision
/// is this product's (SPEC R-RUN-1 step 5).
pub fn null_baseline(arms: &[NullArm], agent: AgentSignal) -> Result<NullBaseline, GateError> {
    null_baseline_with_ratio(arms, agent, NULL_KILL_RATIO)
}

/// [`null_baseline`] with a registered kill ratio. A run may tighten the
/// ratio (a lower ratio kills sooner), never loosen it; the caller checks
/// that. Errors for a ratio outside (0, 1].
pub fn null_baseline_with_ratio(
    arms: &[NullArm],
    agent: AgentSignal,
    ratio: f64,
) -> Result<NullBaseline, GateError> {
    if !(ratio > 0.0 && ratio <= 1.0) {
        return Err(GateError::OutOfDomain {
            name: "null kill ratio",
            value: ratio,
            domain: "(0, 1]",
        });
    }
    let mut rates = Vec::with_capacity(arms.len());
    for arm in arms {
        if arm.k > arm.n {
            return Err(GateError::CountsExceedTrials { k: arm.k, n: arm.n });
        }
        rates.push(NullRate {
            label: arm.label.clone(),
            k: arm.k,
            n: arm.n,
            rate: (arm.n > 0).then(|| arm.k as f64 / arm.n as f64),
        });
    }
    let agent_counts = match agent {
        AgentSignal::NotYetMeasured => None,
        AgentSignal::Measured { k, n } => {
            if k > n {
                return Err(GateError::CountsExceedTrials { k, n });
            }
            Some(Counts { k, n })
        }
    };
    let measured: Vec<f64> = rates.iter().filter_map(|r| r.rate).collect();
    let any_missing = measured.len() < rates.len();
    let t_null = percentile_nearest_rank(&measured, NULL_PERCENTILE);
    let with_missing_as_zero: Vec<f64> = rates.iter().map(|r| r.rate.unwrap_or(0.0)).collect();
    let t_null_low = percentile_nearest_rank(&with_missing_as_zero, NULL_PERCENTILE);
    let t_agent = agent_counts.and_then(|c| (c.n > 0).then(|| c.k as f64 / c.n as f64));

    let (outcome, reason, decided_against, kill_threshold) = decide(
        t_null.is_some(),
        t_null_low,
        agent_counts,
        t_agent,
        any_missing,
        ratio,
    );
    let halts = matches!(outcome, NullOutcome::Kill | NullOutcome::Indeterminate);
    Ok(NullBaseline {
        rates,
        t_null,
        t_agent,
        kill_threshold,
        outcome,
        reason,
        decided_against,
        halts,
        refusal: halts.then_some(RunOutcome::Degenerate),
        percentile: NULL_PERCENTILE,
        ratio,
    })
}

type Decision = (NullOutcome, NullReason, DecidedAgainst, Option<f64>);

fn decide(
    any_measured: bool,
    t_null_low: Option<f64>,
    agent: Option<Counts>,
    t_agent: Option<f64>,
    any_missing: bool,
    ratio: f64,
) -> Decision {
    use DecidedAgainst::{AgentRate, EveryPossibleAgentRate, Undecided};
    use NullOutcome::{Deferred, Indeterminate, Kill, Proceed};
    let undecided = |outcome, reason| (outcome, reason, Undecided, None);
    let Some(t_null_low) = t_null_low.filter(|_| any_measured) else {
        return undecided(Indeterminate, NullReason::NoMeasurements);
    };
    if t_null_low >= ratio {
        return (
            Kill,
            NullReason::NoiseExceedsSignal,
            EveryPossibleAgentRate,
            Some(ratio),
        );
    }
    let Some(agent) = agent else {
        return if any_missing {
            undecided(Indeterminate, NullReason::NoMeasurements)
        } else {
            undecided(Deferred, NullReason::AwaitingAgentRate)
        };
    };
    let Some(t_agent) = t_agent else {
        return undecided(Indeterminate, NullReason::NoMeasurements);
    };
    if agent.k == 0 {
        return undecided(Indeterminate, NullReason::DegenerateNoSignal);
    }
    let line = ratio * t_agent;
    if t_null_low >= line {
        return (Kill, NullReason::NoiseExceedsSignal, AgentRate, Some(line));
    }
    if any_missing {
        return (
            Indeterminate,
            NullReason::NoMeasurements,
            Undecided,
            Some(line),
        );
    }
    (Proceed, NullReason::Ok, AgentRate, Some(line))
}
