//! The agent loop: a task prompt, the server's instructions and its tool
//! list go to the model; model turns and MCP tool calls alternate until a
//! final answer or a budget ends the trial. Everything lands on the agent
//! tape with the trial's corr_id, and each tool call's wire lines carry the
//! same corr_id (trials in flight together take turns on the session for
//! their tool calls; their model calls overlap).
//!
//! Tape lines written per trial (agent plane):
//! - a `user` turn with the prompt;
//! - per model call: one `llm.request` event per HTTP attempt (endpoint,
//!   status, tools count, attempt; never keys or bodies), one `llm.error`
//!   event per failed attempt, then an `assistant` turn (blocks, normalised
//!   usage, timing, model);
//! - per assistant turn with tool calls: a `fitness.destructive_call` event
//!   for each call that may write and reaches the server, a
//!   `fitness.blocked_call` event for each the harness withholds (a
//!   read-only run never sends one: the agent gets a tool error saying so,
//!   and it is never a server error), a `fitness.refused_call` event for each
//!   call past the turn's registered limit (answered by the harness, never
//!   sent), then a `user` turn carrying the `tool_result` blocks.
//!
//! Failure taxonomy per call ([`CallFailure`]): a JSON-RPC error or timeout is
//! a protocol error (`-32602` invalid params is a schema reject); an
//! `isError` result is an execution error, recovered when a later call to
//! the same tool succeeded in the trial and fatal otherwise, or a schema
//! reject when the arguments lack a required field of the tool's inputSchema;
//! arguments that are not a JSON object are a schema reject and never reach
//! the server; calls the model asked for after a budget ran out are never
//! made and are budget-exhausted.

use std::time::Instant;

use fitness_shared::tape::{Block, KnownBlock, Line, Timing, Turn, Usage as TapeUsage};
use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::http::ms;
use super::sim::REFERENCE_FENCE;
use super::stream::repeating;
use super::types::{
    Attempt, AttemptFailure, ChatRequest, ChatResponse, ContentBlock, LlmError, LlmErrorClass,
    Message, ModelClient, ReferenceHint, Role, StopReason, ToolSpec, Usage, text_of,
};
use crate::clock;
use crate::mcp::connect::Session;
use crate::mcp::tap::Tap;

/// The meta `kind` of an agent tape: mcp-tape calls the agent plane `llm`,
/// and `fitness tape stats` sorts planes by it.
pub const AGENT_TAPE_KIND: &str = "llm";

/// What every trial's system text starts with.
pub const PREAMBLE: &str = "You are completing a task with the tools of an MCP server. \
Call tools when they help. When you know the answer, reply with the answer alone and call no tool.";

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

/// What the reference agent is handed after the task prompt: a human
/// paragraph and a ```fitness-reference JSON block that `sim/reference`
/// parses. It follows the prompt, never the system text: the system text
/// and the tool list stay the same prefix in every trial of every stage, so
/// a provider's prompt cache (or llama.cpp's one slot) reuses them.
pub fn reference_text(hint: &ReferenceHint) -> String {
    let mut s = String::from(
        "You are the reference agent. The answer key and the calls that reach it are below. \
Perform the calls in order (an argument written {{handle:NAME}} takes the value NAME from an \
earlier result), then reply with the answer.\n",
    );
    s.push_str(&format!("Answer: {}\n", hint.answer));
    if !hint.expected_tools.is_empty() {
        s.push_str(&format!(
            "Tools the solution uses: {}\n",
            hint.expected_tools.join(", ")
        ));
    }
    s.push_str(REFERENCE_FENCE);
    s.push('\n');
    s.push_str(&serde_json::to_string_pretty(hint).unwrap_or_else(|_| "{}".to_owned()));
    s.push_str("\n```\n");
    s
}

/// Taped in place of the reference block of a reference trial's first turn.
pub const REFERENCE_WITHHELD: &str = "[The reference agent's answer key and solution plan followed here. They are kept off the tape so that the suite's answers are never published.]";

/// The system text of a trial: the same for every trial of a run.
pub fn system_text(instructions: Option<&str>) -> String {
    let mut s = PREAMBLE.to_owned();
    if let Some(i) = instructions.map(str::trim).filter(|i| !i.is_empty()) {
        s.push_str("\n\nThe server's instructions:\n");
        s.push_str(i);
    }
    s
}

