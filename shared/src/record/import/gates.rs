//! The v1 gate records, each gate's detail by its wire shape, and the
//! extension ledger.

use serde_json::Value;

use super::read::{ImportError, f, field, parse_verdict, s, u};
use crate::record::model::*;
use crate::record::v1::*;

pub(super) fn convert_gates(r: &RecordV1) -> Result<Gates, ImportError> {
    let id = r.run.id.as_str();
    let mut records = Vec::with_capacity(r.gates.records.len());
    for g in &r.gates.records {
        let cost_tier = match g.cost_tier.as_deref() {
            Some("free") => CostTier::Free,
            Some("cheap") => CostTier::Cheap,
            Some("paid") => CostTier::Paid,
            other => {
                return Err(field(
                    id,
                    format!("gate {}: unknown cost tier {other:?}", g.gate),
                ));
            }
        };
        let verdict = match &g.verdict {
            None => None,
            Some(v) => Some(GateVerdict {
                outcome: parse_verdict(&v.outcome).ok_or_else(|| {
                    field(
                        id,
                        format!("gate {}: unknown verdict {:?}", g.gate, v.outcome),
                    )
                })?,
                k: v.k,
                n: v.n,
                threshold: v.threshold,
                alpha: v.alpha,
                p_value: v.p_value,
            }),
        };
        records.push(GateRecord {
            id: g.gate.clone(),
            cost_tier,
            ok: g.ok,
            verdict,
            reason: g.reason.clone(),
            detail: convert_gate_detail(&g.gate, &g.detail),
            source_detail: Some(g.detail.clone()),
        });
    }
    Ok(Gates {
        order: r.gates.order.clone(),
        records,
        refused_at: r.gates.refused_at.clone(),
    })
}

