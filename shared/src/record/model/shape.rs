//! What a task asks of the server, by the work its answer takes: one value
//! looked up, a link followed over several calls, a count or a total over
//! many records, a rank or a comparison, a set, or a change. The suite
//! registers the mix it aims at; the record reports first-try success per
//! shape ([`super::ShapeScore`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A task's shape.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum TaskShape {
    /// One value of one record.
    Lookup,
    /// A record found by one property, then a record it points at read
    /// (two calls or more, or a join).
    MultiStep,
    /// A count, a total or an average over several records.
    Aggregate,
    /// The largest, smallest, earliest or latest, or two records compared.
    Comparison,
    /// Every record that meets a condition.
    Set,
    /// A change, checked on the state it leaves.
    Change,
}

impl TaskShape {
    pub const ALL: [TaskShape; 6] = [
        TaskShape::Lookup,
        TaskShape::MultiStep,
        TaskShape::Aggregate,
        TaskShape::Comparison,
        TaskShape::Set,
        TaskShape::Change,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskShape::Lookup => "lookup",
            TaskShape::MultiStep => "multi_step",
            TaskShape::Aggregate => "aggregate",
            TaskShape::Comparison => "comparison",
            TaskShape::Set => "set",
            TaskShape::Change => "change",
        }
    }

    /// In words, for a page.
    pub fn words(self) -> &'static str {
        match self {
            TaskShape::Lookup => "a value looked up",
            TaskShape::MultiStep => "a link followed",
            TaskShape::Aggregate => "a count, total or average",
            TaskShape::Comparison => "a rank or a comparison",
            TaskShape::Set => "a set of records",
            TaskShape::Change => "a change",
        }
    }

    /// The shape a stored name reads as.
    pub fn parse(s: &str) -> Option<TaskShape> {
        TaskShape::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// Does the answer take more than one value read: several calls or a
    /// computation over several records?
    pub fn composed(self) -> bool {
        !matches!(self, TaskShape::Lookup)
    }

    /// Does it count, total, rank or compare?
    pub fn computes(self) -> bool {
        matches!(self, TaskShape::Aggregate | TaskShape::Comparison)
    }
}

/// The mix of shapes a generator aims at when it trims its admitted
/// candidates to the registered size, fixed before the run (the
/// pre-registration states it) and read against the suite it made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AimedMix {
    /// Share of tasks that take two calls or a computation over several
    /// records ([`TaskShape::composed`]), at least.
    pub composed_at_least: f64,
    /// Share that count, total, rank or compare ([`TaskShape::computes`]),
    /// at least.
    pub computed_at_least: f64,
    /// Share worded from a template that echoes a key, at most.
    pub templated_at_most: f64,
}

impl AimedMix {
    /// What a generator that composes questions over what the server holds
    /// aims at: at least half composed, at least 30% that count, total,
    /// rank or compare, at most 10% worded from a template.
    pub const COMPOSED: AimedMix = AimedMix {
        composed_at_least: 0.5,
        computed_at_least: 0.3,
        templated_at_most: 0.1,
    };

    /// Of `n` tasks, how many must count, total, rank or compare to meet
    /// the aim.
    pub fn computed_of(&self, n: usize) -> usize {
        (self.computed_at_least * n as f64).ceil() as usize
    }

    /// The aim in words.
    pub fn words(&self) -> String {
        format!(
            "at least {:.0}% two calls or a computation over several records, at least {:.0}% count, total, rank or compare, at most {:.0}% worded from a template",
            self.composed_at_least * 100.0,
            self.computed_at_least * 100.0,
            self.templated_at_most * 100.0,
        )
    }
}
