//! The run's cost from what v1 measured: a total, a floor with the reasons
//! it is one, or none.

use serde_json::Value;

use super::read::gate_detail;
use crate::record::model::*;
use crate::record::v1::*;

/// The run's cost from what the v1 record measured: the runner's tape cost
/// plus judge usage. A total only when nothing known is missing from it.
pub(super) fn convert_cost(r: &RecordV1) -> Cost {
    let tape_cost = r
        .trace_stats
        .as_ref()
        .and_then(|t| t.pointer("/models/cost"))
        .filter(|c| c.is_object());
    let runner_usd = tape_cost
        .and_then(|c| c.get("totalUsd"))
        .and_then(Value::as_f64);
    let judge = r.run.judge_usage.as_ref();
    let judge_usd = judge.and_then(|j| j.est_cost_usd);
    let mut reasons = judge_reasons(judge, judge_usd);
    reasons.extend(tape_reasons(r, tape_cost));
    let usd = match (runner_usd, judge_usd) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    match usd {
        None => Cost::None {
            why: "no priced model usage is recorded: the tapes carry no model cost and the record carries no priced judge usage".to_owned(),
        },
        Some(usd) if reasons.is_empty() => Cost::Total {
            usd,
            runner_usd,
            judge_usd,
        },
        Some(usd) => Cost::Floor {
            usd,
            runner_usd,
            judge_usd,
            reasons,
        },
    }
}

/// Why the judge's spend is missing from the figure or only a lower bound.
fn judge_reasons(judge: Option<&JudgeUsageV1>, judge_usd: Option<f64>) -> Vec<String> {
    let mut reasons = Vec::new();
    match (judge, judge_usd) {
        (None, _) => reasons.push(
            "judge spend is not recorded in this record, so it is outside the figure and not estimated".to_owned(),
        ),
        (Some(_), None) => reasons.push(
            "judge usage is recorded without a price, so no judge dollars are in the figure".to_owned(),
        ),
        _ => {}
    }
    if let Some(j) = judge {
        if j.partial {
            reasons.push(
                "judge usage is marked partial, so the judge dollars are a lower bound".to_owned(),
            );
        }
        let unpriced: Vec<&str> = j
            .by_model
            .iter()
            .filter(|m| m.est_cost_usd.is_none())
            .map(|m| m.model.as_deref().unwrap_or("unnamed model"))
            .collect();
        if !unpriced.is_empty() {
            reasons.push(format!(
                "judge usage of {} has no price on file and is not in the figure",
                unpriced.join(", ")
            ));
        }
        if let Some(n) = j.uncounted_calls.filter(|n| *n > 0) {
            reasons.push(format!("{n} judge call(s) returned no usage block"));
        }
        if let Some(n) = j.failed_calls.filter(|n| *n > 0) {
            reasons.push(format!("{n} judge call(s) threw before reporting usage"));
        }
    }
    reasons
}

/// Why the runner's spend on the tapes is incomplete: null-screen calls
/// written to no tape, unpriced models, a partial cost block.
fn tape_reasons(r: &RecordV1, tape_cost: Option<&Value>) -> Vec<String> {
    let mut reasons = Vec::new();
    let screen = gate_detail(r, "structural")
        .and_then(|d| d.pointer("/synthesis/nullScreen"))
        .filter(|s| s.get("enabled").and_then(Value::as_bool) == Some(true));
    if let Some(screened) = screen
        .and_then(|s| s.get("screened"))
        .and_then(Value::as_u64)
        .filter(|n| *n > 0)
    {
        reasons.push(format!(
            "the generation-time null screen made {screened} runner call(s) written to neither tape"
        ));
    }
    if let Some(unpriced) = tape_cost
        .and_then(|c| c.get("unpricedModels"))
        .and_then(Value::as_array)
    {
        let names: Vec<&str> = unpriced
            .iter()
            .filter_map(Value::as_str)
            .filter(|s| !s.is_empty())
            .collect();
        if !names.is_empty() {
            reasons.push(format!(
                "model(s) on the tape have no price on file: {}",
                names.join(", ")
            ));
        }
    }
    if tape_cost
        .and_then(|c| c.get("partial"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        reasons.push("the tape's cost block is marked partial".to_owned());
    }
    reasons
}
