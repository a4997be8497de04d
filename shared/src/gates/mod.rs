//! The pure gate decisions: what each validity gate concludes from counts it
//! is handed, and which refusal code (if any) that conclusion carries.
//!
//! Nothing here measures anything. The recorder measures and calls these
//! functions; the record stores what they return (every type is serde, with
//! snake_case fields); the viewer renders the stored values and never
//! recomputes them. One gate per file:
//!
//! * [`verdict()`], [`plan()`], [`achieved_power()`]: the three-outcome rule,
//!   its exact binomial and the sample-size planner (`verdict.rs`).
//! * [`published_verdict()`]: divergence 2, a PASS must be resolved or powered.
//! * [`compromised()`]: divergence 1, errors are gated on their own.
//! * [`null_baseline()`]: the cheap null-model kill rule.
//! * [`structural()`]: the free suite-size and admission-rate floors.
//! * [`plan_power_gate()`]: refuses a pre-registration that can never publish a PASS.
//! * [`resolve_extensions()`]: the extension protocol over a batch ledger.

/// Every gate a run can reach, in the order the pipeline runs them (a run
/// records the ones it reached, in this order, as `gates.order`):
/// `synthesis` only for a generator that writes with a judge, `screen` only
/// when registered, `drive` the drive's own error check.
pub const PIPELINE: &[&str] = &[
    "plan_power",
    "synthesis",
    "screen",
    "structural",
    "answer_leak",
    "null_baseline",
    "construct",
    "drive",
];

mod compromised;
mod extensions;
mod null_baseline;
mod outcome;
mod plan_power;
mod prereg;
mod published;
mod structural;
mod verdict;

pub use compromised::{ErrorRateCheck, MAX_ERROR_RATE, compromised};
pub use extensions::{
    BatchCounts, ExtensionDecision, ExtensionReason, ExtensionResolution, ExtensionStep,
    PooledCounts, resolve_extensions, resolve_extensions_with,
};
pub use null_baseline::{
    AgentSignal, DecidedAgainst, NULL_KILL_RATIO, NULL_PERCENTILE, NullArm, NullBaseline,
    NullOutcome, NullRate, NullReason, null_baseline, null_baseline_with_ratio,
};
pub use outcome::{Counts, GateError, GateOutcome};
pub use plan_power::{
    PlanPowerReason, PlanPowerReport, PublishableSizes, perfect_agent_min_trials, plan_power_gate,
    publishable_sizes,
};
pub use prereg::{
    DEFAULT_ALPHA, DEFAULT_PLANNED_POWER, MAX_REGISTERED_TRIALS, PreRegistration,
    default_detectable,
};
pub use published::{PublishedReason, PublishedVerdict, published_verdict};
pub use structural::{
    MIN_ADMISSION_RATE, MIN_SUITE_SIZE, StructuralReason, StructuralReport, SuiteFates, structural,
    structural_registered, structural_with, suite_size_text,
};
pub use verdict::{
    MAX_PLAN_N, Plan, Verdict, achieved_power, critical_k, plan, plan_within, verdict,
};
