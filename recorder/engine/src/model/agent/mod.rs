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

mod calls;
mod prompt;
mod tape;
mod trial;

use serde_json::json;

use calls::{call_all, settle_execution_errors, tool_uses, unmade};
pub use calls::{missing_required, result_text};
use prompt::open_trial;
pub use prompt::{PREAMBLE, REFERENCE_WITHHELD, reference_text, system_text, tool_spec};
use tape::tape_attempts;
pub use tape::{AGENT_TAPE_KIND, assistant_line, tape_blocks, taped_call, turn_line};
pub use trial::{
    Budget, CallFailure, DEFAULT_MAX_CALLS_PER_TURN, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_TOKENS,
    DEFAULT_MAX_TURNS, ToolCallRecord, ToolMode, TrialEnd, TrialOutcome, TrialSpec,
};

use super::stream::repeating;
use super::types::{
    ChatRequest, ChatResponse, ContentBlock, LlmErrorClass, Message, ModelClient, Role, StopReason,
    ToolSpec, Usage, text_of,
};
use crate::mcp::connect::Session;
use crate::mcp::tap::Tap;

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

fn budget_end(out: &TrialOutcome, budget: &Budget) -> Option<TrialEnd> {
    if out.turns >= budget.max_turns {
        Some(TrialEnd::TurnBudget)
    } else if out.usage.total() >= budget.max_tokens {
        Some(TrialEnd::TokenBudget)
    } else {
        None
    }
}
