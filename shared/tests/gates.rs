//! Gate behaviour beyond the golden vectors: the rules this product adds
//! (trimmed surplus, plan-power, early null kill, the ledger's refusals)
//! and the serialised shape records embed.

use std::collections::BTreeMap;

use fitness_shared::gates::{
    AgentSignal, BatchCounts, DecidedAgainst, ExtensionDecision, ExtensionReason, GateError,
    GateOutcome, MAX_ERROR_RATE, MIN_ADMISSION_RATE, MIN_SUITE_SIZE, NullArm, NullOutcome,
    NullReason, PlanPowerReason, PreRegistration, StructuralReason, SuiteFates, compromised,
    null_baseline, null_baseline_with_ratio, perfect_agent_min_trials, plan_power_gate,
    publishable_sizes, published_verdict, resolve_extensions, resolve_extensions_with, structural,
    structural_registered, structural_with, suite_size_text, verdict,
};
use fitness_shared::record::Outcome as RunOutcome;
use fitness_shared::stats::wilson;

fn fates(rejected: u64, trimmed: u64, screened: u64, suite: u64) -> SuiteFates {
    let mut rejected_by_rule = BTreeMap::new();
    if rejected > 0 {
        rejected_by_rule.insert("invalid-check".to_owned(), rejected);
    }
    SuiteFates {
        candidates: rejected + trimmed + screened + suite,
        rejected_by_rule,
        trimmed_surplus: trimmed,
        null_screened: screened,
        suite_size: suite,
    }
}

#[test]
fn trimmed_surplus_counts_as_admitted() {
    // The anchor's SCORED rows: 24 candidates, 12 driven, 12 trimmed. The
    // reference printed 0.50; trimming is our choice, so the rate is 1.00.
    let r = structural(&fates(0, 12, 0, 12)).unwrap();
    assert_eq!(r.admission_rate, Some(1.0));
    assert!(r.ok);
    // 26 candidates: 6 rejected, 7 trimmed, 1 screened, 12 driven -> 20/26.
    let r = structural(&fates(6, 7, 1, 12)).unwrap();
    assert_eq!(r.admitted, 20);
    assert_eq!(r.admission_rate, Some(20.0 / 26.0));
}

#[test]
fn structural_refusals_name_their_code() {
    let r = structural(&fates(0, 0, 0, 0)).unwrap();
    assert_eq!(
        (r.reason, r.refusal),
        (
            StructuralReason::NoCandidates,
            Some(RunOutcome::InsufficientSurface)
        )
    );
    let r = structural(&fates(3, 0, 9, 0)).unwrap();
    assert_eq!(
        (r.reason, r.refusal),
        (
            StructuralReason::AllCandidatesNullAnswerable,
            Some(RunOutcome::Degenerate)
        )
    );
    let r = structural(&fates(0, 0, 0, 7)).unwrap();
    assert_eq!(
        (r.reason, r.refusal),
        (
            StructuralReason::SuiteBelowMinimum,
            Some(RunOutcome::InsufficientSurface)
        )
    );
    let r = structural(&fates(0, 0, 0, 8)).unwrap();
    assert!(r.ok && r.refusal.is_none());
    // 8 driven of 40 candidates with 32 rejected: 0.20 < 0.25.
    let r = structural(&fates(32, 0, 0, 8)).unwrap();
    assert_eq!(r.reason, StructuralReason::AdmissionRateBelowFloor);
    // Exactly at the floor passes: 8 of 32.
    assert!(structural(&fates(24, 0, 0, 8)).unwrap().ok);
}

#[test]
fn fates_that_do_not_reconcile_are_rejected() {
    let mut f = fates(2, 2, 2, 10);
    f.candidates += 1;
    assert!(matches!(structural(&f), Err(GateError::Ledger(_))));
}

fn prereg(n_tasks: u64, reps: u64, extension_size: u64, max_extensions: u64) -> PreRegistration {
    PreRegistration {
        n_tasks,
        reps,
        alpha: 0.05,
        threshold: 0.9,
        detectable: 0.8,
        planned_power: 0.8,
        extension_size,
        max_extensions,
    }
}

#[test]
fn a_perfect_agent_needs_35_trials_at_threshold_090() {
    let p = prereg(12, 3, 6, 2);
    assert_eq!(perfect_agent_min_trials(&p), Some(35));
    assert!(wilson(34, 34, 0.95).low < 0.9);
    assert!(wilson(35, 35, 0.95).low >= 0.9);
}

