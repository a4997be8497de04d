//! The score of a scored run, and what it cost.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A rate with its Wilson 95% interval: the one interval type, computed by
/// [`crate::stats::wilson`] and stored as is.
pub use crate::stats::Interval;

/// The score of a `SCORED` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Score {
    pub runner_model: String,
    /// First-try success with its Wilson 95% interval: the published number.
    pub first_try: Interval,
    pub eventual: Interval,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_calls_per_completed_task: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_tokens_per_completed_task: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_cost_per_completed_task_usd: Option<f64>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
    #[serde(default)]
    pub tools: Vec<ToolScore>,
    #[serde(default)]
    pub tasks: Vec<TaskResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ambiguous_parameters: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_drift: Option<Value>,
}

/// Per-tool results of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolScore {
    pub tool: String,
    pub calls: u64,
    pub errors: u64,
    /// Failure attribution: class -> count.
    #[serde(default)]
    pub failure_classes: serde_json::Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<u64>,
    #[serde(default)]
    pub declared_destructive: bool,
}

/// One task of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskResult {
    pub task_id: String,
    pub first_try_success: bool,
    pub success: bool,
    pub tool_calls: u64,
    #[serde(default)]
    pub mrtr_rounds: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
}

/// The run's dollar figure: a total only when nothing known is missing.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cost {
    Total {
        usd: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runner_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judge_usd: Option<f64>,
    },
    /// Printed "at least $x", with every reason it is a floor.
    Floor {
        usd: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runner_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judge_usd: Option<f64>,
        reasons: Vec<String>,
    },
    /// Nothing supports a figure.
    None { why: String },
}
