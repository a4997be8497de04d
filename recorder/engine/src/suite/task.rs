//! The task model (R-GEN): what the drive, the null arms and the construct
//! gate all run, and what the suite hash covers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::types::{PlannedCall, ReferenceHint};

/// One task of a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Stable within the suite; the drive's corr_id (`<id>`, `<id>::construct`…).
    pub id: String,
    /// What the runner is asked, verbatim.
    pub prompt: String,
    /// Tools a correct solution must touch (at least one ok call to one of them).
    pub expected_tools: Vec<String>,
    /// The answer key (never shown to the runner; the reference agent gets it).
    pub answer_key: String,
    /// The machine-checkable predicate on the final answer.
    pub check: Predicate,
    /// True when a solution calls a destructive tool.
    #[serde(default)]
    pub destructive: bool,
    /// The calls that reach the answer through the server, in order. Later
    /// calls may use a handle an earlier one returned (see `handles`).
    #[serde(default)]
    pub solution: Vec<PlannedCall>,
    /// Handle chains: a value produced by one solution call and consumed by a
    /// later one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub handles: Vec<HandleBinding>,
    /// Why the server is required (judge-synth), or how the answer was
    /// obtained (schema-walk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rationale: Option<String>,
    /// Where the task's first call came from, when not the walk's own
    /// guess: the operator's seed calls, or a discovery move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// A question (the answer text is checked) or a change (the state the
    /// trial leaves is checked).
    #[serde(default, skip_serializing_if = "TaskKind::is_ask")]
    pub kind: TaskKind,
    /// For an act task: the reads the harness makes after the trial, never
    /// shown to the agent, whose text `check` must accept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state_check: Option<StateCheck>,
    /// What the task asks of the server by the work its answer takes (a
    /// lookup, a link followed, a count, a comparison, a set, a change);
    /// absent where a generator gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<fitness_shared::record::TaskShape>,
}

/// What a task asks of the agent (the record scores each kind apart).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// A question: the final answer's text is checked.
    #[default]
    Ask,
    /// A change: the state the trial leaves is checked, through reads the
    /// harness makes after it.
    Act,
}

impl TaskKind {
    pub fn is_ask(&self) -> bool {
        *self == TaskKind::Ask
    }

    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Ask => "ask",
            TaskKind::Act => "act",
        }
    }
}

/// An act task's state check: calls to reading tools the agent also has,
/// made by the harness after the trial on the same server; their text
/// (joined, in order; an error or a failed call reads as nothing) is what
/// the task's `check` is applied to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateCheck {
    pub reads: Vec<PlannedCall>,
}

/// Where a task's first call came from (the ledger counts each apart).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A call the operator gave (`--seed-calls`), or one made from its
    /// result.
    Seeded,
    /// A discovery move: the server's resources, a catalogue asked of a
    /// query language, a broad search.
    Discovered,
}

impl Origin {
    /// The origin a call inherits from the handles it was made with: a
    /// seed call's result passes on `Seeded`, a discovery's `Discovered`
    /// (the stronger of the two; seeded over discovered over none).
    pub fn stronger(a: Option<Origin>, b: Option<Origin>) -> Option<Origin> {
        match (a, b) {
            (Some(Origin::Seeded), _) | (_, Some(Origin::Seeded)) => Some(Origin::Seeded),
            (Some(Origin::Discovered), _) | (_, Some(Origin::Discovered)) => {
                Some(Origin::Discovered)
            }
            _ => None,
        }
    }
}

impl Task {
    /// The tools a list of candidates names for it: the calls its solution
    /// makes, else the tools it expects.
    pub fn listed_tools(&self) -> Vec<String> {
        let calls: Vec<String> = self.solution.iter().map(|c| c.tool.clone()).collect();
        if calls.is_empty() {
            self.expected_tools.clone()
        } else {
            calls
        }
    }

    /// Is this a change, checked on the state the trial leaves?
    pub fn is_act(&self) -> bool {
        self.kind == TaskKind::Act
    }

    /// What the construct gate's reference agent is handed.
    pub fn reference_hint(&self) -> ReferenceHint {
        ReferenceHint {
            answer: self.answer_key.clone(),
            expected_tools: self.expected_tools.clone(),
            plan: self.solution.clone(),
        }
    }
}

/// A value one call produces and a later call consumes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HandleBinding {
    pub name: String,
    /// Index into `solution` of the call that produces it.
    pub produced_by: usize,
    /// Index into `solution` of the call that uses it.
    pub consumed_by: usize,
}

/// A machine-checkable predicate on the final answer text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Predicate {
    Substring {
        value: String,
        #[serde(default)]
        case_insensitive: bool,
    },
    /// Compiled at admission; an invalid pattern is rejected (`check-invalid`).
    Regex {
        pattern: String,
    },
    /// The answer parsed as JSON (or the first JSON value in it) has `equals`
    /// at `path` (`$.a.b[0]`).
    JsonPath {
        path: String,
        equals: Value,
    },
    NumberWithin {
        value: f64,
        tolerance: f64,
    },
    AllOf {
        of: Vec<Predicate>,
    },
    /// A number as a person writes it: with thousands separators, rounded
    /// to the precision shown (never coarser than the data's own, unless
    /// within half a percent), a unit after it. A reply with many other
    /// numbers (a record dumped where one value was asked) is no answer.
    Number {
        value: f64,
        /// Decimals the value is known to (the data's own precision).
        #[serde(default)]
        decimals: u32,
        /// Numbers the question states: never the answer, never noise.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        given: Vec<f64>,
    },
    /// A calendar date (`YYYY-MM-DD`) in any of its common written forms.
    Date {
        value: String,
    },
    /// Every member named on word boundaries, in any order, and none of
    /// `others` (the values that are not members: a reply that lists them
    /// too has not answered which ones).
    Set {
        members: Vec<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        others: Vec<String>,
    },
    /// A text named on word boundaries, any case, with at most
    /// `max_others` of `others` named beside it (a reply naming every
    /// candidate has not chosen one).
    Text {
        value: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        others: Vec<String>,
        #[serde(default)]
        max_others: usize,
    },
}

/// A candidate task before admission.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub id: String,
    /// The parsed task, or why it did not parse (`malformed`).
    pub parsed: Result<Task, String>,
    /// The tool result the answer key was read from, when the generator
    /// called the server for it.
    pub source: Option<String>,
    /// Why the solution's calls, made at generation, did not reach the
    /// answer (`answer-not-reached`).
    pub unreached: Option<String>,
    /// The harness's own wording of the task, where a judge reworded it
    /// (`judge-walk/1`): what admission reads for the walk's wording rules.
    pub template: Option<String>,
    /// A rule the generator proved the candidate breaks, and what it saw
    /// (`two-right-answers`, `order-dependent`, `reference-disagrees`,
    /// `answer-changed`): admission rejects it by that rule.
    pub disproved: Option<(&'static str, String)>,
}

impl Candidate {
    pub fn new(id: String, parsed: Result<Task, String>) -> Self {
        Candidate {
            id,
            parsed,
            source: None,
            unreached: None,
            template: None,
            disproved: None,
        }
    }
}
