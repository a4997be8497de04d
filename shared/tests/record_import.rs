//! Import of the anchor board's 33 fitness-report/1 records: everything the
//! board and the record page show survives, with specific figures asserted.

use crate::record_common;

use std::collections::BTreeMap;

use fitness_shared::record::import::{ImportSet, import_runs};
use fitness_shared::record::*;
use record_common::*;
use serde_json::Value;

const HF: &str = "huggingface-co-2026-08-20T17-23-48-886Z";

fn imported() -> (Value, ImportSet) {
    let runs = anchor_runs();
    let set = import_runs(&runs).expect("all 33 records import");
    (runs, set)
}

fn by_id<'a>(set: &'a ImportSet, id: &str) -> &'a RunRecord {
    set.records
        .iter()
        .find(|r| r.run.id == id)
        .unwrap_or_else(|| panic!("run {id} was not imported"))
}

#[test]
fn all_33_records_import_with_the_published_outcome_counts() {
    let (_, set) = imported();
    assert_eq!(set.records.len(), 33);
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &set.records {
        *counts.entry(r.outcome.code()).or_default() += 1;
    }
    let expected: BTreeMap<&str, usize> = [
        ("SCORED", 7),
        ("INSUFFICIENT_SURFACE", 12),
        ("DEGENERATE", 7),
        ("GATE_FAILED", 5),
        ("EXTEND_EXHAUSTED", 2),
    ]
    .into_iter()
    .collect();
    assert_eq!(counts, expected);
}

#[test]
fn refusals_have_no_score_key_and_every_record_reads_back() {
    let (_, set) = imported();
    for r in &set.records {
        let value = serde_json::to_value(r).unwrap();
        assert_eq!(
            value.get("score").is_some(),
            r.outcome == Outcome::Scored,
            "{}",
            r.run.id
        );
        let text = serde_json::to_string(&value).unwrap();
        let back = RunRecord::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", r.run.id));
        assert_eq!(&back, r);
    }
}

#[test]
fn huggingface_extension_ledger_and_first_try_interval() {
    let (_, set) = imported();
    let hf = by_id(&set, HF);
    assert_eq!(hf.outcome, Outcome::Scored);
    assert_eq!(
        (
            hf.preregistration.extension_size,
            hf.preregistration.max_extensions
        ),
        (6, 2)
    );
    let ledger: Vec<_> = hf
        .extensions
        .iter()
        .map(|b| {
            (
                b.index,
                b.tasks_added,
                b.trials_added,
                (b.pooled_before.k, b.pooled_before.n),
                (b.pooled_after.k, b.pooled_after.n),
                b.verdict_before,
                b.verdict_after,
            )
        })
        .collect();
    use VerdictOutcome::*;
    assert_eq!(
        ledger,
        vec![
            (1, 6, 6, (10, 12), (16, 18), Extend, Extend),
            (2, 6, 6, (16, 18), (22, 24), Extend, Pass),
        ]
    );
    assert_eq!(hf.extensions[1].seed, Some(2001));
    assert_eq!(hf.extensions[0].task_ids.len(), 6);

    let score = hf.score.as_ref().expect("scored");
    assert_eq!((score.first_try.k, score.first_try.n), (22, 24));
    assert_eq!(score.first_try.rate, 0.9166666666666666);
    assert_eq!(score.first_try.low, 0.741507847985494);
    assert_eq!(score.first_try.high, 0.9768416721570266);
    assert_eq!(score.runner_model, "claude-sonnet-5");
    assert_eq!(score.tasks.len(), 24);
    assert_eq!(score.tools.iter().map(|t| t.calls).sum::<u64>(), 36);

    let construct = hf.gates.record("construct").expect("construct gate");
    let v = construct.verdict.as_ref().expect("verdict");
    assert_eq!(
        (v.outcome, v.k, v.n, v.threshold, v.alpha),
        (Pass, 22, 24, 0.9, 0.05)
    );
    assert_eq!(v.p_value, 0.7075230420514657);
    match &construct.detail {
        GateDetail::Construct {
            published: Some(p),
            pooled,
            extensions_consumed,
            ..
        } => {
            assert_eq!(
                (p.outcome, p.raw_outcome, p.downgraded),
                (Extend, Pass, true)
            );
            assert_eq!(p.reason, "downgraded_underpowered");
            assert_eq!(*pooled, Some(Count { k: 22, n: 24 }));
            assert_eq!(*extensions_consumed, 2);
        }
        other => panic!("construct detail not typed: {other:?}"),
    }
    match &hf.cost {
        Cost::Total {
            usd,
            runner_usd,
            judge_usd,
        } => {
            assert!((usd - 4.049219).abs() < 1e-9, "{usd}");
            assert_eq!(*runner_usd, Some(2.599758));
            assert_eq!(*judge_usd, Some(1.449461));
        }
        other => panic!("huggingface cost should be a measured total: {other:?}"),
    }
    assert_eq!(
        hf.run.attempt,
        Some(Attempt {
            index: 3,
            of: 3,
            others: vec![
                "huggingface-co-2026-08-19T21-24-27-061Z".into(),
                "huggingface-co-2026-08-19T22-14-12-890Z".into()
            ],
        })
    );
    assert_eq!(hf.suite.candidates, Some(24));
    assert_eq!(hf.suite.trimmed_surplus, Some(11));
    assert_eq!(
        hf.suite.rejected_by_rule,
        vec![RuleRejection {
            rule: "check-too-permissive".into(),
            count: 1,
            example: None,
        }]
    );
}

