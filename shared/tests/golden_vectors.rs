//! Every vector in the reference implementation's `golden.json` (135 of
//! them), by id. Where this product deliberately differs, the test names the
//! vector and asserts our documented value instead:
//!
//! * Wilson uses the exact z (1.959963984540054), not 1.96;
//! * a published PASS gates the extension protocol (downgraded PASS extends);
//! * the null baseline decides early, against every possible agent rate;
//! * trimmed surplus counts as admitted (no golden vector: see `gates.rs`);
//! * inputs the reference throws on are unrepresentable in our types or
//!   return NaN / `None` / `Err`.
//!
//! `every_vector_is_accounted_for` fails if a vector is added that no test
//! here claims.

use crate::common;

use std::collections::BTreeSet;

use common::{assert_close_dp, assert_rel, f, golden, i, reference, u};
use fitness_shared::gates::{
    AgentSignal, BatchCounts, DecidedAgainst, ExtensionDecision, ExtensionReason, GateError,
    GateOutcome, NullArm, NullOutcome, NullReason, PreRegistration, PublishedReason,
    achieved_power, default_detectable, null_baseline, plan, plan_within, published_verdict,
    resolve_extensions, verdict,
};
use fitness_shared::record::Outcome as RunOutcome;
use fitness_shared::stats::{
    binom_cdf, normal_quantile, percentile_nearest_rank, separate, tie_rate, wilson,
};
use serde_json::Value;

