//! The extension protocol as a pure function over a batch ledger.
//!
//! A gate the registered sample cannot resolve consumes the next
//! pre-registered batch and is re-decided on the pooled counts. After the
//! last batch an unresolved gate resolves to FAIL (GATE_FAILED); with no
//! batch registered it is refused where it stands (EXTEND_EXHAUSTED). There
//! is no optional stopping: the ledger may not continue past a resolution.

use serde::{Deserialize, Serialize};

use super::compromised::{ErrorRateCheck, MAX_ERROR_RATE, compromised};
use super::outcome::{Counts, GateError, GateOutcome};
use super::prereg::PreRegistration;
use super::published::{PublishedVerdict, published_verdict};
use crate::record::Outcome as RunOutcome;

/// What one batch contributed. Tasks and trials are two numbers: each task
/// is driven `reps` times, so six tasks can add eighteen trials.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BatchCounts {
    /// Tasks in the batch (a batch short of `extension_size` voids the run).
    pub tasks: u64,
    /// Trials that completed and were judged.
    pub trials: u64,
    /// Completed trials that succeeded.
    pub successes: u64,
    /// Trials that errored (counted against the error rate, never dropped).
    pub errors: u64,
}

/// Running totals over the batches consumed so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PooledCounts {
    /// Tasks.
    pub tasks: u64,
    /// Completed trials.
    pub trials: u64,
    /// Successes.
    pub successes: u64,
    /// Errored trials.
    pub errors: u64,
}

impl PooledCounts {
    fn add(&mut self, b: &BatchCounts) {
        // Saturating: counts near u64::MAX are nonsense, but never a panic.
        self.tasks = self.tasks.saturating_add(b.tasks);
        self.trials = self.trials.saturating_add(b.trials);
        self.successes = self.successes.saturating_add(b.successes);
        self.errors = self.errors.saturating_add(b.errors);
    }

    fn counts(&self) -> Counts {
        Counts {
            k: self.successes,
            n: self.trials,
        }
    }
}

/// One consumed extension batch, as the record's ledger prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExtensionStep {
    /// 1 for the first extension batch.
    pub index: u64,
    /// Tasks the batch added.
    pub tasks_added: u64,
    /// Completed trials the batch added.
    pub trials_added: u64,
    /// Errored trials the batch added.
    pub errors_added: u64,
    /// Pooled `k/n` before the batch.
    pub pooled_before: Counts,
    /// Pooled `k/n` after it.
    pub pooled_after: Counts,
    /// Published verdict before (EXTEND, or the batch would not have run).
    pub verdict_before: GateOutcome,
    /// What the pooled count resolved to after the batch: the published
    /// verdict, except after the last registered batch, where a gate still
    /// unresolved resolves to FAIL (the test's own reading is
    /// [`ExtensionResolution::verdict`]).
    pub verdict_after: GateOutcome,
}

/// Why a gate was refused. Rendered verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtensionReason {
    /// The exact test rejected the threshold.
    BelowThreshold,
    /// Still unresolved after the last registered batch: resolves to FAIL.
    UnresolvedAfterMaxExtensions,
    /// Unresolved and the registration bought no batch.
    UnresolvedNoBatchesRegistered,
    /// Error rate over the limit.
    Compromised,
    /// A batch did not complete its registered size: fewer tasks than the
    /// registered batch size, or fewer trials than its tasks times reps.
    IncompleteBatch,
}

/// What happens next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum ExtensionDecision {
    /// The gate passed (a published PASS) on the pooled counts.
    Passed,
    /// Unresolved: run extension batch `index` (1-based) and call again with
    /// it appended to the ledger.
    ConsumeBatch {
        /// The batch to run.
        index: u64,
    },
    /// The run is refused with this code.
    Refused {
        /// Refusal code.
        outcome: RunOutcome,
        /// Why.
        reason: ExtensionReason,
    },
}

/// The protocol's state after reading the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExtensionResolution {
    /// The registered-size batch (ledger entry 0).
    pub registered: BatchCounts,
    /// Each consumed extension batch.
    pub steps: Vec<ExtensionStep>,
    /// Totals over every batch read.
    pub pooled: PooledCounts,
    /// The error-rate check on the pooled counts.
    pub errors: ErrorRateCheck,
    /// The published verdict on the pooled counts (absent when the error
    /// check or an incomplete batch stopped the run first).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub verdict: Option<PublishedVerdict>,
    /// What happens next.
    pub decision: ExtensionDecision,
}

