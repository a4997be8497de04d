//! Each gate's line in the record's gate ledger: where it stands (passed,
//! failed, or undecided, never "passed" for a gate still waiting) and the
//! numbers it saw, for every kind of gate, so no line reads "passed ok"
//! beside a detail whose numbers say more.

use super::screen;
use super::words::{pct, plural};
use crate::gate_state::GateState;
use crate::record::{GateDetail, GateRecord, RunRecord};

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq)]
pub struct LedgerLine {
    pub state: GateState,
    /// The numbers the gate saw, in words.
    pub counts: String,
}

/// The ledger's line for `gate` of `record`.
pub fn line(gate: &GateRecord, record: &RunRecord) -> LedgerLine {
    LedgerLine {
        state: gate.state(),
        counts: counts(gate, record),
    }
}

/// A stored p-value as the record page prints it: four decimals, or
/// `p < 0.0001`.
pub fn p_text(p: f64) -> String {
    if p < 0.0001 {
        "p < 0.0001".to_owned()
    } else {
        format!("p = {p:.4}")
    }
}

// One match, an arm per gate kind, each that kind's numbers; it reads top
// to bottom.
fn counts(gate: &GateRecord, record: &RunRecord) -> String {
    if let Some(v) = &gate.verdict {
        return format!("{} of {}, {}", v.k, v.n, p_text(v.p_value));
    }
    match &gate.detail {
        GateDetail::PlanPower {
            required_n,
            actual_n,
            achieved_power,
            ..
        } => {
            let planned = record
                .preregistration
                .planned_power
                .map(|p| format!(" against the planned {p:.2}"))
                .unwrap_or_default();
            format!(
                "at most {actual_n} trials: achieved power {achieved_power:.2}{planned} ({required_n} trials for full power)"
            )
        }
        GateDetail::NullBaseline {
            t_null,
            kill_threshold,
            decision,
            ..
        } => match (t_null, kill_threshold, decision.as_deref()) {
            (_, _, Some("COMPROMISED")) => "an arm's calls failed over the limit".to_owned(),
            (Some(t), Some(l), _) => format!("null rate {} against the line {}", pct(*t), pct(*l)),
            (Some(t), None, _) => format!(
                "null rate {}; no line until the agent's rate exists",
                pct(*t)
            ),
            (None, _, _) => "no null rate measured".to_owned(),
        },
        GateDetail::Structural {
            n_generated,
            n_tasks,
            admission_rate,
            min_admission_rate,
            ..
        } => {
            let tasks = n_tasks.or(record.suite.tasks);
            let mut parts = Vec::new();
            if let Some(c) = n_generated.or(record.suite.candidates) {
                parts.push(plural(c, "candidate", "candidates"));
            }
            if let (Some(r), Some(f)) = (admission_rate, min_admission_rate) {
                parts.push(format!("admission {} against {}", pct(*r), pct(*f)));
            }
            if gate.reason == screen::EMPTIED {
                let deleted = record.suite.null_screened.as_ref().map_or(0, |s| s.dropped);
                parts.push(format!("{deleted} deleted by the null screen, 0 left"));
            } else if let Some(t) = tasks {
                parts.push(format!("{} in the suite", plural(t, "task", "tasks")));
            }
            parts.join("; ")
        }
        GateDetail::SuiteSize {
            n_tasks, min_tasks, ..
        } => format!(
            "{} against a floor of {min_tasks}",
            plural(*n_tasks, "task", "tasks")
        ),
        GateDetail::AnswerLeak {
            leaks,
            at_generation,
        } => format!(
            "{} in the driven suite; {} dropped at generation",
            plural(leaks.len() as u64, "leak", "leaks"),
            at_generation.len()
        ),
        GateDetail::ProtocolHygiene { failed } => {
            format!("{} failed", plural(failed.len() as u64, "probe", "probes"))
        }
        GateDetail::Construct { n, errors, .. } => format!("{n} trials, {errors} errors"),
        GateDetail::Drive {
            trials,
            errors,
            max_error_rate,
            ..
        } => format!(
            "{trials} trials, {errors} failed at the model API (limit {})",
            pct(*max_error_rate)
        ),
        GateDetail::Synthesis {
            calls,
            failures,
            max_error_rate,
            ..
        } => format!(
            "{} of {} judge calls failed (limit {})",
            failures,
            calls,
            pct(*max_error_rate)
        ),
        GateDetail::Screen {
            calls,
            failures,
            max_error_rate,
            ..
        } => {
            let deleted = (gate.id == "screen")
                .then(|| record.suite.null_screened.as_ref().map(|s| s.dropped))
                .flatten()
                .map(|d| format!("; {d} deleted as answerable without the server"))
                .unwrap_or_default();
            format!(
                "{failures} of {calls} screen calls failed (limit {}){deleted}",
                pct(*max_error_rate)
            )
        }
        GateDetail::Unrecognised => String::new(),
    }
}
