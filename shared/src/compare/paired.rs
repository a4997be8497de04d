//! The paired reading of two runs of one suite: trial k of task t before
//! against trial k of task t after, over the tasks both runs drove. The
//! same task passed before and failed after is far stronger evidence than
//! two independent samples, so this reading decides whenever the two runs
//! share a suite hash.
//!
//! A trial's outcome is its first-try outcome (answered correctly with no
//! failed call on the way), the rule that makes the first repetition the
//! task's first-try success. A record made before per-repetition outcomes
//! were kept pairs the first trial of each task only, and says so.

use serde::Serialize;

use crate::gates::DEFAULT_ALPHA;
use crate::record::{RunRecord, TaskResult};
use crate::stats::{mcnemar_exact, mcnemar_midp, paired_difference_interval};

use super::verdict::Verdict;

/// One task whose trials changed outcome, with the trials that did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Flip {
    pub task_id: String,
    /// The trials that changed, numbered from 1 (the task's first
    /// repetition is trial 1).
    pub trials: Vec<u64>,
}

/// The paired 2x2 table of two runs of one suite, its McNemar p-values and
/// Newcombe's interval of the drop, and the tasks that flipped.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedReading {
    /// The suite both runs drove.
    pub suite_hash: String,
    /// The registered significance level the interval is drawn at
    /// (confidence `1 - alpha`).
    pub alpha: f64,
    /// Tasks both runs drove, and the trials of each that were paired.
    pub tasks: u64,
    pub trials_per_task: u64,
    /// Why only each task's first trial is paired, when it is (a record
    /// made before per-trial outcomes were kept).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_trials_only: Option<String>,
    /// Tasks only one of the runs drove (not paired).
    pub unpaired_tasks: u64,
    /// Pairs: `both + before_only + after_only + neither`.
    pub pairs: u64,
    /// Passed before and after.
    pub both: u64,
    /// Passed before, failed after.
    pub before_only: u64,
    /// Failed before, passed after.
    pub after_only: u64,
    /// Failed before and after.
    pub neither: u64,
    /// First-try success over the pairs, before and after.
    pub before_rate: f64,
    pub after_rate: f64,
    /// `before_rate - after_rate`: positive is a drop.
    pub drop: f64,
    /// Newcombe's paired interval of the drop at confidence `1 - alpha`.
    pub low: f64,
    pub high: f64,
    /// McNemar's mid-p and exact conditional p-values over the discordant pairs.
    pub p_midp: f64,
    pub p_exact: f64,
    /// Tasks with trials that passed before and failed after.
    pub lost: Vec<Flip>,
    /// Tasks with trials that failed before and passed after.
    pub gained: Vec<Flip>,
}

/// A confidence level in words: `95%`, `99%`, `97.5%`.
pub fn confidence_text(alpha: f64) -> String {
    let pct = format!("{:.1}", (1.0 - alpha) * 100.0);
    format!("{}%", pct.strip_suffix(".0").unwrap_or(&pct))
}

/// A p-value as every page prints it: four decimals, or a power of ten
/// below 0.0001.
pub fn p_text(p: f64) -> String {
    if p >= 1e-4 {
        format!("{p:.4}")
    } else {
        format!("{p:.1e}")
    }
}

impl PairedReading {
    /// The interval of the drop in points: `95% CI -3.1 to 25.0 points`.
    pub fn interval_text(&self) -> String {
        format!(
            "{} CI {:.1} to {:.1} points",
            confidence_text(self.alpha),
            self.low * 100.0,
            self.high * 100.0
        )
    }

    /// The drop with the two rates and its interval: `33.3 points (before
    /// 75.0%, after 41.7%), 95% CI 10.9 to 51.4 points`.
    pub fn drop_text(&self) -> String {
        format!(
            "{:.1} points (before {:.1}%, after {:.1}%), {}",
            self.drop * 100.0,
            self.before_rate * 100.0,
            self.after_rate * 100.0,
            self.interval_text()
        )
    }

    /// The p-values: `McNemar mid-p 0.0347 (exact 0.0525)`.
    pub fn p_line(&self) -> String {
        format!(
            "McNemar mid-p {} (exact {})",
            p_text(self.p_midp),
            p_text(self.p_exact)
        )
    }

    /// What was paired, in one sentence.
    pub fn pairs_text(&self) -> String {
        let mut out = format!(
            "trial k of task t before against trial k of task t after, {} pairs over the {} tasks both runs drove, {} trials each",
            self.pairs, self.tasks, self.trials_per_task
        );
        if self.unpaired_tasks > 0 {
            out.push_str(&format!(
                "; {} tasks only one run drove are left out",
                self.unpaired_tasks
            ));
        }
        if let Some(why) = &self.first_trials_only {
            out.push_str(&format!("; first trials only: {why}"));
        }
        out
    }

