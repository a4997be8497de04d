//! The tool calls a reply asks for: made on the server, withheld by the
//! harness (read-only, past a turn's limit, past a budget), or stubbed;
//! each one's record and failure class, and the result the model sees.

use std::time::Instant;

use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::ServiceError;
use serde_json::{Map, Value, json};

use super::tape::turn_line;
use super::trial::{CallFailure, ToolCallRecord, ToolMode, TrialOutcome, TrialSpec};
use crate::mcp::connect::{CallFailed, Session};
use crate::mcp::tap::Tap;
use crate::model::http::ms;
use crate::model::types::ContentBlock;

/// The tool uses a reply asks for: (id, tool, input).
pub(super) fn tool_uses(content: &[ContentBlock]) -> Vec<(String, String, Value)> {
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
pub(super) fn unmade<'a>(
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

/// Make every call the model asked for, in order; their results as the
/// next user turn (on the tape too).
pub(super) async fn call_all(
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

/// An execution error is recovered when a later call to the same tool in the
/// trial succeeded.
pub(super) fn settle_execution_errors(calls: &mut [ToolCallRecord]) {
    for i in 0..calls.len() {
        if calls[i].failure == Some(CallFailure::ExecutionErrorFatal) {
            let tool = calls[i].tool.clone();
            if calls[i + 1..].iter().any(|c| c.ok && c.tool == tool) {
                calls[i].failure = Some(CallFailure::ExecutionErrorRecovered);
            }
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
    // Each request is bounded by the session's timeout; a long-running
    // call's task by its deadline.
    let result = session.call(params).await;
    let latency = ms(started.elapsed());
    drop(tagged);
    match result {
        Err(CallFailed::Said(said)) => (
            record(false, Some(CallFailure::ProtocolError), latency),
            said,
            true,
        ),
        Err(CallFailed::Service(ServiceError::McpError(e))) => (
            record(false, Some(error_failure(&e)), latency),
            format!("error {}: {}", e.code.0, e.message),
            true,
        ),
        Err(CallFailed::Service(e)) => (
            record(false, Some(CallFailure::ProtocolError), latency),
            format!(
                "{:#}",
                session.note_failure(&format!("tools/call {name}"), &e)
            ),
            true,
        ),
        Ok(result) => {
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

#[cfg(test)]
mod tests {
    use super::*;

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
