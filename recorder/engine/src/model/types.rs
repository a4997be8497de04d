//! The provider-neutral conversation types every model client speaks.
//!
//! A runner or judge is a [`ModelClient`]: it is handed the whole conversation
//! so far (system text, messages, tool list) and returns the next assistant
//! message. The agent loop executes any `tool_use` blocks over the real wire
//! and feeds `tool_result` blocks back. The sim profiles implement the same
//! trait, so they drive the same loop and produce the same tape lines.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `anthropic/<model>`, `openai/<model>` or `sim/<profile>`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ModelId {
    pub provider: ProviderKind,
    pub model: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    Anthropic,
    #[serde(rename = "openai")]
    OpenAi,
    Sim,
}

impl ProviderKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Sim => "sim",
        }
    }
}

impl std::str::FromStr for ModelId {
    type Err = anyhow::Error;

    fn from_str(s: &str) -> anyhow::Result<ModelId> {
        let (provider, model) = s.split_once('/').ok_or_else(|| {
            anyhow::anyhow!(
                "a model is written PROVIDER/MODEL (anthropic/…, openai/…, sim/…); got {s:?}"
            )
        })?;
        let provider = match provider {
            "anthropic" => ProviderKind::Anthropic,
            "openai" => ProviderKind::OpenAi,
            "sim" => ProviderKind::Sim,
            other => anyhow::bail!(
                "unknown model provider {other:?} in {s:?}: use anthropic/<model>, openai/<model> or sim/<profile>"
            ),
        };
        if model.is_empty() {
            anyhow::bail!("{s:?} names no model after the provider");
        }
        Ok(ModelId {
            provider,
            model: model.to_owned(),
        })
    }
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.provider.as_str(), self.model)
    }
}

/// A tool as offered to the model (from `tools/list`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The tool's JSON Schema for its arguments.
    pub input_schema: Value,
}

impl ToolSpec {
    /// The tool as a provider's API takes it: its name, its description
    /// when it has one, and its schema as an object schema under
    /// `schema_key` (Anthropic's `input_schema`, OpenAI's `parameters`).
    pub fn api_object(&self, schema_key: &str) -> serde_json::Map<String, Value> {
        let mut tool = serde_json::Map::new();
        tool.insert("name".into(), Value::String(self.name.clone()));
        if let Some(d) = &self.description {
            tool.insert("description".into(), Value::String(d.clone()));
        }
        tool.insert(schema_key.into(), object_schema(&self.input_schema));
        tool
    }
}

/// A tool schema as the model APIs require it: an object schema.
fn object_schema(schema: &Value) -> Value {
    match schema {
        Value::Object(map) if map.get("type").and_then(Value::as_str) == Some("object") => {
            schema.clone()
        }
        Value::Object(map) if !map.contains_key("type") => {
            let mut m = map.clone();
            m.insert("type".into(), Value::String("object".into()));
            Value::Object(m)
        }
        _ => serde_json::json!({"type": "object", "properties": {}}),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

/// One block of a message; the shapes mirror mcp-tape v1 turn blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Thinking {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
}

/// The text blocks of a message, joined by newlines (thinking, tool calls
/// and tool results left out).
pub fn text_of(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

/// One request to a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    pub system: Option<String>,
    pub messages: Vec<Message>,
    /// Empty means the model is offered no tools.
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// The trial this call belongs to (for the tape and for seeding sim).
    pub corr_id: Option<String>,
    /// The reply must be one JSON object: an OpenAI-compatible server is
    /// asked for `response_format: json_object` (llama.cpp then constrains
    /// the reply to valid JSON); other providers read the instruction only.
    pub json_object: bool,
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    /// Cut short by the harness: the reply repeated itself.
    Runaway,
    Other,
}

/// Token usage, normalised (R-TAPE-4): `input_tokens` excludes cache reads
/// and writes; thinking tokens are part of `output_tokens`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
    /// The part of `output_tokens` spent thinking, when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_tokens: Option<u64>,
}

