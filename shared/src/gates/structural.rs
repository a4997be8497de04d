//! The free structural gate: is the generated suite big enough, and did the
//! generator's candidates survive admission often enough to be trusted?

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::outcome::GateError;
use crate::record::Outcome as RunOutcome;

/// A suite below 8 tasks is refused (INSUFFICIENT_SURFACE).
pub const MIN_SUITE_SIZE: u64 = 8;

/// Admission rate floor.
pub const MIN_ADMISSION_RATE: f64 = 0.25;

/// What became of every candidate the generator produced. The four fates are
/// disjoint: `candidates = sum(rejected_by_rule) + trimmed_surplus +
/// null_screened + suite_size`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SuiteFates {
    /// Candidates generated.
    pub candidates: u64,
    /// Candidates rejected by an admission rule, per rule name.
    pub rejected_by_rule: BTreeMap<String, u64>,
    /// Candidates that passed admission and were trimmed as surplus (our
    /// choice to drive fewer, not a rejection).
    pub trimmed_surplus: u64,
    /// Candidates the generation-time null screen deleted (answerable with no
    /// tools; nothing was wrong with them).
    pub null_screened: u64,
    /// Tasks in the suite that will be driven.
    pub suite_size: u64,
}

/// Why the gate concluded what it did. Rendered verbatim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StructuralReason {
    /// Both floors met.
    Ok,
    /// The generator produced nothing.
    NoCandidates,
    /// The null screen deleted every task that survived admission.
    AllCandidatesNullAnswerable,
    /// Fewer tasks than the floor (8, or a floor the run registered
    /// higher): the seed's thin surface.
    SuiteBelowMinimum,
    /// The floor is met but not the size the run registered: a run
    /// completes its registered size or it is refused, so the suite that
    /// the surface did give cannot be driven under this registration.
    SuiteBelowRegisteredSize,
    /// Too few candidates survived the admission rules.
    AdmissionRateBelowFloor,
}

/// The structural gate's report: the three fates apart, the rate and both floors.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructuralReport {
    /// The fates as given.
    pub fates: SuiteFates,
    /// Sum over `rejected_by_rule`.
    pub rejected: u64,
    /// Candidates not rejected by a rule: suite + trimmed + screened.
    pub admitted: u64,
    /// `admitted / candidates`, absent when there were no candidates.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub admission_rate: Option<f64>,
    /// The floor (0.25).
    pub min_admission_rate: f64,
    /// The minimum suite size (8, or a floor the run registered higher).
    pub min_suite_size: u64,
    /// The size the run registered, where the gate held the suite to it.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub registered_size: Option<u64>,
    /// True when both floors are met.
    pub ok: bool,
    /// Why.
    pub reason: StructuralReason,
    /// The refusal code when not ok.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refusal: Option<RunOutcome>,
}

/// The structural gate.
///
/// `admission_rate = (candidates - rejected_by_rule) / candidates`: trimmed
/// surplus counts as admitted (trimming is our choice, not a rejection) and
/// so do null-screened candidates (never counted as generator failures,
/// because nothing was wrong with them). Only rule rejections count against
/// the generator. The reference implementation counted trimmed surplus
/// against it (12 driven of 24 candidates with 12 trimmed read 0.50; here 1.00).
///
/// In order: no candidates -> INSUFFICIENT_SURFACE (`no_candidates`); suite
/// empty after the screen deleted candidates -> DEGENERATE
/// (`all_candidates_null_answerable`); suite < 8 -> INSUFFICIENT_SURFACE
/// (`suite_below_minimum`); suite below the size the run registered ->
/// INSUFFICIENT_SURFACE (`suite_below_registered_size`, with
/// [`structural_registered`]); rate < 0.25 -> INSUFFICIENT_SURFACE
/// (`admission_rate_below_floor`); else ok.
///
/// Errors when the fates do not add up to the candidates.
///
/// Reference: evalgate `structural.py` with the reference implementation's
/// two floors (`DEFAULT_MIN_ADMISSION_RATE`, `DEFAULT_MIN_GENERATED`); SPEC
/// R-RUN-1 step 4; seed "The surface was too thin".
pub fn structural(fates: &SuiteFates) -> Result<StructuralReport, GateError> {
    structural_with(fates, MIN_SUITE_SIZE, MIN_ADMISSION_RATE)
}