fn vectors(function: &str) -> Vec<Value> {
    golden()["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|v| v["fn"] == function)
        .cloned()
        .collect()
}

fn by_id(id: &str) -> Value {
    golden()["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["id"] == id)
        .unwrap_or_else(|| panic!("no golden vector {id}"))
        .clone()
}

fn outcome(name: &str) -> GateOutcome {
    match name {
        "PASS" => GateOutcome::Pass,
        "FAIL" => GateOutcome::Fail,
        "EXTEND" => GateOutcome::Extend,
        other => panic!("unknown outcome {other}"),
    }
}

/// Vectors for code this crate does not own, with the reason.
const OUT_OF_SCOPE: &[(&str, &str)] = &[
    (
        "orderings",
        "task-order permutations belong to the recorder's suite module",
    ),
    (
        "extensionSeed",
        "batch seed derivation belongs to the recorder's suite module",
    ),
    (
        "EXTENSION_POLICY",
        "default policy values and CLI flag rejection belong to the recorder",
    ),
    (
        "mean",
        "no mean is published; no function here computes one",
    ),
    (
        "comb",
        "internal to binom_pmf; the same four values are unit tests of choose_exact",
    ),
];

/// Ids claimed by the tests below (the rest are claimed by function name).
const CLAIMED_IDS: &[&str] = &[
    "plan-selfconsistent",
    "e2e-extend-pass",
    "e2e-short-batch",
    "e2e-resolve-to-fail",
    "e2e-duplicate-drop",
    "e2e-batch-structural-refusal",
    "e2e-judge-usage",
    "e2e-judge-usage-extended",
];

const CLAIMED_FNS: &[&str] = &[
    "binomCdf",
    "verdict",
    "plan",
    "publishedVerdict",
    "achievedPower",
    "defaultDetectable",
    "wilson",
    "normalQuantile",
    "separate",
    "tieRate",
    "percentile",
    "nullVerdict",
    "nullBaselineGate",
    "poolConstruct",
    "resolveConstruct",
];

#[test]
fn every_vector_is_accounted_for() {
    let g = golden();
    let all = g["vectors"].as_array().unwrap();
    assert_eq!(all.len(), 135);
    assert_eq!(u(&g["count"]), 135);
    let out: BTreeSet<&str> = OUT_OF_SCOPE.iter().map(|(f, _)| *f).collect();
    for v in all {
        let id = v["id"].as_str().unwrap();
        let func = v["fn"].as_str().unwrap();
        assert!(
            CLAIMED_IDS.contains(&id) || CLAIMED_FNS.contains(&func) || out.contains(func),
            "golden vector {id} ({func}) is not covered by any test"
        );
    }
}

#[test]
fn binom_cdf_vectors() {
    let vs = vectors("binomCdf");
    assert_eq!(vs.len(), 13);
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        let args = &v["args"];
        match id {
            "binomCdf-golden" => {
                assert_eq!(binom_cdf(4, 10, 0.5).to_bits(), 0.376953125f64.to_bits())
            }
            "binomCdf-monotone" => {
                let computed = v["computed"].as_array().unwrap();
                let mut last = 0.0;
                for (k, want) in computed.iter().enumerate() {
                    let got = binom_cdf(k as i64, 20, 0.7);
                    assert!(got >= last, "{id}: not monotone at k={k}");
                    assert_rel(got, f(want), 1e-12, &format!("{id} k={k}"));
                    last = got;
                }
            }
            // n = -1 and k = 1.5 cannot be written: n is u64 and k is i64.
            "binomCdf-throws-1_-1_0.5" | "binomCdf-throws-1.5_10_0.5" => {}
            "binomCdf-throws-1_10_1.5" => assert!(binom_cdf(1, 10, 1.5).is_nan(), "{id}"),
            _ => {
                let got = binom_cdf(i(&args[0]), u(&args[1]), f(&args[2]));
                let expect = &v["expect"];
                if expect.is_object() {
                    assert!(
                        got > f(&expect["gt"]) && got < f(&expect["lt"]) && got.is_finite(),
                        "{id}: {got}"
                    );
                    // The reference's value agrees with ours (and scipy) to 1e-12.
                    assert_rel(got, f(&v["computed"]), 1e-12, id);
                } else {
                    assert_eq!(got, f(expect), "{id}");
                }
            }
        }
    }
}

#[test]
fn verdict_vectors() {
    let vs = vectors("verdict");
    assert_eq!(vs.len(), 16);
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        let args = &v["args"];
        match id {
            "verdict-no-near-miss-band" => {
                for row in v["computed"].as_array().unwrap() {
                    let k = u(&row["k"]);
                    let got = verdict(k, 36, 0.9, 0.05).unwrap();
                    assert_eq!(
                        got.outcome,
                        outcome(row["outcome"].as_str().unwrap()),
                        "{id} k={k}"
                    );
                    let want = f(&row["p"]);
                    // Dyadic-free p-values agree to 1e-10 relative with the reference
                    // (its notes say the last ~3 digits differ); ours match scipy to 1e-12.
                    assert_rel(got.p_value, want, 1e-10, &format!("{id} k={k}"));
                    if got.k as f64 / 36.0 < 0.9 && got.p_value >= 0.05 {
                        assert_eq!(got.outcome, GateOutcome::Extend);
                    }
                }
            }
            "plan-selfconsistent" => {
                assert_eq!(
                    verdict(65, 78, 0.9, 0.05).unwrap().outcome,
                    GateOutcome::Fail
                );
                assert_ne!(
                    verdict(66, 78, 0.9, 0.05).unwrap().outcome,
                    GateOutcome::Fail
                );
            }
            "verdict-throws-0_0_0.9" => {
                assert_eq!(verdict(0, 0, 0.9, 0.05), Err(GateError::EmptySample))
            }
            "verdict-throws-5_4_0.9" => {
                assert_eq!(
                    verdict(5, 4, 0.9, 0.05),
                    Err(GateError::CountsExceedTrials { k: 5, n: 4 })
                )
            }
            // k = -1 cannot be written: k is u64.
            "verdict-throws--1_4_0.9" => {}
            _ => {
                let (k, n, t) = (u(&args[0]), u(&args[1]), f(&args[2]));
                let got = verdict(k, n, t, 0.05).unwrap();
                let computed = &v["computed"];
                assert_eq!(
                    got.outcome,
                    outcome(computed["outcome"].as_str().unwrap()),
                    "{id}"
                );
                assert_rel(got.p_value, f(&computed["pValue"]), 1e-10, id);
                let expect = &v["expect"];
                if let Some(o) = expect.get("outcome") {
                    assert_eq!(got.outcome, outcome(o.as_str().unwrap()), "{id}");
                }
                if let Some(p) = expect.get("pValue") {
                    assert_close_dp(got.p_value, f(p), 10, id);
                }
                if let Some(p) = expect.get("pValueLt") {
                    assert!(got.p_value < f(p), "{id}");
                }
                if let Some(p) = expect.get("pValueGt") {
                    assert!(got.p_value > f(p), "{id}");
                }
                if let Some(r) = expect.get("rate") {
                    assert_close_dp(k as f64 / n as f64, f(r), 6, id);
                }
            }
        }
    }
}