/// A token count one call can never honestly report: no context window or
/// output limit comes near it. A usage block with a count above it (or a
/// negative, fractional or non-numeric one) is nonsense and is not counted.
pub const MAX_CALL_TOKENS: u64 = 1_000_000_000;

impl Usage {
    /// Add `other` in, saturating: a sum never wraps.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_input_tokens = self
            .cache_read_input_tokens
            .saturating_add(other.cache_read_input_tokens);
        self.cache_creation_input_tokens = self
            .cache_creation_input_tokens
            .saturating_add(other.cache_creation_input_tokens);
        if let Some(t) = other.thinking_tokens {
            self.thinking_tokens = Some(self.thinking_tokens.unwrap_or(0).saturating_add(t));
        }
    }

    /// Every token counted, saturating.
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }
}

/// What a response's usage block said: `Ok(None)` when it had none, an
/// error naming the nonsense when it is not a usage block we can count.
pub type UsageRead = Result<Option<Usage>, String>;

/// One count of a usage block at `pointer`: `None` when absent or null, an
/// error when it is not a whole number from 0 to [`MAX_CALL_TOKENS`].
pub fn usage_count(block: &Value, pointer: &str) -> Result<Option<u64>, String> {
    match block.pointer(pointer) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n <= MAX_CALL_TOKENS => Ok(Some(n)),
            _ => Err(format!(
                "usage `{}` is {}, not a token count from 0 to {MAX_CALL_TOKENS}",
                pointer.trim_start_matches('/'),
                short(v)
            )),
        },
    }
}

/// A value for a message, cut short.
fn short(v: &Value) -> String {
    let text = v.to_string();
    match text.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text,
    }
}

/// One assistant message back from a model.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatResponse {
    pub content: Vec<ContentBlock>,
    pub stop: StopReason,
    /// `None` when the provider reported no usage, or nonsense (the cost
    /// block must say so).
    pub usage: Option<Usage>,
    /// Why the usage block was not counted, when it was nonsense (negative,
    /// absurd, overflowing); the agent tape records it.
    pub usage_rejected: Option<String>,
    /// The model as the provider reported it (pinned in the record).
    pub model: String,
    pub duration_ms: u64,
    pub ttft_ms: Option<u64>,
    /// Attempts made (1 = no retry).
    pub attempts: u32,
    /// Every HTTP attempt, failed ones first, the successful one last (empty
    /// for sim). The agent loop tapes each as `llm.request`, and each failed
    /// one also as `llm.error`.
    pub log: Vec<Attempt>,
}

/// One HTTP attempt of a model call, as the tape records it: never a key,
/// never a body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// 1-based.
    pub attempt: u32,
    /// The URL requested (no query string carries secrets here).
    pub endpoint: String,
    /// The HTTP status, when one came back.
    pub status: Option<u16>,
    pub duration_ms: u64,
    /// Why the attempt failed; `None` for the attempt that succeeded.
    pub failure: Option<AttemptFailure>,
    /// Milliseconds the attempt waited before it was sent, because the
    /// endpoint had refused another call of the run for its rate (the
    /// run's calls share one budget per endpoint).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rate_wait_ms: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// A failed attempt: its class, a short message, and how long we waited
/// before the next attempt (`None` when there was none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptFailure {
    pub class: LlmErrorClass,
    pub message: String,
    pub backoff_ms: Option<u64>,
}

/// How a model call failed, classified so the compromise rule can count it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LlmErrorClass {
    /// 429 after the bounded retries.
    RateLimited,
    /// 5xx after the bounded retries.
    Server,
    Timeout,
    /// Connection refused, reset, DNS.
    Transport,
    /// A body we could not read as the provider's response shape.
    Malformed,
    /// 401 / 403, or a missing key.
    Auth,
    /// Any other 4xx.
    BadRequest,
    /// The run's spend cap was reached: the call was never sent.
    SpendCap,
    /// The API answered that the model's own reply could not be read (a
    /// tool call whose arguments are not JSON, "invalid content"): the
    /// model's output, not the API failing. Never retried.
    ModelOutput,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{class:?} after {attempts} attempt(s){}: {message}", status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
