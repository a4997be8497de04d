//! Cutting what a server sends into frames, within limits: newline-delimited
//! JSON-RPC lines (stdio, the rewrite proxy) and server-sent events (the raw
//! HTTP probes). Pure code with no I/O, so the transports and the fuzz
//! targets run the same thing.
//!
//! A line or event longer than its limit is never held whole: it is reported
//! once as [`Piece::TooLong`] and the rest of it is skipped, so memory stays
//! bounded by the limit whatever a server writes.

use std::borrow::Cow;

use serde_json::value::RawValue;

/// The longest line accepted from a server (or a client, in the proxy).
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// The longest server-sent event (its `data:` lines together).
pub const MAX_EVENT: usize = 16 * 1024 * 1024;

/// What a [`BoundedLines`] hands on.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// One complete line, without its `\n`.
    Line(&'a [u8]),
    /// A line passed the limit; the rest of it, up to its `\n`, is skipped.
    TooLong,
}

/// Splits a byte stream into lines of at most `max` bytes.
#[derive(Debug)]
pub struct BoundedLines {
    max: usize,
    line: Vec<u8>,
    /// Set while skipping the rest of an oversized line.
    skipping: bool,
}

impl BoundedLines {
    pub fn new(max: usize) -> Self {
        BoundedLines {
            max,
            line: Vec::new(),
            skipping: false,
        }
    }

