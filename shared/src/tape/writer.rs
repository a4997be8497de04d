//! Appends lines to a tape, one complete line per write, flushed at once
//! (R-TAPE-7): a recorder killed mid-run leaves every line it finished, and
//! at worst one partial last line, which the reader skips and reports.
//!
//! A redacting writer ([`TapeWriter::redacting`]) passes every line through
//! the redaction policy first, so what reaches the file (and what its hash
//! covers) is the published form; a frame with nothing to redact is still
//! written byte for byte.

use std::borrow::Cow;
use std::io::{self, Write};
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::line::{self, Direction, Line};
use crate::redact::{Hits, Redactor};

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("failed to serialise the tape line")]
    Serialise(#[from] serde_json::Error),
    #[error("failed to write the tape line")]
    Io(#[from] io::Error),
    /// A line break inside a frame would split the tape line in two.
    #[error("the raw frame spans several lines; a tape line must be one line")]
    MultiLineFrame,
}

/// Writes tape lines to any `Write`, flushing after each.
pub struct TapeWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
    lines: u64,
    redactor: Option<Arc<Redactor>>,
    hits: Hits,
    bytes: u64,
}

impl<W: Write> TapeWriter<W> {
    /// A writer that writes lines as given.
    pub fn new(out: W) -> Self {
        TapeWriter {
            out,
            buf: Vec::new(),
            lines: 0,
            redactor: None,
            hits: Hits::default(),
            bytes: 0,
        }
    }

    /// A writer that redacts every line with `redactor` before writing it.
    pub fn redacting(out: W, redactor: Arc<Redactor>) -> Self {
        TapeWriter {
            redactor: Some(redactor),
            ..TapeWriter::new(out)
        }
    }

    /// What redaction replaced so far, by marker label.
    pub fn hits(&self) -> &Hits {
        &self.hits
    }

    /// Lines written so far.
    pub fn lines_written(&self) -> u64 {
        self.lines
    }

    /// Bytes written so far, line breaks included.
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// Write one typed line.
    pub fn write_line(&mut self, line: &Line) -> Result<(), WriteError> {
        if let Line::Message(m) = line
            && m.raw.get().contains(['\n', '\r'])
        {
            return Err(WriteError::MultiLineFrame);
        }
        let json = line.to_json()?;
        self.emit(&json)
    }

    /// Write a wire line whose frame is the exact text that crossed the
    /// wire. The frame is checked to be one JSON value and is written byte
    /// for byte: never re-serialised, so its key order and spacing survive.
    pub fn write_wire_frame(
        &mut self,
        t: &str,
        dir: Direction,
        frame: &str,
        corr_id: Option<&str>,
    ) -> Result<(), WriteError> {
        let raw: &RawValue = serde_json::from_str(frame)?;
        self.write_wire_raw(t, dir, raw, corr_id)
    }

    /// Write a wire line from an already validated frame.
    pub fn write_wire_raw(
        &mut self,
        t: &str,
        dir: Direction,
        raw: &RawValue,
        corr_id: Option<&str>,
    ) -> Result<(), WriteError> {
        if raw.get().contains(['\n', '\r']) {
            return Err(WriteError::MultiLineFrame);
        }
        let json = line::wire_json(t, dir, raw, corr_id, &Map::<String, Value>::new())?;
        self.emit(&json)
    }

    fn emit(&mut self, json: &str) -> Result<(), WriteError> {
        // Serialised JSON escapes every line break inside strings, so a
        // newline here can only come from a raw frame, checked above; a
        // redacted line is re-serialised, so it has none either.
        let json = match &self.redactor {
            Some(r) => r.redact_json_text(json, &mut self.hits),
            None => Cow::Borrowed(json),
        };
        self.buf.clear();
        self.buf.extend_from_slice(json.as_bytes());
        self.buf.push(b'\n');
        self.out.write_all(&self.buf)?;
        self.out.flush()?;
        self.lines += 1;
        self.bytes = self.bytes.saturating_add(self.buf.len() as u64);
        Ok(())
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}
