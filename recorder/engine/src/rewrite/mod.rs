//! Rewrite proposals tied to the recorded sessions they came from, and the
//! re-run that checks them (issue 11).
//!
//! - [`findings`]: what the tapes show about the tool descriptions, schemas,
//!   annotations and errors, each finding with the tape lines it rests on;
//! - [`proposals`]: a rewritten description or schema change per finding,
//!   from the deterministic rule set or the judge model;
//! - [`proxy`]: the stdio proxy that substitutes the proposals into
//!   `tools/list` responses (`fitness rewrite-proxy`);
//! - `fitness rewrite-check` (`commands::rewrite_check`) re-runs the same
//!   suite through the proxy and links the two records.

pub mod findings;
pub mod proposals;
pub mod proxy;
