//! The v1 score: intervals, per-tool and per-task results.

use crate::record::model::*;
use crate::record::v1::*;

fn convert_interval(i: &IntervalV1) -> Interval {
    Interval {
        rate: i.rate,
        low: i.low,
        high: i.high,
        k: i.k,
        n: i.n,
    }
}

pub(super) fn convert_score(s: &ScoreV1) -> Score {
    Score {
        runner_model: s.runner_model.clone(),
        first_try: convert_interval(&s.first_try_success),
        eventual: convert_interval(&s.eventual_success),
        mean_calls_per_completed_task: s.mean_calls_per_completed_task,
        mean_tokens_per_completed_task: s.mean_tokens_per_completed_task,
        mean_cost_per_completed_task_usd: s.mean_cost_per_completed_task_usd,
        destructive_without_confirmation: s.destructive_without_confirmation,
        tools: s
            .tools
            .iter()
            .map(|t| ToolScore {
                tool: t.tool.clone(),
                calls: t.calls,
                errors: t.errors,
                failure_classes: t.failure_classes.clone(),
                p50_ms: t.p50_ms,
                p95_ms: t.p95_ms,
                declared_destructive: t.declared_destructive,
            })
            .collect(),
        tasks: s
            .tasks
            .iter()
            .map(|t| TaskResult {
                task_id: t.task_id.clone(),
                first_try_success: t.first_try_success,
                success: t.success,
                tool_calls: t.tool_calls,
                mrtr_rounds: t.mrtr_rounds,
                input_tokens: t.input_tokens,
                output_tokens: t.output_tokens,
                cost_usd: t.cost_usd,
                failure: t.failure.clone(),
                destructive_without_confirmation: t.destructive_without_confirmation,
                // A /1 record keeps no per-repetition counts.
                reps: None,
                reps_succeeded: None,
                first_try_by_rep: Vec::new(),
                kind: None,
                shape: None,
            })
            .collect(),
        consistency: None,
        per_kind: Vec::new(),
        per_shape: Vec::new(),
        ambiguous_parameters: s.ambiguous_parameters.clone(),
        schema_drift: s.schema_drift.clone(),
    }
}