#[test]
fn every_gate_record_keeps_its_numbers_and_reason() {
    let (runs, set) = imported();
    let mut gates = 0;
    for (src, r) in runs.as_array().unwrap().iter().zip(&set.records) {
        assert_eq!(src["run"]["id"], r.run.id.as_str());
        assert_eq!(src["outcome"], r.outcome.code());
        assert_eq!(
            src["gates"]["refusedAt"].as_str(),
            r.gates.refused_at.as_deref()
        );
        let order: Vec<&str> = src["gates"]["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(order, r.gates.order);
        let records = src["gates"]["records"].as_array().unwrap();
        assert_eq!(records.len(), r.gates.records.len());
        for (g, ours) in records.iter().zip(&r.gates.records) {
            gates += 1;
            assert_eq!(g["gate"], ours.id.as_str());
            assert_eq!(g["ok"], ours.ok);
            assert_eq!(g["reason"], ours.reason.as_str());
            assert_eq!(g["costTier"], serde_json::to_value(ours.cost_tier).unwrap());
            assert_eq!(ours.source_detail.as_ref(), Some(&g["detail"]));
            match (g.get("verdict"), &ours.verdict) {
                (None, None) => {}
                (Some(v), Some(o)) => {
                    assert_eq!(v["outcome"], serde_json::to_value(o.outcome).unwrap());
                    assert_eq!(v["k"], o.k);
                    assert_eq!(v["n"], o.n);
                    assert_eq!(v["threshold"].as_f64(), Some(o.threshold));
                    assert_eq!(v["alpha"].as_f64(), Some(o.alpha));
                    assert_eq!(v["pValue"].as_f64(), Some(o.p_value));
                }
                (a, b) => panic!("{} {}: verdict {a:?} vs {b:?}", r.run.id, ours.id),
            }
            // Every gate the anchor uses has a typed detail.
            assert_ne!(
                ours.detail,
                GateDetail::Unrecognised,
                "{} {}",
                r.run.id,
                ours.id
            );
        }
    }
    assert_eq!(gates, 203);
}

#[test]
fn the_failed_construct_gate_reads_as_published() {
    let (_, set) = imported();
    let r = by_id(
        &set,
        "knowledge-mcp-global-api-aws-2026-08-20T16-45-18-024Z",
    );
    assert_eq!(r.outcome, Outcome::GateFailed);
    assert_eq!(r.gates.refused_at.as_deref(), Some("construct"));
    let g = r.gates.record("construct").unwrap();
    assert_eq!(g.reason, "below_min_rate");
    let v = g.verdict.as_ref().unwrap();
    assert_eq!((v.outcome, v.k, v.n), (VerdictOutcome::Fail, 0, 12));
    assert_eq!(v.p_value, 9.999999999999967e-13);
    let nulls = r.gates.record("null_baseline").unwrap();
    assert_eq!(nulls.reason, "degenerate_no_signal");
    match &nulls.detail {
        GateDetail::NullBaseline {
            rates, decision, ..
        } => {
            assert_eq!(rates.len(), 3);
            assert!(decision.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn probes_keep_pass_fail_and_unknown_apart() {
    let (runs, set) = imported();
    let (mut pass, mut fail, mut unknown) = (0, 0, 0);
    for (src, r) in runs.as_array().unwrap().iter().zip(&set.records) {
        assert_eq!(
            src["probes"]["specCurrency"].as_str(),
            r.probes.spec_currency.as_deref()
        );
        for (f, p) in src["probes"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .zip(&r.probes.findings)
        {
            assert_eq!(f["id"], p.id.as_str());
            assert_eq!(f["detail"], p.detail.as_str());
            assert_eq!(p.observed.as_ref(), f.get("evidence"));
            match (&f["pass"], &p.status) {
                (Value::Bool(true), ProbeStatus::Pass) => pass += 1,
                (Value::Bool(false), ProbeStatus::Fail) => fail += 1,
                (Value::Null, ProbeStatus::Unknown { reason }) => {
                    assert!(!reason.is_empty());
                    unknown += 1
                }
                (a, b) => panic!("{}: probe {} {a} became {b:?}", r.run.id, p.id),
            }
        }
    }
    assert_eq!((pass, fail, unknown), (93, 21, 84));
}

#[test]
fn cost_is_total_only_when_nothing_known_is_missing() {
    let (_, set) = imported();
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &set.records {
        let kind = match &r.cost {
            Cost::Total { .. } => "total",
            Cost::Floor { reasons, .. } => {
                assert!(!reasons.is_empty());
                "floor"
            }
            Cost::None { .. } => "none",
        };
        *kinds.entry(kind).or_default() += 1;
    }
    assert_eq!(
        kinds,
        [("floor", 19), ("none", 7), ("total", 7)]
            .into_iter()
            .collect()
    );
    // An older run: tape cost measured, judge spend not recorded -> a floor.
    let old = by_id(&set, "mcp-svelte-dev-2026-08-19T21-27-42-001Z");
    match &old.cost {
        Cost::Floor {
            usd,
            runner_usd,
            judge_usd,
            reasons,
        } => {
            assert_eq!(*usd, 1.057048);
            assert_eq!(*runner_usd, Some(1.057048));
            assert_eq!(*judge_usd, None);
            assert!(
                reasons[0].contains("judge spend is not recorded"),
                "{reasons:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    // No tape cost and no judge usage: no figure, and the record says why.
    let none = by_id(&set, "mcp-vercel-com-2026-08-19T22-12-36-293Z");
    assert!(matches!(&none.cost, Cost::None { why } if !why.is_empty()));
}

#[test]
fn generator_runner_trace_links_stats_and_credentials_survive() {
    let (runs, set) = imported();
    let mut not_recorded = 0;
    for (src, r) in runs.as_array().unwrap().iter().zip(&set.records) {
        assert_eq!(
            src["run"]["generatorVersion"].as_str(),
            r.run.generator.as_deref()
        );
        if r.run.generator.is_none() {
            not_recorded += 1;
            assert_eq!(r.run.generator_label(), "generator not recorded");
        }
        assert_eq!(src["run"]["runnerModel"], r.run.runner_model.as_str());
        assert_eq!(src["run"]["judgeModel"], r.run.judge_model.as_str());
        assert_eq!(src["run"]["suiteHash"], r.run.suite_hash.as_str());
        assert_eq!(src["run"]["startedAt"], r.run.started_at.as_str());
        assert_eq!(r.server.credential_context, CredentialContext::Anonymous);
        assert_eq!(
            src["server"]["url"],
            serde_json::to_value(&r.server.target).unwrap()["url"]
        );
        let links = r.trace_links.as_ref().expect("trace links");
        assert_eq!(src["traceLinks"]["mcp"].as_str(), links.mcp.as_deref());
        assert_eq!(src["traceLinks"]["agent"].as_str(), links.agent.as_deref());
        assert_eq!(
            src["traceLinks"]["viewer"].as_str(),
            links.viewer.as_deref()
        );
        assert_eq!(Some(&src["trace_stats"]), r.trace_stats.as_ref());
        assert_eq!(r.imported.as_ref().unwrap().from_schema, "fitness-report/1");
    }
    assert_eq!(not_recorded, 16);
}

#[test]
fn notes_split_into_standing_and_own_without_dropping_any() {
    let (runs, set) = imported();
    assert_eq!(set.standing_notes.len(), 2);
    for (src, r) in runs.as_array().unwrap().iter().zip(&set.records) {
        let methods: Vec<&str> = src["methods"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let standing = r
            .notes
            .standing
            .as_ref()
            .expect("every anchor generator has >1 run");
        let set_notes = &set.standing_notes[&standing.set_id];
        assert_eq!(set_notes.generator, r.run.generator_label());
        assert_eq!(
            standing.count as usize + r.notes.own.len(),
            methods.len(),
            "{}",
            r.run.id
        );
        for note in &methods {
            assert!(
                r.notes.own.iter().any(|n| n == note) || set_notes.notes.iter().any(|n| n == note),
                "{}: note dropped: {note}",
                r.run.id
            );
        }
        let score_notes: Vec<&str> = src
            .get("scoreNotes")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
            .unwrap_or_default();
        assert_eq!(score_notes, r.notes.score);
    }
    let hf = by_id(&set, HF);
    assert_eq!(hf.notes.standing.as_ref().unwrap().count, 8);
    assert_eq!(hf.notes.own.len(), 15);
}

#[test]
fn old_generator_rows_state_the_ledger_limitation() {
    let (_, set) = imported();
    for r in &set.records {
        assert_eq!(
            r.suite.limitation.is_some(),
            r.run.generator.is_none(),
            "{}",
            r.run.id
        );
    }
}

#[test]
fn non_v1_input_is_refused_with_its_position() {
    let err = import_runs(&serde_json::json!([{"schema": "fitness-report/9"}])).unwrap_err();
    assert!(err.to_string().contains("record 0"), "{err}");
    assert!(import_runs(&serde_json::json!(42)).is_err());
    let mut runs = anchor_runs();
    runs[3]["outcome"] = "MAYBE".into();
    let err = import_runs(&runs).unwrap_err();
    assert!(err.to_string().contains("unknown outcome"), "{err}");
    let mut runs = anchor_runs();
    runs[0]["score"] = serde_json::json!({"runnerModel": "x", "firstTrySuccess": {"rate": 1, "low": 1, "high": 1, "k": 1, "n": 1}, "eventualSuccess": {"rate": 1, "low": 1, "high": 1, "k": 1, "n": 1}});
    let err = import_runs(&runs).unwrap_err();
    assert!(
        err.to_string().contains("score"),
        "a refusal with a score must not import: {err}"
    );
}
