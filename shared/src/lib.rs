//! `fitness-shared`: every type that crosses a file (run records, mcp-tape
//! lines, the board index) and every number that is published (statistics and
//! gate decisions).
//!
//! The crate does no I/O beyond what its callers hand it (`BufRead`/`Write`),
//! pulls in no async runtime, and builds for `wasm32-unknown-unknown`, so the
//! recorder and the viewer share one copy of the maths and the formats.

pub mod board;
pub mod compare;
pub mod cost;
pub mod gate_state;
pub mod gates;
pub mod generators;
pub mod reading;
pub mod stats;
mod tagged;
pub mod tape;
pub mod time;
pub mod wire_name;

pub use record::{RECORD_SCHEMA, RECORD_SCHEMA_V1};

/// The tape format version this crate reads and writes (`meta.v`).
pub const TAPE_VERSION: u64 = 1;

/// Product version, stamped into tapes and records as the producer.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

pub mod integrity;
pub mod record;
pub mod redact;
pub mod site;
