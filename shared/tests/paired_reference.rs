//! The paired reading's statistics against values computed outside this
//! project by `reference/generate.py`:
//!
//! * McNemar exact and mid-p: exact rational arithmetic (Python's
//!   `fractions` over binomial coefficients) and statsmodels
//!   `mcnemar(exact=True)`, to 1e-12.
//! * Newcombe's paired interval: an implementation written in the generator
//!   from the papers (Newcombe 1998 method 10, Fagerland, Lydersen and
//!   Laake 2014's psi) on statsmodels' Wilson intervals, to 1e-12; and the
//!   published values, to the digits they were printed with (sources in
//!   `paired_published`).
//! * Connor's paired sizes: the formula with scipy's quantiles, and the
//!   smallest detectable drop by scipy's `brentq` on the same equation.

use crate::common;

use common::{assert_close_dp, assert_rel, f, reference_rows, u};
use fitness_shared::stats::{
    mcnemar_exact, mcnemar_midp, paired_detectable_drop, paired_difference_interval,
    paired_pairs_for_drop,
};

const REL: f64 = 1e-12;

/// `|got - want| <= tol` with a relative tolerance, or an absolute one near
/// zero (an interval's bound may be 0 or a rounding away from it).
fn assert_near(got: f64, want: f64, what: &str) {
    if want.abs() < 1e-9 {
        assert!(
            (got - want).abs() <= 1e-13,
            "{what}: got {got:e}, want {want:e}"
        );
    } else {
        assert_rel(got, want, 1e-11, what);
    }
}

#[test]
fn mcnemar_exact_and_mid_p_match_exact_rationals_and_statsmodels() {
    let cases = reference_rows("mcnemar");
    assert!(cases.len() > 150);
    for c in &cases {
        let (b, k) = (u(&c["b"]), u(&c["c"]));
        let what = format!("b={b} c={k}");
        let exact = mcnemar_exact(b, k);
        assert_rel(
            exact,
            f(&c["exact"]),
            REL,
            &format!("exact {what} vs rationals"),
        );
        assert_rel(
            exact,
            f(&c["statsmodels_exact"]),
            REL,
            &format!("exact {what} vs statsmodels"),
        );
        assert_rel(
            mcnemar_midp(b, k),
            f(&c["midp"]),
            REL,
            &format!("mid-p {what} vs rationals"),
        );
    }
}

#[test]
fn paired_interval_matches_an_independent_implementation() {
    let cases = reference_rows("paired_interval");
    assert!(cases.len() > 800);
    for c in &cases {
        let (a, b, k, d) = (u(&c["a"]), u(&c["b"]), u(&c["c"]), u(&c["d"]));
        let alpha = f(&c["alpha"]);
        let (low, high) = paired_difference_interval(a, b, k, d, alpha);
        let what = format!("({a}, {b}, {k}, {d}) at alpha {alpha}");
        assert_near(low, f(&c["low"]), &format!("{what} low"));
        assert_near(high, f(&c["high"]), &format!("{what} high"));
    }
}

#[test]
fn paired_interval_and_mcnemar_reproduce_the_published_examples() {
    let cases = reference_rows("paired_published");
    assert!(!cases.is_empty());
    for c in &cases {
        let (a, b, k, d) = (u(&c["a"]), u(&c["b"]), u(&c["c"]), u(&c["d"]));
        let digits = c["digits"].as_i64().expect("digits") as i32;
        let source = c["source"].as_str().expect("each value names its source");
        let what = format!("({a}, {b}, {k}, {d}), {source}");
        let (low, high) = paired_difference_interval(a, b, k, d, f(&c["alpha"]));
        assert_close_dp(low, f(&c["low"]), digits, &what);
        assert_close_dp(high, f(&c["high"]), digits, &what);
        if let Some(p) = c["exact_p"].as_f64() {
            assert_close_dp(mcnemar_exact(b, k), p, 6, &what);
        }
        if let Some(p) = c["midp_p"].as_f64() {
            assert_close_dp(mcnemar_midp(b, k), p, 6, &what);
        }
    }
}

#[test]
fn paired_sizes_match_connors_formula_with_scipy_quantiles() {
    let cases = reference_rows("paired_pairs_for_drop");
    assert!(cases.len() > 50);
    for c in &cases {
        let (drop, q, alpha, power) = (
            f(&c["drop"]),
            f(&c["discordance"]),
            f(&c["alpha"]),
            f(&c["power"]),
        );
        assert_eq!(
            paired_pairs_for_drop(drop, q, alpha, power),
            Some(u(&c["n"])),
            "drop {drop} at discordance {q}, alpha {alpha}, power {power}: raw {}",
            c["raw"]
        );
    }
}

#[test]
fn the_smallest_detectable_drop_matches_a_root_finder() {
    let cases = reference_rows("paired_detectable_drop");
    let solved = cases.iter().filter(|c| !c["drop"].is_null()).count();
    assert!(
        solved > 50 && solved < cases.len(),
        "{solved} of {}",
        cases.len()
    );
    for c in &cases {
        let (n, q, alpha, power) = (
            u(&c["n"]),
            f(&c["discordance"]),
            f(&c["alpha"]),
            f(&c["power"]),
        );
        let got = paired_detectable_drop(n, q, alpha, power);
        let what = format!("{n} pairs at discordance {q}, alpha {alpha}, power {power}");
        match c["drop"].as_f64() {
            Some(want) => assert_rel(got.expect(&what), want, 1e-9, &what),
            None => assert_eq!(got, None, "{what}"),
        }
    }
}
