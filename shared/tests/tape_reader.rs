//! The reader tolerates what a real tape can hold: bad lines are skipped,
//! counted and explained with their line numbers, never fatal.

use crate::common;

use std::io::{self, BufRead, Read};

use fitness_shared::tape::{Line, LineKind, SkipReason, TapeReader, UnknownWhy};

fn read_all(text: &[u8]) -> (Vec<(u64, Line)>, TapeReader<&[u8]>) {
    let mut reader = TapeReader::new(text);
    let mut lines = Vec::new();
    for item in &mut reader {
        let numbered = item.expect("reading from memory cannot fail");
        lines.push((numbered.number, numbered.line));
    }
    (lines, reader)
}

#[test]
fn every_kind_of_line_is_typed() {
    let tape = concat!(
        r#"{"v":1,"type":"meta","startedAt":"2026-08-19T20:56:16.949Z","label":"x","command":["a"],"kind":"mcp"}"#,
        "\n",
        r#"{"t":"2026-08-19T20:56:17.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"tools/list"}}"#,
        "\n",
        r#"{"t":"2026-08-19T20:56:17.100Z","dir":"event","kind":"fitness.probe","raw":{"ok":true}}"#,
        "\n",
        r#"{"t":"2026-08-19T20:56:17.200Z","type":"turn","role":"assistant","blocks":[{"type":"text","text":"hi"}],"model":"m"}"#,
        "\n",
        r#"{"t":"2026-08-19T20:56:17.300Z","type":"future","x":1}"#,
        "\n",
        r#"{"t":"2026-08-19T20:56:18.000Z","type":"end","reason":"done","durationMs":1051}"#,
        "\n",
    );
    let (lines, reader) = read_all(tape.as_bytes());
    let kinds: Vec<LineKind> = lines.iter().map(|(_, l)| l.kind()).collect();
    assert_eq!(
        kinds,
        [
            LineKind::Meta,
            LineKind::Message,
            LineKind::Event,
            LineKind::Turn,
            LineKind::Other,
            LineKind::End
        ]
    );
    assert_eq!(reader.skips().count, 0);
    match &lines[4].1 {
        Line::Unknown(u) => {
            assert_eq!(u.why, UnknownWhy::UnknownKind);
            assert_eq!(u.value["x"], 1, "an unknown line keeps its value");
        }
        other => panic!("expected an unknown line, got {other:?}"),
    }
}

#[test]
fn bad_lines_are_skipped_counted_and_explained_with_line_numbers() {
    let tape = b"{\"v\":1,\"type\":\"meta\",\"startedAt\":\"s\"}\n\
not json at all\n\
\n\
[1,2,3]\n\
{\"t\":\"x\",\"dir\":\"out\",\"raw\":{\"id\":1,\"result\":{}}}\n\
\xff\xfe{\"bad\":\"utf8\"}\n\
{\"truncated\":\n";
    let (lines, reader) = read_all(tape);
    assert_eq!(lines.iter().map(|(n, _)| *n).collect::<Vec<_>>(), [1, 5]);
    let skips = reader.skips();
    assert_eq!(skips.count, 4);
    let explained: Vec<(u64, &SkipReason)> = skips
        .explained
        .iter()
        .map(|s| (s.line, &s.reason))
        .collect();
    assert_eq!(explained[0].0, 2);
    assert!(matches!(explained[0].1, SkipReason::NotJson(_)));
    assert_eq!(explained[1], (4, &SkipReason::NotAnObject));
    assert_eq!(explained[2], (6, &SkipReason::NotUtf8));
    assert_eq!(explained[3].0, 7);
    assert!(
        skips.explained[0]
            .to_string()
            .starts_with("line 2: line is not JSON")
    );
}

