//! Comparing two runs of one server for CI (`fitness compare BEFORE AFTER`):
//! whether the two measurements can be read against each other at all
//! ([`comparability`]), the outcome change, and a verdict a workflow gates
//! on.
//!
//! Two runs of one suite (one suite hash) are read pair by pair
//! ([`paired`]): trial k of task t before against trial k of task t after,
//! with McNemar's test and Newcombe's paired interval of the drop at the
//! registered alpha. Runs of different suites are read as independent
//! samples: their two stored first-try intervals and whether they are
//! separated ([`delta`]). Outcomes decide first where a run did not score
//! ([`outcomes`]). [`plan`] sizes a paired rerun before it is paid for.

mod comparability;
mod intervals;
mod outcomes;
mod paired;
mod plan;
mod verdict;

use serde::Serialize;

use crate::record::{Outcome, RewriteDelta, RunRecord};

pub use comparability::{Incomparable, comparability};
pub use intervals::{delta, explain, stored_interval};
pub use paired::{Flip, PairedReading, confidence_text, p_text};
pub use plan::{PairedPlan, plan};
pub use verdict::Verdict;

/// One side of the comparison, as stored in its record.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Side {
    pub run: String,
    pub outcome: Outcome,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refused_at: Option<String>,
    pub runner_model: String,
    pub generator: String,
    pub suite_hash: String,
}

/// How the two runs were read against each other.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reading {
    /// One suite: trial k of task t before against trial k of task t after.
    Paired(PairedReading),
    /// The two stored intervals as independent samples, and why the runs
    /// were not read pair by pair.
    Independent { why: String },
}

impl Reading {
    pub fn paired(&self) -> Option<&PairedReading> {
        match self {
            Reading::Paired(p) => Some(p),
            Reading::Independent { .. } => None,
        }
    }
}

/// The comparison of two records.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub before: Side,
    pub after: Side,
    /// Empty when the runs are comparable.
    pub incomparable: Vec<Incomparable>,
    /// How two scored, comparable runs were read (absent where outcomes
    /// decided).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reading: Option<Reading>,
    /// The stored first-try intervals, their difference and separation.
    pub delta: RewriteDelta,
    pub verdict: Verdict,
    /// The verdict in one sentence.
    pub reason: String,
}

impl Comparison {
    /// The paired reading, when the runs were read pair by pair.
    pub fn paired(&self) -> Option<&PairedReading> {
        self.reading.as_ref().and_then(Reading::paired)
    }
}

fn side(r: &RunRecord) -> Side {
    Side {
        run: r.run.id.clone(),
        outcome: r.outcome,
        refused_at: r.gates.refused_at.clone(),
        runner_model: r.run.runner_model.clone(),
        generator: r.run.generator_label().to_owned(),
        suite_hash: r.run.suite_hash.clone(),
    }
}

/// Compare `after` against the baseline `before`: the paired reading where
/// both runs scored on one suite, else the independent one.
pub fn compare(before: &RunRecord, after: &RunRecord) -> Comparison {
    let incomparable = comparability(before, after);
    let d = delta(stored_interval(before), stored_interval(after));
    // Outcomes decide where a run did not score; two scores are read pair
    // by pair where the runs drove one suite.
    let (reading, (verdict, reason)) = if !incomparable.is_empty() {
        (None, not_comparable(&incomparable))
    } else if let Some(decided) = outcomes::decided(before, after) {
        (None, decided)
    } else {
        match paired::pair(before, after) {
            Ok(p) => {
                let verdict = p.verdict();
                (Some(Reading::Paired(p)), verdict)
            }
            Err(why) => (Some(Reading::Independent { why }), intervals::read(&d)),
        }
    };
    Comparison {
        before: side(before),
        after: side(after),
        incomparable,
        reading,
        delta: d,
        verdict,
        reason,
    }
}

/// The verdict when the runs differ in what makes them comparable.
fn not_comparable(incomparable: &[Incomparable]) -> (Verdict, String) {
    (
        Verdict::Incomparable,
        format!(
            "The runs are not comparable, so they are not read against each other: {}.",
            incomparable
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        ),
    )
}

#[cfg(test)]
mod tests;
