//! The drive's score: each task's result from its repetitions, the
//! first-try and eventual rates with their intervals, and per tool its
//! calls, errors, failure classes and latencies.

use std::collections::BTreeMap;

use fitness_shared::record::{self as rec, TaskResult, ToolScore};
use fitness_shared::stats::{BOARD_CONFIDENCE, wilson};
use rmcp::model::Tool;
use serde_json::{Map, Value};

use crate::model::agent::TrialOutcome;
use crate::model::price::PriceTable;
use crate::suite::task::Task;

/// Per tool: calls, errors, failure classes, latencies.
type ToolTally = (u64, u64, BTreeMap<String, u64>, Vec<u64>);

/// The score of the drive, over tasks: first try is the first repetition
/// answered correctly without a failed call; eventual is any repetition
/// answered correctly.
pub fn score(
    runner_model: &str,
    tools: &[Tool],
    results: &[(&Task, Vec<TrialOutcome>)],
    prices: &PriceTable,
) -> rec::Score {
    let n = results.len() as u64;
    let mut tally = Tally::default();
    let tasks: Vec<TaskResult> = results
        .iter()
        .map(|(task, reps)| tally.task(task, reps, runner_model, prices))
        .collect();
    let count = |f: fn(&TaskResult) -> bool| tasks.iter().filter(|t| f(t)).count() as u64;
    let (first, eventual) = (count(|t| t.first_try_success), count(|t| t.success));
    let mean = |total: f64| (tally.done > 0).then(|| total / tally.done as f64);
    rec::Score {
        runner_model: runner_model.to_owned(),
        first_try: wilson(first, n, BOARD_CONFIDENCE),
        eventual: wilson(eventual, n, BOARD_CONFIDENCE),
        mean_calls_per_completed_task: mean(tally.done_calls as f64),
        mean_tokens_per_completed_task: mean(tally.done_tokens as f64),
        mean_cost_per_completed_task_usd: if tally.cost_unknown {
            None
        } else {
            mean(tally.done_cost)
        },
        destructive_without_confirmation: tasks
            .iter()
            .map(|t| t.destructive_without_confirmation)
            .sum(),
        tools: tool_scores(tally.per_tool, tools),
        consistency: rec::Consistency::of(&tasks),
        per_kind: rec::KindScore::of(&tasks),
        per_shape: rec::ShapeScore::of(&tasks),
        tasks,
        ambiguous_parameters: Vec::new(),
        schema_drift: None,
    }
}

/// What the drive's trials add up to across its tasks: per tool, and the
/// economics of the trials that completed their task.
#[derive(Default)]
struct Tally {
    per_tool: BTreeMap<String, ToolTally>,
    /// Trials that answered correctly, and their calls, tokens and cost.
    done: u64,
    done_calls: u64,
    done_tokens: u64,
    done_cost: f64,
    /// A completed trial's cost was unknown: there is no mean cost.
    cost_unknown: bool,
}

impl Tally {
    /// One task's result from its repetitions, counted into the tally.
    fn task(
        &mut self,
        task: &Task,
        reps: &[TrialOutcome],
        runner_model: &str,
        prices: &PriceTable,
    ) -> TaskResult {
        let solved: Vec<bool> = reps
            .iter()
            .map(|o| super::trials::answered(task, o))
            .collect();
        // First try: a repetition answered correctly with no failed call on
        // the way; the task's is its first repetition's. Eventual: any
        // repetition answered correctly.
        let first_try_by_rep: Vec<bool> = reps
            .iter()
            .zip(&solved)
            .map(|(o, ok)| *ok && o.calls.iter().all(|c| c.ok || c.blocked))
            .collect();
        let first_ok = first_try_by_rep.first().copied().unwrap_or(false);
        let any_ok = solved.iter().any(|s| *s);
        let (mut calls, mut input, mut output, mut destructive) = (0u64, 0u64, 0u64, 0u64);
        let mut task_cost = Some(0.0);
        let mut failure = None;
        for (outcome, ok) in reps.iter().zip(&solved) {
            calls += outcome.calls.len() as u64;
            input = input.saturating_add(outcome.usage.input_tokens);
            output = output.saturating_add(outcome.usage.output_tokens);
            let trial_cost = trial_cost(runner_model, outcome, prices);
            task_cost = task_cost.zip(trial_cost).map(|(a, b)| a + b);
            if *ok {
                self.completed(outcome, trial_cost);
            } else if failure.is_none() {
                failure = Some(failure_of(outcome));
            }
            for call in &outcome.calls {
                self.call(call);
                destructive += u64::from(call.writes && !call.blocked && !task.destructive);
            }
        }
        TaskResult {
            task_id: task.id.clone(),
            first_try_success: first_ok,
            success: any_ok,
            tool_calls: calls,
            mrtr_rounds: 0,
            input_tokens: input,
            output_tokens: output,
            cost_usd: task_cost,
            failure: if any_ok { None } else { failure },
            destructive_without_confirmation: destructive,
            reps: Some(reps.len() as u64),
            reps_succeeded: Some(solved.iter().filter(|s| **s).count() as u64),
            first_try_by_rep,
            kind: task.is_act().then(|| "act".to_owned()),
            shape: task.shape,
        }
    }