/// Runs the extension protocol over `ledger`: entry 0 is the registered-size
/// batch (`prereg.n_tasks` tasks), entries 1.. are extension batches in the
/// order consumed.
///
/// At each point, on the pooled counts: an extension batch of fewer tasks
/// than the registered `extension_size`, or a batch whose `trials + errors`
/// falls short of `tasks * reps` -> VOID (`incomplete_batch`: the run did
/// not complete its registered size; the reference implementation pooled a
/// short batch and went on, which lets a run decide how big a sample to
/// read); error rate over 5% ->
/// COMPROMISED; then [`published_verdict`]: PASS -> passed; FAIL ->
/// GATE_FAILED (`below_threshold`); EXTEND (including a downgraded PASS) ->
/// EXTEND_EXHAUSTED if the registration bought no batch, GATE_FAILED
/// (`unresolved_after_max_extensions`) if all were consumed, else the next
/// ledger entry is pooled, or `ConsumeBatch` asks for it.
///
/// Errors when the ledger contradicts the registration: no entry 0, entry 0
/// with other than `n_tasks` tasks, more than `max_extensions` extension
/// batches, a batch larger than `extension_size`, a batch after the gate
/// resolved, more trials than registered or more successes than trials.
///
/// Reference: seed "Extensions, and why EXTEND is not a second chance";
/// SPEC R-EXT; the reference implementation's `resolveConstruct` and
/// `poolConstruct`.
pub fn resolve_extensions(
    prereg: &PreRegistration,
    ledger: &[BatchCounts],
) -> Result<ExtensionResolution, GateError> {
    resolve_extensions_with(prereg, ledger, MAX_ERROR_RATE)
}

/// [`resolve_extensions`] with a registered error-rate limit (a run may
/// lower it, never raise it; the caller checks that).
pub fn resolve_extensions_with(
    prereg: &PreRegistration,
    ledger: &[BatchCounts],
    max_error_rate: f64,
) -> Result<ExtensionResolution, GateError> {
    prereg.validate()?;
    let Some((&registered, extensions)) = ledger.split_first() else {
        return Err(GateError::Ledger(
            "no registered batch (entry 0)".to_owned(),
        ));
    };
    if registered.tasks != prereg.n_tasks {
        return Err(GateError::Ledger(format!(
            "entry 0 holds {} tasks, the registration {}",
            registered.tasks, prereg.n_tasks
        )));
    }
    if extensions.len() as u64 > prereg.max_extensions {
        return Err(GateError::Ledger(format!(
            "{} extension batches, the registration allows {}",
            extensions.len(),
            prereg.max_extensions
        )));
    }
    for (i, batch) in ledger.iter().enumerate() {
        check_batch(prereg, i, batch)?;
    }

    let mut pooled = PooledCounts::default();
    let mut steps = Vec::new();
    let mut previous: Option<(PoolState, ExtensionDecision)> = None;
    for (i, batch) in ledger.iter().enumerate() {
        let verdict_before = match &previous {
            None => None,
            Some((_, ExtensionDecision::ConsumeBatch { .. })) => previous
                .as_ref()
                .map(|(state, _)| state.verdict.map_or(GateOutcome::Extend, |v| v.outcome)),
            Some(_) => {
                return Err(GateError::Ledger(format!(
                    "batch {i} follows a resolved gate: no optional stopping or continuation"
                )));
            }
        };
        let before = pooled.counts();
        pooled.add(batch);
        let state = evaluate(prereg, batch, i > 0, &pooled, max_error_rate)?;
        if let Some(verdict_before) = verdict_before {
            steps.push(ExtensionStep {
                index: i as u64,
                tasks_added: batch.tasks,
                trials_added: batch.trials,
                errors_added: batch.errors,
                pooled_before: before,
                pooled_after: pooled.counts(),
                verdict_before,
                verdict_after: state.verdict.map_or(GateOutcome::Extend, |v| v.outcome),
            });
        }
        let decision = state
            .decision
            .unwrap_or_else(|| unresolved(prereg, i as u64));
        previous = Some((state, decision));
    }
    let (state, decision) =
        previous.ok_or_else(|| GateError::Ledger("no registered batch (entry 0)".to_owned()))?;
    // After the last registered batch an unresolved gate resolves to FAIL:
    // the ledger says so on that batch, not the test's EXTEND.
    if let ExtensionDecision::Refused {
        reason: ExtensionReason::UnresolvedAfterMaxExtensions,
        ..
    } = decision
        && let Some(last) = steps.last_mut()
    {
        last.verdict_after = GateOutcome::Fail;
    }
    Ok(ExtensionResolution {
        registered,
        steps,
        pooled,
        errors: state.errors,
        verdict: state.verdict,
        decision,
    })
}

