//! Pairing statistics in the `mcp-tape.stats/1` shape (R-TAPE-8).
//!
//! The figures must agree with the `trace_stats` blocks the reference
//! implementation stored in its records, so the rules are the reference's:
//! `tools/call` requests paired with responses by id (keyed per source file
//! and producer), an error is a JSON-RPC error or `result.isError: true`, a
//! request with no response is pending, latencies are nearest-rank
//! percentiles of whole milliseconds, and echoed turns are never model calls.
//!
//! Memory: lines are read one at a time and only the facts the figures need
//! are kept (a key, a timestamp and a tool name per call, a few numbers per
//! turn), never the lines themselves. The facts are settled in [`finish`]
//! because the reference pairs over the whole file: a response may precede
//! its request, and turns are ordered by time before pairing.
//!
//! [`finish`]: StatsBuilder::finish
//!
//! `collect` keeps the facts (`facts`), `settle` turns them into the
//! figures, `merge` joins two planes.

mod block;
mod collect;
mod facts;
mod merge;
mod settle;

pub use block::*;
pub use collect::StatsBuilder;
pub use merge::merge_planes;