pub fn tool_spec(tool: &Tool) -> ToolSpec {
    ToolSpec {
        name: tool.name.to_string(),
        description: tool.description.as_ref().map(|d| d.to_string()),
        input_schema: Value::Object((*tool.input_schema).clone()),
    }
}

/// Run one trial. Never fails: every failure is in the outcome and on the tape.
pub async fn run_trial(
    model: &dyn ModelClient,
    session: Option<&Session>,
    spec: &TrialSpec<'_>,
    tape: &Tap,
) -> TrialOutcome {
    drive(model, session, spec, tape).await
}

async fn drive(
    model: &dyn ModelClient,
    session: Option<&Session>,
    spec: &TrialSpec<'_>,
    tape: &Tap,
) -> TrialOutcome {
    let system = system_text(spec.instructions);
    let offered: Vec<ToolSpec> = match spec.mode {
        ToolMode::None => Vec::new(),
        ToolMode::Live | ToolMode::StubbedEmpty => spec.tools.iter().map(tool_spec).collect(),
    };
    let mut messages = open_trial(spec, tape);
    let mut out = TrialOutcome {
        final_answer: None,
        end: TrialEnd::Answered,
        calls: Vec::new(),
        usage: Usage::default(),
        model_calls: 0,
        calls_without_usage: 0,
        model_errors: Vec::new(),
        attempt_failures: Vec::new(),
        model_reported: None,
        turns: 0,
        first_input: None,
        state: None,
    };
    loop {
        if let Some(end) = budget_end(&out, &spec.budget) {
            out.end = end;
            break;
        }
        let request = ChatRequest {
            system: Some(system.clone()),
            messages: messages.clone(),
            tools: offered.clone(),
            max_tokens: spec.budget.max_output_tokens,
            temperature: None,
            corr_id: Some(spec.corr_id.to_owned()),
            json_object: false,
        };
        let Some(response) =
            ask(model, &request, offered.len(), spec.corr_id, tape, &mut out).await
        else {
            out.end = match out.model_errors.last() {
                Some(e) if e.class == LlmErrorClass::ModelOutput => {
                    tape.event(
                        "llm.malformed_reply",
                        json!({"why": "the model API could not read the model's reply (a malformed tool call)"}),
                        Some(spec.corr_id),
                    );
                    TrialEnd::MalformedReply
                }
                _ => TrialEnd::ModelFailed,
            };
            break;
        };
        // A reply that repeated itself (cut short while streamed, or read
        // whole) ends the trial as what it is, never as an answer.
        let why = match response.stop {
            StopReason::Runaway => repeating(&text_of(&response.content))
                .or_else(|| Some("the reply repeated itself".to_owned())),
            _ => repeating(&text_of(&response.content)),
        };
        if let Some(why) = why {
            tape.event("llm.runaway", json!({"why": why}), Some(spec.corr_id));
            out.end = TrialEnd::Runaway;
            break;
        }
        messages.push(Message {
            role: Role::Assistant,
            content: response.content.clone(),
        });
        let uses = tool_uses(&response.content);
        if uses.is_empty() {
            out.final_answer = Some(answer_text(&response.content));
            out.end = TrialEnd::Answered;
            break;
        }
        // Calls asked for after a budget ran out are never made.
        if let Some(end) = budget_end(&out, &spec.budget) {
            out.calls.extend(unmade(spec, &uses));
            out.end = end;
            break;
        }
        let results = call_all(session, spec, uses, tape, &mut out).await;
        messages.push(Message {
            role: Role::User,
            content: results,
        });
    }
    settle_execution_errors(&mut out.calls);
    out
}

