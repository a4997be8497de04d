//! One record's board row ([`row_for`]): its server, probes, cost,
//! signature state and result, and the teaser line of a refusal.

use std::collections::BTreeMap;

use super::row::{
    Row, RowAttempt, RowConformance, RowCost, RowEconomics, RowProbes, RowResult, RowServer,
    RowStanding, Tier, score_caveat,
};
use crate::integrity::{self, SignatureState};
use crate::record::{Cost, GateDetail, Outcome, ProbeStatus, RunRecord};
use serde_json::Value;

/// The compact row for one record, its signature read against `site_key`
/// (base64). Attempt numbering is filled in by [`build_board`], which sees
/// every run of the server.
pub fn row_for(record: &RunRecord, site_key: Option<&str>) -> Row {
    let signature = match serde_json::to_value(record) {
        Ok(value) => integrity::signature_state(&value, site_key),
        Err(e) => SignatureState::Invalid {
            why: format!("the record does not serialise: {e}"),
        },
    };
    let economics = record.score.as_ref().and_then(|s| {
        let e = RowEconomics {
            calls: s.mean_calls_per_completed_task,
            tokens: s.mean_tokens_per_completed_task,
            usd: s.mean_cost_per_completed_task_usd,
        };
        (e.calls.is_some() || e.tokens.is_some() || e.usd.is_some()).then_some(e)
    });
    Row {
        id: record.run.id.clone(),
        server: row_server(record),
        generator: record.run.generator.clone(),
        runner_model: record.run.runner_model.clone(),
        credential: record.server.credential_context.label().to_owned(),
        access: record
            .access
            .as_ref()
            .map(crate::record::AccessLedger::text),
        access_mode: record.access.as_ref().map(|a| a.mode),
        kinds: super::row::RowKinds::of(record),
        seeded: super::row::RowSeeded::of(record),
        suite: record.run.suite_hash.chars().take(12).collect(),
        started_at: record.run.started_at.clone(),
        attempt: RowAttempt {
            index: 1,
            of: 1,
            others: BTreeMap::new(),
            named: Vec::new(),
        },
        result: result_for(record),
        economics,
        tool_list: record.tool_list.clone(),
        probes: row_probes(record),
        cost: row_cost(&record.cost),
        signature,
        screened: record.preregistration.null_screen,
        unscreened: record
            .suite
            .null_screened
            .as_ref()
            .map_or(0, |s| s.unscreened()),
        screen_skipped: record.suite.screen_skipped.is_some(),
        standing: record.notes.standing.as_ref().map(|s| RowStanding {
            set_id: s.set_id.clone(),
            count: s.count,
        }),
        extensions: record.extensions.len() as u64,
        tapes: record.tapes.clone(),
        conformance: record.conformance.as_ref().map(|c| {
            let split = c.split(record.server.capabilities.as_ref().unwrap_or(&Value::Null));
            RowConformance {
                suite: c.suite.clone(),
                passed: split.passed,
                failed: split.failed,
                not_counted: split.not_counted,
                not_counted_passed: split.not_counted_passed,
                not_counted_failed: split.not_counted_failed,
                error: c.error.clone(),
                set: c.set_text(),
                baseline: c.baseline.as_ref().map(|b| b.verdict_text()),
            }
        }),
    }
}

fn row_server(record: &RunRecord) -> RowServer {
    RowServer {
        slug: record.server.slug.clone(),
        target: record.server.target.display(),
        era: match record.server.era {
            crate::record::Era::Legacy => "legacy".to_owned(),
            crate::record::Era::Modern => "modern".to_owned(),
        },
        version: record.server.negotiated_version.clone(),
    }
}

fn row_probes(record: &RunRecord) -> RowProbes {
    let (passed, failed_n, unknown) = record.probes.tally();
    let failed = record
        .probes
        .findings
        .iter()
        .filter(|p| p.status == ProbeStatus::Fail && !p.is_spec_currency())
        .map(|p| p.id.clone())
        .collect();
    RowProbes {
        spec: record
            .probes
            .spec_currency
            .clone()
            .or_else(|| record.server.negotiated_version.clone()),
        spec_current: record.probes.spec_current(),
        passed: passed as u32,
        applicable: (passed + failed_n) as u32,
        unknown: unknown as u32,
        failed,
        unreachable: record.probes.unreachable.is_some(),
    }
}

fn row_cost(cost: &Cost) -> RowCost {
    match cost {
        Cost::Total { usd, .. } => RowCost::Total { usd: *usd },
        Cost::Floor { usd, reasons, .. } => RowCost::Floor {
            usd: *usd,
            reasons: reasons.clone(),
        },
        Cost::None { why } => RowCost::None { why: why.clone() },
    }
}