#[test]
fn plan_vectors() {
    let vs = vectors("plan");
    assert_eq!(vs.len(), 6);
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        let args = v["args"].as_array().unwrap();
        let (t, d) = (f(&args[0]), f(&args[1]));
        match id {
            "plan-0.9-0.8" => {
                let p = plan(t, d, 0.05, 0.8).unwrap();
                assert_eq!((p.n, p.critical_k), (78, 65));
                assert!(p.power >= 0.8);
                assert_close_dp(p.power, 0.81, 2, id);
                assert_rel(p.power, f(&v["computed"]["power"]), 1e-12, id);
            }
            "plan-0.9-0.85" | "plan-0.9-0.75" => {
                assert_eq!(
                    plan(t, d, 0.05, 0.8).unwrap().n,
                    u(&v["expect"]["n"]),
                    "{id}"
                )
            }
            "plan-throws-0.8-0.9" | "plan-throws-0.9-0.9" => {
                assert!(
                    matches!(
                        plan(t, d, 0.05, 0.8),
                        Err(GateError::OutOfDomain {
                            name: "detectable",
                            ..
                        })
                    ),
                    "{id}"
                )
            }
            "plan-throws-maxN" => assert_eq!(
                plan_within(t, d, f(&args[2]), f(&args[3]), u(&args[4])),
                Err(GateError::PlanUnreachable {
                    max_n: 200,
                    power: 0.8
                })
            ),
            other => panic!("unexpected plan vector {other}"),
        }
    }
}

#[test]
fn achieved_power_vectors_show_the_sawtooth() {
    let vs = vectors("achievedPower");
    assert_eq!(vs.len(), 10);
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        let args = v["args"].as_array().unwrap();
        let got = achieved_power(u(&args[0]), f(&args[1]), f(&args[2]), 0.05);
        if v["tolerance"] == "exact" {
            assert_eq!(got, f(&v["expect"]), "{id}");
        } else {
            assert_close_dp(got, f(&v["expect"]), 4, id);
            assert_rel(got, f(&v["computed"]), 1e-12, id);
        }
    }
}

#[test]
fn default_detectable_vectors() {
    for v in &vectors("defaultDetectable") {
        let got = default_detectable(f(&v["args"][0]));
        assert_close_dp(got, f(&v["expect"]), 12, v["id"].as_str().unwrap());
    }
}

