//! proptest invariants of the statistics and the gates.

use fitness_shared::gates::{
    AgentSignal, BatchCounts, GateOutcome, NullArm, NullOutcome, PreRegistration, achieved_power,
    critical_k, null_baseline, published_verdict, resolve_extensions, verdict,
};
use fitness_shared::stats::{
    binom_cdf, binom_pmf, binom_sf, normal_quantile, percentile_nearest_rank, separated, wilson,
};
use proptest::prelude::*;

fn k_and_n(max_n: u64) -> impl Strategy<Value = (u64, u64)> {
    (1..=max_n).prop_flat_map(|n| (0..=n, Just(n)))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn wilson_contains_the_rate_and_stays_in_the_unit_interval(
        (k, n) in k_and_n(10_000),
        confidence in 0.5f64..0.9999,
    ) {
        let w = wilson(k, n, confidence);
        prop_assert!(0.0 <= w.low && w.low <= w.rate && w.rate <= w.high && w.high <= 1.0, "{w:?}");
        prop_assert!(w.low < w.high);
        // Wider at higher confidence.
        let wider = wilson(k, n, (confidence + 1.0) / 2.0);
        prop_assert!(wider.low <= w.low && wider.high >= w.high);
    }

    #[test]
    fn cdf_is_monotone_in_k_and_complements_sf(
        (k, n) in k_and_n(10_000),
        p in prop_oneof![0.0f64..=1.0, Just(0.5), Just(0.9), 1e-6f64..1e-3, (1.0 - 1e-3)..1.0f64],
    ) {
        let k = k as i64;
        let (lo, hi) = (binom_cdf(k - 1, n, p), binom_cdf(k, n, p));
        prop_assert!(lo <= hi, "cdf({}) = {lo} > cdf({k}) = {hi}", k - 1);
        prop_assert!((0.0..=1.0).contains(&hi));
        let total = hi + binom_sf(k + 1, n, p);
        prop_assert!((total - 1.0).abs() < 1e-12, "cdf + sf = {total}");
    }

    #[test]
    fn pmf_sums_to_one((_, n) in k_and_n(600), p in 0.0f64..=1.0) {
        let total: f64 = (0..=n as i64).map(|k| binom_pmf(k, n, p)).sum();
        prop_assert!((total - 1.0).abs() < 1e-12, "sum = {total}");
    }

    #[test]
    fn verdict_agrees_with_its_p_value(
        (k, n) in k_and_n(2_000),
        threshold in 0.05f64..=1.0,
        alpha in 0.001f64..0.2,
    ) {
        let v = verdict(k, n, threshold, alpha).unwrap();
        prop_assert_eq!(v.p_value.to_bits(), binom_cdf(k as i64, n, threshold).to_bits());
        let expected = if k as f64 / n as f64 >= threshold {
            GateOutcome::Pass
        } else if v.p_value < alpha {
            GateOutcome::Fail
        } else {
            GateOutcome::Extend
        };
        prop_assert_eq!(v.outcome, expected);
        // critical_k is exactly the FAIL boundary.
        let fails = v.outcome == GateOutcome::Fail;
        match critical_k(n, threshold, alpha) {
            Some(c) => prop_assert_eq!(fails, k <= c && (k as f64 / n as f64) < threshold),
            None => prop_assert!(!fails),
        }
    }

    #[test]
    fn a_published_pass_is_resolved_or_powered(
        (k, n) in k_and_n(300),
        threshold in 0.6f64..0.95,
    ) {
        let detectable = threshold - 0.1;
        let v = published_verdict(k, n, threshold, 0.05, detectable, 0.8).unwrap();
        if v.outcome == GateOutcome::Pass {
            prop_assert_eq!(v.raw_outcome, GateOutcome::Pass);
            prop_assert!(v.wilson_low >= threshold || v.achieved_power >= 0.8);
        }
        prop_assert_eq!(v.downgraded, v.raw_outcome != v.outcome);
        prop_assert!(v.outcome != GateOutcome::Pass || v.raw_outcome == GateOutcome::Pass);
    }

    #[test]
    fn power_is_not_monotone_in_n(threshold in 0.7f64..0.95) {
        let detectable = threshold - 0.1;
        let powers: Vec<f64> = (1..=400).map(|n| achieved_power(n, threshold, detectable, 0.05)).collect();
        let drops = powers.windows(2).filter(|w| w[1] < w[0]).count();
        prop_assert!(drops > 0, "no sawtooth for threshold {threshold}");
        prop_assert!(powers.iter().all(|p| (0.0..=1.0).contains(p)));
    }

    #[test]
    fn normal_quantile_is_monotone_and_odd(p in 1e-12f64..0.5) {
        let z = normal_quantile(p);
        prop_assert!(z < 0.0 || p == 0.5);
        prop_assert!(normal_quantile(p * 1.000_001) >= z);
        // 1 - p may round, but 1 - (1 - p) is exact (Sterbenz), and on such
        // an exact pair the quantile is exactly odd.
        let mirrored = 1.0 - p;
        prop_assert_eq!(normal_quantile(mirrored), -normal_quantile(1.0 - mirrored));
    }

    #[test]
    fn percentile_returns_a_finite_member(
        values in prop::collection::vec(prop_oneof![-1e6f64..1e6, Just(f64::NAN)], 0..20),
        pct in 0.0f64..=100.0,
    ) {
        match percentile_nearest_rank(&values, pct) {
            Some(x) => prop_assert!(x.is_finite() && values.contains(&x)),
            None => prop_assert!(values.iter().all(|v| !v.is_finite())),
        }
    }

    #[test]
    fn separation_is_symmetric((k1, n1) in k_and_n(500), (k2, n2) in k_and_n(500)) {
        let (a, b) = (wilson(k1, n1, 0.95), wilson(k2, n2, 0.95));
        prop_assert_eq!(separated(&a, &b), separated(&b, &a));
        prop_assert!(!separated(&a, &a));
    }

    #[test]
    fn the_extension_protocol_never_panics(
        reps in 1u64..4,
        n_tasks in 1u64..20,
        extension_size in 0u64..8,
        max_extensions in 0u64..4,
        raw in prop::collection::vec((0u64..30, 0u64..90, 0u64..90, 0u64..10), 1..6),
    ) {
        let prereg = PreRegistration {
            n_tasks, reps, alpha: 0.05, threshold: 0.9, detectable: 0.8,
            planned_power: 0.8, extension_size, max_extensions,
        };
        let ledger: Vec<BatchCounts> = raw
            .iter()
            .map(|&(tasks, trials, successes, errors)| BatchCounts { tasks, trials, successes, errors })
            .collect();
        if let Ok(r) = resolve_extensions(&prereg, &ledger) {
            prop_assert_eq!(r.steps.len() + 1, ledger.len());
            prop_assert!(r.pooled.successes <= r.pooled.trials);
        }
    }

    #[test]
    fn the_null_gate_never_proceeds_without_every_measurement(
        arms in prop::collection::vec((0u64..20, 0u64..20), 0..4),
        agent in prop::option::of((0u64..20, 0u64..20)),
    ) {
        let arms: Vec<NullArm> = arms
            .into_iter()
            .map(|(a, b)| NullArm { label: "arm".into(), k: a.min(b), n: a.max(b) })
            .collect();
        let signal = match agent {
            None => AgentSignal::NotYetMeasured,
            Some((a, b)) => AgentSignal::Measured { k: a.min(b), n: a.max(b) },
        };
        let r = null_baseline(&arms, signal).unwrap();
        if r.outcome == NullOutcome::Proceed {
            prop_assert!(!arms.is_empty() && arms.iter().all(|a| a.n > 0));
            prop_assert!(r.t_null.unwrap() < 0.5 * r.t_agent.unwrap());
        }
        prop_assert_eq!(r.halts, matches!(r.outcome, NullOutcome::Kill | NullOutcome::Indeterminate));
    }
}

#[test]
fn the_sawtooth_at_the_reference_design() {
    let p = |n| achieved_power(n, 0.9, 0.8, 0.05);
    assert!(p(79) > p(78) && p(80) < p(79) && p(80) < 0.8 && p(78) >= 0.8);
}
