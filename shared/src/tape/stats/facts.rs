//! The facts kept while streaming: what `collect` keeps of each line and
//! `settle` turns into the figures.

#[derive(Default)]
pub(super) struct MetaFacts {
    pub(super) started_at: Option<String>,
    pub(super) label: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) command: Option<Vec<String>>,
    pub(super) producer: Option<String>,
}

#[derive(Default)]
pub(super) struct EndFacts {
    pub(super) t: Option<String>,
    pub(super) duration_ms: Option<f64>,
    pub(super) reason: Option<String>,
    pub(super) exit_code: Option<f64>,
}

pub(super) struct Request {
    pub(super) tool: String,
    pub(super) t: Option<String>,
}

pub(super) struct Response {
    pub(super) id: String,
    pub(super) t: Option<String>,
    pub(super) protocol_error: Option<String>,
    pub(super) execution_error: Option<String>,
}

pub(super) struct RpcError {
    pub(super) t: Option<String>,
    pub(super) id: Option<String>,
    pub(super) message: String,
}

pub(super) struct ToolUse {
    pub(super) key: String,
    pub(super) tool: String,
}

pub(super) struct ToolResult {
    pub(super) key: String,
    pub(super) error: Option<String>,
}

pub(super) struct TurnFacts {
    pub(super) t: Option<String>,
    pub(super) assistant: bool,
    pub(super) echoed: bool,
    pub(super) model: Option<String>,
    /// input, output, cache read, cache creation; `None` without a usage object.
    pub(super) usage: Option<[Option<f64>; 4]>,
    pub(super) thinking: Option<(f64, bool)>,
    pub(super) ttft_ms: Option<f64>,
    pub(super) duration_ms: Option<f64>,
    pub(super) results: Vec<ToolResult>,
    pub(super) uses: Vec<ToolUse>,
}
