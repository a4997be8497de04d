//! Small words the record page prints the same way everywhere: a verdict,
//! a p-value, a count or share that may not be recorded.

use fitness_shared::record::VerdictOutcome;

use crate::components::pct;

pub(super) fn verdict_word(v: VerdictOutcome) -> &'static str {
    match v {
        VerdictOutcome::Pass => "PASS",
        VerdictOutcome::Fail => "FAIL",
        VerdictOutcome::Extend => "EXTEND",
        VerdictOutcome::Indeterminate => "INDETERMINATE",
    }
}

/// A stored p-value as printed: four decimals, or "p < 0.0001".
pub(super) fn p_text(p: f64) -> String {
    if p < 0.0001 {
        "p < 0.0001".to_owned()
    } else {
        format!("p = {p:.4}")
    }
}

pub(super) fn opt_u(x: Option<u64>) -> String {
    x.map(|v| v.to_string())
        .unwrap_or_else(|| "not recorded".to_owned())
}

pub(super) fn opt_pct(x: Option<f64>) -> String {
    x.map(pct).unwrap_or_else(|| "not recorded".to_owned())
}