#[test]
fn plan_power_refuses_registrations_that_can_never_publish() {
    // 8 tasks x 1 rep, no batches: 8/8 has Wilson low 0.675 and no power.
    let r = plan_power_gate(&prereg(8, 1, 0, 0)).unwrap();
    assert!(!r.ok);
    assert_eq!(
        (r.reason, r.refusal),
        (
            PlanPowerReason::NeverPublishable,
            Some(RunOutcome::GateFailed)
        )
    );
    assert_eq!(r.reachable_trials, vec![8]);
    // Two batches of 6 tasks at 3 reps reach 24, 42, 60: 42/42 can publish.
    let r = plan_power_gate(&prereg(8, 3, 6, 2)).unwrap();
    assert_eq!(r.reachable_trials, vec![24, 42, 60]);
    assert_eq!(r.publishable_at, Some(42));
    assert!(r.ok && r.refusal.is_none());
    assert_eq!(r.required_n, Some(78));
    // 12 tasks x 3 reps = 36 is enough on its own.
    assert_eq!(
        plan_power_gate(&prereg(12, 3, 0, 0))
            .unwrap()
            .publishable_at,
        Some(36)
    );
    // An invalid registration is an error, not a refusal.
    assert!(plan_power_gate(&prereg(0, 3, 0, 0)).is_err());
}

#[test]
fn a_refused_registration_names_the_nearest_publishable_sizes() {
    // 8 tasks x 2 reps, two batches of 4: pooled 16, 24, 32 trials, all
    // under the 35 a flawless agent needs at 0.90.
    let p = prereg(8, 2, 4, 2);
    assert!(!plan_power_gate(&p).unwrap().ok);
    let sizes = publishable_sizes(&p).unwrap();
    // 10 tasks x 2 reps + 2 x 4 x 2 = 36 >= 35; 9 tasks reach only 34.
    assert_eq!(sizes.min_tasks, Some(10));
    // 8 tasks x 3 reps + 2 x 4 x 3 = 48; 2 reps reach only 32.
    assert_eq!(sizes.min_reps, Some(3));
    for (tasks, reps) in [(10, 2), (8, 3)] {
        assert!(plan_power_gate(&prereg(tasks, reps, 4, 2)).unwrap().ok);
    }
    assert!(!plan_power_gate(&prereg(9, 2, 4, 2)).unwrap().ok);
}

#[test]
fn compromised_is_errors_over_attempts() {
    let c = compromised(40, 2, MAX_ERROR_RATE);
    assert!((c.error_rate - 2.0 / 42.0).abs() < 1e-15);
    assert!(!c.compromised && c.refusal().is_none());
    // 3 of 3 completed with 40 errors is not 100%: it is compromised.
    let c = compromised(3, 40, MAX_ERROR_RATE);
    assert_eq!(c.refusal(), Some(RunOutcome::Compromised));
    // Exactly 5% is not over the limit; a NaN limit fails closed.
    assert!(!compromised(95, 5, MAX_ERROR_RATE).compromised);
    assert!(compromised(100, 0, f64::NAN).compromised);
    assert!(!compromised(0, 0, MAX_ERROR_RATE).compromised);
}

fn arm(label: &str, k: u64, n: u64) -> NullArm {
    NullArm {
        label: label.to_owned(),
        k,
        n,
    }
}

#[test]
fn null_baseline_decides_before_any_paid_call_when_it_can() {
    let arms = [
        arm("no-tools", 1, 20),
        arm("stubbed-empty", 0, 20),
        arm("random-valid-args", 2, 20),
    ];
    let r = null_baseline(&arms, AgentSignal::NotYetMeasured).unwrap();
    assert_eq!(
        (r.outcome, r.reason),
        (NullOutcome::Deferred, NullReason::AwaitingAgentRate)
    );
    assert!(!r.halts && r.refusal.is_none());
    // Any arm at >= 0.5 kills for every possible agent rate, before spending.
    let arms = [
        arm("no-tools", 10, 20),
        arm("stubbed-empty", 0, 20),
        arm("random-valid-args", 0, 0),
    ];
    let r = null_baseline(&arms, AgentSignal::NotYetMeasured).unwrap();
    assert_eq!(
        (r.outcome, r.decided_against),
        (NullOutcome::Kill, DecidedAgainst::EveryPossibleAgentRate)
    );
    assert_eq!(r.refusal, Some(RunOutcome::Degenerate));
    // The same arms after the agent ran (even at 0) give the same answer.
    let after = null_baseline(&arms, AgentSignal::Measured { k: 0, n: 20 }).unwrap();
    assert_eq!(after.outcome, NullOutcome::Kill);
}