/// [`structural`] with registered floors. A run may raise a floor, never
/// lower it; the caller checks that. Errors for a rate outside [0, 1].
pub fn structural_with(
    fates: &SuiteFates,
    min_suite_size: u64,
    min_admission_rate: f64,
) -> Result<StructuralReport, GateError> {
    structural_registered(fates, min_suite_size, None, min_admission_rate)
}

/// [`structural_with`] for a run that registered its size: a suite that
/// meets the floor but holds fewer tasks than `registered` is refused
/// for that (`suite_below_registered_size`), never as below the floor.
pub fn structural_registered(
    fates: &SuiteFates,
    min_suite_size: u64,
    registered: Option<u64>,
    min_admission_rate: f64,
) -> Result<StructuralReport, GateError> {
    if !(0.0..=1.0).contains(&min_admission_rate) {
        return Err(GateError::OutOfDomain {
            name: "minimum admission rate",
            value: min_admission_rate,
            domain: "[0, 1]",
        });
    }
    let rejected = fates
        .rejected_by_rule
        .values()
        .try_fold(0u64, |acc, &c| acc.checked_add(c))
        .ok_or_else(|| GateError::Ledger("rejection counts overflow".to_owned()))?;
    let accounted = [fates.trimmed_surplus, fates.null_screened, fates.suite_size]
        .into_iter()
        .try_fold(rejected, |acc, c| acc.checked_add(c));
    if accounted != Some(fates.candidates) {
        return Err(GateError::Ledger(format!(
            "candidate fates do not reconcile: {} candidates, {} rejected + {} trimmed + {} screened + {} in the suite",
            fates.candidates,
            rejected,
            fates.trimmed_surplus,
            fates.null_screened,
            fates.suite_size
        )));
    }
    let admitted = fates.candidates - rejected;
    let admission_rate = (fates.candidates > 0).then(|| admitted as f64 / fates.candidates as f64);
    let (reason, refusal) = if fates.candidates == 0 {
        (
            StructuralReason::NoCandidates,
            Some(RunOutcome::InsufficientSurface),
        )
    } else if fates.suite_size == 0 && fates.null_screened > 0 {
        (
            StructuralReason::AllCandidatesNullAnswerable,
            Some(RunOutcome::Degenerate),
        )
    } else if fates.suite_size < min_suite_size {
        (
            StructuralReason::SuiteBelowMinimum,
            Some(RunOutcome::InsufficientSurface),
        )
    } else if registered.is_some_and(|r| fates.suite_size < r) {
        (
            StructuralReason::SuiteBelowRegisteredSize,
            Some(RunOutcome::InsufficientSurface),
        )
    } else if admission_rate.is_some_and(|r| r < min_admission_rate) {
        (
            StructuralReason::AdmissionRateBelowFloor,
            Some(RunOutcome::InsufficientSurface),
        )
    } else {
        (StructuralReason::Ok, None)
    };
    Ok(StructuralReport {
        fates: fates.clone(),
        rejected,
        admitted,
        admission_rate,
        min_admission_rate,
        min_suite_size,
        registered_size: registered,
        ok: refusal.is_none(),
        reason,
        refusal,
    })
}

/// The suite-size rule in words, as every page prints it: the tasks the
/// suite holds against the size the run registered and the floor. The
/// size the gate applies is the larger of the two (a run completes its
/// registered size or it is refused), and the words say which one a
/// suite missed, never a floor it met beside a refusal for missing it:
/// `12 tasks admitted to the suite: registered 12, floor 8`;
/// `8 tasks admitted to the suite: the floor of 8 is met, not the 12 registered`;
/// `5 tasks admitted to the suite, below the floor of 8 (registered 12)`.
/// A number the record does not hold is left out.
pub fn suite_size_text(tasks: u64, registered: Option<u64>, floor: Option<u64>) -> String {
    let noun = if tasks == 1 { "task" } else { "tasks" };
    let head = format!("{tasks} {noun} admitted to the suite");
    match (registered, floor) {
        (_, Some(f)) if tasks < f => format!(
            "{head}, below the floor of {f}{}",
            registered
                .map(|r| format!(" (registered {r})"))
                .unwrap_or_default()
        ),
        (Some(r), Some(f)) if tasks < r => {
            format!("{head}: the floor of {f} is met, not the {r} registered")
        }
        (Some(r), None) if tasks < r => format!("{head}, fewer than the {r} registered"),
        (Some(r), Some(f)) => format!("{head}: registered {r}, floor {f}"),
        (Some(r), None) => format!("{head}: registered {r}"),
        (None, Some(f)) => format!("{head}: floor {f}"),
        (None, None) => head,
    }
}
