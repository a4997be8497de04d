//! The asks fixture: a 2026-07-28 server whose tools need the client's
//! help before they can answer, in that revision's form: a `tools/call`
//! answered `InputRequiredResult` (a sampling request, an elicitation
//! request), which the client fulfils and retries with its answers and the
//! echoed `requestState`. No published server speaks this form yet.
//!
//! - `summarize_notes`: asks the client's model to summarise the harbour
//!   notes, then answers with the summary and the model that wrote it.
//! - `check_room`: asks the user which room and how many seats, then says
//!   whether it is free, or that no room was chosen when the user declined.
//! - `survey_depths`: a long-running call (the tasks extension): answered
//!   with a task that completes after a few polls with the survey.
//! - `survey_forever`: a task that never completes until it is cancelled.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses, RequestState};
use rmcp::model::{
    CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock, CreateTaskResult,
    DetailedTask, GetTaskParams, GetTaskResult, Implementation, InputRequests, InputRequiredResult,
    ProtocolVersion, ServerCapabilities, ServerConfig, Task, TaskPayload, TaskStatus,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, tool, tool_handler, tool_router};
use serde_json::{Value, json};

/// The notes `summarize_notes` asks the client's model about.
pub const HARBOUR_NOTES: &str = "Berth 4 was dredged to 11.2 m in March; the ferry now docks at all tides. \
The winter mooring rate is 84 EUR per week.";

/// What the survey task finds.
pub const SURVEY: &str = "Depth at berth 4: 11.2 m; at berth 6: 7.9 m.";
/// How long the survey task works before it completes.
const SURVEY_TAKES: Duration = Duration::from_millis(400);

/// One task the server made of a call.
struct Job {
    started: Instant,
    forever: bool,
    cancelled: bool,
}

#[derive(Clone)]
pub struct AsksServer {
    tool_router: ToolRouter<Self>,
    jobs: Arc<Mutex<HashMap<String, Job>>>,
}

impl Default for AsksServer {
    fn default() -> Self {
        AsksServer::new()
    }
}

/// The requests of an `InputRequiredResult`, written as JSON.
fn requests(value: Value) -> Result<InputRequests, ErrorData> {
    serde_json::from_value(value).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn text(t: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(t)]).into()
}

#[tool_router]
impl AsksServer {
    pub fn new() -> Self {
        AsksServer {
            tool_router: Self::tool_router(),
            jobs: Arc::default(),
        }
    }

    /// A task for a call: working, polled every 100 ms.
    fn start(&self, forever: bool) -> CallToolResponse {
        let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        let id = format!("survey-{}", jobs.len() + 1);
        jobs.insert(
            id.clone(),
            Job {
                started: Instant::now(),
                forever,
                cancelled: false,
            },
        );
        let now = "2026-12-07T00:00:00Z";
        CallToolResponse::Task(CreateTaskResult::new(
            Task::new(id, TaskStatus::Working, now, now).with_poll_interval_ms(100),
        ))
    }

    #[tool(
        description = "Survey the harbour's depths (takes a while).",
        annotations(read_only_hint = true)
    )]
    async fn survey_depths(&self) -> Result<CallToolResponse, ErrorData> {
        Ok(self.start(false))
    }

    #[tool(
        description = "Survey the whole coast's depths (never finishes).",
        annotations(read_only_hint = true)
    )]
    async fn survey_forever(&self) -> Result<CallToolResponse, ErrorData> {
        Ok(self.start(true))
    }

    #[tool(
        description = "Summarise the harbour notes in one sentence.",
        annotations(read_only_hint = true)
    )]
    async fn summarize_notes(
        &self,
        InputResponses(answers): InputResponses,
        RequestState(state): RequestState,
    ) -> Result<CallToolResponse, ErrorData> {
        let answer = answers.as_ref().and_then(|a| a.get("summary"));
        let Some(answer) = answer.filter(|_| state.as_deref() == Some("notes-v1")) else {
            let asked = requests(json!({"summary": {
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{"role": "user", "content": {"type": "text",
                        "text": format!("Summarise these notes in one sentence: {HARBOUR_NOTES}")}}],
                    "systemPrompt": "You summarise harbour notes.",
                    "maxTokens": 60
                }
            }}))?;
            return Ok(InputRequiredResult::new(Some(asked), Some("notes-v1".into())).into());
        };
        let summary = answer
            .pointer("/content/text")
            .and_then(Value::as_str)
            .unwrap_or("");
        let model = answer.get("model").and_then(Value::as_str).unwrap_or("?");
        Ok(text(format!("Summary (written by {model}): {summary}")))
    }

    #[tool(
        description = "Check whether a meeting room is free; asks which room and how many seats.",
        annotations(read_only_hint = true)
    )]
    async fn check_room(
        &self,
        InputResponses(answers): InputResponses,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some(answer) = answers.as_ref().and_then(|a| a.get("room")) else {
            let asked = requests(json!({"room": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Which room, and for how many people?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "room": {"type": "string", "enum": ["North", "South"]},
                            "seats": {"type": "integer", "minimum": 2, "maximum": 12, "default": 4}
                        },
                        "required": ["room", "seats"]
                    }
                }
            }}))?;
            return Ok(InputRequiredResult::from_input_requests(asked).into());
        };
        if answer.get("action").and_then(Value::as_str) != Some("accept") {
            return Ok(text("No room was chosen: the request was declined.".into()));
        }
        let content = answer.get("content").cloned().unwrap_or_default();
        let room = content.get("room").and_then(Value::as_str).unwrap_or("?");
        let seats = content.get("seats").and_then(Value::as_i64).unwrap_or(0);
        Ok(text(format!(
            "The {room} room is free for {seats} people on Thursday."
        )))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for AsksServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new("fitness-fixture-asks", "0.1.0"))
        .with_protocol_version(ProtocolVersion::V_2026_07_28)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        let job = jobs
            .get(&request.task_id)
            .ok_or_else(|| ErrorData::invalid_params("no such task", None))?;
        let payload = if job.cancelled {
            TaskPayload::Cancelled
        } else if !job.forever && job.started.elapsed() >= SURVEY_TAKES {
            let result = json!({"content": [{"type": "text", "text": SURVEY}], "isError": false});
            TaskPayload::Completed {
                result: result.as_object().cloned().unwrap_or_default(),
            }
        } else {
            TaskPayload::Working
        };
        let now = "2026-12-07T00:00:01Z";
        let task =
            Task::new(request.task_id, TaskStatus::Working, now, now).with_poll_interval_ms(100);
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some(job) = self
            .jobs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get_mut(&request.task_id)
        {
            job.cancelled = true;
        }
        Ok(())
    }
}