#[test]
fn published_verdict_vectors_with_the_exact_z() {
    let vs = vectors("publishedVerdict");
    assert_eq!(vs.len(), 11);
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        let args = v["args"].as_array().unwrap();
        let (k, n, t) = (u(&args[0]), u(&args[1]), f(&args[2]));
        let got = published_verdict(k, n, t, 0.05, 0.8, 0.8).unwrap();
        let c = &v["computed"];
        // Outcome, raw outcome, reason, power and required n are identical.
        assert_eq!(got.outcome, outcome(c["outcome"].as_str().unwrap()), "{id}");
        assert_eq!(
            got.raw_outcome,
            outcome(c["rawOutcome"].as_str().unwrap()),
            "{id}"
        );
        assert_eq!(got.downgraded, c["downgraded"].as_bool().unwrap(), "{id}");
        let reason = serde_json::to_value(got.reason).unwrap();
        assert_eq!(reason, c["reason"], "{id}");
        assert_eq!(got.required_n, Some(u(&c["requiredN"])), "{id}");
        assert_rel(got.achieved_power, f(&c["achievedPower"]), 1e-12, id);
        // Divergence: the Wilson bounds use z = 1.959963984540054, not 1.96.
        // They move by < 1e-4 and never across a threshold in these vectors;
        // the exact values are the statsmodels ones in reference/values.json.
        let ref_low = f(&c["wilsonLow"]);
        assert!(
            (got.wilson_low - ref_low).abs() < 1e-4,
            "{id}: {} vs {ref_low}",
            got.wilson_low
        );
        if k < n {
            assert_ne!(
                got.wilson_low, ref_low,
                "{id}: exact z must differ from 1.96"
            );
        }
        let e = &v["expect"];
        if let Some(x) = e.get("wilsonLow") {
            assert_close_dp(got.wilson_low, f(x), 3, id);
        }
        if let Some(x) = e.get("wilsonLowLt") {
            assert!(got.wilson_low < f(x), "{id}");
        }
        if let Some(x) = e.get("wilsonLowGte") {
            assert!(got.wilson_low >= f(x), "{id}");
        }
        if let Some(x) = e.get("achievedPowerLt") {
            assert!(got.achieved_power < f(x), "{id}");
        }
        if let Some(x) = e.get("achievedPowerGte") {
            assert!(got.achieved_power >= f(x), "{id}");
        }
    }
    // The vector that names the rule: 33/36 is not publishable.
    let v = published_verdict(33, 36, 0.9, 0.05, 0.8, 0.8).unwrap();
    assert_eq!(v.reason, PublishedReason::DowngradedUnderpowered);
}

#[test]
fn wilson_vectors_with_the_exact_z() {
    let vs = vectors("wilson");
    assert_eq!(vs.len(), 5);
    let statsmodels_32_36 = reference()["wilson"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["k"] == 32 && r["n"] == 36 && r["confidence"] == 0.95)
        .cloned()
        .unwrap();
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        let args = v["args"].as_array().unwrap();
        let (k, n) = (u(&args[0]), u(&args[1]));
        let w = wilson(k, n, 0.95);
        match id {
            "wilson-32-36" => {
                // Divergence (exact z): the reference's 1.96 gives low
                // 0.7468487098496367; ours is statsmodels' value.
                assert_close_dp(w.low, 0.747, 3, id);
                assert_close_dp(w.high, 0.956, 3, id);
                assert_close_dp(w.rate, 0.888889, 6, id);
                assert_rel(w.low, f(&statsmodels_32_36["low"]), 1e-12, id);
                assert_rel(w.high, f(&statsmodels_32_36["high"]), 1e-12, id);
                assert_ne!(w.low, f(&v["computed"]["low"]));
            }
            "wilson-0-0" => assert_eq!((w.rate, w.low, w.high), (0.0, 0.0, 1.0)),
            "wilson-0-10" => assert_eq!(w.low, 0.0),
            "wilson-10-10" => assert_eq!(w.high, 1.0),
            "wilson-throws-11-10" => assert!(w.low.is_nan() && w.high.is_nan(), "{id}"),
            other => panic!("unexpected wilson vector {other}"),
        }
    }
}

#[test]
fn normal_quantile_vectors() {
    for v in &vectors("normalQuantile") {
        let id = v["id"].as_str().unwrap();
        let p = f(&v["args"][0]);
        let got = normal_quantile(p);
        if v["expect"] == "throws" {
            assert!(got.is_nan(), "{id}");
            continue;
        }
        let digits = match v["tolerance"].as_str().unwrap() {
            "6dp" => 6,
            "9dp" => 9,
            "5dp" => 5,
            other => panic!("{other}"),
        };
        assert_close_dp(got, f(&v["expect"]), digits, id);
        // Acklam's approximation (the reference) is good to ~1e-9; AS 241 to ~1e-16.
        assert!((got - f(&v["computed"])).abs() < 1e-8, "{id}");
    }
}