#[test]
fn a_missing_null_arm_halts_unless_the_kill_is_certain() {
    let arms = [arm("no-tools", 2, 20), arm("stubbed-empty", 0, 0)];
    let before = null_baseline(&arms, AgentSignal::NotYetMeasured).unwrap();
    assert_eq!(
        (before.outcome, before.reason),
        (NullOutcome::Indeterminate, NullReason::NoMeasurements)
    );
    let after = null_baseline(&arms, AgentSignal::Measured { k: 18, n: 20 }).unwrap();
    assert_eq!(after.outcome, NullOutcome::Indeterminate);
    // 0.10 >= 0.5 * 0.15: the missing arm can only raise t_null, so KILL is certain.
    let weak = null_baseline(&arms, AgentSignal::Measured { k: 3, n: 20 }).unwrap();
    assert_eq!(
        (weak.outcome, weak.decided_against),
        (NullOutcome::Kill, DecidedAgainst::AgentRate)
    );
    assert_eq!(weak.t_null, Some(0.1));
}

#[test]
fn the_kill_line_is_half_the_agent_rate_inclusive() {
    let arms = [arm("no-tools", 9, 20)]; // 0.45
    let kill = null_baseline(&arms, AgentSignal::Measured { k: 18, n: 20 }).unwrap();
    assert_eq!(kill.outcome, NullOutcome::Kill, "0.45 >= 0.5 * 0.9");
    let go = null_baseline(&arms, AgentSignal::Measured { k: 19, n: 20 }).unwrap();
    assert_eq!(go.outcome, NullOutcome::Proceed, "0.45 < 0.5 * 0.95");
    assert_eq!(go.kill_threshold, Some(0.475));
}

fn batch(tasks: u64, reps: u64, successes: u64, errors: u64) -> BatchCounts {
    BatchCounts {
        tasks,
        trials: tasks * reps - errors,
        successes,
        errors,
    }
}

#[test]
fn extension_ledger_keeps_tasks_and_trials_apart() {
    let p = prereg(12, 3, 6, 2);
    let r = resolve_extensions(&p, &[batch(12, 3, 31, 0), batch(6, 3, 16, 0)]).unwrap();
    let step = r.steps[0];
    assert_eq!(
        (step.index, step.tasks_added, step.trials_added),
        (1, 6, 18)
    );
    assert_eq!((r.pooled.tasks, r.pooled.trials), (18, 54));
    assert_eq!((step.pooled_before.k, step.pooled_before.n), (31, 36));
    assert_eq!((step.pooled_after.k, step.pooled_after.n), (47, 54));
}

#[test]
fn the_ledger_cannot_continue_past_a_resolution_or_the_registration() {
    let p = prereg(12, 3, 6, 2);
    let pass = batch(12, 3, 36, 0); // 36/36: published PASS
    let err = resolve_extensions(&p, &[pass, batch(6, 3, 18, 0)]).unwrap_err();
    assert!(
        matches!(err, GateError::Ledger(ref m) if m.contains("follows a resolved gate")),
        "{err}"
    );
    let unresolved = batch(12, 3, 31, 0);
    let too_many = [
        unresolved,
        batch(6, 3, 15, 0),
        batch(6, 3, 15, 0),
        batch(6, 3, 15, 0),
    ];
    assert!(resolve_extensions(&p, &too_many).is_err());
    assert!(
        resolve_extensions(&p, &[unresolved, batch(7, 3, 21, 0)]).is_err(),
        "batch over size"
    );
    assert!(
        resolve_extensions(&p, &[batch(11, 3, 30, 0)]).is_err(),
        "registered size differs"
    );
    assert!(resolve_extensions(&p, &[]).is_err());
}

#[test]
fn an_incomplete_batch_voids_the_run() {
    let p = prereg(12, 3, 6, 2);
    let short = BatchCounts {
        tasks: 12,
        trials: 30,
        successes: 29,
        errors: 0,
    };
    let r = resolve_extensions(&p, &[short]).unwrap();
    assert_eq!(
        r.decision,
        ExtensionDecision::Refused {
            outcome: RunOutcome::Void,
            reason: ExtensionReason::IncompleteBatch
        }
    );
    assert!(r.verdict.is_none());
}

#[test]
fn a_registration_publishes_with_its_own_design() {
    let p = prereg(12, 3, 6, 2);
    assert_eq!(
        p.published_verdict(33, 36),
        published_verdict(33, 36, 0.9, 0.05, 0.8, 0.8)
    );
}

