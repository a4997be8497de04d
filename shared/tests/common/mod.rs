//! Helpers shared by the statistics tests.

#![allow(
    dead_code,
    reason = "each test binary uses a different subset of these helpers"
)]

use serde_json::Value;

/// The reference implementation's golden vectors (copied verbatim from
/// `fixtures/anchor-board/golden.json`).
pub fn golden() -> Value {
    serde_json::from_str(include_str!("../golden/anchor-golden.json")).expect("golden.json parses")
}

/// scipy / statsmodels / mpmath values written by `reference/generate.py`.
pub fn reference() -> Value {
    serde_json::from_str(include_str!("../reference/values.json")).expect("values.json parses")
}

/// `|got - want| <= rel * |want|`, with `want = 0` requiring `got = 0`.
pub fn assert_rel(got: f64, want: f64, rel: f64, what: &str) {
    let ok = if want == 0.0 {
        got == 0.0
    } else {
        ((got - want) / want).abs() <= rel
    };
    assert!(
        ok,
        "{what}: got {got:e}, want {want:e}, rel err {:e} > {rel:e}",
        ((got - want) / want).abs()
    );
}

/// vitest's `toBeCloseTo(x, digits)`: `|a - b| < 0.5 * 10^-digits`.
pub fn assert_close_dp(got: f64, want: f64, digits: i32, what: &str) {
    let tol = 0.5 * 10f64.powi(-digits);
    assert!(
        (got - want).abs() < tol,
        "{what}: got {got}, want {want} to {digits} dp"
    );
}

pub fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

pub fn u(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not an unsigned integer: {v}"))
}

pub fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}
