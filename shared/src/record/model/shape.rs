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