#[test]
fn a_known_line_that_does_not_fit_its_type_is_kept_as_malformed() {
    let (lines, reader) = read_all(br#"{"type":"meta","startedAt":5}"#);
    assert_eq!(reader.skips().count, 0);
    match &lines[0].1 {
        Line::Unknown(u) => assert!(matches!(u.why, UnknownWhy::Malformed(_))),
        other => panic!("expected a malformed line, got {other:?}"),
    }
}

#[test]
fn crlf_a_byte_order_mark_and_a_missing_final_newline_are_fine() {
    let tape = b"\xEF\xBB\xBF{\"v\":1,\"type\":\"meta\",\"startedAt\":\"s\"}\r\n{\"t\":\"t\",\"type\":\"end\"}";
    let (lines, reader) = read_all(tape);
    assert_eq!(lines.len(), 2);
    assert_eq!(reader.skips().count, 0);
    assert_eq!(lines[1].1.kind(), LineKind::End);
}

#[test]
fn a_line_over_the_bound_is_skipped_without_being_held() {
    let long = format!("{{\"pad\":\"{}\"}}\n", "x".repeat(10_000));
    let tape = format!("{long}{{\"type\":\"end\",\"t\":\"t\"}}\n");
    let mut reader = TapeReader::new(tape.as_bytes()).with_max_line_bytes(1000);
    let lines: Vec<_> = (&mut reader).collect::<Result<_, _>>().expect("memory");
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].number, 2);
    assert_eq!(
        reader.skips().explained[0].reason,
        SkipReason::TooLong { limit: 1000 }
    );
}

#[test]
fn only_the_first_hundred_skips_are_explained_but_all_are_counted() {
    let tape = "nope\n".repeat(250);
    let (_, reader) = read_all(tape.as_bytes());
    assert_eq!(reader.skips().count, 250);
    assert_eq!(reader.skips().explained.len(), 100);
}

/// A reader that hands out one byte at a time, then fails.
struct Trickle<'a> {
    data: &'a [u8],
    fail_at_end: bool,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let chunk = self.fill_buf()?;
        let n = chunk.len().min(buf.len());
        buf[..n].copy_from_slice(&chunk[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Trickle<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.data.is_empty() && self.fail_at_end {
            return Err(io::Error::other("disk gone"));
        }
        Ok(&self.data[..self.data.len().min(1)])
    }
    fn consume(&mut self, n: usize) {
        self.data = &self.data[n..];
    }
}

#[test]
fn lines_split_across_reads_are_joined() {
    let tape = b"{\"type\":\"end\",\"t\":\"a\"}\n{\"type\":\"end\",\"t\":\"b\"}\n";
    let reader = TapeReader::new(Trickle {
        data: tape,
        fail_at_end: false,
    });
    let lines: Vec<_> = reader.collect::<Result<_, _>>().expect("no error");
    assert_eq!(lines.len(), 2);
}

#[test]
fn an_io_error_is_reported_once_and_ends_the_read() {
    let mut reader = TapeReader::new(Trickle {
        data: b"{\"type\":\"end\",\"t\":\"a\"}\n",
        fail_at_end: true,
    });
    assert!(matches!(reader.next(), Some(Ok(_))));
    assert!(matches!(reader.next(), Some(Err(_))));
    assert!(reader.next().is_none());
}

#[test]
fn every_anchor_tape_reads_without_a_skip() {
    let traces = common::anchor_dir().join("traces");
    let mut tapes = 0;
    for run in common::trace_run_ids() {
        for name in ["mcp.jsonl", "agent.jsonl"] {
            let path = traces.join(&run).join(name);
            let file = std::fs::File::open(&path).expect("tape opens");
            let mut reader = TapeReader::new(io::BufReader::new(file));
            let mut unknown = 0;
            for line in &mut reader {
                if let Line::Unknown(u) = line.expect("read").line {
                    unknown += 1;
                    eprintln!("{}: {:?}", path.display(), u.why);
                }
            }
            assert_eq!(reader.skips().count, 0, "{}", path.display());
            assert_eq!(unknown, 0, "{}: every anchor line is typed", path.display());
            tapes += 1;
        }
    }
    assert_eq!(tapes, 16);
}