#[test]
fn separate_tie_rate_and_percentile_vectors() {
    for v in &vectors("separate") {
        let id = v["id"].as_str().unwrap();
        let args = v["args"].as_array().unwrap();
        match id {
            "separate-symmetric" => {
                assert_eq!(separate(0.3, 0.6), separate(0.6, 0.3));
                assert_eq!(separate(0.3, 0.6), Some(42));
            }
            _ if v["expect"] == "throws" => {
                assert_eq!(separate(f(&args[0]), f(&args[1])), None, "{id}")
            }
            _ => assert_eq!(
                separate(f(&args[0]), f(&args[1])),
                Some(u(&v["expect"])),
                "{id}"
            ),
        }
    }
    let tie = by_id("tieRate-0.854-3");
    let got = tie_rate(0.854, 3);
    assert_close_dp(got, f(&tie["expect"]), 12, "tieRate-0.854-3");
    assert!((got - 0.493).abs() < 1e-3);

    for v in &vectors("percentile") {
        let id = v["id"].as_str().unwrap();
        let values: Vec<f64> = v["args"][0]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| if x == "NaN" { f64::NAN } else { f(x) })
            .collect();
        let got = percentile_nearest_rank(&values, f(&v["args"][1]));
        assert_eq!(got, v["expect"].as_f64(), "{id}");
    }
}

/// A rate as counts that reproduce it exactly.
fn arm_for(rate: &Value) -> NullArm {
    let (k, n) = match rate.as_f64() {
        None => (0, 0), // null or "NaN": not measured
        Some(r) => ((r * 100.0).round() as u64, 100),
    };
    NullArm {
        label: "null".to_owned(),
        k,
        n,
    }
}

fn agent_for(rate: &Value) -> AgentSignal {
    match rate.as_f64() {
        None => AgentSignal::Measured { k: 0, n: 0 },
        Some(r) => AgentSignal::Measured {
            k: (r * 100.0).round() as u64,
            n: 100,
        },
    }
}

#[test]
fn null_verdict_vectors() {
    let vs = vectors("nullVerdict");
    assert_eq!(vs.len(), 10);
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        let args = v["args"].as_array().unwrap();
        let got = null_baseline(&[arm_for(&args[0])], agent_for(&args[1])).unwrap();
        let want = match v["expect"].as_str().unwrap() {
            "PROCEED" => NullOutcome::Proceed,
            "KILL" => NullOutcome::Kill,
            "INDETERMINATE" => NullOutcome::Indeterminate,
            other => panic!("{other}"),
        };
        assert_eq!(got.outcome, want, "{id}");
        assert_eq!(got.halts, want != NullOutcome::Proceed, "{id}");
    }
}

#[test]
fn null_baseline_gate_vectors_with_the_early_kill() {
    let vs = vectors("nullBaselineGate");
    assert_eq!(vs.len(), 6);
    for v in &vs {
        let id = v["id"].as_str().unwrap();
        if id == "nullGate-throws" {
            // 21/20 agent counts are rejected; -1/5 cannot be written (u64).
            let bad = null_baseline(&[], AgentSignal::Measured { k: 21, n: 20 });
            assert_eq!(bad, Err(GateError::CountsExceedTrials { k: 21, n: 20 }));
            continue;
        }
        let args = &v["args"];
        let arms: Vec<NullArm> = args["nulls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| NullArm {
                label: a[0].as_str().unwrap().to_owned(),
                k: u(&a[1]),
                n: u(&a[2]),
            })
            .collect();
        let agent = AgentSignal::Measured {
            k: u(&args["signal"][0]),
            n: u(&args["signal"][1]),
        };
        let got = null_baseline(&arms, agent).unwrap();
        let c = &v["computed"];
        assert_eq!(
            serde_json::to_value(got.outcome).unwrap(),
            c["outcome"],
            "{id}"
        );
        assert_eq!(
            serde_json::to_value(got.reason).unwrap(),
            c["reason"],
            "{id}"
        );
        assert_eq!(got.t_null, c["tNull"].as_f64(), "{id}");
        assert_eq!(got.halts, c["halts"].as_bool().unwrap(), "{id}");
        assert_eq!(got.refusal.is_some(), got.halts, "{id}");
        match id {
            // Divergence (early kill): t_null >= 0.5 kills whatever the agent
            // reached, so the decision is against every possible agent rate and
            // the line printed is 0.5 (the line for an agent at 1.0).
            "nullGate-kill" | "nullGate-percentile" => {
                assert_eq!(
                    got.decided_against,
                    DecidedAgainst::EveryPossibleAgentRate,
                    "{id}"
                );
                assert_eq!(got.kill_threshold, Some(0.5), "{id}");
                assert_eq!(got.refusal, Some(RunOutcome::Degenerate));
            }
            "nullGate-proceed" => {
                assert_eq!(got.decided_against, DecidedAgainst::AgentRate);
                assert_eq!(got.kill_threshold, c["killThreshold"].as_f64());
                assert_eq!(got.t_agent, c["tAblate"].as_f64());
            }
            _ => assert_eq!(got.decided_against, DecidedAgainst::Undecided, "{id}"),
        }
    }
    // The early decision needs no agent at all: nullGate-kill's arms, before any paid call.
    let early = null_baseline(
        &[NullArm {
            label: "no-tools".into(),
            k: 17,
            n: 20,
        }],
        AgentSignal::NotYetMeasured,
    )
    .unwrap();
    assert_eq!(
        (early.outcome, early.reason),
        (NullOutcome::Kill, NullReason::NoiseExceedsSignal)
    );
}

