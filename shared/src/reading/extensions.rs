//! Extensions in words. The seed: a gate the registered sample cannot
//! resolve consumes a registered batch, and after the last one a gate
//! still unresolved resolves to FAIL (GATE_FAILED); with no batch
//! registered it is refused where it stands (EXTEND_EXHAUSTED). The record
//! prints what the pooled count resolved to, so the last batch of an
//! exhausted ledger reads FAIL, never EXTEND.

use super::words::{pct, plural};
use crate::record::{ExtensionBatch, GateDetail, PreRegistration, RunRecord, VerdictOutcome};

/// The construct gate's reason when its last registered batch left it
/// unresolved.
pub const UNRESOLVED_AFTER_MAX: &str = "unresolved_after_max_extensions";
/// Its reason when no batch was registered to spend.
pub const UNRESOLVED_NO_BATCHES: &str = "unresolved_no_batches_registered";

/// What the pooled count resolved to after `batch`: its recorded verdict,
/// except that the last batch of a gate refused as unresolved after its
/// last batch resolved to FAIL (records made before the ledger said so
/// kept the test's EXTEND there).
pub fn resolved_after(record: &RunRecord, batch: &ExtensionBatch) -> VerdictOutcome {
    let last = record.extensions.last().map(|b| b.index) == Some(batch.index);
    let exhausted = record
        .gates
        .record(&batch.gate)
        .is_some_and(|g| g.reason == UNRESOLVED_AFTER_MAX);
    if last && exhausted {
        VerdictOutcome::Fail
    } else {
        batch.verdict_after
    }
}

/// [`resolved_after`] as the ledger's column prints it: an unresolved
/// pool names the batch it bought next.
pub fn resolved_after_text(record: &RunRecord, batch: &ExtensionBatch) -> String {
    match resolved_after(record, batch) {
        VerdictOutcome::Extend if record.extensions.iter().any(|b| b.index == batch.index + 1) => {
            format!("EXTEND, so batch {}", batch.index + 1)
        }
        v => verdict_word(v).to_owned(),
    }
}

/// The registered extension policy in words.
pub fn policy_text(prereg: &PreRegistration) -> String {
    match prereg.max_extensions {
        0 => "Extension policy: no batch registered, so a gate the registered size cannot resolve is refused where it stands (EXTEND_EXHAUSTED).".to_owned(),
        max => format!(
            "Extension policy: at most {} of {} each.",
            plural(max, "batch", "batches"),
            plural(prereg.extension_size, "task", "tasks")
        ),
    }
}

/// How the gate ended, after every batch it consumed (or on the
/// registered size when it consumed none): what the pooled count stood at,
/// what the test on it read, and what that resolved to. `None` for a gate
/// that was not decided by the extension protocol.
pub fn resolution_text(record: &RunRecord, gate: &str) -> Option<String> {
    let g = record.gates.record(gate)?;
    let GateDetail::Construct {
        pooled, published, ..
    } = &g.detail
    else {
        return None;
    };
    let pool = pooled
        .map(|p| format!("{} of {}", p.k, p.n))
        .or_else(|| g.verdict.as_ref().map(|v| format!("{} of {}", v.k, v.n)))?;
    let test = published.as_ref().map(|p| {
        let raw = match (p.raw_outcome, p.downgraded) {
            (VerdictOutcome::Pass, true) => format!(
                "a raw PASS published as EXTEND: its Wilson lower bound {} is below the threshold and its achieved power {:.2} falls short of the planned power",
                pct(p.wilson_low),
                p.achieved_power
            ),
            (raw, _) => verdict_word(raw).to_owned(),
        };
        format!("the test on it read {raw}")
    });
    let test = test.unwrap_or_else(|| "the test on it was unresolved".to_owned());
    match g.reason.as_str() {
        UNRESOLVED_AFTER_MAX => Some(format!(
            "After the last of the {} registered extension batches the pool stood at {pool}, and {test}. A gate still unresolved after its last registered batch resolves to FAIL, so the run is refused as GATE_FAILED.",
            record
                .extensions
                .len()
                .max(record.preregistration.max_extensions as usize)
        )),
        UNRESOLVED_NO_BATCHES => Some(format!(
            "On the registered size the pool stood at {pool}, and {test}. The registration bought no extension batch, so the unresolved gate is refused where it stands: EXTEND_EXHAUSTED."
        )),
        _ if record.extensions.is_empty() => None,
        reason => {
            let ending = match reason {
                "ok" => "PASS, so the gate let the run through",
                "below_threshold" => "FAIL, the exact test rejected the threshold",
                _ => return None,
            };
            let batches = record.extensions.len() as u64;
            Some(format!(
                "After {} the pool stood at {pool}: {ending}.",
                plural(batches, "extension batch", "extension batches")
            ))
        }
    }
}

fn verdict_word(v: VerdictOutcome) -> &'static str {
    match v {
        VerdictOutcome::Pass => "PASS",
        VerdictOutcome::Fail => "FAIL",
        VerdictOutcome::Extend => "EXTEND",
        VerdictOutcome::Indeterminate => "INDETERMINATE",
    }
}
