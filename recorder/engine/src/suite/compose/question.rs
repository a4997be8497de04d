//! A composed question: its typed answer (what its check accepts, how a
//! reference query's result must agree), its calls and its reference
//! query, and the candidate it becomes.

use fitness_shared::record::TaskShape;

use super::fields;
use crate::model::types::PlannedCall;
use crate::suite::task::{Candidate, Predicate, Task};
use crate::suite::written;
pub use fields::number_text_of;

/// An answer, typed: what its check accepts and how a reference query's
/// result must agree.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Number {
        value: f64,
        decimals: u32,
    },
    Date {
        value: String,
    },
    /// A text, and the values it was chosen over.
    Text {
        value: String,
        others: Vec<String>,
    },
    /// Every member, and the values that are not members.
    Set {
        members: Vec<String>,
        others: Vec<String>,
    },
}

impl Answer {
    pub(super) fn count(n: usize) -> Answer {
        Answer::Number {
            value: n as f64,
            decimals: 0,
        }
    }

    pub(super) fn number(value: f64, decimals: u32) -> Answer {
        Answer::Number { value, decimals }
    }

    pub(super) fn of_scalar(v: &fields::Scalar, decimals: u32, others: Vec<String>) -> Answer {
        match v {
            fields::Scalar::Num { value, .. } => Answer::Number {
                value: *value,
                decimals,
            },
            fields::Scalar::Date(d) => Answer::Date { value: d.clone() },
            other => Answer::Text {
                value: other.text(),
                others,
            },
        }
    }

    /// The answer key: the value as a reply would write it.
    pub fn key(&self) -> String {
        match self {
            Answer::Number { value, decimals } => number_text_of(*value, *decimals),
            Answer::Date { value } => value.clone(),
            Answer::Text { value, .. } => value.clone(),
            Answer::Set { members, .. } => members.join(", "),
        }
    }

    /// The check on a reply to `prompt`.
    pub fn check(&self, prompt: &str) -> Predicate {
        match self {
            Answer::Number { value, decimals } => Predicate::Number {
                value: *value,
                decimals: *decimals,
                given: written::numbers(prompt)
                    .into_iter()
                    .map(|w| w.value)
                    .collect(),
            },
            Answer::Date { value } => Predicate::Date {
                value: value.clone(),
            },
            Answer::Text { value, others } => Predicate::Text {
                value: value.clone(),
                // Other values the prompt names may be named back.
                others: others
                    .iter()
                    .filter(|o| !crate::suite::predicate::contains_token(prompt, o))
                    .cloned()
                    .collect(),
                max_others: 1,
            },
            Answer::Set { members, others } => Predicate::Set {
                members: members.clone(),
                others: others.clone(),
            },
        }
    }
}

/// A composed question, before it is proved.
#[derive(Debug, Clone)]
pub struct Composed {
    pub prompt: String,
    pub shape: TaskShape,
    pub answer: Answer,
    /// The calls that reach the answer through the server.
    pub solution: Vec<PlannedCall>,
    /// The query that computes the answer, where the server takes one: run
    /// through the server, its result must agree.
    pub reference: Option<PlannedCall>,
    /// How the answer was computed, in words, without the answer.
    pub how: String,
    /// A rule the plan itself breaks (`two-right-answers`), found while
    /// composing; admission rejects it by that rule.
    pub disproved: Option<(&'static str, String)>,
    /// What the answer was read from: the reference query's result where
    /// it agreed.
    pub evidence: Option<String>,
}

impl Composed {
    pub(super) fn new(
        prompt: String,
        shape: TaskShape,
        answer: Answer,
        solution: Vec<PlannedCall>,
        reference: Option<PlannedCall>,
        how: String,
    ) -> Composed {
        Composed {
            prompt,
            shape,
            answer,
            solution,
            reference,
            how,
            disproved: None,
            evidence: None,
        }
    }

    /// As a candidate: the task, the rule it breaks if any.
    pub fn candidate(self, id: String) -> Candidate {
        let check = self.answer.check(&self.prompt);
        let mut expected: Vec<String> = Vec::new();
        for c in &self.solution {
            if !expected.contains(&c.tool) {
                expected.push(c.tool.clone());
            }
        }
        let task = Task {
            id: id.clone(),
            prompt: self.prompt,
            expected_tools: expected,
            answer_key: self.answer.key(),
            check,
            destructive: false,
            solution: self.solution,
            handles: Vec::new(),
            rationale: Some(format!("composed ({}): {}", self.shape.as_str(), self.how)),
            origin: Some(crate::suite::task::Origin::Discovered),
            kind: Default::default(),
            state_check: None,
            shape: Some(self.shape),
        };
        let mut c = Candidate::new(id, Ok(task));
        c.disproved = self.disproved;
        c
    }
}