/// The construct design the reference's extension tests use: 12 tasks at
/// 1 rep, batches of 6 tasks, 2 batches, threshold 0.90 / detectable 0.80.
fn reference_prereg(extension_size: u64, max_extensions: u64) -> PreRegistration {
    PreRegistration {
        n_tasks: 12,
        reps: 1,
        alpha: 0.05,
        threshold: 0.9,
        detectable: 0.8,
        planned_power: 0.8,
        extension_size,
        max_extensions,
    }
}

fn batch(tasks: u64, successes: u64, errors: u64) -> BatchCounts {
    BatchCounts {
        tasks,
        trials: tasks - errors,
        successes,
        errors,
    }
}

fn refused(outcome: RunOutcome, reason: ExtensionReason) -> ExtensionDecision {
    ExtensionDecision::Refused { outcome, reason }
}

#[test]
fn pool_construct_vectors() {
    let vs = vectors("poolConstruct");
    assert_eq!(vs.len(), 5);
    let pre = reference_prereg(6, 2);
    // pool-12-10+6-6: 16/18 is EXTEND; the protocol asks for batch 2.
    let r = resolve_extensions(&pre, &[batch(12, 10, 0), batch(6, 6, 0)]).unwrap();
    assert_eq!(
        (r.pooled.successes, r.pooled.trials, r.pooled.errors),
        (16, 18, 0)
    );
    assert_eq!(r.verdict.unwrap().raw_outcome, GateOutcome::Extend);
    assert_rel(
        r.verdict.unwrap().p_value,
        0.5497160941090016,
        1e-10,
        "pool-12-10+6-6",
    );
    assert_eq!(r.decision, ExtensionDecision::ConsumeBatch { index: 2 });
    // pool-18-16-reason: under_resolved.
    let r = resolve_extensions(
        &reference_prereg(0, 0),
        &[BatchCounts {
            tasks: 12,
            trials: 18,
            successes: 16,
            errors: 0,
        }],
    );
    assert!(
        r.is_err(),
        "18 trials from 12 tasks at 1 rep contradict the registration"
    );
    let pre18 = PreRegistration {
        n_tasks: 18,
        ..reference_prereg(6, 2)
    };
    let r = resolve_extensions(&pre18, &[batch(18, 16, 0)]).unwrap();
    assert_eq!(r.verdict.unwrap().reason, PublishedReason::UnderResolved);
    // pool-two-extensions: 22/24 is a raw PASS the reference accepts (ok: true).
    // Divergence: the published verdict gates the protocol, 22/24 is
    // downgraded_underpowered, and with both batches spent it resolves to FAIL.
    let r = resolve_extensions(&pre, &[batch(12, 10, 0), batch(6, 6, 0), batch(6, 6, 0)]).unwrap();
    let v = r.verdict.unwrap();
    assert_eq!(
        (v.raw_outcome, v.outcome, v.downgraded),
        (GateOutcome::Pass, GateOutcome::Extend, true)
    );
    assert_eq!(
        r.decision,
        refused(
            RunOutcome::GateFailed,
            ExtensionReason::UnresolvedAfterMaxExtensions
        )
    );
    // pool-compromised: 3 errors in 19 attempts (0.158 > 0.05). The batch of
    // 7 is the registered size here (the reference registered 8 and pooled
    // a batch of 7; a short batch voids a run of ours before its errors are
    // read).
    let big = reference_prereg(7, 2);
    let r = resolve_extensions(&big, &[batch(12, 12, 0), batch(7, 4, 3)]).unwrap();
    assert_rel(
        r.errors.error_rate,
        0.15789473684210525,
        1e-15,
        "pool-compromised",
    );
    assert_eq!(
        r.decision,
        refused(RunOutcome::Compromised, ExtensionReason::Compromised)
    );
    // pool-no-cases: an empty registered batch contradicts any valid registration.
    assert!(resolve_extensions(&pre, &[batch(0, 0, 0)]).is_err());
}