#[test]
fn a_downgraded_pass_consumes_the_next_batch() {
    let p = prereg(12, 3, 6, 2);
    // 33/36: raw PASS, published EXTEND (downgraded_underpowered).
    let r = resolve_extensions(&p, &[batch(12, 3, 33, 0)]).unwrap();
    let v = r.verdict.unwrap();
    assert_eq!(
        (v.raw_outcome, v.outcome),
        (GateOutcome::Pass, GateOutcome::Extend)
    );
    assert_eq!(r.decision, ExtensionDecision::ConsumeBatch { index: 1 });
}

#[test]
fn records_serialise_with_stable_snake_case_names() {
    let v = verdict(32, 36, 0.9, 0.05).unwrap();
    let json = serde_json::to_value(v).unwrap();
    assert_eq!(json["outcome"], "EXTEND");
    assert!(json.get("p_value").is_some());
    let back: fitness_shared::gates::Verdict = serde_json::from_value(json).unwrap();
    assert_eq!(back, v);

    let pv = published_verdict(33, 36, 0.9, 0.05, 0.8, 0.8).unwrap();
    let json = serde_json::to_value(pv).unwrap();
    assert_eq!(json["reason"], "downgraded_underpowered");
    assert_eq!(json["raw_outcome"], "PASS");
    for key in [
        "wilson_low",
        "wilson_high",
        "required_n",
        "achieved_power",
        "planned_power",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }

    let r = resolve_extensions(&prereg(12, 1, 0, 0), &[batch(12, 1, 10, 0)]).unwrap();
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["decision"]["decision"], "refused");
    assert_eq!(json["decision"]["outcome"], "EXTEND_EXHAUSTED");
    assert_eq!(
        json["decision"]["reason"],
        "unresolved_no_batches_registered"
    );
    let back: fitness_shared::gates::ExtensionResolution = serde_json::from_value(json).unwrap();
    assert_eq!(back, r);

    let nb = null_baseline(&[arm("no-tools", 0, 0)], AgentSignal::NotYetMeasured).unwrap();
    let json = serde_json::to_value(&nb).unwrap();
    assert!(
        json.get("t_null").is_none(),
        "an unmeasured noise floor is absent, never 0"
    );
    assert!(json["rates"][0].get("rate").is_none());
    assert_eq!(json["outcome"], "INDETERMINATE");

    for (code, text) in [
        (RunOutcome::Scored, "SCORED"),
        (RunOutcome::InsufficientSurface, "INSUFFICIENT_SURFACE"),
        (RunOutcome::Degenerate, "DEGENERATE"),
        (RunOutcome::GateFailed, "GATE_FAILED"),
        (RunOutcome::ExtendExhausted, "EXTEND_EXHAUSTED"),
        (RunOutcome::Compromised, "COMPROMISED"),
        (RunOutcome::Void, "VOID"),
    ] {
        assert_eq!(serde_json::to_value(code).unwrap(), text);
    }
}

#[test]
fn absurd_counts_are_judged_without_panicking() {
    let max = u64::MAX;
    let c = compromised(max, max, MAX_ERROR_RATE);
    assert!(c.compromised);
    let p = PreRegistration {
        n_tasks: max,
        reps: max,
        ..prereg(1, 1, max, max)
    };
    let huge = BatchCounts {
        tasks: max,
        trials: max,
        successes: max,
        errors: max,
    };
    assert!(
        resolve_extensions(&p, &[huge, huge, huge]).is_err(),
        "over MAX_REGISTERED_TRIALS"
    );
    assert!(plan_power_gate(&prereg(1, 1, max, max)).is_err());
    assert_eq!(prereg(1, 1, max, max).reachable_trials().len(), 1_000_001);
    // Within the bound, absurd ledgers are errors or refusals, never panics.
    let p = prereg(10, 1, 10, 3);
    let odd = BatchCounts {
        tasks: 10,
        trials: 5,
        successes: 5,
        errors: max,
    };
    assert!(resolve_extensions(&p, &[odd]).is_err());
    assert!(verdict(max, max, 0.9, 0.05).is_ok());
    let _ = structural(&SuiteFates {
        candidates: max,
        trimmed_surplus: max,
        ..SuiteFates::default()
    });
}

