//! A record's gates read in words: every sentence a page or a record note
//! prints about what a gate saw, written once from the stored numbers so
//! that the words and the numbers printed beside them cannot disagree.
//!
//! - [`null_baseline`]: each null arm against the agent's rate and the
//!   line, why an arm did not run, and the reading the arms that ran
//!   support.
//! - [`construct`]: what the reference trials' own tape counts say about
//!   the server.
//! - [`extensions`]: what the pooled count resolved to after each batch.
//! - [`screen`]: the generation-time null screen's counts, the suite it
//!   emptied, and the bias it introduces.
//! - [`ledger`]: each gate's line in the ledger: where it stands and the
//!   numbers it saw.

pub mod construct;
pub mod extensions;
pub mod ledger;
pub mod null_baseline;
pub mod screen;
mod words;

pub use words::pct;
