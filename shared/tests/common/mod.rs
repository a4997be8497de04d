//! Helpers shared by the statistics and tape tests.

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

/// One section of `reference/values.json`, by name.
pub fn reference_rows(name: &str) -> Vec<Value> {
    reference()[name]
        .as_array()
        .unwrap_or_else(|| panic!("{name} missing"))
        .clone()
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

use std::path::PathBuf;

/// The anchor board fixtures: `$FITNESS_ANCHOR_DIR` when set, else
/// `<workspace>/fixtures/anchor-board` (a copy of the team's read-only fixtures). Panics with the paths
/// tried when neither exists, so a missing checkout fails loudly.
pub fn anchor_dir() -> PathBuf {
    let candidates: Vec<PathBuf> = std::env::var_os("FITNESS_ANCHOR_DIR")
        .map(PathBuf::from)
        .into_iter()
        .chain([PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/anchor-board"
        ))])
        .collect();
    for dir in &candidates {
        if dir.join("runs.json").is_file() && dir.join("traces").is_dir() {
            return dir.canonicalize().unwrap_or_else(|_| dir.clone());
        }
    }
    panic!(
        "anchor fixtures not found (need runs.json and traces/); tried {candidates:?}; \
         set FITNESS_ANCHOR_DIR to the anchor-board directory"
    );
}

/// Run ids that have both tapes under `traces/`, sorted.
pub fn trace_run_ids() -> Vec<String> {
    let traces = anchor_dir().join("traces");
    let mut ids: Vec<String> = std::fs::read_dir(&traces)
        .unwrap_or_else(|e| panic!("failed to list {}: {e}", traces.display()))
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().join("mcp.jsonl").is_file())
        .filter(|entry| entry.path().join("agent.jsonl").is_file())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    ids.sort();
    ids
}

/// The anchor's `trace_stats` block for a run id.
pub fn anchor_trace_stats(run_id: &str) -> serde_json::Value {
    static RUNS: std::sync::OnceLock<Vec<serde_json::Value>> = std::sync::OnceLock::new();
    let runs = RUNS.get_or_init(|| {
        let path = anchor_dir().join("runs.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("failed to read {}: {e}", path.display()));
        serde_json::from_str(&text).expect("runs.json is a JSON array")
    });
    let run = runs
        .iter()
        .find(|r| r["run"]["id"] == run_id)
        .unwrap_or_else(|| panic!("runs.json has no record for {run_id}"));
    run["trace_stats"].clone()
}