/// The tool uses a reply asks for: (id, tool, input).
fn tool_uses(content: &[ContentBlock]) -> Vec<(String, String, Value)> {
    content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::ToolUse { id, name, input } => {
                Some((id.clone(), name.clone(), input.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Does a call of `name` write: a tool that may write, or one the server
/// does not list (nothing says it only reads)?
fn writes(spec: &TrialSpec<'_>, name: &str) -> bool {
    spec.access.writes(name) || !spec.tools.iter().any(|t| t.name == name)
}

/// The records of calls asked for after a budget ran out: never made.
fn unmade<'a>(
    spec: &'a TrialSpec<'_>,
    uses: &'a [(String, String, Value)],
) -> impl Iterator<Item = ToolCallRecord> + 'a {
    uses.iter().map(|(_, name, input)| {
        withheld(
            name,
            input,
            writes(spec, name),
            Some(CallFailure::BudgetExhausted),
        )
    })
}

/// The trial's first two turns on the tape, and the conversation so far.
/// The system text goes on the tape first: what the agent was told is
/// evidence too. The reference agent's answer key and plan (after the task
/// prompt) are the one part withheld, so that a published tape never
/// publishes a suite's answers; the tape says where they were.
fn open_trial(spec: &TrialSpec<'_>, tape: &Tap) -> Vec<Message> {
    let system_blocks = vec![ContentBlock::Text {
        text: system_text(spec.instructions),
    }];
    tape.line(&turn_line(
        "system",
        &system_blocks,
        None,
        None,
        None,
        spec.corr_id,
    ));
    let mut taped = vec![ContentBlock::Text {
        text: spec.prompt.to_owned(),
    }];
    let mut sent = taped.clone();
    if let Some(hint) = spec.reference {
        taped.push(ContentBlock::Text {
            text: REFERENCE_WITHHELD.to_owned(),
        });
        sent.push(ContentBlock::Text {
            text: reference_text(hint),
        });
    }
    tape.line(&turn_line("user", &taped, None, None, None, spec.corr_id));
    vec![Message {
        role: Role::User,
        content: sent,
    }]
}

/// One model call with its tape lines and its counts in `out`; `None`
/// when the model failed (the error is in `out.model_errors`).
async fn ask(
    model: &dyn ModelClient,
    request: &ChatRequest,
    offered: usize,
    corr_id: &str,
    tape: &Tap,
    out: &mut TrialOutcome,
) -> Option<ChatResponse> {
    let corr = Some(corr_id);
    let endpoint_sim = format!("sim:{}", model.id());
    let response = model.complete(request).await;
    let log = match &response {
        Ok(r) => r.log.as_slice(),
        Err(e) => e.log.as_slice(),
    };
    tape_attempts(tape, log, offered, &model.id().to_string(), corr_id);
    out.attempt_failures
        .extend(log.iter().filter_map(|a| a.failure.clone()));
    let response = match response {
        Ok(r) => r,
        Err(e) => {
            if e.log.is_empty() {
                // Failed before any HTTP attempt: still one error on the tape.
                tape.event(
                    "llm.error",
                    json!({"endpoint": endpoint_sim, "class": e.class, "error": {"message": e.message}}),
                    corr,
                );
            }
            out.model_errors.push(e);
            return None;
        }
    };
    if response.log.is_empty() {
        tape.event(
            "llm.request",
            json!({"endpoint": endpoint_sim, "status": null, "tools": offered, "attempt": 1}),
            corr,
        );
    }
    out.model_calls += 1;
    out.turns += 1;
    if out.turns == 1 {
        out.first_input = response.usage.as_ref().map(|u| {
            u.input_tokens
                .saturating_add(u.cache_read_input_tokens)
                .saturating_add(u.cache_creation_input_tokens)
        });
    }
    match &response.usage {
        Some(u) => out.usage.add(u),
        None => out.calls_without_usage += 1,
    }
    if let Some(why) = &response.usage_rejected {
        tape.event("llm.usage_rejected", json!({"why": why}), corr);
    }
    out.model_reported = Some(response.model.clone());
    tape.line(&assistant_line(&response, corr_id));
    Some(response)
}

/// The text blocks of a turn, as the trial's final answer.
fn answer_text(content: &[ContentBlock]) -> String {
    text_of(content).trim().to_owned()
}

/// Make every call the model asked for, in order; their results as the
/// next user turn (on the tape too).
async fn call_all(
    session: Option<&Session>,
    spec: &TrialSpec<'_>,
    uses: Vec<(String, String, Value)>,
    tape: &Tap,
    out: &mut TrialOutcome,
) -> Vec<ContentBlock> {
    let mut results = Vec::new();
    let per_turn = spec.budget.max_calls_per_turn as usize;
    for (i, (id, name, input)) in uses.into_iter().enumerate() {
        let tool = spec.tools.iter().find(|t| t.name == name);
        let writes = writes(spec, &name);
        let (record, content, is_error) = if i >= per_turn {
            // The surplus of a turn that asked for too many calls: answered
            // by the harness, never sent.
            let message = format!(
                "refused by the harness: one turn may make at most {per_turn} tool calls; this call was not made"
            );
            tape.event(
                "fitness.refused_call",
                json!({"tool": name, "tool_use_id": id, "why": message}),
                Some(spec.corr_id),
            );
            let record = withheld(&name, &input, writes, Some(CallFailure::BudgetExhausted));
            (record, message, true)
        } else if spec.mode == ToolMode::Live && spec.access.blocks_call(&name, &input) {
            let message = if spec.access.blocks(&name) {
                crate::access::blocked_message(&name)
            } else {
                crate::access::blocked_statement_message(&name)
            };
            tape.event(
                "fitness.blocked_call",
                json!({"tool": name, "tool_use_id": id, "why": message}),
                Some(spec.corr_id),
            );
            let record = ToolCallRecord {
                blocked: true,
                ..withheld(&name, &input, writes, None)
            };
            (record, message, true)
        } else {
            if writes && spec.mode == ToolMode::Live {
                tape.event(
                    "fitness.destructive_call",
                    json!({"tool": name, "tool_use_id": id}),
                    Some(spec.corr_id),
                );
            }
            call(session, spec, tool, &name, &input, writes).await
        };
        out.calls.push(record);
        results.push(ContentBlock::ToolResult {
            tool_use_id: id,
            content,
            is_error,
        });
    }
    tape.line(&turn_line("user", &results, None, None, None, spec.corr_id));
    results
}

/// The record of a call the harness answered itself: it never reached the
/// server.
fn withheld(
    name: &str,
    input: &Value,
    writes: bool,
    failure: Option<CallFailure>,
) -> ToolCallRecord {
    ToolCallRecord {
        tool: name.to_owned(),
        arguments: input.clone(),
        ok: false,
        failure,
        latency_ms: 0,
        writes,
        blocked: false,
    }
}

fn budget_end(out: &TrialOutcome, budget: &Budget) -> Option<TrialEnd> {
    if out.turns >= budget.max_turns {
        Some(TrialEnd::TurnBudget)
    } else if out.usage.total() >= budget.max_tokens {
        Some(TrialEnd::TokenBudget)
    } else {
        None
    }
}

/// An execution error is recovered when a later call to the same tool in the
/// trial succeeded.
fn settle_execution_errors(calls: &mut [ToolCallRecord]) {
    for i in 0..calls.len() {
        if calls[i].failure == Some(CallFailure::ExecutionErrorFatal) {
            let tool = calls[i].tool.clone();
            if calls[i + 1..].iter().any(|c| c.ok && c.tool == tool) {
                calls[i].failure = Some(CallFailure::ExecutionErrorRecovered);
            }
        }
    }
}

fn tape_attempts(tape: &Tap, log: &[Attempt], tools: usize, model: &str, corr_id: &str) {
    for a in log {
        tape.event(
            "llm.request",
            json!({"endpoint": a.endpoint, "status": a.status, "tools": tools,
                   "attempt": a.attempt, "duration_ms": a.duration_ms, "model": model,
                   "rate_wait_ms": a.rate_wait_ms}),
            Some(corr_id),
        );
        if let Some(f) = &a.failure {
            tape.event(
                "llm.error",
                json!({"endpoint": a.endpoint, "status": a.status, "attempt": a.attempt,
                       "class": f.class, "backoff_ms": f.backoff_ms,
                       "error": {"message": f.message}}),
                Some(corr_id),
            );
        }
    }
}

/// Required properties of a schema that `args` lacks.
pub fn missing_required(schema: &Value, args: &Map<String, Value>) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .filter(|k| !args.contains_key(*k))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

async fn call(
    session: Option<&Session>,
    spec: &TrialSpec<'_>,
    tool: Option<&Tool>,
    name: &str,
    input: &Value,
    writes: bool,
) -> (ToolCallRecord, String, bool) {
    let record = |ok: bool, failure: Option<CallFailure>, latency_ms: u64| ToolCallRecord {
        tool: name.to_owned(),
        arguments: input.clone(),
        ok,
        failure,
        latency_ms,
        writes,
        blocked: false,
    };
    let Value::Object(args) = input else {
        return (
            record(false, Some(CallFailure::SchemaReject), 0),
            format!("the arguments for {name} are not a JSON object: {input}"),
            true,
        );
    };
    if spec.mode == ToolMode::StubbedEmpty {
        return (record(true, None, 0), String::new(), false);
    }
    let Some(session) = session else {
        return (
            record(false, Some(CallFailure::ProtocolError), 0),
            "no MCP session is open for this trial".to_owned(),
            true,
        );
    };
    let missing = tool
        .map(|t| missing_required(&Value::Object((*t.input_schema).clone()), args))
        .unwrap_or_default();
    // The session's turn first: the latency is the server's, not the wait.
    let tagged = session.tagged(spec.corr_id).await;
    let started = Instant::now();
    let params = CallToolRequestParams::new(name.to_owned()).with_arguments(args.clone());
    let result = tokio::time::timeout(session.timeout(), session.service.call_tool(params)).await;
    let latency = ms(started.elapsed());
    drop(tagged);
    match result {
        Err(_) => (
            record(false, Some(CallFailure::ProtocolError), latency),
            format!(
                "tools/call {name} got no answer within {:?}",
                session.timeout()
            ),
            true,
        ),
        Ok(Err(ServiceError::McpError(e))) => (
            record(false, Some(error_failure(&e)), latency),
            format!("error {}: {}", e.code.0, e.message),
            true,
        ),
        Ok(Err(e)) => (
            record(false, Some(CallFailure::ProtocolError), latency),
            format!(
                "{:#}",
                session.note_failure(&format!("tools/call {name}"), &e)
            ),
            true,
        ),
        Ok(Ok(result)) => {
            let text = result_text(&result);
            if result.is_error == Some(true) {
                let failure = if missing.is_empty() {
                    CallFailure::ExecutionErrorFatal
                } else {
                    CallFailure::SchemaReject
                };
                (record(false, Some(failure), latency), text, true)
            } else {
                (record(true, None, latency), text, false)
            }
        }
    }
}

/// A JSON-RPC error to a call: invalid params is the schema's rejection,
/// any other code the protocol's.
fn error_failure(e: &rmcp::model::ErrorData) -> CallFailure {
    if e.code == rmcp::model::ErrorCode::INVALID_PARAMS {
        CallFailure::SchemaReject
    } else {
        CallFailure::ProtocolError
    }
}

/// The text the model sees for a tool result: text content concatenated;
/// other content as JSON; structured content when there is nothing else.
pub fn result_text(result: &rmcp::model::CallToolResult) -> String {
    let mut parts = Vec::new();
    for c in &result.content {
        let v = serde_json::to_value(c).unwrap_or(Value::Null);
        match v.get("text").and_then(Value::as_str) {
            Some(t) => parts.push(t.to_owned()),
            None => parts.push(v.to_string()),
        }
    }
    if parts.is_empty()
        && let Some(s) = &result.structured_content
    {
        parts.push(s.to_string());
    }
    parts.join("\n")
}

/// Conversation blocks as mcp-tape v1 turn blocks.
pub fn tape_blocks(content: &[ContentBlock]) -> Vec<Block> {
    content
        .iter()
        .map(|b| {
            Block::Known(match b {
                ContentBlock::Text { text } => KnownBlock::Text {
                    text: text.clone(),
                    extra: Map::new(),
                },
                ContentBlock::Thinking { text } => KnownBlock::Thinking {
                    thinking: text.clone(),
                    extra: Map::new(),
                },
                ContentBlock::ToolUse { id, name, input } => KnownBlock::ToolUse {
                    id: id.clone(),
                    name: name.clone(),
                    input: input.clone(),
                    extra: Map::new(),
                },
                ContentBlock::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                } => KnownBlock::ToolResult {
                    tool_use_id: tool_use_id.clone(),
                    content: Value::String(content.clone()),
                    is_error: *is_error,
                    extra: Map::new(),
                },
            })
        })
        .collect()
}

/// The tape line of a model's reply: its blocks, model, usage and timing.
pub fn assistant_line(response: &ChatResponse, corr_id: &str) -> Line {
    turn_line(
        "assistant",
        &response.content,
        Some(&response.model),
        response.usage.as_ref(),
        Some((response.duration_ms, response.ttft_ms)),
        corr_id,
    )
}

/// A turn's tape line; `timing` is `(duration_ms, ttft_ms)`.
pub fn turn_line(
    role: &str,
    content: &[ContentBlock],
    model: Option<&str>,
    usage: Option<&Usage>,
    timing: Option<(u64, Option<u64>)>,
    corr_id: &str,
) -> Line {
    let blocks = tape_blocks(content);
    Line::Turn(Turn {
        t: clock::now(),
        role: role.to_owned(),
        blocks,
        model: model.map(str::to_owned),
        usage: usage.map(|u| TapeUsage {
            input_tokens: Some(u.input_tokens),
            output_tokens: Some(u.output_tokens),
            cache_read_input_tokens: Some(u.cache_read_input_tokens),
            cache_creation_input_tokens: Some(u.cache_creation_input_tokens),
            thinking_tokens: u.thinking_tokens,
            extra: Map::new(),
        }),
        timing: timing.map(|(duration, ttft)| Timing {
            ttft_ms: ttft,
            duration_ms: Some(duration),
            extra: Map::new(),
        }),
        echoed: false,
        corr_id: Some(corr_id.to_owned()),
        extra: Map::new(),
    })
}

/// One model call of generation, on the agent tape: the user turn, each HTTP
/// attempt as `llm.request`, then the assistant turn, or an `llm.error`
/// event (with the phase) when it failed.
/// The corr_id is the request's.
pub async fn taped_call(
    client: &dyn ModelClient,
    request: &ChatRequest,
    tape: &Tap,
    phase: &str,
) -> Result<ChatResponse, LlmError> {
    let corr = request.corr_id.clone().unwrap_or_default();
    let user_text = request
        .messages
        .last()
        .map(|m| text_of(&m.content))
        .unwrap_or_default();
    tape.line(&turn_line(
        "user",
        &[ContentBlock::Text { text: user_text }],
        None,
        None,
        None,
        &corr,
    ));
    let result = client.complete(request).await;
    let log = match &result {
        Ok(r) => r.log.as_slice(),
        Err(e) => e.log.as_slice(),
    };
    // Each attempt, with its wait on the shared rate budget; the failure
    // itself is the one `llm.error` below, with the phase.
    for a in log {
        tape.event(
            "llm.request",
            json!({"endpoint": a.endpoint, "status": a.status, "tools": request.tools.len(),
                   "attempt": a.attempt, "duration_ms": a.duration_ms,
                   "model": client.id().to_string(), "rate_wait_ms": a.rate_wait_ms,
                   "phase": phase}),
            Some(&corr),
        );
    }
    match &result {
        Ok(resp) => tape.line(&assistant_line(resp, &corr)),
        Err(e) => tape.event(
            "llm.error",
            json!({
                "class": e.class,
                "status": e.status,
                "message": e.message,
                "attempts": e.attempts,
                "phase": phase,
            }),
            Some(&corr),
        ),
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_text_round_trips_through_the_sim_parser() {
        let hint = ReferenceHint {
            answer: "42".into(),
            expected_tools: vec!["add".into()],
            plan: vec![super::super::types::PlannedCall {
                tool: "add".into(),
                arguments: serde_json::from_value(json!({"a": 40, "b": 2})).expect("map"),
            }],
        };
        let system = system_text(Some("Be brief."));
        assert!(system.starts_with(PREAMBLE));
        assert!(system.contains("Be brief."));
        assert_eq!(super::super::sim::parse_reference(&system), None);
        let handed = format!("Add.\n\n{}", reference_text(&hint));
        assert_eq!(super::super::sim::parse_reference(&handed), Some(hint));
    }

    #[test]
    fn a_later_success_recovers_an_execution_error() {
        let rec = |tool: &str, ok: bool, failure| ToolCallRecord {
            tool: tool.into(),
            arguments: json!({}),
            ok,
            failure,
            latency_ms: 0,
            writes: false,
            blocked: false,
        };
        let mut calls = vec![
            rec("a", false, Some(CallFailure::ExecutionErrorFatal)),
            rec("b", false, Some(CallFailure::ExecutionErrorFatal)),
            rec("a", true, None),
        ];
        settle_execution_errors(&mut calls);
        assert_eq!(calls[0].failure, Some(CallFailure::ExecutionErrorRecovered));
        assert_eq!(calls[1].failure, Some(CallFailure::ExecutionErrorFatal));
    }
}
