//! The score of a scored run, and what it cost.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A rate with its Wilson 95% interval: the one interval type, computed by
/// [`crate::stats::wilson`] and stored as is.
pub use crate::stats::Interval;

/// The score of a `SCORED` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Score {
    pub runner_model: String,
    /// First-try success with its Wilson 95% interval: the published number.
    pub first_try: Interval,
    pub eventual: Interval,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_calls_per_completed_task: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_tokens_per_completed_task: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_cost_per_completed_task_usd: Option<f64>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
    #[serde(default)]
    pub tools: Vec<ToolScore>,
    #[serde(default)]
    pub tasks: Vec<TaskResult>,
    /// How each task's repetitions agree (pass^k, flips): beside first-try
    /// success, never used to rank. Absent on records made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub consistency: Option<Consistency>,
    /// First-try success per kind of task (questions, changes), each with
    /// its interval, when the suite holds changes ([`KindScore::of`]);
    /// empty for a suite of questions alone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_kind: Vec<KindScore>,
    /// First-try success per shape of task (a lookup, a link followed, a
    /// count, a comparison, a set, a change), each with its interval, when
    /// the suite's tasks carry their shapes ([`ShapeScore::of`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_shape: Vec<ShapeScore>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ambiguous_parameters: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_drift: Option<Value>,
}

/// Per-tool results of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolScore {
    pub tool: String,
    pub calls: u64,
    pub errors: u64,
    /// Failure attribution: class -> count.
    #[serde(default)]
    pub failure_classes: serde_json::Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<u64>,
    #[serde(default)]
    pub declared_destructive: bool,
}

/// One task of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskResult {
    pub task_id: String,
    pub first_try_success: bool,
    pub success: bool,
    pub tool_calls: u64,
    #[serde(default)]
    pub mrtr_rounds: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
    /// The repetitions driven, and how many of them answered correctly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps_succeeded: Option<u64>,
    /// Each repetition's first-try outcome, in repetition order: answered
    /// correctly with no failed call on the way (the rule that makes the
    /// first repetition the task's `first_try_success`). `fitness compare`
    /// pairs repetition k of a task with repetition k of the same task in
    /// another run of the suite. Empty on records made before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub first_try_by_rep: Vec<bool>,
    /// `act` for a change checked by the state it left; absent for a
    /// question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The task's shape ([`super::shape::TaskShape`]); absent on records made
    /// before it and for tasks a generator gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<super::shape::TaskShape>,
}

impl TaskResult {
    /// `ask` or `act`.
    pub fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("ask")
    }
}

/// First-try success over the tasks of one kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct KindScore {
    /// `ask` (a question: the answer is checked) or `act` (a change: the
    /// state it left is checked).
    pub kind: String,
    pub first_try: Interval,
}

impl KindScore {
    /// Per kind, questions first, when the tasks hold changes; empty for
    /// questions alone (the total is their score).
    pub fn of(tasks: &[TaskResult]) -> Vec<KindScore> {
        if tasks.iter().all(|t| t.kind() == "ask") {
            return Vec::new();
        }
        ["ask", "act"]
            .into_iter()
            .filter_map(|kind| {
                let of: Vec<&TaskResult> = tasks.iter().filter(|t| t.kind() == kind).collect();
                (!of.is_empty()).then(|| {
                    let k = of.iter().filter(|t| t.first_try_success).count() as u64;
                    KindScore {
                        kind: kind.to_owned(),
                        first_try: crate::stats::wilson(
                            k,
                            of.len() as u64,
                            crate::stats::BOARD_CONFIDENCE,
                        ),
                    }
                })
            })
            .collect()
    }

    /// `N ask, M act` for a row.
    pub fn counts(tasks: &[TaskResult]) -> (u64, u64) {
        let act = tasks.iter().filter(|t| t.kind() == "act").count() as u64;
        (tasks.len() as u64 - act, act)
    }
}

/// First-try success over the tasks of one shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ShapeScore {
    pub shape: super::shape::TaskShape,
    /// Tasks of this shape.
    pub tasks: u64,
    pub first_try: Interval,
}

impl ShapeScore {
    /// Per shape, in [`super::shape::TaskShape::ALL`]'s order, over the tasks
    /// that carry one; empty when none does.
    pub fn of(tasks: &[TaskResult]) -> Vec<ShapeScore> {
        super::shape::TaskShape::ALL
            .into_iter()
            .filter_map(|shape| {
                let of: Vec<&TaskResult> =
                    tasks.iter().filter(|t| t.shape == Some(shape)).collect();
                (!of.is_empty()).then(|| {
                    let k = of.iter().filter(|t| t.first_try_success).count() as u64;
                    ShapeScore {
                        shape,
                        tasks: of.len() as u64,
                        first_try: crate::stats::wilson(
                            k,
                            of.len() as u64,
                            crate::stats::BOARD_CONFIDENCE,
                        ),
                    }
                })
            })
            .collect()
    }