pub struct LlmError {
    pub class: LlmErrorClass,
    pub status: Option<u16>,
    pub message: String,
    pub attempts: u32,
    /// Every attempt made, each with its failure (see [`Attempt`]).
    pub log: Vec<Attempt>,
}

impl LlmError {
    /// An error raised before any HTTP attempt (a missing key, a request we
    /// could not build).
    pub fn local(class: LlmErrorClass, message: impl Into<String>) -> LlmError {
        LlmError {
            class,
            status: None,
            message: message.into(),
            attempts: 0,
            log: Vec::new(),
        }
    }
}

/// A runner or judge. Implementations record nothing themselves; the caller
/// writes the agent tape (see the agent loop).
pub trait ModelClient: Send + Sync {
    fn id(&self) -> &ModelId;
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>>;
}

/// One tool call a solution makes: how a reference agent reaches the answer
/// through the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedCall {
    pub tool: String,
    pub arguments: serde_json::Map<String, Value>,
}

/// What the reference agent of the construct gate is handed: the answer key
/// and the way to it. Never given to the runner of the drive or the null arms.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceHint {
    pub answer: String,
    pub expected_tools: Vec<String>,
    #[serde(default)]
    pub plan: Vec<PlannedCall>,
}

/// A reply read from a provider's body: blocks, why it stopped, usage (when
/// reported) and the model the provider named.
pub type ParsedReply = (Vec<ContentBlock>, StopReason, UsageRead, Option<String>);

/// No single wait before a retry is longer than this, whatever
/// `Retry-After` says.
pub const BACKOFF_CAP: Duration = Duration::from_secs(20);

/// How long one model call attempt may take unless the operator says
/// otherwise (a slow local model needs several minutes).
pub const DEFAULT_MODEL_TIMEOUT: Duration = Duration::from_secs(120);

/// How a client behaves, whatever the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Seeds sim profiles and is sent as `seed` to OpenAI-compatible servers.
    pub seed: u64,
    /// Bound on one HTTP attempt (request and body).
    pub timeout: Duration,
    /// Retries after the first attempt on 429 / 5xx / timeouts / connection
    /// failures.
    pub max_retries: u32,
    /// The longest wait before a retry, whatever `Retry-After` says (at most
    /// [`BACKOFF_CAP`]).
    pub max_backoff: Duration,
    /// Ask OpenAI-compatible servers to stream the reply (`stream: true`
    /// with usage in the last event): a slow model's long reply is then
    /// bounded by the gaps between its tokens, not by its length, and the
    /// time to the first token is taped.
    pub stream: bool,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            seed: 0,
            timeout: DEFAULT_MODEL_TIMEOUT,
            max_retries: 3,
            max_backoff: BACKOFF_CAP,
            stream: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_sums_saturate_and_counts_past_the_bound_are_nonsense() {
        let mut sum = Usage {
            input_tokens: u64::MAX - 1,
            thinking_tokens: Some(u64::MAX),
            ..Usage::default()
        };
        sum.add(&Usage {
            input_tokens: 5,
            output_tokens: 7,
            thinking_tokens: Some(1),
            ..Usage::default()
        });
        assert_eq!(sum.input_tokens, u64::MAX);
        assert_eq!(sum.output_tokens, 7);
        assert_eq!(sum.thinking_tokens, Some(u64::MAX));
        assert_eq!(sum.total(), u64::MAX);
        let block = serde_json::json!({"a": MAX_CALL_TOKENS, "b": MAX_CALL_TOKENS + 1, "c": null});
        assert_eq!(usage_count(&block, "/a"), Ok(Some(MAX_CALL_TOKENS)));
        assert!(usage_count(&block, "/b").is_err());
        assert_eq!(usage_count(&block, "/c"), Ok(None));
        assert_eq!(usage_count(&block, "/missing"), Ok(None));
    }
}