    /// Feed the next chunk; `out` gets each line it completes, in order.
    pub fn push(&mut self, chunk: &[u8], mut out: impl FnMut(Piece<'_>)) {
        let mut rest = chunk;
        while !rest.is_empty() {
            let (part, done) = match newline_at(rest) {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            rest = &rest[(part.len() + usize::from(done)).min(rest.len())..];
            if !self.skipping {
                if self.line.len().saturating_add(part.len()) > self.max {
                    self.skipping = true;
                    self.line = Vec::new();
                    out(Piece::TooLong);
                } else {
                    self.line.extend_from_slice(part);
                }
            }
            if done {
                if self.skipping {
                    self.skipping = false;
                } else {
                    out(Piece::Line(&self.line));
                    self.line.clear();
                }
            }
        }
    }

    /// The end of the stream: the last line, when it had no `\n`.
    pub fn finish(&mut self, mut out: impl FnMut(Piece<'_>)) {
        if !self.skipping && !self.line.is_empty() {
            out(Piece::Line(&self.line));
        }
        self.line.clear();
        self.skipping = false;
    }

    /// Bytes held for the line in progress (never more than the limit).
    pub fn pending(&self) -> usize {
        self.line.len()
    }
}

fn newline_at(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// One line from a server, as the client sees it.
#[derive(Debug)]
pub enum Frame<'a> {
    /// Empty or whitespace: nothing to pass on or record.
    Blank,
    /// One JSON value: recorded byte for byte and passed to the client.
    Json(&'a RawValue),
    /// Anything else: recorded as an event, never passed on.
    Garbage(&'a str),
}

/// A line as text: invalid UTF-8 replaced, a trailing `\r` dropped.
pub fn line_text(line: &[u8]) -> Cow<'_, str> {
    match String::from_utf8_lossy(line) {
        Cow::Borrowed(s) => Cow::Borrowed(s.trim_end_matches(['\r', '\n'])),
        Cow::Owned(s) => Cow::Owned(s.trim_end_matches(['\r', '\n']).to_owned()),
    }
}

/// Whether a line (see [`line_text`]) is a frame, garbage or blank.
pub fn classify(text: &str) -> Frame<'_> {
    if text.trim().is_empty() {
        return Frame::Blank;
    }
    match serde_json::from_str::<&RawValue>(text) {
        Ok(raw) => Frame::Json(raw),
        Err(_) => Frame::Garbage(text),
    }
}

/// What an [`SseParser`] hands on.
#[derive(Debug, PartialEq, Eq)]
pub enum SseItem {
    /// The data of one event (its `data:` lines joined).
    Event(String),
    /// An event (or one of its lines) passed the limit and was dropped.
    TooLong,
}

/// Reads `text/event-stream` bytes into events of at most `max` bytes.
#[derive(Debug)]
pub struct SseParser {
    lines: BoundedLines,
    data: String,
    max: usize,
    /// Set while dropping the rest of an oversized event.
    dropping: bool,
}

impl SseParser {
    pub fn new(max: usize) -> Self {
        SseParser {
            lines: BoundedLines::new(max),
            data: String::new(),
            max,
            dropping: false,
        }
    }

    /// Feed the next chunk; `out` gets each event it completes, in order.
    pub fn push(&mut self, chunk: &[u8], mut out: impl FnMut(SseItem)) {
        let (data, dropping, max) = (&mut self.data, &mut self.dropping, self.max);
        self.lines.push(chunk, |piece| match piece {
            Piece::TooLong => {
                if !*dropping {
                    *dropping = true;
                    data.clear();
                    out(SseItem::TooLong);
                }
            }
            Piece::Line(line) => {
                let text = line_text(line);
                if text.is_empty() {
                    // The blank line ends the event.
                    if !std::mem::take(dropping) && !data.is_empty() {
                        out(SseItem::Event(std::mem::take(data)));
                    }
                    data.clear();
                } else if let Some(d) = text.strip_prefix("data:")
                    && !*dropping
                {
                    let d = d.strip_prefix(' ').unwrap_or(d);
                    if data.len().saturating_add(d.len()) > max {
                        *dropping = true;
                        *data = String::new();
                        out(SseItem::TooLong);
                    } else {
                        data.push_str(d);
                    }
                }
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(max: usize, chunks: &[&[u8]]) -> Vec<Result<Vec<u8>, ()>> {
        let mut s = BoundedLines::new(max);
        let mut out = Vec::new();
        let mut take = |p: Piece<'_>| {
            out.push(match p {
                Piece::Line(l) => Ok(l.to_vec()),
                Piece::TooLong => Err(()),
            })
        };
        for c in chunks {
            s.push(c, &mut take);
            assert!(s.pending() <= max);
        }
        s.finish(&mut take);
        out
    }

    #[test]
    fn lines_are_the_same_however_the_stream_is_cut() {
        let whole: &[u8] = b"{\"a\":1}\r\nnot json\n\nlast";
        let expect = split(64, &[whole]);
        assert_eq!(
            expect,
            vec![
                Ok(b"{\"a\":1}\r".to_vec()),
                Ok(b"not json".to_vec()),
                Ok(b"".to_vec()),
                Ok(b"last".to_vec())
            ]
        );
        for cut in 0..whole.len() {
            let (a, b) = whole.split_at(cut);
            assert_eq!(split(64, &[a, b]), expect, "cut at {cut}");
        }
    }

    #[test]
    fn an_oversized_line_is_reported_once_and_skipped_to_its_end() {
        let long = vec![b'x'; 100];
        let out = split(10, &[b"ok\n", &long, &long, b"\nnext\n"]);
        assert_eq!(out, vec![Ok(b"ok".to_vec()), Err(()), Ok(b"next".to_vec())]);
        // Exactly at the limit is a line.
        assert_eq!(split(4, &[b"abcd\n"]), vec![Ok(b"abcd".to_vec())]);
        assert_eq!(split(4, &[b"abcde\n"]), vec![Err(())]);
    }

    #[test]
    fn frames_are_classified() {
        assert!(matches!(classify(""), Frame::Blank));
        assert!(matches!(classify(" \t"), Frame::Blank));
        assert!(matches!(classify(r#"{"id":1}"#), Frame::Json(r) if r.get() == r#"{"id":1}"#));
        assert!(matches!(classify("{\"id\":"), Frame::Garbage("{\"id\":")));
        assert_eq!(line_text(b"\xff{}\r"), "\u{fffd}{}");
    }

    #[test]
    fn sse_events_are_joined_bounded_and_dropped_whole_when_too_long() {
        let mut p = SseParser::new(16);
        let mut out = Vec::new();
        p.push(
            b"event: message\ndata: {\"a\":\ndata: 1}\n\n: comment\n\ndata: ",
            |e| out.push(e),
        );
        p.push(b"0123456789abcdefXYZ\ndata: more\n\ndata: {}\n\n", |e| {
            out.push(e)
        });
        assert_eq!(
            out,
            vec![
                SseItem::Event("{\"a\":1}".into()),
                SseItem::TooLong,
                SseItem::Event("{}".into())
            ]
        );
    }
}
