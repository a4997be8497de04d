//! The `fitness-report/2` types, one file a concept; every type is
//! re-exported here, so `crate::record::X` names them all.

mod access;
mod conformance;
mod discovery;
mod gates;
mod input;
mod notes;
mod outcome;
mod prereg;
mod probes;
mod redactions;
mod rewrite;
mod run;
mod score;
mod server;
mod shape;
mod suite;
mod tapes;
mod tool_list;

pub use access::*;
pub use conformance::*;
pub use discovery::*;
pub use gates::*;
pub use input::*;
pub use notes::*;
pub use outcome::*;
pub use prereg::*;
pub use probes::*;
pub use redactions::*;
pub use rewrite::*;
pub use run::*;
pub use score::*;
pub use server::*;
pub use shape::*;
pub use suite::*;
pub use tapes::*;
pub use tool_list::*;

/// The record schema id this crate writes.
pub const RECORD_SCHEMA: &str = "fitness-report/2";
/// The older record schema id this crate imports.
pub const RECORD_SCHEMA_V1: &str = "fitness-report/1";
