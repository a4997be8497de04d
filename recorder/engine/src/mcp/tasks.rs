//! Long-running calls (the 2026-07-28 tasks extension,
//! `io.modelcontextprotocol/tasks`): a server answers a `tools/call` with a
//! task; the client polls `tasks/get` at the interval the server asks for,
//! answers what the task waits for (`tasks/update`), and reads the result
//! when it completes. A task that outlives its deadline is cancelled
//! (`tasks/cancel`) and the call fails, in words: a measurement never
//! waits forever. Every frame is on the wire tape; a `fitness.task` event
//! says how each task ended.

use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{CallToolResult, CancelTaskParams, GetTaskParams, Task, UpdateTaskParams};
use rmcp::service::Peer;
use serde_json::{Value, json};

use super::input::Answering;

/// A task's whole life is bounded by this many request timeouts.
pub const TASK_TIMEOUTS: u32 = 10;
/// Polling waits at least, and at most, this long between two polls.
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(5);

/// Poll the task `created` to its end: its result, or an error that says
/// why there is none (failed, cancelled by the server, past the deadline).
pub async fn await_task(
    peer: &Peer<RoleClient>,
    answering: &Answering,
    created: Task,
    request_timeout: Duration,
) -> anyhow::Result<CallToolResult> {
    let id = created.task_id.clone();
    let deadline = request_timeout * TASK_TIMEOUTS;
    let started = Instant::now();
    let mut interval = poll_interval(created.poll_interval_ms);
    let mut polls = 0u64;
    let ended = |outcome: &str, polls: u64| {
        let corr = answering.corr_id.get();
        answering.tap.event(
            "fitness.task",
            json!({"task_id": id, "outcome": outcome, "polls": polls,
                   "elapsed_ms": started.elapsed().as_millis() as u64}),
            corr.as_deref(),
        );
    };
    loop {
        if started.elapsed() + interval > deadline {
            // Cooperative: the server may go on, but the call is over.
            let _ = tokio::time::timeout(
                request_timeout,
                peer.cancel_task(CancelTaskParams::new(id.clone())),
            )
            .await;
            ended("cancelled by the client at its deadline", polls);
            anyhow::bail!(
                "the server's task {id} did not finish within {}s ({polls} polls): the client cancelled it",
                deadline.as_secs()
            );
        }
        tokio::time::sleep(interval).await;
        polls += 1;
        let got = tokio::time::timeout(
            request_timeout,
            peer.get_task(GetTaskParams::new(id.clone())),
        )
        .await
        .map_err(|_| {
            anyhow::anyhow!("tasks/get for {id} got no answer within {request_timeout:?}")
        })?
        .map_err(|e| anyhow::anyhow!("tasks/get for {id} failed: {e}"))?;
        interval = poll_interval(got.task.task.poll_interval_ms.or(Some(
            u64::try_from(interval.as_millis()).unwrap_or(u64::MAX),
        )));
        // The payload as the wire has it: the status, and beside it the
        // result, the error or the input requests.
        let detail = serde_json::to_value(&got.task).unwrap_or_default();
        match detail.get("status").and_then(Value::as_str).unwrap_or("") {
            "completed" => {
                ended("completed", polls);
                let result = detail.get("result").cloned().unwrap_or_default();
                return serde_json::from_value(result).map_err(|e| {
                    anyhow::anyhow!("the server's task {id} completed with no tool result: {e}")
                });
            }
            "failed" => {
                ended("failed", polls);
                let error = detail.get("error").cloned().unwrap_or_default();
                anyhow::bail!(
                    "the server's task {id} failed: {}",
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("no message")
                );
            }
            "cancelled" => {
                ended("cancelled by the server", polls);
                anyhow::bail!("the server cancelled its task {id}");
            }
            "input_required" => {
                let requests = detail
                    .get("inputRequests")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let answers = answering.fulfil(&requests).await;
                let answers = serde_json::from_value(Value::Object(answers))
                    .map_err(|e| anyhow::anyhow!("the answers to task {id}: {e}"))?;
                tokio::time::timeout(
                    request_timeout,
                    peer.update_task(UpdateTaskParams::new(id.clone(), answers)),
                )
                .await
                .map_err(|_| anyhow::anyhow!("tasks/update for {id} got no answer"))?
                .map_err(|e| anyhow::anyhow!("tasks/update for {id} failed: {e}"))?;
            }
            _ => {}
        }
    }
}

/// The wait between two polls: the server's, within bounds.
fn poll_interval(asked_ms: Option<u64>) -> Duration {
    Duration::from_millis(asked_ms.unwrap_or(500)).clamp(MIN_POLL, MAX_POLL)
}