    /// The verdict: a regression when the interval of the drop lies
    /// entirely above 0, an improvement when entirely below.
    pub fn verdict(&self) -> (Verdict, String) {
        let reading = format!(
            "read pair by pair, {} trials passed before and failed after, {} the other way: a drop of {:.1} points, {}",
            self.before_only,
            self.after_only,
            self.drop * 100.0,
            self.interval_text()
        );
        if self.low > 0.0 {
            (
                Verdict::Regressed,
                format!("First-try success fell: {reading}, entirely above 0."),
            )
        } else if self.high < 0.0 {
            (
                Verdict::Improved,
                format!("First-try success rose: {reading}, entirely below 0."),
            )
        } else {
            (
                Verdict::NoChangeEstablished,
                format!("No change in first-try success is established: {reading}, which holds 0."),
            )
        }
    }
}

/// A task's per-trial first-try outcomes: every repetition's when the
/// record keeps them, else its first trial's alone.
fn trial_outcomes(task: &TaskResult, every_rep: bool) -> Vec<bool> {
    if every_rep {
        task.first_try_by_rep.clone()
    } else {
        vec![task.first_try_success]
    }
}

/// The paired reading of two scored runs of one suite; the reason it does
/// not apply otherwise (the runs are then read as independent samples).
pub fn pair(before: &RunRecord, after: &RunRecord) -> Result<PairedReading, String> {
    let (sb, sa) = (&before.run.suite_hash, &after.run.suite_hash);
    if sb.is_empty() || sb != sa {
        return Err(format!(
            "the runs drove different suites ({} before, {} after)",
            or_unrecorded(sb),
            or_unrecorded(sa)
        ));
    }
    let (Some(score_b), Some(score_a)) = (&before.score, &after.score) else {
        return Err("a run has no score, so it has no trials to pair".to_owned());
    };
    let shared: Vec<(&TaskResult, &TaskResult)> = score_b
        .tasks
        .iter()
        .filter_map(|b| {
            score_a
                .tasks
                .iter()
                .find(|a| a.task_id == b.task_id)
                .map(|a| (b, a))
        })
        .collect();
    let all_tasks = |tasks: &[TaskResult]| tasks.len() as u64;
    let unpaired_tasks =
        all_tasks(&score_b.tasks) + all_tasks(&score_a.tasks) - 2 * shared.len() as u64;
    let every_rep = shared
        .iter()
        .all(|(b, a)| !b.first_try_by_rep.is_empty() && !a.first_try_by_rep.is_empty());
    let first_trials_only = (!every_rep).then(|| {
        let which = if shared.iter().any(|(b, _)| b.first_try_by_rep.is_empty()) {
            "before"
        } else {
            "after"
        };
        format!(
            "the {which} record keeps no per-trial outcomes (it was made before they were kept)"
        )
    });
    let mut table = [0u64; 4];
    let (mut lost, mut gained) = (Vec::new(), Vec::new());
    let mut trials_per_task = u64::MAX;
    for (b, a) in &shared {
        let (ob, oa) = (trial_outcomes(b, every_rep), trial_outcomes(a, every_rep));
        let paired = ob.len().min(oa.len());
        trials_per_task = trials_per_task.min(paired as u64);
        let (mut down, mut up) = (Vec::new(), Vec::new());
        for (k, (&pb, &pa)) in ob.iter().zip(&oa).enumerate() {
            let trial = k as u64 + 1;
            match (pb, pa) {
                (true, true) => table[0] += 1,
                (true, false) => {
                    table[1] += 1;
                    down.push(trial);
                }
                (false, true) => {
                    table[2] += 1;
                    up.push(trial);
                }
                (false, false) => table[3] += 1,
            }
        }
        let flip = |trials: Vec<u64>| Flip {
            task_id: b.task_id.clone(),
            trials,
        };
        if !down.is_empty() {
            lost.push(flip(down));
        }
        if !up.is_empty() {
            gained.push(flip(up));
        }
    }
    let [both, before_only, after_only, neither] = table;
    let pairs = table.iter().sum::<u64>();
    if pairs == 0 {
        return Err("no trial of a task both runs drove can be paired".to_owned());
    }
    // The run under test registered the level it is read at.
    let alpha = after
        .preregistration
        .alpha
        .or(before.preregistration.alpha)
        .unwrap_or(DEFAULT_ALPHA);
    let (low, high) = paired_difference_interval(both, before_only, after_only, neither, alpha);
    let n = pairs as f64;
    Ok(PairedReading {
        suite_hash: sb.clone(),
        alpha,
        tasks: shared.len() as u64,
        trials_per_task,
        first_trials_only,
        unpaired_tasks,
        pairs,
        both,
        before_only,
        after_only,
        neither,
        before_rate: (both + before_only) as f64 / n,
        after_rate: (both + after_only) as f64 / n,
        drop: (before_only as f64 - after_only as f64) / n,
        low,
        high,
        p_midp: mcnemar_midp(before_only, after_only),
        p_exact: mcnemar_exact(before_only, after_only),
        lost,
        gained,
    })
}

fn or_unrecorded(hash: &str) -> &str {
    if hash.is_empty() {
        "not recorded"
    } else {
        hash
    }
}
