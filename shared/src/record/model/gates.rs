//! The gates: each one's verdict and the numbers it saw.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The gate pipeline as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gates {
    /// Gate ids in the order they ran.
    pub order: Vec<String>,
    pub records: Vec<GateRecord>,
    /// The gate whose failure decided the outcome; `None` when scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_at: Option<String>,
}

impl Gates {
    pub fn record(&self, id: &str) -> Option<&GateRecord> {
        self.records.iter().find(|r| r.id == id)
    }
}

impl GateRecord {
    /// Where the gate stands: a null baseline still waiting for the
    /// agent's rate (`DEFERRED`) did not stop the run, and did not pass
    /// either.
    pub fn state(&self) -> crate::gate_state::GateState {
        match &self.detail {
            GateDetail::NullBaseline {
                decision: Some(d), ..
            } if d == "DEFERRED" => crate::gate_state::GateState::Undecided,
            _ => crate::gate_state::GateState::of(self.ok, &self.reason),
        }
    }
}

/// One gate decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateRecord {
    /// `structural`, `answer_leak`, `suite_size`, `plan_power`, `null_baseline`,
    /// `construct`, `protocol_hygiene`, ...
    pub id: String,
    pub cost_tier: CostTier,
    pub ok: bool,
    /// Present on gates decided by a binomial test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<GateVerdict>,
    /// The machine reason string printed on the board (`below_min_rate`).
    pub reason: String,
    pub detail: GateDetail,
    /// The gate's detail exactly as an imported record carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_detail: Option<Value>,
}

/// Which budget a gate spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostTier {
    Free,
    Cheap,
    Paid,
}

/// Three-outcome binomial verdict on `k` of `n` against `threshold`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateVerdict {
    pub outcome: VerdictOutcome,
    pub k: u64,
    pub n: u64,
    pub threshold: f64,
    pub alpha: f64,
    pub p_value: f64,
}

/// The verdict of a gate test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VerdictOutcome {
    Pass,
    Fail,
    Extend,
    Indeterminate,
}

/// A k of n count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Count {
    pub k: u64,
    pub n: u64,
}

/// The numbers each gate saw, typed per gate. A reader that meets a gate kind
/// it does not know reads `unrecognised` and still has the record's `reason`.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GateDetail {
    ProtocolHygiene {
        /// Probe ids that failed.
        failed: Vec<String>,
    },
    Structural {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_requested: Option<u64>,
        /// Candidates the generator proposed (admission's input).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_generated: Option<u64>,
        /// Tasks in the suite that was driven (after admission, the
        /// screen and trimming); absent on records made before it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_tasks: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        admission_rate: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_admission_rate: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_generated: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    AnswerLeak {
        /// Leaks found in the driven suite.
        leaks: Vec<Value>,
        /// Leaks found and dropped at generation time.
        #[serde(default)]
        at_generation: Vec<Value>,
    },
    SuiteSize {
        n_tasks: u64,
        min_tasks: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_count: Option<u64>,
    },
    PlanPower {
        required_n: u64,
        actual_n: u64,
        threshold: f64,
        detectable_rate: f64,
        achieved_power: f64,
        /// What the gate saw, and the registrations that could publish.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    NullBaseline {
        /// One rate per null model.
        rates: Vec<NullRate>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        t_null: Option<f64>,
        /// The agent's rate the null was compared with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        t_agent: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kill_threshold: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ratio: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        percentile: Option<u64>,
        /// `PROCEED`, `KILL` or `INDETERMINATE`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    Construct {
        n: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_intended: Option<u64>,
        errors: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_error_rate: Option<f64>,
        compromised: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reps: Option<u64>,
        /// The published verdict after the Wilson / achieved-power rule.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        published: Option<PublishedVerdict>,
        /// Pooled counts across consumed extensions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pooled: Option<Count>,
        #[serde(default)]
        extensions_consumed: u64,
        /// What the wire tape shows for the reference trials, read when the
        /// gate did not pass.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tape_reading: Option<TapeReading>,
    },
    /// The drive's own error check (divergence 1: errors gated apart).
    Drive {
        /// Completed trials.
        trials: u64,
        /// Trials the model API failed.
        errors: u64,
        max_error_rate: f64,
        compromised: bool,
    },
    /// The judge's synthesis calls (judge-synth): a judge that fails is our
    /// measurement failing, gated like the drive's errors, never read as
    /// the server's thin surface.
    Synthesis {
        /// Calls made.
        calls: u64,
        /// Of those, calls that failed.
        failures: u64,
        max_error_rate: f64,
        compromised: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    /// The generation-time null screen's calls: a screen call that fails
    /// keeps its candidate unscreened, and over the error limit the run is
    /// COMPROMISED at `screen`, our measurement's failure.
    Screen {
        /// Screen calls made.
        calls: u64,
        /// Of those, calls that failed.
        failures: u64,
        max_error_rate: f64,
        compromised: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    /// A gate kind this reader does not know.
    #[serde(other)]
    Unrecognised,
}

impl GateDetail {
    /// The gate's own sentence on what it saw, when it wrote one.
    pub fn explain(&self) -> Option<&str> {
        match self {
            GateDetail::Structural { explain, .. }
            | GateDetail::PlanPower { explain, .. }
            | GateDetail::NullBaseline { explain, .. }
            | GateDetail::Synthesis { explain, .. }
            | GateDetail::Screen { explain, .. } => explain.as_deref(),
            _ => None,
        }
    }
}

/// The construct gate's reading of its own tape: what the reference agent's
/// trials put on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TapeReading {
    /// `tools/call` requests recorded for the reference trials.
    pub calls_recorded: u64,
    /// Of those, answered with a JSON-RPC error or an `isError` result.
    pub call_errors: u64,
    /// Requests that never got a response.
    pub no_response: u64,
}

