//! fitness-shared against independent reference values: scipy
//! `binom.cdf/sf/pmf`, `norm.ppf`, statsmodels `proportion_confint(method =
//! "wilson")`, and exact power / plan / separate / tie rate built from scipy,
//! recorded with their versions by `reference/generate.py`.
//! Relative tolerance 1e-12 (1e-9 for quantiles). Python is not needed here.

use crate::common;

use common::{assert_rel, f, i, reference, reference_rows, u};
use fitness_shared::gates::{achieved_power, critical_k, plan};
use fitness_shared::stats::{
    binom_cdf, binom_pmf, binom_sf, normal_quantile, separate, tie_rate, wilson,
};

const REL: f64 = 1e-12;

#[test]
fn the_reference_file_records_its_versions_and_enough_values() {
    let r = reference();
    for tool in ["python", "scipy", "statsmodels", "numpy", "mpmath"] {
        assert!(r["versions"][tool].is_string(), "{tool} version missing");
    }
    let total: usize = r
        .as_object()
        .unwrap()
        .values()
        .filter_map(|v| v.as_array())
        .map(Vec::len)
        .sum();
    assert!(total >= 300, "only {total} reference values");
}

#[test]
fn binom_cdf_matches_scipy_and_exact_to_1e_12() {
    let cases = reference_rows("binom_cdf");
    assert!(cases.len() > 1000);
    for c in &cases {
        let (k, n, p) = (i(&c["k"]), u(&c["n"]), f(&c["p"]));
        let got = binom_cdf(k, n, p);
        let what = format!("binom_cdf({k}, {n}, {p})");
        assert_rel(got, f(&c["scipy"]), REL, &format!("{what} vs scipy"));
        assert_rel(got, f(&c["exact"]), REL, &format!("{what} vs mpmath"));
    }
}

#[test]
fn binom_sf_matches_scipy_and_exact_to_1e_12() {
    for c in &reference_rows("binom_sf") {
        let (k, n, p) = (i(&c["k"]), u(&c["n"]), f(&c["p"]));
        let got = binom_sf(k, n, p);
        let what = format!("binom_sf({k}, {n}, {p})");
        assert_rel(got, f(&c["scipy"]), REL, &format!("{what} vs scipy"));
        assert_rel(got, f(&c["exact"]), REL, &format!("{what} vs mpmath"));
    }
}

#[test]
fn binom_pmf_matches_scipy_to_1e_12() {
    for c in &reference_rows("binom_pmf") {
        let (k, n, p) = (i(&c["k"]), u(&c["n"]), f(&c["p"]));
        assert_rel(
            binom_pmf(k, n, p),
            f(&c["scipy"]),
            REL,
            &format!("binom_pmf({k}, {n}, {p})"),
        );
    }
}

#[test]
fn normal_quantile_matches_scipy_to_1e_9() {
    for c in &reference_rows("normal_quantile") {
        let p = f(&c["p"]);
        let (got, want) = (normal_quantile(p), f(&c["scipy"]));
        let err = (got - want).abs();
        assert!(
            err <= 1e-9 * want.abs().max(1.0),
            "normal_quantile({p}) = {got}, scipy {want}"
        );
        // Far tighter in practice; pin it so a regression is seen.
        assert!(
            err <= 1e-14 * want.abs().max(1.0),
            "normal_quantile({p}) drifted: {err:e}"
        );
    }
}

#[test]
fn wilson_matches_statsmodels_to_1e_12() {
    for c in &reference_rows("wilson") {
        let (k, n, conf) = (u(&c["k"]), u(&c["n"]), f(&c["confidence"]));
        let w = wilson(k, n, conf);
        let what = format!("wilson({k}, {n}, {conf})");
        // statsmodels evaluates centre -/+ half directly, which leaves ~1e-17
        // instead of an exact 0 (or 1) at k = 0 (k = n); ours is exact there.
        let (low, high) = (f(&c["low"]), f(&c["high"]));
        if k == 0 {
            assert_eq!(w.low, 0.0, "{what}");
            assert!(low.abs() < 1e-15, "{what}: statsmodels low {low}");
        } else {
            assert_rel(w.low, low, REL, &format!("{what} low"));
        }
        if k == n {
            assert_eq!(w.high, 1.0, "{what}");
            assert!(
                (high - 1.0).abs() < 1e-15,
                "{what}: statsmodels high {high}"
            );
        } else {
            assert_rel(w.high, high, REL, &format!("{what} high"));
        }
    }
}

#[test]
fn achieved_power_and_critical_k_match_scipy() {
    let cases = reference_rows("achieved_power");
    assert!(cases.len() >= 400);
    for c in &cases {
        let (n, t, d, a) = (
            u(&c["n"]),
            f(&c["threshold"]),
            f(&c["detectable"]),
            f(&c["alpha"]),
        );
        let what = format!("n={n} t={t} d={d} alpha={a}");
        assert_eq!(
            critical_k(n, t, a),
            c["critical_k"].as_u64(),
            "critical_k {what}"
        );
        assert_rel(
            achieved_power(n, t, d, a),
            f(&c["power"]),
            REL,
            &format!("power {what}"),
        );
    }
}

#[test]
fn plan_matches_a_scipy_scan() {
    for c in &reference_rows("plan") {
        let (t, d, a, pw) = (
            f(&c["threshold"]),
            f(&c["detectable"]),
            f(&c["alpha"]),
            f(&c["power"]),
        );
        let got = plan(t, d, a, pw).expect("plan exists");
        let what = format!("plan({t}, {d}, {a}, {pw})");
        assert_eq!(got.n, u(&c["n"]), "{what}");
        assert_eq!(got.critical_k, u(&c["critical_k"]), "{what}");
        assert_rel(got.power, f(&c["achieved"]), REL, &what);
    }
}

#[test]
fn separate_matches_the_formula_with_scipy_quantiles() {
    for c in &reference_rows("separate") {
        let (p1, p2) = (f(&c["p1"]), f(&c["p2"]));
        assert_eq!(
            separate(p1, p2),
            Some(u(&c["n"])),
            "separate({p1}, {p2}), raw {}",
            c["raw"]
        );
    }
}

#[test]
fn tie_rate_matches_scipy() {
    for c in &reference_rows("tie_rate") {
        let (b, r) = (f(&c["base"]), u(&c["reps"]));
        assert_rel(
            tie_rate(b, r),
            f(&c["scipy"]),
            REL,
            &format!("tie_rate({b}, {r})"),
        );
    }
}