#[test]
fn resolve_construct_vectors() {
    let vs = vectors("resolveConstruct");
    assert_eq!(vs.len(), 9);
    let unresolved = batch(12, 10, 0); // 10/12: EXTEND, p = 0.341
    // resolve-extend: under_resolved, policy [6, 2], none consumed -> extend.
    let r = resolve_extensions(&reference_prereg(6, 2), &[unresolved]).unwrap();
    assert_eq!(r.decision, ExtensionDecision::ConsumeBatch { index: 1 });
    // resolve-exhausted-to-fail: two consumed, still unresolved -> GATE_FAILED.
    let r = resolve_extensions(
        &reference_prereg(6, 2),
        &[unresolved, batch(6, 5, 0), batch(6, 5, 0)],
    )
    .unwrap();
    assert_eq!(r.verdict.unwrap().outcome, GateOutcome::Extend);
    assert_eq!(
        r.decision,
        refused(
            RunOutcome::GateFailed,
            ExtensionReason::UnresolvedAfterMaxExtensions
        )
    );
    // resolve-zero-policy-{0_0,6_0,0_2} -> EXTEND_EXHAUSTED.
    for (size, max) in [(0, 0), (6, 0), (0, 2)] {
        let pre = reference_prereg(size, max);
        let r = resolve_extensions(&pre, &[unresolved]).unwrap();
        assert_eq!(
            r.decision,
            refused(
                RunOutcome::ExtendExhausted,
                ExtensionReason::UnresolvedNoBatchesRegistered
            ),
            "policy [{size}, {max}]"
        );
    }
    // resolve-blocked: our protocol has no "blocked" state. An unresolved
    // gate always consumes the next registered batch or is refused; a ledger
    // that stops early is asked for the batch (ConsumeBatch), never passed.
    // resolve-ok: a published PASS (36/36: Wilson low 0.9036 >= 0.90).
    let pre36 = PreRegistration {
        n_tasks: 36,
        ..reference_prereg(6, 2)
    };
    let r = resolve_extensions(&pre36, &[batch(36, 36, 0)]).unwrap();
    assert_eq!(r.decision, ExtensionDecision::Passed);
    // resolve-fail: below_min_rate -> GATE_FAILED.
    let r = resolve_extensions(&reference_prereg(6, 2), &[batch(12, 0, 0)]).unwrap();
    assert_eq!(
        r.decision,
        refused(RunOutcome::GateFailed, ExtensionReason::BelowThreshold)
    );
    // resolve-compromised -> COMPROMISED.
    let r = resolve_extensions(&reference_prereg(6, 2), &[batch(12, 10, 2)]).unwrap();
    assert_eq!(
        r.decision,
        refused(RunOutcome::Compromised, ExtensionReason::Compromised)
    );
}

