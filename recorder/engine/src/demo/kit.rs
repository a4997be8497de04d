//! What every demo server's tools are made of: a tool's declaration, the
//! read-only annotations, a text result, a tool error, and when a reply
//! comes.

use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock, Tool};
use serde_json::Value;

/// How long `canary`'s `slow_report` takes: a hundred times its
/// neighbours on the replay's latency column, and short enough that the
/// fourteen runs of the canary in the tests wait seconds, not minutes.
pub const SLOW_REPORT_DELAY: Duration = Duration::from_millis(500);

/// What a tool call does: answer now, answer after a delay, or never answer.
pub(super) enum Reply {
    Now(CallToolResult),
    After(Duration, CallToolResult),
    Never,
}

/// A tool from its JSON description (name, description, schemas, annotations).
pub(super) fn tool(definition: Value) -> Tool {
    serde_json::from_value(definition).expect("demo tool definitions are valid Tool JSON")
}

/// The annotations every read-only demo tool carries.
pub(super) fn read_only() -> Value {
    serde_json::json!({"readOnlyHint": true, "destructiveHint": false, "openWorldHint": false})
}

/// A successful text result.
pub(super) fn text(s: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(s.into())])
}

/// A tool execution error the caller can act on.
pub(super) fn tool_error(s: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(s.into())])
}
