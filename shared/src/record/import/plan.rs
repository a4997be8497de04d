//! The pre-registration and the suite ledger, read back from the numbers
//! v1 kept in its gate details.

use serde_json::Value;

use super::read::{f, gate_detail, s, u};
use super::server::parse_credential;
use crate::record::model::*;
use crate::record::v1::*;

pub(super) fn convert_prereg(r: &RecordV1) -> PreRegistration {
    let construct = r.gates.records.iter().find(|g| g.gate == "construct");
    let verdict = construct.and_then(|g| g.verdict.as_ref());
    let construct_detail = construct.map(|g| &g.detail);
    let plan = gate_detail(r, "plan_power");
    let structural = gate_detail(r, "structural");
    let suite_size = gate_detail(r, "suite_size");
    let null = gate_detail(r, "null_baseline");
    let policy = r.gates.extension_policy.as_ref();
    PreRegistration {
        hash: None,
        // v1 registered no size apart from the suite it drove: its
        // `suite_size.nTasks` is that suite, so the registration is left
        // unrecorded, never read as the suite's own size.
        n_tasks: None,
        reps: u(construct_detail, "reps"),
        alpha: verdict.map(|v| v.alpha),
        construct_threshold: verdict
            .map(|v| v.threshold)
            .or_else(|| f(plan, "threshold")),
        null_kill_ratio: f(null, "ratio"),
        min_admission_rate: f(structural, "minAdmissionRate"),
        min_tasks: u(suite_size, "minTasks"),
        detectable_rate: f(plan, "detectableRate"),
        // v1 records the power at the required n, not the planned power.
        planned_power: None,
        extension_size: policy.map_or(0, |p| p.extension_size),
        max_extensions: policy.map_or(0, |p| p.max_extensions),
        seed: None,
        runner_model: Some(r.run.runner_model.clone()),
        judge_model: Some(r.run.judge_model.clone()),
        generator: r.run.generator_version.clone().filter(|g| !g.is_empty()),
        null_screen: r.run.null_screen_enabled,
        conformance: None,
        credential_context: parse_credential(&r.server.credential_context),
        operator_hints: None,
        input: None,
        screen_protocol: None,
        extension_protocol: s(construct_detail, "extensionProtocol"),
        // fitness-report/1 did not register the budgets and timeouts.
        ..PreRegistration::default()
    }
}

pub(super) fn convert_suite(r: &RecordV1) -> SuiteLedger {
    let structural = gate_detail(r, "structural");
    let synthesis = structural.and_then(|d| d.get("synthesis"));
    let yield_ = synthesis.and_then(|s| s.get("yield"));
    let tasks = u(gate_detail(r, "suite_size"), "nTasks");
    match yield_ {
        Some(y) => {
            let mut rejected_by_rule = Vec::new();
            if let Some(Value::Object(rules)) = synthesis.and_then(|s| s.get("dropsByRule")) {
                for (rule, count) in rules {
                    // The null screen is its own fate, counted below.
                    if rule == "null_screen" {
                        continue;
                    }
                    if let Some(count) = count.as_u64() {
                        rejected_by_rule.push(RuleRejection {
                            rule: rule.clone(),
                            count,
                            example: None,
                        });
                    }
                }
            }
            let screen = synthesis.and_then(|s| s.get("nullScreen"));
            let null_screened = match (u(screen, "screened"), u(screen, "dropped")) {
                (Some(screened), Some(dropped)) => Some(NullScreenCount {
                    screened,
                    dropped,
                    errors: 0,
                }),
                _ => None,
            };
            SuiteLedger {
                candidates: u(Some(y), "candidates"),
                admitted: u(Some(y), "admitted"),
                tasks,
                rejected_by_rule,
                trimmed_surplus: u(Some(y), "trimmed"),
                null_screened,
                screen_skipped: None,
                candidates_file: None,
                quality: None,
                judge_calls: None,
                discovery: None,
                act: None,
                limitation: None,
            }
        }
        None => SuiteLedger {
            candidates: u(structural, "nRequested"),
            admitted: u(structural, "nGenerated"),
            tasks,
            rejected_by_rule: Vec::new(),
            trimmed_surplus: None,
            null_screened: None,
            screen_skipped: None,
            candidates_file: None,
            quality: None,
            judge_calls: None,
            discovery: None,
            act: None,
            limitation: Some(
                "This run's generator did not serialise per-candidate reasons, so rejections by rule, trimmed surplus and null-screen deletions are not broken down."
                    .to_owned(),
            ),
        },
    }
}