    /// `aggregate (a count, total or average): first try 50.0% (95% CI
    /// 15.0% to 85.0%), 2 of 4`.
    pub fn line(&self) -> String {
        format!(
            "{} ({}): first try {}",
            self.shape.as_str(),
            self.shape.words(),
            self.first_try.text()
        )
    }
}

/// How the repetitions of each task agree: the share of tasks every
/// repetition of which answered correctly (pass^k, with its Wilson 95%
/// interval) and the tasks whose repetitions disagree. Computed here once,
/// from the per-task counts; a reading of reliability beside first-try
/// success, never a rank.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Consistency {
    /// Tasks counted (every task of the drive).
    pub tasks: u64,
    /// Repetitions per task: the fewest any task had (they are registered
    /// alike; a run cut short may leave fewer).
    pub reps: u64,
    /// Tasks with every repetition answered correctly.
    pub every_rep: Interval,
    /// Tasks with at least one repetition answered and one not.
    pub flipping: u64,
    /// Tasks with no repetition answered.
    pub never: u64,
}

impl Consistency {
    /// From the drive's per-task counts; `None` when a task lacks them (an
    /// older record) or there are no tasks.
    pub fn of(tasks: &[TaskResult]) -> Option<Consistency> {
        let counts: Vec<(u64, u64)> = tasks
            .iter()
            .map(|t| Some((t.reps_succeeded?, t.reps?)))
            .collect::<Option<_>>()?;
        let reps = counts.iter().map(|&(_, n)| n).min()?;
        let every = counts.iter().filter(|&&(k, n)| n > 0 && k == n).count() as u64;
        let never = counts.iter().filter(|&&(k, _)| k == 0).count() as u64;
        let flipping = counts.iter().filter(|&&(k, n)| k > 0 && k < n).count() as u64;
        let n = counts.len() as u64;
        Some(Consistency {
            tasks: n,
            reps,
            every_rep: crate::stats::wilson(every, n, crate::stats::BOARD_CONFIDENCE),
            flipping,
            never,
        })
    }

    /// The share of tasks whose repetitions disagree.
    pub fn flip_rate(&self) -> f64 {
        if self.tasks == 0 {
            0.0
        } else {
            self.flipping as f64 / self.tasks as f64
        }
    }
}

/// The run's dollar figure: a total only when nothing known is missing.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cost {
    Total {
        usd: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runner_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judge_usd: Option<f64>,
    },
    /// Printed "at least $x", with every reason it is a floor.
    Floor {
        usd: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runner_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judge_usd: Option<f64>,
        reasons: Vec<String>,
    },
    /// Nothing supports a figure.
    None { why: String },
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, succeeded: Option<u64>, reps: Option<u64>) -> TaskResult {
        TaskResult {
            task_id: id.to_owned(),
            first_try_success: succeeded.is_some_and(|k| k > 0),
            success: succeeded.is_some_and(|k| k > 0),
            tool_calls: 1,
            mrtr_rounds: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost_usd: None,
            failure: None,
            destructive_without_confirmation: 0,
            reps,
            reps_succeeded: succeeded,
            first_try_by_rep: Vec::new(),
            kind: None,
            shape: None,
        }
    }

    #[test]
    fn pass_every_rep_and_flips_come_from_the_per_task_counts() {
        let tasks = [
            task("t1", Some(3), Some(3)),
            task("t2", Some(2), Some(3)),
            task("t3", Some(0), Some(3)),
            task("t4", Some(3), Some(3)),
        ];
        let c = Consistency::of(&tasks).expect("counts are there");
        assert_eq!((c.tasks, c.reps, c.flipping, c.never), (4, 3, 1, 1));
        assert_eq!(c.every_rep, crate::stats::wilson(2, 4, 0.95));
        assert_eq!(c.flip_rate(), 0.25);
    }

    #[test]
    fn a_task_without_counts_leaves_no_figure() {
        let tasks = [task("t1", Some(1), Some(1)), task("t2", None, None)];
        assert_eq!(Consistency::of(&tasks), None);
        assert_eq!(Consistency::of(&[]), None);
    }
}
