//! A tolerant, streaming tape reader over any `BufRead`.
//!
//! One line is held at a time, so memory is bounded by the longest line (and
//! by [`TapeReader::with_max_line_bytes`], past which a line is skipped
//! without being buffered). A line that is not UTF-8, not JSON or not a JSON
//! object is skipped, counted and explained with its line number; it never
//! fails the file. Blank lines are ignored. Only an I/O error stops a read.

use std::io::{self, BufRead};

use super::line::Line;

/// Lines longer than this are skipped unless the caller sets another bound.
pub const DEFAULT_MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// How many skipped lines are explained one by one; the rest are counted.
pub const MAX_EXPLAINED_SKIPS: usize = 100;

/// Why a line was skipped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    #[error("line is not valid UTF-8")]
    NotUtf8,
    #[error("line is not JSON: {0}")]
    NotJson(String),
    #[error("line is JSON but not an object")]
    NotAnObject,
    #[error("line is longer than {limit} bytes")]
    TooLong { limit: usize },
}

/// A skipped line and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based line number in the file.
    pub line: u64,
    pub reason: SkipReason,
}

impl std::fmt::Display for SkippedLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// What was skipped: every skip counted, the first [`MAX_EXPLAINED_SKIPS`]
/// explained.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkipReport {
    pub count: u64,
    pub explained: Vec<SkippedLine>,
}

impl SkipReport {
    pub fn record(&mut self, line: u64, reason: SkipReason) {
        self.count += 1;
        if self.explained.len() < MAX_EXPLAINED_SKIPS {
            self.explained.push(SkippedLine { line, reason });
        }
    }
}

/// One non-blank line whose first character opens a JSON object, with its
/// 1-based line number. The bytes are not yet checked to be UTF-8: a JSON
/// parser checks them anyway, so checking here would read every line twice.
#[derive(Debug, Clone, Copy)]
pub struct RawLine<'a> {
    pub number: u64,
    pub bytes: &'a [u8],
}

/// A typed line with its 1-based line number.
#[derive(Debug, Clone, PartialEq)]
pub struct NumberedLine {
    pub number: u64,
    pub line: Line,
}

/// Reads a tape line by line.
pub struct TapeReader<R> {
    inner: R,
    buf: Vec<u8>,
    number: u64,
    max_line_bytes: usize,
    skips: SkipReport,
    bytes_read: u64,
    done: bool,
}

enum Fill {
    Line,
    TooLong,
    Eof,
}

impl<R: BufRead> TapeReader<R> {
    pub fn new(inner: R) -> Self {
        TapeReader {
            inner,
            buf: Vec::new(),
            number: 0,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            skips: SkipReport::default(),
            bytes_read: 0,
            done: false,
        }
    }

    /// Skip (without buffering) any line longer than `limit` bytes.
    pub fn with_max_line_bytes(mut self, limit: usize) -> Self {
        self.max_line_bytes = limit;
        self
    }

    /// Lines skipped so far.
    pub fn skips(&self) -> &SkipReport {
        &self.skips
    }

    /// Bytes consumed so far.
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }

    /// Fill `buf` with the next line, without its newline.
    fn fill(&mut self) -> io::Result<Fill> {
        self.buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                return Ok(match (any, too_long) {
                    (false, _) => Fill::Eof,
                    (true, true) => Fill::TooLong,
                    (true, false) => Fill::Line,
                });
            }
            any = true;
            let (chunk, used, complete) = match memchr::memchr(b'\n', available) {
                Some(i) => (&available[..i], i + 1, true),
                None => (available, available.len(), false),
            };
            if !too_long {
                if self.buf.len() + chunk.len() > self.max_line_bytes {
                    too_long = true;
                    self.buf.clear();
                } else {
                    self.buf.extend_from_slice(chunk);
                }
            }
            self.inner.consume(used);
            self.bytes_read += used as u64;
            if complete {
                return Ok(if too_long { Fill::TooLong } else { Fill::Line });
            }
        }
    }

    /// The next non-blank line whose first character opens a JSON object, or
    /// `None` at the end. Lines that fail these checks are recorded in
    /// [`skips`](Self::skips) and passed over. Whether the line is UTF-8 and
    /// valid JSON is left to the caller's parser; the caller reports a failure
    /// with [`record_skip`](Self::record_skip).
    pub fn next_raw(&mut self) -> io::Result<Option<RawLine<'_>>> {
        loop {
            if self.done {
                return Ok(None);
            }
            let fill = self.fill()?;
            self.number += 1;
            match fill {
                Fill::Eof => {
                    self.done = true;
                    return Ok(None);
                }
                Fill::TooLong => {
                    let limit = self.max_line_bytes;
                    self.skips
                        .record(self.number, SkipReason::TooLong { limit });
                    continue;
                }
                Fill::Line => {}
            }
            let mut bytes = self.buf.as_slice();
            if self.number == 1 {
                // A UTF-8 byte order mark is not part of the first line.
                bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
            }
            if bytes.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
            if first != Some(&b'{') {
                let reason = match std::str::from_utf8(bytes) {
                    Err(_) => SkipReason::NotUtf8,
                    Ok(text) => match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                        Ok(_) => SkipReason::NotAnObject,
                        Err(e) => SkipReason::NotJson(e.to_string()),
                    },
                };
                self.skips.record(self.number, reason);
                continue;
            }
            // Re-borrow: the checks above ended their borrows of `buf`.
            let start = self.buf.len() - bytes.len();
            return Ok(Some(RawLine {
                number: self.number,
                bytes: &self.buf[start..],
            }));
        }
    }

    /// Record that the caller could not use line `number`.
    pub fn record_skip(&mut self, number: u64, reason: SkipReason) {
        self.skips.record(number, reason);
    }

    /// The next typed line.
    pub fn next_line(&mut self) -> io::Result<Option<NumberedLine>> {
        loop {
            let Some(raw) = self.next_raw()? else {
                return Ok(None);
            };
            let number = raw.number;
            // Bytes that are not UTF-8 read as U+FFFD, as a JS reader sees them.
            let text = String::from_utf8_lossy(raw.bytes);
            match Line::parse(&text) {
                Ok(line) => return Ok(Some(NumberedLine { number, line })),
                Err(e) => self.record_skip(number, SkipReason::NotJson(e.to_string())),
            }
        }
    }
}

impl<R: BufRead> Iterator for TapeReader<R> {
    type Item = io::Result<NumberedLine>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_line() {
            Ok(Some(line)) => Some(Ok(line)),
            Ok(None) => None,
            Err(e) => {
                // An I/O error ends the read; it is reported once.
                self.done = true;
                Some(Err(e))
            }
        }
    }
}
