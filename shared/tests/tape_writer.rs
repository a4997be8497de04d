//! The writer appends one flushed line per call and keeps wire frames byte
//! for byte; what it writes reads back as the same lines.

use crate::common;

use std::io::{self, Write};

use fitness_shared::tape::{Direction, Line, TapeReader, TapeWriter, WriteError};

/// Records what reached the sink at each flush.
#[derive(Default)]
struct FlushLog {
    pending: Vec<u8>,
    flushed: Vec<Vec<u8>>,
}

impl Write for FlushLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.flushed.push(std::mem::take(&mut self.pending));
        Ok(())
    }
}

#[test]
fn each_line_is_written_whole_and_flushed_at_once() {
    let mut writer = TapeWriter::new(FlushLog::default());
    let meta =
        Line::parse(r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"l"}"#)
            .expect("object");
    writer.write_line(&meta).expect("write");
    writer
        .write_wire_frame(
            "2026-01-01T00:00:00.001Z",
            Direction::In,
            r#"{"id":1,"method":"x"}"#,
            None,
        )
        .expect("write");
    assert_eq!(writer.lines_written(), 2);
    let log = writer.into_inner();
    assert_eq!(log.flushed.len(), 2);
    assert!(log.pending.is_empty());
    for line in &log.flushed {
        assert_eq!(line.iter().filter(|b| **b == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
    }
    assert!(log.flushed[0].starts_with(br#"{"v":1,"type":"meta","#));
}

#[test]
fn a_wire_frame_is_written_byte_for_byte() {
    // Key order, spacing, escapes and number spelling all survive.
    let frame = r#"{"result": {"z":1, "a":[1.0,2e3]},"jsonrpc":"2.0","id":"\u0041"}"#;
    let mut writer = TapeWriter::new(Vec::new());
    writer
        .write_wire_frame(
            "2026-01-01T00:00:00.000Z",
            Direction::Out,
            frame,
            Some("task-1"),
        )
        .expect("write");
    let out = String::from_utf8(writer.into_inner()).expect("utf8");
    assert_eq!(
        out,
        format!(
            "{{\"t\":\"2026-01-01T00:00:00.000Z\",\"dir\":\"out\",\"raw\":{frame},\"corr_id\":\"task-1\"}}\n"
        )
    );
    // And reading keeps the same bytes.
    let line = TapeReader::new(out.as_bytes())
        .next()
        .expect("a line")
        .expect("io")
        .line;
    match line {
        Line::Message(m) => {
            assert_eq!(m.raw.get(), frame);
            assert_eq!(m.corr_id.as_deref(), Some("task-1"));
        }
        other => panic!("expected a wire message, got {other:?}"),
    }
}

#[test]
fn a_frame_that_is_not_json_or_spans_lines_is_refused() {
    let mut writer = TapeWriter::new(Vec::new());
    let t = "2026-01-01T00:00:00.000Z";
    assert!(matches!(
        writer.write_wire_frame(t, Direction::In, "{\"id\":", None),
        Err(WriteError::Serialise(_))
    ));
    assert!(matches!(
        writer.write_wire_frame(t, Direction::In, "{\"id\":1,\n\"m\":2}", None),
        Err(WriteError::MultiLineFrame)
    ));
    assert!(
        writer.into_inner().is_empty(),
        "nothing is written on refusal"
    );
}

#[test]
fn every_anchor_line_round_trips_through_the_line_model() {
    // Read, write, read again: the same typed lines, and wire frames keep
    // their exact bytes.
    let traces = common::anchor_dir().join("traces");
    for run in common::trace_run_ids() {
        for name in ["mcp.jsonl", "agent.jsonl"] {
            let path = traces.join(&run).join(name);
            let bytes = std::fs::read(&path).expect("tape reads");
            let first: Vec<Line> = TapeReader::new(bytes.as_slice())
                .map(|l| l.expect("io").line)
                .collect();
            let mut writer = TapeWriter::new(Vec::new());
            for line in &first {
                writer.write_line(line).expect("write");
            }
            let out = writer.into_inner();
            let second: Vec<Line> = TapeReader::new(out.as_slice())
                .map(|l| l.expect("io").line)
                .collect();
            assert_eq!(first, second, "{}", path.display());
            // Wire lines come out exactly as they went in, line for line.
            let original: Vec<&[u8]> = bytes.split(|b| *b == b'\n').collect();
            let written: Vec<&[u8]> = out.split(|b| *b == b'\n').collect();
            let mut wire = 0;
            for ((a, b), line) in original.iter().zip(&written).zip(&first) {
                if matches!(line, Line::Message(_)) {
                    assert_eq!(a, b, "{}", path.display());
                    wire += 1;
                }
            }
            let messages = first
                .iter()
                .filter(|l| matches!(l, Line::Message(_)))
                .count();
            assert_eq!(wire, messages, "{}", path.display());
        }
    }
}

#[test]
fn a_killed_writer_leaves_a_readable_tape() {
    let mut writer = TapeWriter::new(Vec::new());
    for i in 0..3 {
        writer
            .write_wire_frame(
                "2026-01-01T00:00:00.000Z",
                Direction::In,
                &format!("{{\"id\":{i}}}"),
                None,
            )
            .expect("write");
    }
    let mut bytes = writer.into_inner();
    // The process dies half way through a fourth line.
    bytes.extend_from_slice(br#"{"t":"2026-01-01T00:00:00.000Z","dir":"in","raw":{"id""#);
    let mut reader = TapeReader::new(bytes.as_slice());
    let lines: Vec<_> = (&mut reader).collect::<Result<_, _>>().expect("memory");
    assert_eq!(lines.len(), 3);
    assert_eq!(reader.skips().count, 1);
    assert_eq!(reader.skips().explained[0].line, 4);
}