fn result_for(record: &RunRecord) -> RowResult {
    if let (Outcome::Scored, Some(score)) = (record.outcome, &record.score) {
        return RowResult::Scored {
            first_try: score.first_try,
            caveat: score_caveat(record),
        };
    }
    let gate = record
        .gates
        .refused_at
        .as_deref()
        .and_then(|id| record.gates.record(id))
        .or_else(|| record.gates.records.iter().find(|g| !g.ok));
    let Some(gate) = gate else {
        return RowResult::Refused {
            code: record.outcome.code().to_owned(),
            gate: None,
            tier: Tier::Unattributed,
            reason: record
                .notes
                .score
                .first()
                .cloned()
                .unwrap_or_else(|| "no gate named".to_owned()),
            teaser: "The run ended before it completed its registered size.".to_owned(),
            k: None,
            n: None,
            threshold: None,
            alpha: None,
            p_value: None,
        };
    };
    let verdict = gate.verdict.as_ref();
    // A compromised run did not complete its measurement: it sits apart
    // from the verdicts of the gate that counted its failed calls.
    let tier = if record.outcome == Outcome::Compromised {
        Tier::Compromised
    } else if gate.reason == crate::reading::screen::EMPTIED {
        // The structural gate only counted what the screen left: the
        // runner's calls, a null model with no server, decided the run.
        Tier::Cheap
    } else {
        gate.cost_tier.into()
    };
    RowResult::Refused {
        code: record.outcome.code().to_owned(),
        gate: Some(gate.id.clone()),
        tier,
        reason: gate.reason.clone(),
        teaser: teaser(gate, record),
        k: verdict.map(|v| v.k),
        n: verdict.map(|v| v.n),
        threshold: verdict.map(|v| v.threshold),
        alpha: verdict.map(|v| v.alpha),
        p_value: verdict.map(|v| v.p_value),
    }
}

/// One line with the numbers the stopping gate saw.
fn teaser(gate: &crate::record::GateRecord, record: &RunRecord) -> String {
    // The row's line is the numbers; the record page carries the reading.
    if let Some(e) = crate::reading::screen::emptied(record) {
        return format!("{}.", e.size);
    }
    if gate.reason != "compromised"
        && let Some(r) = crate::reading::null_baseline::NullReading::of(&gate.detail)
    {
        return r.teaser();
    }
    // The plan-power sentence names flags; its row line is the numbers below.
    if !matches!(gate.detail, GateDetail::PlanPower { .. })
        && let Some(e) = gate.detail.explain()
    {
        return strip_code_prefix(e);
    }
    match (&gate.detail, &gate.verdict) {
        (
            GateDetail::SuiteSize {
                n_tasks, min_tasks, ..
            },
            _,
        ) => format!(
            "{}.",
            crate::gates::suite_size_text(
                *n_tasks,
                record.preregistration.n_tasks,
                Some(*min_tasks)
            )
        ),
        (
            GateDetail::PlanPower {
                required_n,
                actual_n,
                achieved_power,
                ..
            },
            _,
        ) => format!(
            "{actual_n} registered trials could never publish a pass (needs {required_n}; achieved power {achieved_power:.3})."
        ),
        (
            GateDetail::Construct {
                errors,
                n,
                compromised: true,
                ..
            },
            _,
        ) => {
            format!("{errors} errored calls against {n} completed: over the 5% error bound.")
        }
        (_, Some(v)) => format!(
            "{k} of {n} reached the answer key through the server; threshold {t:.2}, alpha {a}, {p}.",
            k = v.k,
            n = v.n,
            t = v.threshold,
            a = v.alpha,
            p = p_text(v.p_value)
        ),
        _ => gate.reason.replace('_', " "),
    }
}

/// A p-value as printed on the board: three decimals, or `p < 0.001`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_owned()
    } else {
        format!("p = {p:.3}")
    }
}

/// `"REJECT (too_few_generated): 2 admitted ..."` -> `"2 admitted ..."`.
pub(super) fn strip_code_prefix(text: &str) -> String {
    match text.split_once("): ") {
        Some((head, rest)) if head.matches(' ').count() == 1 && head.contains(" (") => {
            rest.to_owned()
        }
        _ => text.to_owned(),
    }
}

/// The sentence a run carries when its own fields cannot tell a zero
/// extension policy from a run made before the extension protocol: an
/// `EXTEND_EXHAUSTED` run that bought no batch, states no protocol and has
/// no ledger (the rows the reference implementation recorded). A record
/// that states its protocol answers the question itself, and prints none.
pub fn zero_policy_note(record: &RunRecord) -> Option<&'static str> {
    (record.outcome == Outcome::ExtendExhausted
        && record.preregistration.max_extensions == 0
        && record.preregistration.extension_protocol.is_none()
        && record.extensions.is_empty())
    .then_some(
        "This run registered a zero extension policy and states no extension protocol, so its record cannot tell a run made before the extension protocol from one that bought no batch.",
    )
}
