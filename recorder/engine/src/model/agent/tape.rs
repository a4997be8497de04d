//! The agent tape's lines: conversation blocks as mcp-tape turns, each HTTP
//! attempt as `llm.request` (and `llm.error`), and one model call of
//! generation taped whole ([`taped_call`]).

use fitness_shared::tape::{Block, KnownBlock, Line, Timing, Turn, Usage as TapeUsage};
use serde_json::{Map, Value, json};

use crate::clock;
use crate::mcp::tap::Tap;
use crate::model::types::{
    Attempt, ChatRequest, ChatResponse, ContentBlock, LlmError, ModelClient, Usage, text_of,
};

/// The meta `kind` of an agent tape: mcp-tape calls the agent plane `llm`,
/// and `fitness tape stats` sorts planes by it.
pub const AGENT_TAPE_KIND: &str = "llm";

/// Each HTTP attempt of a trial's model call as `llm.request`, and each
/// failed one as `llm.error` too.
pub(super) fn tape_attempts(tape: &Tap, log: &[Attempt], tools: usize, model: &str, corr_id: &str) {
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
