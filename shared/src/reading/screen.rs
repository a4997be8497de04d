//! The generation-time null screen in words: what it was asked and what
//! it deleted, the suite it emptied, and the bias it introduces, which the
//! seed says is stated rather than buried.

use super::words::plural;
use crate::record::{GateDetail, NullScreenCount, PreRegistration, RunRecord, SuiteLedger};

/// The structural gate's reason when the screen deleted every admitted
/// candidate.
pub const EMPTIED: &str = "all_candidates_null_answerable";

/// Where the board prints [`BIAS_STATEMENT`] (its element id), for rows
/// and record pages to point to.
pub const BIAS_ANCHOR: &str = "screen-bias";

/// The title the board prints over [`BIAS_STATEMENT`].
pub const BIAS_TITLE: &str = "The null screen, and the bias it introduces";

/// The screen's bias, printed once on the board.
pub const BIAS_STATEMENT: [&str; 3] = [
    "A run that registers the null screen asks its runner to answer every admitted candidate with no tools and no server before the suite is hashed, and deletes each candidate the runner answers. The count deleted is on each run's record, and those candidates are never counted as generator failures.",
    "This is a bias, and it points one way. The null baseline a screened run meets later measures the noise floor of a suite already purged of the tasks that baseline looks for, so it reads lower than it would on an unscreened suite. The gate itself is unchanged: its ratio, its 95th percentile and its halt are the same, the screen never removes a task from a gate's denominator, and a screened suite can still be killed by the baseline.",
    "So a passed baseline on a screened row and a passed baseline on an unscreened row are not the same evidence. Each row says which suite it drove, and rows built by different generators are never read against each other.",
];

/// Whether the run drove a screened suite: the screen was registered and
/// ran (one registered but skipped, because the suite could no longer
/// reach its floor, screened nothing).
pub fn ran(record: &RunRecord) -> bool {
    record.preregistration.null_screen == Some(true) && record.suite.screen_skipped.is_none()
}

/// The screen's counts in one line, every candidate put to it accounted
/// for: screened, deleted, and kept unscreened because its call failed.
pub fn count_text(c: &NullScreenCount) -> String {
    if c.errors == 0 {
        return format!(
            "Null screen at generation: {} screened with no tools, {} deleted as answerable without the server",
            c.screened, c.dropped
        );
    }
    format!(
        "Null screen at generation: {} put to the screen; {} failed, so {} kept unscreened; of the {} screened, {} deleted as answerable without the server",
        plural(c.screened, "candidate", "candidates"),
        plural(c.errors, "screen call", "screen calls"),
        plural(c.unscreened(), "candidate was", "candidates were"),
        c.screened.saturating_sub(c.errors),
        c.dropped
    )
}

/// The screen's line on a record page: its counts, why a registered
/// screen did not run, or that none was registered or recorded.
pub fn ledger_text(suite: &SuiteLedger, prereg: &PreRegistration) -> String {
    match (&suite.null_screened, &suite.screen_skipped) {
        (Some(c), _) => count_text(c),
        (None, Some(why)) => format!("Null screen at generation: registered, {why}"),
        (None, None) if prereg.null_screen == Some(false) => {
            "Null screen at generation: not registered".to_owned()
        }
        (None, None) => "Null screen at generation: not recorded".to_owned(),
    }
}

/// A suite the screen emptied, read: its own finding, not a thin surface.
#[derive(Debug, Clone, PartialEq)]
pub struct Emptied {
    /// The suite's size in words, saying where the admitted candidates
    /// went (never "0 admitted" beside the admitted count).
    pub size: String,
    /// What the runner did, from the counts.
    pub what: String,
    /// The seed's reading: a statement about what the server adds.
    pub reading: String,
}

/// The numbers a suite the screen emptied is read from.
#[derive(Debug, Clone, PartialEq)]
pub struct EmptiedCounts {
    pub candidates: u64,
    pub admitted: u64,
    /// Deleted by the screen (all of the admitted).
    pub deleted: u64,
    pub runner: String,
    pub registered: Option<u64>,
    pub floor: Option<u64>,
}

impl Emptied {
    /// The reading of the counts.
    pub fn of(c: &EmptiedCounts) -> Emptied {
        let limits: Vec<String> = [
            c.registered.map(|n| format!("registered {n}")),
            c.floor.map(|f| format!("floor {f}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        let limits = if limits.is_empty() {
            String::new()
        } else {
            format!(" ({})", limits.join(", "))
        };
        Emptied {
            size: format!(
                "0 tasks in the suite: the null screen deleted all {} that passed admission{limits}",
                plural(c.deleted, "candidate", "candidates")
            ),
            what: format!(
                "The generator wrote {}, {} passed admission, and the runner {} answered every one of them with no tools and no server, each reply accepted by the candidate's own check, so the screen deleted them all before the suite was hashed ({} runner calls).",
                plural(c.candidates, "candidate", "candidates"),
                c.admitted,
                c.runner,
                c.deleted
            ),
            reading: "Enough tasks were generated, and a model answered them all with no server at all. That is a statement about what this server adds over what the model already knows, not about how many tools it has, so the run is refused as DEGENERATE and not as a thin surface.".to_owned(),
        }
    }

    /// The three parts in one paragraph, as the record's note says it.
    pub fn text(&self) -> String {
        format!("{}. {} {}", self.size, self.what, self.reading)
    }
}

/// The reading of a run the screen emptied (`DEGENERATE`,
/// `all_candidates_null_answerable`); `None` for any other.
pub fn emptied(record: &RunRecord) -> Option<Emptied> {
    let structural = record.gates.record("structural")?;
    if structural.reason != EMPTIED {
        return None;
    }
    let admitted = record
        .suite
        .admitted
        .or(match &structural.detail {
            GateDetail::Structural { n_generated, .. } => *n_generated,
            _ => None,
        })
        .unwrap_or(0);
    Some(Emptied::of(&EmptiedCounts {
        candidates: record.suite.candidates.unwrap_or(admitted),
        admitted,
        deleted: record
            .suite
            .null_screened
            .as_ref()
            .map_or(admitted, |s| s.dropped),
        runner: record.run.runner_model.clone(),
        registered: record.preregistration.n_tasks,
        floor: record.preregistration.min_tasks,
    }))
}
