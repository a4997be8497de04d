//! The whole board index: the board, its counts, its measured spend and
//! the standing notes its rows reference.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::groups::Group;
use super::row::Row;
use crate::record::{Cost, StandingNotesSet};

/// Schema id of `board.json`. Version 4: the conformance column counts
/// only the scenarios for what the server declared, the rest apart (a
/// version 3 board's column counted every scenario, and still reads).
/// Version 3: scored groups are keyed by
/// credential context too (group ids change), and a row names its nearest
/// other attempts. A version 2 board still reads (the new fields default):
/// attempts counted, tape paths the record's own, rows with their signature
/// state, per-task economics and any caveat on an imported score, the
/// board's measured spend.
pub const BOARD_SCHEMA: &str = "fitness-board/4";

/// The whole board index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Board {
    pub schema: String,
    /// When the board was published (ISO 8601), as given by the publisher.
    pub published_at: String,
    /// The publisher's ed25519 public key (base64), when records are signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher_key: Option<String>,
    pub counts: Counts,
    /// The model spend the records measured, summed once for the masthead.
    pub spend: Spend,
    pub groups: Vec<Group>,
    pub rows: Vec<Row>,
    /// The standing-notes sets the rows reference, each printed once in the
    /// board's methods section (filled by [`Board::attach_standing_notes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standing_notes: Vec<StandingNotes>,
    /// sha256 of the viewer build's page shell the site's pages were
    /// rendered into, when it has pages: a later publish over the site keeps
    /// the page of an unchanged run only under the same shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer_shell: Option<String>,
}

/// One standing-notes set as the board prints it: once, with how many of the
/// board's runs carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingNotes {
    /// `sha256:<hex>`, as the records reference it.
    pub set_id: String,
    pub generator: String,
    pub notes: Vec<String>,
    /// How many of the board's rows carry this set.
    pub runs: u64,
}

impl StandingNotes {
    /// The anchor of this set in the methods section (`standing-<first 12 hex>`).
    pub fn anchor(set_id: &str) -> String {
        let hex = set_id.strip_prefix("sha256:").unwrap_or(set_id);
        let short: String = hex
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(12)
            .collect();
        format!("standing-{short}")
    }
}

/// A set some row references that the publisher could not supply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingStandingNotes {
    pub set_id: String,
    /// The first row referencing it.
    pub run: String,
}

impl std::fmt::Display for MissingStandingNotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "run {} carries standing-notes set {}, which was not supplied",
            self.run, self.set_id
        )
    }
}

impl std::error::Error for MissingStandingNotes {}

impl Board {
    /// Put the standing-notes sets the rows reference into the board, in the
    /// order rows first reference them, each once. Sets no row references are
    /// left out; a referenced set missing from `sets` is an error.
    pub fn attach_standing_notes(
        &mut self,
        sets: &BTreeMap<String, StandingNotesSet>,
    ) -> Result<(), MissingStandingNotes> {
        let mut out: Vec<StandingNotes> = Vec::new();
        for row in &self.rows {
            let Some(standing) = &row.standing else {
                continue;
            };
            if let Some(known) = out.iter_mut().find(|s| s.set_id == standing.set_id) {
                known.runs += 1;
                continue;
            }
            let set = sets
                .get(&standing.set_id)
                .ok_or_else(|| MissingStandingNotes {
                    set_id: standing.set_id.clone(),
                    run: row.id.clone(),
                })?;
            out.push(StandingNotes {
                set_id: standing.set_id.clone(),
                generator: set.generator.clone(),
                notes: set.notes.clone(),
                runs: 1,
            });
        }
        self.standing_notes = out;
        Ok(())
    }
}

/// Masthead and outcome-ledger numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub runs: u64,
    pub scored: u64,
    /// Runs that published no score (every refusal, VOID included).
    pub refused: u64,
    /// Runs per outcome code (`SCORED`, `DEGENERATE`, ...).
    pub by_outcome: BTreeMap<String, u64>,
    /// Per tier (`free`, `cheap`, `paid`, `scored`): outcome code -> runs.
    pub by_tier: BTreeMap<String, BTreeMap<String, u64>>,
}

/// The model spend of every run on the board, from each record's cost: a
/// total only when every run's figure is a total.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// The sum of every dollar figure the runs carry (totals and floors).
    pub usd: f64,
    /// Runs whose figure is a total.
    pub total_runs: u64,
    /// Runs whose figure is a floor ("at least").
    pub floor_runs: u64,
    /// Runs that carry no figure.
    pub none_runs: u64,
    /// Why the sum is a floor: each reason a run gives, with how many runs
    /// give it, most common first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<SpendReason>,
}

impl Spend {
    /// Whether the sum is a total: nothing known is missing from any run's figure.
    pub fn is_total(&self) -> bool {
        self.floor_runs == 0 && self.none_runs == 0
    }
}

/// One reason some runs' figures are floors, or missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpendReason {
    pub reason: String,
    pub runs: u64,
}

/// Sum the runs' costs into the board's spend.
pub fn spend(costs: &[&Cost]) -> Spend {
    let mut out = Spend::default();
    let mut reasons: Vec<SpendReason> = Vec::new();
    let mut note = |reason: String| match reasons.iter_mut().find(|r| r.reason == reason) {
        Some(r) => r.runs += 1,
        None => reasons.push(SpendReason { reason, runs: 1 }),
    };
    for cost in costs {
        match cost {
            Cost::Total { usd, .. } => {
                out.usd += usd;
                out.total_runs += 1;
            }
            Cost::Floor { usd, reasons, .. } => {
                out.usd += usd;
                out.floor_runs += 1;
                for r in reasons {
                    note(r.clone());
                }
            }
            Cost::None { why } => {
                out.none_runs += 1;
                note(format!("no dollar figure: {why}"));
            }
        }
    }
    // Most common first; ties keep first-seen order.
    reasons.sort_by_key(|r| std::cmp::Reverse(r.runs));
    out.reasons = reasons;
    out
}
