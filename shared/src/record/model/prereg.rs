//! The pre-registration: the numbers fixed before the run.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::server::CredentialContext;

/// What was fixed and hashed before the first model call. Fields a record
/// from an older schema did not carry are absent, never invented.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreRegistration {
    /// sha256 of the canonical pre-registration, when it was hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_tasks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Construct-gate rate threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub construct_threshold: Option<f64>,
    /// Null-baseline kill ratio (`t_null >= ratio * t_agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_kill_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_admission_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_tasks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_power: Option<f64>,
    /// Tasks per extension batch.
    pub extension_size: u64,
    pub max_extensions: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// The mix of task shapes the generator aims at when it trims its
    /// candidates to `n_tasks`, where it composes questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aimed_mix: Option<super::shape::AimedMix>,
    /// Whether the generation-time null screen was registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_screen: Option<bool>,
    /// Whether the official conformance suite runs (after the probes, at
    /// the revision they negotiated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<bool>,
    /// The sha256 of the expected-failures baseline the suite is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance_baseline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_context: Option<CredentialContext>,
    /// What the run may do to the server (read-only unless `--sandbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<super::access::AccessMode>,
    /// How a sandbox's state is restored between trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<super::access::RestoreKind>,
    /// How the server's requests for input (sampling, elicitation) are
    /// answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<super::input::InputPolicy>,
    /// What the operator told generation (`--seed-calls`, `--context`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_hints: Option<super::discovery::OperatorHints>,
    /// The generation-time null screen's protocol in the run's own words
    /// (what is asked, of which model, what deletes a candidate), when
    /// the screen is registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_protocol: Option<String>,
    /// The extension protocol in the run's own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_protocol: Option<String>,
    /// Model API errors over attempts above which a gate is COMPROMISED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_error_rate: Option<f64>,
    /// Turns one trial may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u64>,
    /// Tokens one trial may spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Tool calls one assistant turn may make; the surplus is refused by
    /// the harness and never sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_calls_per_turn: Option<u64>,
    /// Tokens the model may write in one agent turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u64>,
    /// Trials in flight at once within a stage (the stages still run in
    /// cost order; trials in flight share one session and take turns for
    /// their tool calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub concurrency: Option<u64>,
    /// Candidates generated per driven task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overgen_factor: Option<f64>,
    /// Milliseconds one MCP request may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_ms: Option<u64>,
    /// Milliseconds one model call attempt may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_timeout_ms: Option<u64>,
    /// The spend cap in model calls, when one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_calls: Option<u64>,
    /// The size cap of each tape, in bytes: a server that fills a tape
    /// past it ends the run VOID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tape_bytes: Option<u64>,
}
