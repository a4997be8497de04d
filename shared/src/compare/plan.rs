//! Power before paying (`fitness compare --plan BASELINE`): what a rerun of
//! the baseline's suite at its size can establish in the paired reading,
//! and what size a chosen drop would need, at the baseline's registered
//! alpha and planned power, under a stated discordance (the share of
//! pairs expected to disagree, one way or the other).

use serde::Serialize;

use crate::gates::{DEFAULT_ALPHA, DEFAULT_PLANNED_POWER};
use crate::record::RunRecord;
use crate::stats::{paired_detectable_drop, paired_pairs_for_drop};

use super::paired::confidence_text;

/// The paired design of a rerun of one suite, sized by Connor's formula
/// for McNemar's test ([`paired_pairs_for_drop`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedPlan {
    /// The baseline run.
    pub run: String,
    /// Its suite's tasks and the trials of each: a rerun with `--suite`
    /// drives the same.
    pub tasks: u64,
    pub trials_per_task: u64,
    pub pairs: u64,
    pub alpha: f64,
    pub power: f64,
    /// The stated share of pairs that disagree.
    pub discordance: f64,
    /// The smallest drop (before minus after, 0 to 1) detected with
    /// `power` at this size; `None` when no drop up to the discordance is.
    pub detectable_drop: Option<f64>,
    /// The chosen drop, the pairs it needs, and the tasks at this many
    /// trials each.
    pub drop: f64,
    pub pairs_for_drop: Option<u64>,
    pub tasks_for_drop: Option<u64>,
}

/// The paired design of a rerun of `baseline`'s suite.
pub fn plan(baseline: &RunRecord, discordance: f64, drop: f64) -> PairedPlan {
    let prereg = &baseline.preregistration;
    // The drive's own counts where it scored (what a rerun pairs), else
    // what was registered.
    let (tasks, trials_per_task) = match &baseline.score {
        Some(score) if !score.tasks.is_empty() => (
            score.tasks.len() as u64,
            score
                .tasks
                .iter()
                .map(|t| t.reps.unwrap_or(1))
                .min()
                .unwrap_or(1),
        ),
        _ => (prereg.n_tasks.unwrap_or(0), prereg.reps.unwrap_or(1)),
    };
    let pairs = tasks * trials_per_task;
    let alpha = prereg.alpha.unwrap_or(DEFAULT_ALPHA);
    let power = prereg.planned_power.unwrap_or(DEFAULT_PLANNED_POWER);
    let pairs_for_drop = paired_pairs_for_drop(drop, discordance, alpha, power);
    PairedPlan {
        run: baseline.run.id.clone(),
        tasks,
        trials_per_task,
        pairs,
        alpha,
        power,
        discordance,
        detectable_drop: paired_detectable_drop(pairs, discordance, alpha, power),
        drop,
        pairs_for_drop,
        tasks_for_drop: pairs_for_drop.map(|n| n.div_ceil(trials_per_task.max(1))),
    }
}

impl PairedPlan {
    /// The plan in sentences, the numbers first.
    pub fn lines(&self) -> Vec<String> {
        let design = format!(
            "at alpha {} ({} interval), power {:.0}%, with {:.1}% of pairs disagreeing",
            self.alpha,
            confidence_text(self.alpha),
            self.power * 100.0,
            self.discordance * 100.0
        );
        let size = format!(
            "{} pairs ({} tasks x {} trials)",
            self.pairs, self.tasks, self.trials_per_task
        );
        let detectable = match self.detectable_drop {
            Some(d) => format!(
                "Smallest drop a paired rerun of {size} establishes, {design}: {:.1} points of first-try success.",
                d * 100.0
            ),
            None => format!(
                "No drop of up to {:.1} points is established by a paired rerun of {size}, {design}: even every disagreeing pair falling one way is too few.",
                self.discordance * 100.0
            ),
        };
        let needed = match (self.pairs_for_drop, self.tasks_for_drop) {
            (Some(n), Some(t)) => format!(
                "A drop of {:.1} points needs {n} pairs: {t} tasks at {} trials each.",
                self.drop * 100.0,
                self.trials_per_task
            ),
            _ => format!(
                "A drop of {:.1} points cannot be planned with {:.1}% of pairs disagreeing: a drop is made of disagreeing pairs, so it cannot exceed them.",
                self.drop * 100.0,
                self.discordance * 100.0
            ),
        };
        vec![
            detectable,
            needed,
            "Sized by Connor's formula for McNemar's test (Biometrics 43:207, 1987); the trials of one task are counted as independent pairs.".to_owned(),
        ]
    }
}