#[test]
fn registered_floors_tighten_the_structural_gate() {
    // 10 tasks pass the default floor of 8 but not a registered floor of 12.
    let f = fates(0, 0, 0, 10);
    assert!(structural(&f).unwrap().ok);
    let tight = structural_with(&f, 12, MIN_ADMISSION_RATE).unwrap();
    assert!(!tight.ok);
    assert_eq!(tight.reason, StructuralReason::SuiteBelowMinimum);
    assert_eq!(tight.min_suite_size, 12);
    // 3 rejected of 13 is 0.77 admitted: fine at 0.25, refused at 0.8.
    let f = fates(3, 0, 0, 10);
    let tight = structural_with(&f, MIN_SUITE_SIZE, 0.8).unwrap();
    assert_eq!(tight.reason, StructuralReason::AdmissionRateBelowFloor);
    assert!(structural_with(&f, 8, 1.5).is_err());
}

#[test]
fn a_suite_at_the_floor_but_under_its_registered_size_is_refused_for_that() {
    // A one-tool server's 8 tasks: the seed's floor of 8 is met, the 12 the
    // run registered are not. The reason says so; the words never print a
    // floor the suite met beside a refusal for missing it.
    let f = fates(0, 0, 0, 8);
    let r = structural_registered(&f, MIN_SUITE_SIZE, Some(12), MIN_ADMISSION_RATE).unwrap();
    assert_eq!(
        (r.reason, r.refusal, r.registered_size),
        (
            StructuralReason::SuiteBelowRegisteredSize,
            Some(RunOutcome::InsufficientSurface),
            Some(12)
        )
    );
    assert_eq!(
        serde_json::to_value(r.reason).unwrap(),
        "suite_below_registered_size"
    );
    assert_eq!(
        suite_size_text(8, Some(12), Some(8)),
        "8 tasks admitted to the suite: the floor of 8 is met, not the 12 registered"
    );
    // Below the floor, the floor is what was missed.
    let r = structural_registered(&fates(0, 0, 0, 7), 8, Some(12), MIN_ADMISSION_RATE).unwrap();
    assert_eq!(r.reason, StructuralReason::SuiteBelowMinimum);
    assert_eq!(
        suite_size_text(7, Some(12), Some(8)),
        "7 tasks admitted to the suite, below the floor of 8 (registered 12)"
    );
    // The registered size met: both numbers, no refusal.
    let r = structural_registered(&fates(0, 12, 0, 12), 8, Some(12), MIN_ADMISSION_RATE).unwrap();
    assert!(r.ok);
    assert_eq!(
        suite_size_text(12, Some(12), Some(8)),
        "12 tasks admitted to the suite: registered 12, floor 8"
    );
}

#[test]
fn a_lower_null_ratio_kills_sooner() {
    let arms = [
        NullArm {
            label: "no-tools".into(),
            k: 3,
            n: 10,
        },
        NullArm {
            label: "stubbed-empty".into(),
            k: 0,
            n: 10,
        },
        NullArm {
            label: "random-valid-args".into(),
            k: 0,
            n: 10,
        },
    ];
    let agent = AgentSignal::Measured { k: 8, n: 10 };
    // t_null = 0.3; the default line is 0.5 * 0.8 = 0.4: proceed.
    assert_eq!(
        null_baseline(&arms, agent).unwrap().outcome,
        NullOutcome::Proceed
    );
    // Registered ratio 0.25: the line is 0.2 and 0.3 crosses it.
    let tight = null_baseline_with_ratio(&arms, agent, 0.25).unwrap();
    assert_eq!(tight.outcome, NullOutcome::Kill);
    assert_eq!(tight.ratio, 0.25);
    assert!(null_baseline_with_ratio(&arms, agent, 0.0).is_err());
}

#[test]
fn a_lower_error_limit_compromises_sooner() {
    let prereg = PreRegistration {
        n_tasks: 10,
        reps: 2,
        alpha: 0.05,
        threshold: 0.9,
        detectable: 0.8,
        planned_power: 0.8,
        extension_size: 0,
        max_extensions: 0,
    };
    // 19 completed (all passed) and 1 error: 5% is at the default limit, not over it.
    let ledger = [BatchCounts {
        tasks: 10,
        trials: 19,
        successes: 19,
        errors: 1,
    }];
    let default = resolve_extensions(&prereg, &ledger).unwrap();
    assert!(!default.errors.compromised);
    let tight = resolve_extensions_with(&prereg, &ledger, 0.01).unwrap();
    assert!(tight.errors.compromised);
    assert!(matches!(
        tight.decision,
        ExtensionDecision::Refused {
            outcome: RunOutcome::Compromised,
            ..
        }
    ));
}