    /// A trial that answered its task correctly.
    fn completed(&mut self, outcome: &TrialOutcome, cost: Option<f64>) {
        self.done += 1;
        self.done_calls += outcome.calls.len() as u64;
        self.done_tokens = self
            .done_tokens
            .saturating_add(outcome.usage.input_tokens)
            .saturating_add(outcome.usage.output_tokens);
        match cost {
            Some(c) => self.done_cost += c,
            None => self.cost_unknown = true,
        }
    }

    /// One tool call, counted against its tool.
    fn call(&mut self, call: &crate::model::agent::ToolCallRecord) {
        // A withheld call never reached the server: not the tool's call,
        // nor its error.
        if call.blocked {
            return;
        }
        let entry = self.per_tool.entry(call.tool.clone()).or_default();
        entry.0 += 1;
        if !call.ok {
            entry.1 += 1;
        }
        if let Some(class) = &call.failure {
            *entry.2.entry(super::run::name_of(class)).or_default() += 1;
        }
        entry.3.push(call.latency_ms);
    }
}

/// Each called tool's calls, errors, failure classes and latencies.
fn tool_scores(per_tool: BTreeMap<String, ToolTally>, tools: &[Tool]) -> Vec<ToolScore> {
    per_tool
        .into_iter()
        .map(|(name, (calls, errors, classes, mut latencies))| {
            latencies.sort_unstable();
            ToolScore {
                declared_destructive: tools
                    .iter()
                    .find(|t| t.name == name.as_str())
                    .is_some_and(|t| crate::suite::destructive::declared(t) != Some(false)),
                tool: name,
                calls,
                errors,
                failure_classes: classes
                    .into_iter()
                    .map(|(k, v)| (k, Value::from(v)))
                    .collect::<Map<String, Value>>(),
                p50_ms: nearest_rank(&latencies, 50.0),
                p95_ms: nearest_rank(&latencies, 95.0),
            }
        })
        .collect()
}

fn trial_cost(model: &str, outcome: &TrialOutcome, prices: &PriceTable) -> Option<f64> {
    if outcome.calls_without_usage > 0 || !outcome.model_errors.is_empty() {
        return None;
    }
    let id = model.parse().ok()?;
    let u = &outcome.usage;
    let tokens = fitness_shared::cost::Tokens {
        input: u.input_tokens,
        output: u.output_tokens,
        cache_read: u.cache_read_input_tokens,
        cache_write: u.cache_creation_input_tokens,
    };
    prices
        .price_for(&id)
        .map(|p| fitness_shared::cost::usd(&tokens, &p.rates()))
}

pub(super) fn failure_of(outcome: &TrialOutcome) -> String {
    use crate::model::agent::TrialEnd;
    match outcome.end {
        TrialEnd::Answered => "wrong_answer".to_owned(),
        TrialEnd::TurnBudget | TrialEnd::TokenBudget => "budget_exhausted".to_owned(),
        TrialEnd::ModelFailed => "model_error".to_owned(),
        TrialEnd::Runaway => "runaway".to_owned(),
        TrialEnd::MalformedReply => "malformed_reply".to_owned(),
    }
}

/// The nearest-rank percentile of whole milliseconds
/// ([`fitness_shared::stats::percentile_nearest_rank`], exact).
fn nearest_rank(values: &[u64], pct: f64) -> Option<u64> {
    let as_f64: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    fitness_shared::stats::percentile_nearest_rank(&as_f64, pct).map(|v| v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(nearest_rank(&[], 50.0), None);
        assert_eq!(nearest_rank(&[7], 95.0), Some(7));
        assert_eq!(nearest_rank(&[4, 2, 3, 1], 50.0), Some(2));
        assert_eq!(nearest_rank(&[1, 2, 3, 4], 95.0), Some(4));
    }
}