/// The strings of the array at `key` (others skipped); empty when absent.
fn strings(d: Option<&Value>, key: &str) -> Vec<String> {
    d.and_then(|d| d.get(key))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The array at `key`, verbatim; empty when absent.
fn values(d: Option<&Value>, key: &str) -> Vec<Value> {
    d.and_then(|d| d.get(key))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// A gate's detail by the gate's id; `Unrecognised` when the gate is
/// unknown or a field its shape needs is missing.
fn convert_gate_detail(gate: &str, d: &Value) -> GateDetail {
    let d = Some(d);
    match gate {
        "protocol_hygiene" => GateDetail::ProtocolHygiene {
            failed: strings(d, "failed"),
        },
        // v1's `nRequested` is the candidates admission read (its admission
        // rate is `nGenerated / nRequested`), and `nGenerated` the suite it
        // admitted; v1 kept no registered size.
        "structural" => GateDetail::Structural {
            n_requested: None,
            n_generated: u(d, "nRequested"),
            n_tasks: u(d, "nGenerated"),
            admission_rate: f(d, "admissionRate"),
            min_admission_rate: f(d, "minAdmissionRate"),
            min_generated: u(d, "minGenerated"),
            explain: s(d, "explain"),
        },
        "answer_leak" => GateDetail::AnswerLeak {
            leaks: values(d, "leaks"),
            at_generation: values(d, "leaksFoundAtGeneration"),
        },
        "suite_size" => match (u(d, "nTasks"), u(d, "minTasks")) {
            (Some(n_tasks), Some(min_tasks)) => GateDetail::SuiteSize {
                n_tasks,
                min_tasks,
                tool_count: u(d, "toolCount"),
            },
            _ => GateDetail::Unrecognised,
        },
        "plan_power" => plan_power_detail(d),
        "null_baseline" => null_baseline_detail(d),
        "construct" => construct_detail(d),
        _ => GateDetail::Unrecognised,
    }
}

fn plan_power_detail(d: Option<&Value>) -> GateDetail {
    match (
        u(d, "requiredN"),
        u(d, "actualN"),
        f(d, "threshold"),
        f(d, "detectableRate"),
        f(d, "power"),
    ) {
        (
            Some(required_n),
            Some(actual_n),
            Some(threshold),
            Some(detectable_rate),
            Some(achieved_power),
        ) => GateDetail::PlanPower {
            required_n,
            actual_n,
            threshold,
            detectable_rate,
            achieved_power,
            explain: None,
        },
        _ => GateDetail::Unrecognised,
    }
}

fn null_baseline_detail(d: Option<&Value>) -> GateDetail {
    GateDetail::NullBaseline {
        rates: values(d, "rates")
            .iter()
            .filter_map(|r| {
                Some(NullRate {
                    label: r.get("label")?.as_str()?.to_owned(),
                    k: r.get("k")?.as_u64()?,
                    n: r.get("n")?.as_u64()?,
                    rate: r.get("rate")?.as_f64()?,
                    errors: 0,
                })
            })
            .collect(),
        t_null: f(d, "tNull"),
        t_agent: f(d, "tAblate"),
        kill_threshold: f(d, "killThreshold"),
        ratio: f(d, "ratio"),
        percentile: u(d, "percentile"),
        decision: s(d, "outcome"),
        explain: s(d, "explain"),
    }
}

fn construct_detail(d: Option<&Value>) -> GateDetail {
    let published = d.and_then(|d| d.get("published")).and_then(|p| {
        let p = Some(p);
        Some(PublishedVerdict {
            outcome: parse_verdict(&s(p, "outcome")?)?,
            raw_outcome: parse_verdict(&s(p, "rawOutcome")?)?,
            downgraded: p?.get("downgraded")?.as_bool()?,
            wilson_low: f(p, "wilsonLow")?,
            wilson_high: f(p, "wilsonHigh")?,
            required_n: u(p, "requiredN")?,
            achieved_power: f(p, "achievedPower")?,
            reason: s(p, "reason")?,
        })
    });
    let pooled = d.and_then(|d| d.get("pooled")).and_then(|p| {
        Some(Count {
            k: p.get("k")?.as_u64()?,
            n: p.get("n")?.as_u64()?,
        })
    });
    match (u(d, "n"), u(d, "errors")) {
        (Some(n), Some(errors)) => GateDetail::Construct {
            n,
            n_intended: u(d, "nIntended"),
            errors,
            max_error_rate: f(d, "maxErrorRate"),
            compromised: d
                .and_then(|d| d.get("compromised"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            reps: u(d, "reps"),
            published,
            pooled,
            extensions_consumed: u(d, "extensionsConsumed").unwrap_or(0),
            tape_reading: None,
        },
        _ => GateDetail::Unrecognised,
    }
}

pub(super) fn convert_extensions(r: &RecordV1) -> Result<Vec<ExtensionBatch>, ImportError> {
    let id = r.run.id.as_str();
    r.gates
        .extensions
        .iter()
        .map(|e| {
            let trials_added = e
                .pooled_after
                .n
                .checked_sub(e.pooled_before.n)
                .ok_or_else(|| field(id, format!("extension {}: pooled n shrank", e.index)))?;
            let verdict = |s: &str| {
                parse_verdict(s).ok_or_else(|| {
                    field(id, format!("extension {}: unknown verdict {s:?}", e.index))
                })
            };
            Ok(ExtensionBatch {
                index: e.index,
                gate: e.gate.clone(),
                tasks_added: e.admitted,
                trials_added,
                pooled_before: Count {
                    k: e.pooled_before.k,
                    n: e.pooled_before.n,
                },
                pooled_after: Count {
                    k: e.pooled_after.k,
                    n: e.pooled_after.n,
                },
                verdict_before: verdict(&e.verdict_before)?,
                verdict_after: verdict(&e.verdict_after)?,
                seed: e.seed,
                batch_suite_hash: e.batch_suite_hash.clone(),
                task_ids: e.task_ids.clone(),
                generated: e.generated,
                dropped: e.dropped.as_ref().map(|d| BatchDrops {
                    null_screen: d.null_screen,
                    answer_leak: d.answer_leak,
                    admission: d.admission,
                    duplicate: d.duplicate,
                    ..BatchDrops::default()
                }),
                short: e.short,
            })
        })
        .collect()
}
