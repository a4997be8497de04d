//! The board index (`data/board.json`): one compact row per published run,
//! the groups the board shows, and the counts for its masthead and ledger.
//!
//! Everything here is computed once, from stored records, by
//! [`build_board`]; the viewer renders these fields and recomputes nothing.
//! Rules the board keeps:
//! - scored rows are grouped by runner model *and* generator, and rows of
//!   different groups are never compared;
//! - refusals are grouped by the cost tier of the gate that stopped them
//!   (free, cheap, paid), and a group says when it mixes generators;
//! - every run of a server is a numbered attempt that counts the others by
//!   outcome and links the server's history page, so the index stays
//!   linear in the number of runs;
//! - a scored group states whether any pair of its intervals is separated,
//!   from the stored intervals only ([`crate::stats::separated`]).

mod build;
mod from_record;
mod groups;
mod index;
mod row;

pub use build::build_board;
pub use from_record::{p_text, row_for, zero_policy_note};
pub use groups::Group;
pub use index::{
    BOARD_SCHEMA, Board, Counts, MissingStandingNotes, Spend, SpendReason, StandingNotes, spend,
};
pub use row::{
    AttemptRef, AttemptWords, GENERATOR_NOT_RECORDED, NAMED_ATTEMPTS, Row, RowAttempt,
    RowConformance, RowCost, RowEconomics, RowKinds, RowProbes, RowResult, RowSeeded, RowServer,
    RowStanding, ScoreCaveat, Tier, compromised_title, outcome_counts, score_caveat,
};

#[cfg(test)]
mod tests;
