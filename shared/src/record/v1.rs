//! `fitness-report/1`, as written by the reference TypeScript implementation
//! (commit d33d08f). Read-only: this crate never writes v1.
//!
//! Only what the import needs is typed; everything else rides along as
//! `serde_json::Value` so nothing the source carried is lost. Unknown fields
//! are ignored.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordV1 {
    pub schema: String,
    pub server: ServerV1,
    pub run: RunV1,
    pub probes: ProbesV1,
    pub gates: GatesV1,
    pub outcome: String,
    #[serde(default)]
    pub score: Option<ScoreV1>,
    #[serde(default)]
    pub trace_links: Option<TraceLinksV1>,
    #[serde(default, rename = "trace_stats")]
    pub trace_stats: Option<Value>,
    #[serde(default)]
    pub methods: Vec<String>,
    #[serde(default)]
    pub score_notes: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerV1 {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
    pub slug: String,
    pub era: String,
    #[serde(default)]
    pub negotiated_version: Option<String>,
    #[serde(default)]
    pub server_info: Option<Value>,
    #[serde(default)]
    pub instructions: Option<String>,
    #[serde(default)]
    pub capabilities: Option<Value>,
    pub transport_shape: String,
    #[serde(default)]
    pub sessionful: bool,
    pub credential_context: String,
    #[serde(default)]
    pub discover: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunV1 {
    pub id: String,
    pub started_at: String,
    #[serde(default)]
    pub harness_version: Option<String>,
    pub runner_model: String,
    pub judge_model: String,
    pub suite_hash: String,
    #[serde(default)]
    pub task_budget: Option<u64>,
    #[serde(default)]
    pub generator_version: Option<String>,
    #[serde(default)]
    pub null_screen_enabled: Option<bool>,
    #[serde(default)]
    pub judge_usage: Option<JudgeUsageV1>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeUsageV1 {
    #[serde(default)]
    pub est_cost_usd: Option<f64>,
    #[serde(default)]
    pub partial: bool,
    #[serde(default)]
    pub uncounted_calls: Option<u64>,
    #[serde(default)]
    pub failed_calls: Option<u64>,
    #[serde(default)]
    pub by_model: Vec<JudgeModelUsageV1>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JudgeModelUsageV1 {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub est_cost_usd: Option<f64>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProbesV1 {
    #[serde(default)]
    pub spec_currency: Option<String>,
    #[serde(default)]
    pub findings: Vec<ProbeFindingV1>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ProbeFindingV1 {
    pub id: String,
    /// `true`, `false`, or `null` for not applicable.
    #[serde(default)]
    pub pass: Option<bool>,
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub evidence: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GatesV1 {
    #[serde(default)]
    pub order: Vec<String>,
    #[serde(default)]
    pub records: Vec<GateRecordV1>,
    #[serde(default)]
    pub refused_at: Option<String>,
    #[serde(default)]
    pub extension_policy: Option<ExtensionPolicyV1>,
    #[serde(default)]
    pub extensions: Vec<ExtensionV1>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionPolicyV1 {
    pub extension_size: u64,
    pub max_extensions: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GateRecordV1 {
    pub gate: String,
    pub ok: bool,
    #[serde(default)]
    pub cost_tier: Option<String>,
    #[serde(default)]
    pub verdict: Option<VerdictV1>,
    #[serde(default)]
    pub reason: String,
    #[serde(default)]
    pub detail: Value,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VerdictV1 {
    pub outcome: String,
    pub k: u64,
    pub n: u64,
    pub threshold: f64,
    pub alpha: f64,
    pub p_value: f64,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct CountV1 {
    pub k: u64,
    pub n: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExtensionV1 {
    pub index: u32,
    pub gate: String,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub batch_suite_hash: Option<String>,
    #[serde(default)]
    pub task_ids: Vec<String>,
    #[serde(default)]
    pub generated: Option<u64>,
    pub admitted: u64,
    #[serde(default)]
    pub dropped: Option<DroppedV1>,
    #[serde(default)]
    pub short: bool,
    pub pooled_before: CountV1,
    pub pooled_after: CountV1,
    pub verdict_before: String,
    pub verdict_after: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DroppedV1 {
    #[serde(default)]
    pub null_screen: u64,
    #[serde(default)]
    pub answer_leak: u64,
    #[serde(default)]
    pub admission: u64,
    #[serde(default)]
    pub duplicate: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoreV1 {
    pub runner_model: String,
    pub first_try_success: IntervalV1,
    pub eventual_success: IntervalV1,
    #[serde(default)]
    pub mean_calls_per_completed_task: Option<f64>,
    #[serde(default)]
    pub mean_tokens_per_completed_task: Option<f64>,
    #[serde(default)]
    pub mean_cost_per_completed_task_usd: Option<f64>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
    #[serde(default)]
    pub tools: Vec<ToolV1>,
    #[serde(default)]
    pub tasks: Vec<TaskV1>,
    #[serde(default)]
    pub ambiguous_parameters: Vec<Value>,
    #[serde(default)]
    pub schema_drift: Option<Value>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct IntervalV1 {
    pub rate: f64,
    pub low: f64,
    pub high: f64,
    pub k: u64,
    pub n: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolV1 {
    pub tool: String,
    pub calls: u64,
    pub errors: u64,
    #[serde(default)]
    pub failure_classes: serde_json::Map<String, Value>,
    #[serde(default)]
    pub p50_ms: Option<u64>,
    #[serde(default)]
    pub p95_ms: Option<u64>,
    #[serde(default)]
    pub declared_destructive: bool,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskV1 {
    pub task_id: String,
    pub first_try_success: bool,
    pub success: bool,
    pub tool_calls: u64,
    #[serde(default)]
    pub mrtr_rounds: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default)]
    pub cost_usd: Option<f64>,
    #[serde(default)]
    pub failure: Option<String>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TraceLinksV1 {
    #[serde(default)]
    pub mcp: Option<String>,
    #[serde(default)]
    pub agent: Option<String>,
    #[serde(default)]
    pub viewer: Option<String>,
}
