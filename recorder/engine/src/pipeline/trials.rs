//! One trial of one arm, with the run's bookkeeping around the agent loop:
//! cancellation, the spend cap, the cost ledger, and grading.

use rmcp::model::Tool;

use crate::mcp::connect::Session;
use crate::model::agent::{Budget, ToolMode, TrialEnd, TrialOutcome, TrialSpec, run_trial};
use crate::model::types::ModelClient;
use crate::suite::task::Task;

/// Which arm a trial belongs to; names its corr_id (R-TAPE-5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrialKind {
    Drive,
    Construct,
    NullNoTools,
    NullStubbedEmpty,
    NullRandom,
}

impl TrialKind {
    pub fn corr_id(self, task: &str) -> String {
        match self {
            TrialKind::Drive => task.to_owned(),
            TrialKind::Construct => format!("{task}::construct"),
            TrialKind::NullNoTools => format!("{task}::null-no-tools"),
            TrialKind::NullStubbedEmpty => format!("{task}::null-stubbed-empty"),
            TrialKind::NullRandom => format!("{task}::null-random"),
        }
    }

    /// The null arm's label as the record prints it.
    pub fn null_label(self) -> &'static str {
        match self {
            TrialKind::NullNoTools => "no-tools",
            TrialKind::NullStubbedEmpty => "stubbed-empty",
            TrialKind::NullRandom => "random-valid-args",
            TrialKind::Drive | TrialKind::Construct => "",
        }
    }

    /// Does a trial of this arm reach the server (so it starts from the
    /// state a sandbox puts back)?
    pub fn reaches_server(self) -> bool {
        self.mode() == ToolMode::Live
    }

    fn mode(self) -> ToolMode {
        match self {
            TrialKind::Drive | TrialKind::Construct | TrialKind::NullRandom => ToolMode::Live,
            TrialKind::NullNoTools => ToolMode::None,
            TrialKind::NullStubbedEmpty => ToolMode::StubbedEmpty,
        }
    }
}

/// One trial to run: a task and the arm it belongs to.
pub type Job<'t> = (&'t Task, TrialKind);

/// The spec of one model-driven trial.
pub struct Trials<'a> {
    pub tools: &'a [Tool],
    /// What the trials may do to the server.
    pub access: &'a crate::access::Access,
    pub instructions: Option<&'a str>,
    pub budget: Budget,
}

impl Trials<'_> {
    pub async fn run(
        &self,
        model: &dyn ModelClient,
        session: &Session,
        task: &Task,
        kind: TrialKind,
        tape: &crate::mcp::tap::Tap,
    ) -> TrialOutcome {
        let corr = kind.corr_id(&task.id);
        let hint = task.reference_hint();
        let spec = TrialSpec {
            corr_id: &corr,
            access: self.access,
            prompt: &task.prompt,
            instructions: self.instructions,
            tools: self.tools,
            mode: kind.mode(),
            reference: (kind == TrialKind::Construct).then_some(&hint),
            budget: self.budget,
        };
        let session = (kind != TrialKind::NullNoTools).then_some(session);
        run_trial(model, session, &spec, tape).await
    }
}

/// A trial that could not be judged: the model API failed it.
pub fn errored(outcome: &TrialOutcome) -> bool {
    matches!(outcome.end, TrialEnd::ModelFailed)
}

/// A trial that ended in a reply the harness could not use: one that
/// repeated itself until it was cut, or one the model API could not read
/// (a malformed tool call). A failed trial where the agent is measured
/// (construct, drive); an error of our measurement in a null arm, so an arm
/// cannot look cleaner by it.
pub fn unusable_reply(outcome: &TrialOutcome) -> bool {
    matches!(outcome.end, TrialEnd::Runaway | TrialEnd::MalformedReply)
}

/// The task's predicate holds: on the final answer for a question, on
/// what the state check read after the trial for a change (whatever the
/// answer says).
pub fn answered(task: &Task, outcome: &TrialOutcome) -> bool {
    let checked = if task.is_act() {
        outcome.state.as_deref()
    } else {
        outcome.final_answer.as_deref()
    };
    checked.is_some_and(|a| task.check.check(a))
}

/// The construct rule: the right answer, reached through the server (an ok
/// call to an expected tool).
pub fn reached_through_server(task: &Task, outcome: &TrialOutcome) -> bool {
    answered(task, outcome)
        && outcome
            .calls
            .iter()
            .any(|c| c.ok && task.expected_tools.contains(&c.tool))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::agent::TrialEnd;
    use crate::suite::task::{Predicate, StateCheck, TaskKind};

    fn outcome(answer: &str, state: Option<&str>) -> TrialOutcome {
        TrialOutcome {
            final_answer: Some(answer.to_owned()),
            end: TrialEnd::Answered,
            calls: Vec::new(),
            usage: Default::default(),
            model_calls: 1,
            calls_without_usage: 0,
            model_errors: Vec::new(),
            attempt_failures: Vec::new(),
            model_reported: None,
            turns: 1,
            first_input: None,
            state: state.map(str::to_owned),
        }
    }

    #[test]
    fn a_change_is_checked_on_the_state_never_on_what_the_agent_says() {
        let mut task = Task {
            id: "t1".into(),
            prompt:
                "Using the server's tools, make this change: create entities, with name `kaso_tor`."
                    .into(),
            expected_tools: vec!["create_entities".into()],
            answer_key: "kaso_tor".into(),
            check: Predicate::Substring {
                value: "kaso_tor".into(),
                case_insensitive: false,
            },
            destructive: true,
            solution: Vec::new(),
            handles: Vec::new(),
            rationale: None,
            origin: None,
            kind: TaskKind::Ask,
            state_check: None,
            shape: None,
        };
        // An agent that only says it made the change.
        let claimed = outcome("Done: I created kaso_tor.", Some("{\"entities\": []}"));
        assert!(answered(&task, &claimed), "as a question, saying it passes");
        task.kind = TaskKind::Act;
        task.state_check = Some(StateCheck { reads: Vec::new() });
        assert!(!answered(&task, &claimed), "as a change, the state decides");
        let made = outcome("ok", Some("{\"entities\": [{\"name\": \"kaso_tor\"}]}"));
        assert!(answered(&task, &made));
        assert!(
            !answered(&task, &outcome("kaso_tor", None)),
            "no state read, no pass"
        );
    }
}