/// One null model's pass rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NullRate {
    /// `no-tools`, `stubbed-empty`, `random-valid-args`.
    pub label: String,
    pub k: u64,
    pub n: u64,
    pub rate: f64,
    /// Trials the model API failed: not in `n`, and gated on their own
    /// (`errors / (n + errors)` over the limit is COMPROMISED), so an arm
    /// cannot look clean because its failures left the denominator.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The verdict as published (divergence 2: a raw PASS needs Wilson lower
/// bound >= threshold or achieved power).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PublishedVerdict {
    pub outcome: VerdictOutcome,
    pub raw_outcome: VerdictOutcome,
    pub downgraded: bool,
    pub wilson_low: f64,
    pub wilson_high: f64,
    pub required_n: u64,
    pub achieved_power: f64,
    pub reason: String,
}

/// One consumed extension batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExtensionBatch {
    /// 1-based.
    pub index: u32,
    /// The gate that bought it.
    pub gate: String,
    pub tasks_added: u64,
    /// Tasks times reps: a second number, never folded into the first.
    pub trials_added: u64,
    pub pooled_before: Count,
    pub pooled_after: Count,
    pub verdict_before: VerdictOutcome,
    pub verdict_after: VerdictOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_suite_hash: Option<String>,
    #[serde(default)]
    pub task_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<u64>,
    /// Candidates dropped inside the batch, per reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<BatchDrops>,
    /// True when the batch came up short of the registered size.
    #[serde(default)]
    pub short: bool,
}

/// Drops inside one extension batch, and its own calls that failed (the
/// screen's and the judge's), counted and gated as the main suite's are.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
pub struct BatchDrops {
    pub null_screen: u64,
    pub answer_leak: u64,
    pub admission: u64,
    pub duplicate: u64,
    /// Screen calls made for the batch, and of those failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub screen_calls: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub screen_errors: u64,
    /// The judge's synthesis calls for the batch, and of those failed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub judge_calls: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub judge_errors: u64,
}

impl BatchDrops {
    /// The batch's losses in words, as the record page prints them.
    pub fn text(&self) -> String {
        let mut parts = vec![format!(
            "dropped {} by admission, {} duplicates, {} answer leaks, {} by the null screen",
            self.admission, self.duplicate, self.answer_leak, self.null_screen
        )];
        if self.screen_calls > 0 {
            parts.push(format!(
                "{} of {} screen calls failed",
                self.screen_errors, self.screen_calls
            ));
        }
        if self.judge_calls > 0 {
            parts.push(format!(
                "{} of {} judge calls failed",
                self.judge_errors, self.judge_calls
            ));
        }
        parts.join("; ")
    }
}

#[cfg(test)]
mod batch_tests {
    use super::BatchDrops;

    #[test]
    fn a_batch_says_what_it_dropped_and_which_of_its_own_calls_failed() {
        let d = BatchDrops {
            null_screen: 2,
            answer_leak: 0,
            admission: 3,
            duplicate: 1,
            screen_calls: 12,
            screen_errors: 4,
            judge_calls: 0,
            judge_errors: 0,
        };
        assert_eq!(
            d.text(),
            "dropped 3 by admission, 1 duplicates, 0 answer leaks, 2 by the null screen; 4 of 12 screen calls failed"
        );
    }
}
