//! What a trial is: the budget and tool mode it runs under, what it is
//! handed ([`TrialSpec`]), how it ends, and what it did ([`TrialOutcome`],
//! a [`ToolCallRecord`] per call with its [`CallFailure`]).

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::types::{AttemptFailure, LlmError, ReferenceHint, Usage};

/// The most tokens a model may write in one agent turn unless the operator
/// says otherwise: a tool call or a short answer needs far less, and a
/// reply that runs on costs minutes on a slow model.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolMode {
    /// Tools offered and called on the server.
    Live,
    /// Tools offered; every call returns an empty ok result without touching
    /// the server.
    StubbedEmpty,
    /// No tools offered.
    None,
}

/// Turns one trial may take unless the operator says otherwise.
pub const DEFAULT_MAX_TURNS: u32 = 12;
/// Tokens one trial may spend unless the operator says otherwise.
pub const DEFAULT_MAX_TOKENS: u64 = 200_000;

/// Tool calls one assistant turn may make unless the operator says
/// otherwise; the surplus is refused by the harness and never sent.
pub const DEFAULT_MAX_CALLS_PER_TURN: u32 = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub max_turns: u32,
    pub max_tokens: u64,
    pub max_calls_per_turn: u32,
    /// Tokens the model may write in one turn.
    pub max_output_tokens: u32,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_turns: DEFAULT_MAX_TURNS,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_calls_per_turn: DEFAULT_MAX_CALLS_PER_TURN,
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
        }
    }
}

pub struct TrialSpec<'a> {
    pub corr_id: &'a str,
    /// What the trial may do to the server: calls that may write are
    /// withheld in a read-only run.
    pub access: &'a crate::access::Access,
    pub prompt: &'a str,
    pub instructions: Option<&'a str>,
    pub tools: &'a [Tool],
    pub mode: ToolMode,
    pub reference: Option<&'a ReferenceHint>,
    pub budget: Budget,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TrialEnd {
    Answered,
    TurnBudget,
    TokenBudget,
    ModelFailed,
    /// The model's reply repeated itself until the harness cut it.
    Runaway,
    /// The model wrote a reply its API could not read (a tool call whose
    /// arguments are not JSON): the model's output, not the API failing.
    MalformedReply,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallFailure {
    ProtocolError,
    ExecutionErrorRecovered,
    ExecutionErrorFatal,
    SchemaReject,
    BudgetExhausted,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    pub tool: String,
    pub arguments: Value,
    pub ok: bool,
    pub failure: Option<CallFailure>,
    pub latency_ms: u64,
    /// A call of a tool that may write (or of one the server does not list).
    pub writes: bool,
    /// Withheld by the harness (read-only): it never reached the server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub blocked: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrialOutcome {
    pub final_answer: Option<String>,
    pub end: TrialEnd,
    pub calls: Vec<ToolCallRecord>,
    /// Summed normalised usage of the calls that reported it.
    pub usage: Usage,
    /// Model calls that returned a response.
    pub model_calls: u32,
    pub calls_without_usage: u32,
    /// Model calls that failed after their retries (at most one: the trial ends).
    pub model_errors: Vec<LlmError>,
    /// Every failed HTTP attempt, retried or final, in order (each is also an
    /// `llm.error` event on the tape).
    pub attempt_failures: Vec<AttemptFailure>,
    /// The model id the provider reported last.
    pub model_reported: Option<String>,
    /// Assistant turns.
    pub turns: u32,
    /// The first model call's input tokens, cache reads and writes
    /// included, when it reported usage: what the trial's opening prompt
    /// (system text, tool list, task) cost in the model's tokenizer.
    pub first_input: Option<u64>,
    /// For an act task: what the harness's state check read after the
    /// trial (set by the pipeline, never by the loop).
    pub state: Option<String>,
}