impl ExtensionResolution {
    /// What the gate resolved to: PASS when it passed, FAIL when the test
    /// rejected the threshold or the last registered batch left it
    /// unresolved; `None` where the protocol resolved nothing (a gate with
    /// no batch to buy is refused where it stands, still EXTEND; an error
    /// rate over the limit or a short batch decides no verdict).
    pub fn resolved(&self) -> Option<GateOutcome> {
        match self.decision {
            ExtensionDecision::Passed => Some(GateOutcome::Pass),
            ExtensionDecision::Refused {
                outcome: RunOutcome::GateFailed,
                ..
            } => Some(GateOutcome::Fail),
            _ => None,
        }
    }
}

/// The decision for a pool that is still unresolved after `consumed` batches.
fn unresolved(prereg: &PreRegistration, consumed: u64) -> ExtensionDecision {
    if !prereg.buys_extensions() {
        ExtensionDecision::Refused {
            outcome: RunOutcome::ExtendExhausted,
            reason: ExtensionReason::UnresolvedNoBatchesRegistered,
        }
    } else if consumed >= prereg.max_extensions {
        ExtensionDecision::Refused {
            outcome: RunOutcome::GateFailed,
            reason: ExtensionReason::UnresolvedAfterMaxExtensions,
        }
    } else {
        ExtensionDecision::ConsumeBatch {
            index: consumed + 1,
        }
    }
}

struct PoolState {
    errors: ErrorRateCheck,
    verdict: Option<PublishedVerdict>,
    /// `None` while unresolved (EXTEND).
    decision: Option<ExtensionDecision>,
}

fn evaluate(
    prereg: &PreRegistration,
    batch: &BatchCounts,
    extension: bool,
    pooled: &PooledCounts,
    max_error_rate: f64,
) -> Result<PoolState, GateError> {
    let errors = compromised(pooled.trials, pooled.errors, max_error_rate);
    let refused = |outcome, reason| Some(ExtensionDecision::Refused { outcome, reason });
    let short_of_tasks = extension && batch.tasks < prereg.extension_size;
    let short_of_trials =
        batch.trials.saturating_add(batch.errors) < batch.tasks.saturating_mul(prereg.reps);
    if short_of_tasks || short_of_trials {
        let decision = refused(RunOutcome::Void, ExtensionReason::IncompleteBatch);
        return Ok(PoolState {
            errors,
            verdict: None,
            decision,
        });
    }
    if errors.compromised {
        let decision = refused(RunOutcome::Compromised, ExtensionReason::Compromised);
        return Ok(PoolState {
            errors,
            verdict: None,
            decision,
        });
    }
    if pooled.trials == 0 {
        // Zero tasks so far and zero errors: nothing to judge yet.
        return Ok(PoolState {
            errors,
            verdict: None,
            decision: None,
        });
    }
    let v = published_verdict(
        pooled.successes,
        pooled.trials,
        prereg.threshold,
        prereg.alpha,
        prereg.detectable,
        prereg.planned_power,
    )?;
    let decision = match v.outcome {
        GateOutcome::Pass => Some(ExtensionDecision::Passed),
        GateOutcome::Fail => refused(RunOutcome::GateFailed, ExtensionReason::BelowThreshold),
        GateOutcome::Extend => None,
    };
    Ok(PoolState {
        errors,
        verdict: Some(v),
        decision,
    })
}

fn check_batch(prereg: &PreRegistration, i: usize, b: &BatchCounts) -> Result<(), GateError> {
    if b.successes > b.trials {
        return Err(GateError::Ledger(format!(
            "batch {i}: {} successes in {} trials",
            b.successes, b.trials
        )));
    }
    if i > 0 && b.tasks > prereg.extension_size {
        return Err(GateError::Ledger(format!(
            "batch {i}: {} tasks, the registered batch size is {}",
            b.tasks, prereg.extension_size
        )));
    }
    let registered = b.tasks.saturating_mul(prereg.reps);
    if b.trials.saturating_add(b.errors) > registered {
        return Err(GateError::Ledger(format!(
            "batch {i}: {} trials + {} errors exceed {} tasks x {} reps",
            b.trials, b.errors, b.tasks, prereg.reps
        )));
    }
    Ok(())
}