#[test]
fn pipeline_vectors_replayed_through_the_ledger() {
    let pre = reference_prereg(6, 2);
    // e2e-extend-pass: [10,12] -> [16,18] -> [22,24]. The reference scores it;
    // ours (divergence: published PASS) refuses GATE_FAILED after both batches.
    let r = resolve_extensions(&pre, &[batch(12, 10, 0), batch(6, 6, 0), batch(6, 6, 0)]).unwrap();
    let path: Vec<_> = r
        .steps
        .iter()
        .map(|s| {
            (
                s.pooled_before,
                s.pooled_after,
                s.tasks_added,
                s.trials_added,
            )
        })
        .collect();
    assert_eq!(path.len(), 2);
    assert_eq!(
        (path[0].0.k, path[0].0.n, path[0].1.k, path[0].1.n),
        (10, 12, 16, 18)
    );
    assert_eq!(
        (path[1].0.k, path[1].0.n, path[1].1.k, path[1].1.n),
        (16, 18, 22, 24)
    );
    assert_eq!(
        (r.steps[0].verdict_before, r.steps[0].verdict_after),
        (GateOutcome::Extend, GateOutcome::Extend)
    );
    // 22/24 is published as EXTEND; after the last registered batch the
    // unresolved gate resolves to FAIL, and the last batch says so.
    assert_eq!(r.verdict.map(|v| v.outcome), Some(GateOutcome::Extend));
    assert_eq!(r.steps[1].verdict_after, GateOutcome::Fail);
    assert_eq!(r.resolved(), Some(GateOutcome::Fail));
    assert!(matches!(
        r.decision,
        ExtensionDecision::Refused {
            outcome: RunOutcome::GateFailed,
            ..
        }
    ));
    // e2e-short-batch: batch 1 holds 2 tasks where 6 were registered. The
    // reference pooled it ([10,12] -> [12,14]) and went on to 20 trials; here
    // a batch short of its registered size is a run that did not complete
    // its registered size: VOID (incomplete_batch), and nothing after it is
    // read (a run does not get to decide how big a sample to read).
    let r = resolve_extensions(&pre, &[batch(12, 10, 0), batch(2, 2, 0)]).unwrap();
    assert_eq!(
        (r.steps[0].pooled_after.k, r.steps[0].pooled_after.n),
        (12, 14)
    );
    assert_eq!(
        r.decision,
        refused(RunOutcome::Void, ExtensionReason::IncompleteBatch)
    );
    assert!(
        resolve_extensions(&pre, &[batch(12, 10, 0), batch(2, 2, 0), batch(6, 6, 0)]).is_err(),
        "a batch after a resolved gate is refused"
    );
    // e2e-resolve-to-fail: [20,24] after batch 2 -> GATE_FAILED, raw EXTEND. Same as the reference.
    let r = resolve_extensions(&pre, &[batch(12, 10, 0), batch(6, 6, 0), batch(6, 4, 0)]).unwrap();
    assert_eq!((r.pooled.successes, r.pooled.trials), (20, 24));
    assert_eq!(r.verdict.unwrap().raw_outcome, GateOutcome::Extend);
    assert_eq!(
        r.decision,
        refused(
            RunOutcome::GateFailed,
            ExtensionReason::UnresolvedAfterMaxExtensions
        )
    );
    // e2e-duplicate-drop: batch 1 keeps 4 of 6 after dropping duplicates. The
    // reference pooled it ([14,16], then [20,22]); here it is short of its
    // registered size: VOID.
    let r = resolve_extensions(&pre, &[batch(12, 10, 0), batch(4, 4, 0)]).unwrap();
    assert_eq!(
        (r.steps[0].pooled_after.k, r.steps[0].pooled_after.n),
        (14, 16)
    );
    assert_eq!(
        r.decision,
        refused(RunOutcome::Void, ExtensionReason::IncompleteBatch)
    );
    // e2e-batch-structural-refusal: a batch that admitted nothing leaves the
    // pool at [10,12], and, short of its registered size, voids the run.
    let r = resolve_extensions(&pre, &[batch(12, 10, 0), batch(0, 0, 0)]).unwrap();
    assert_eq!(
        (r.steps[0].pooled_after.k, r.steps[0].pooled_after.n),
        (10, 12)
    );
    assert_eq!(
        r.decision,
        refused(RunOutcome::Void, ExtensionReason::IncompleteBatch)
    );
    // e2e-judge-usage(-extended): token accounting, not statistics; no check here.
}
