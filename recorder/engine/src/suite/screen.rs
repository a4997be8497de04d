//! The generation-time null screen: the runner answers each admitted
//! candidate with no tools, graded by the candidate's own predicate, and a
//! candidate it answers is deleted before the suite is hashed. Every call is
//! on the agent tape (`model::agent::taped_call`).

use fitness_shared::record::{ListedCandidate, NullScreenCount};

use super::spend::PhaseSpend;
use super::task::Task;
use crate::mcp::tap::Tap;
use crate::model::agent::taped_call;
use crate::model::stream::repeating;
use crate::model::types::{
    ChatRequest, ContentBlock, Message, ModelClient, Role, StopReason, Usage, text_of,
};
use serde_json::json;

/// What the null screen left of the admitted candidates.
pub struct Screened {
    pub kept: Vec<Task>,
    pub screened_out: Vec<String>,
    /// Each deleted candidate with what the runner answered: the screen's
    /// ledger, kept beside the record.
    pub deleted: Vec<ListedCandidate>,
    pub errors: u64,
    /// The ledger's count, when the screen ran.
    pub count: Option<NullScreenCount>,
    pub spend: Option<PhaseSpend>,
    /// Why a registered screen did not run.
    pub skipped: Option<String>,
}

/// The null screen over every admitted candidate, when there is a runner
/// for it and no reason to `skip` it (a suite that can no longer reach its
/// floor is never screened: no model is paid for a refusal already
/// decided); else every candidate is kept.
pub async fn screen(
    admitted: Vec<Task>,
    runner: Option<&dyn ModelClient>,
    skip: Option<String>,
    agent_tape: &Tap,
    width: usize,
) -> Screened {
    let runner = match (runner, skip) {
        (Some(runner), None) => runner,
        (runner, skip) => {
            return Screened {
                kept: admitted,
                screened_out: Vec::new(),
                deleted: Vec::new(),
                errors: 0,
                count: None,
                spend: None,
                skipped: runner.and(skip),
            };
        }
    };
    let screened = admitted.len() as u64;
    let outcome = null_screen(admitted, runner, agent_tape, width).await;
    Screened {
        skipped: None,
        count: Some(NullScreenCount {
            screened,
            dropped: outcome.screened_out.len() as u64,
            errors: outcome.errors,
        }),
        kept: outcome.kept,
        screened_out: outcome.screened_out,
        deleted: outcome.deleted,
        errors: outcome.errors,
        spend: Some(outcome.spend),
    }
}

/// What the null screen did.
#[derive(Debug, Clone)]
pub struct ScreenOutcome {
    /// Candidates the runner could not answer without tools, or whose screen
    /// call failed.
    pub kept: Vec<Task>,
    /// Ids of the candidates the runner answered with no tools (deleted).
    pub screened_out: Vec<String>,
    /// The same candidates, each with the reply that answered it.
    pub deleted: Vec<ListedCandidate>,
    /// Screen calls that failed (their candidates are kept).
    pub errors: u64,
    pub spend: PhaseSpend,
}

/// The generation-time null screen: the runner answers each task with no
/// tools, graded by the task's own predicate; answered tasks are deleted.
/// Every exchange is written to `tape` (`<id>::screen`), failures as
/// `llm.error` events.
pub async fn null_screen(
    tasks: Vec<Task>,
    runner: &dyn ModelClient,
    tape: &Tap,
    width: usize,
) -> ScreenOutcome {
    use futures::StreamExt as _;
    let mut out = ScreenOutcome {
        kept: Vec::new(),
        screened_out: Vec::new(),
        deleted: Vec::new(),
        errors: 0,
        spend: PhaseSpend::new("screen", &runner.id().to_string()),
    };
    // `width` calls in flight, a slot refilled as soon as any call ends (a
    // slow or rate-held call does not hold back the others); the results
    // read in the candidates' order.
    let mut results: Vec<(usize, Task, Result<_, ()>)> =
        futures::stream::iter(tasks.into_iter().enumerate())
            .map(|(i, task)| async move {
                let result = screen_one(runner, &task, tape).await;
                (i, task, result)
            })
            .buffer_unordered(width.max(1))
            .collect()
            .await;
    results.sort_by_key(|(i, _, _)| *i);
    for (_, task, result) in results {
        match result {
            Ok((answered, usage, reply)) => {
                out.spend.count(usage.as_ref());
                if answered {
                    out.screened_out.push(task.id.clone());
                    out.deleted.push(ListedCandidate {
                        id: task.id.clone(),
                        prompt: Some(task.prompt.clone()),
                        tools: task.listed_tools(),
                        rule: "null_screen".to_owned(),
                        detail: format!(
                            "the reply {}, with no tools, accepted by the candidate's own check",
                            reply_excerpt(&reply)
                        ),
                    });
                } else {
                    out.kept.push(task);
                }
            }
            Err(()) => {
                out.spend.threw();
                out.errors += 1;
                out.kept.push(task);
            }
        }
    }
    out
}

/// The most tokens a screen reply may hold: an answer, in one short reply.
pub const SCREEN_MAX_OUTPUT_TOKENS: u32 = 256;

const SCREEN_SYSTEM: &str = "You have no tools and no access to any server, file or network. \
Answer the user's request as best you can from what you already know, in one short reply.";

/// The screen's protocol in the run's own words, as the pre-registration
/// states it: what is asked, of which model, and what deletes a candidate.
pub fn protocol(runner: &str) -> String {
    format!(
        "Before the suite is hashed, each admitted candidate's prompt is put to the runner {runner} with no tools, at temperature 0 and at most {SCREEN_MAX_OUTPUT_TOKENS} output tokens, under the system text \"{SCREEN_SYSTEM}\"; a candidate whose own check accepts that reply is deleted (answerable without the server). A failed call, or a reply that repeats itself, deletes nothing: the candidate is kept unscreened and the failure is counted and gated at the error limit."
    )
}

/// The reply as the screen's ledger quotes it: one line, at most 200
/// characters.
fn reply_excerpt(reply: &str) -> String {
    let line = reply.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = line.chars().take(200).collect();
    if cut.len() < line.len() {
        format!("\"{cut}...\"")
    } else {
        format!("\"{cut}\"")
    }
}

/// Ask the runner the task with no tools; `Ok((answered, usage, reply))`,
/// or `Err(())` when the call failed.
async fn screen_one(
    runner: &dyn ModelClient,
    task: &Task,
    tape: &Tap,
) -> Result<(bool, Option<Usage>, String), ()> {
    let request = ChatRequest {
        system: Some(SCREEN_SYSTEM.into()),
        messages: vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: task.prompt.clone(),
            }],
        }],
        tools: vec![],
        // One short reply.
        max_tokens: SCREEN_MAX_OUTPUT_TOKENS,
        temperature: Some(0.0),
        corr_id: Some(format!("{}::screen", task.id)),
        json_object: false,
    };
    match taped_call(runner, &request, tape, "screen").await {
        // A reply that repeated itself is no answer and no pass: our
        // measurement failed on this candidate, counted as an error.
        Ok(resp) => {
            let text = text_of(&resp.content);
            if let Some(why) = (resp.stop == StopReason::Runaway)
                .then(|| "the reply repeated itself".to_owned())
                .or_else(|| repeating(&text))
            {
                tape.event(
                    "llm.runaway",
                    json!({"why": why}),
                    request.corr_id.as_deref(),
                );
                return Err(());
            }
            Ok((task.check.check(&text), resp.usage, text))
        }
        Err(_) => Err(()),
    }
}
