//! mcp-tape v1: the line model, a tolerant streaming reader, a line-by-line
//! writer, and the `mcp-tape.stats/1` pairing statistics (SPEC §2, R-TAPE).
//!
//! - [`line`]: typed lines (meta, wire message, event, turn, end, unknown).
//! - [`reader`]: [`TapeReader`] over any `BufRead`; skips and explains bad
//!   lines, never fails a file for one.
//! - [`writer`]: [`TapeWriter`] over any `Write`; one flushed line per call,
//!   wire frames written byte for byte.
//! - [`jsonrpc`]: the one text of a JSON-RPC error object.
//! - [`pairing`]: which response answers which request, for every reader.
//! - [`view`]: [`LineView`], the one typed reading of a line, for every reader.
//! - [`timeline`]: the merged, paired, time-ordered view the replay page shows.
//! - [`stats`]: [`StatsBuilder`] and [`merge_planes`], the figures the
//!   anchor's `trace_stats` blocks hold.

pub mod js;
pub mod jsonrpc;
pub mod line;
pub mod pairing;
pub mod reader;
pub mod stats;
pub mod timeline;
pub mod view;
pub mod writer;

use std::io::{self, BufRead};

pub use line::{
    Block, Direction, End, Event, EventDir, KnownBlock, Line, LineKind, Meta, Plane, Producer,
    Timing, Turn, UnknownLine, UnknownWhy, Usage, WireMessage,
};
pub use reader::{NumberedLine, RawLine, SkipReason, SkipReport, SkippedLine, TapeReader};
pub use stats::{Stats, StatsBuilder, TraceStats, merge_planes};
pub use view::LineView;
pub use writer::{TapeWriter, WriteError};

/// Feed every line of one tape into `builder`, as a new source file.
/// Returns what was skipped and why; only an I/O error fails.
pub fn add_tape<R: BufRead>(input: R, builder: &mut StatsBuilder) -> io::Result<SkipReport> {
    builder.next_file();
    let mut reader = TapeReader::new(input);
    while let Some(raw) = reader.next_raw()? {
        let number = raw.number;
        if let Err(e) = builder.push_line(raw.bytes) {
            reader.record_skip(number, SkipReason::NotJson(e.to_string()));
        }
    }
    builder.add_skipped(reader.skips().count);
    Ok(reader.skips().clone())
}
