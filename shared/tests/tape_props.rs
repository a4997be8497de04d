//! Invariants over generated input: no input panics the reader or the
//! stats, and generated tapes round-trip and pair as built.

use fitness_shared::tape::stats::{StatsBuilder, merge_planes};
use fitness_shared::tape::{Direction, Line, TapeReader, TapeWriter, add_tape};
use proptest::prelude::*;

fn line_fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"{"v":1,"type":"meta","startedAt":"2026-08-19T20:00:00.000Z"}"#.to_owned()),
        Just(r#"{"t":"2026-08-19T20:00:01.000Z","dir":"in","raw":{"id":1,"method":"tools/call","params":{"name":"a"}}}"#.to_owned()),
        Just(r#"{"t":"2026-08-19T20:00:02.000Z","dir":"out","raw":{"id":1,"result":{"isError":true,"content":[{"text":"x"}]}}}"#.to_owned()),
        Just(r#"{"t":"x","type":"turn","role":"assistant","blocks":[{"type":"thinking","thinking":"hm"}],"usage":{"input_tokens":1.5}}"#.to_owned()),
        Just(r#"{"t":"2026-08-19T20:00:03.000Z","type":"end"}"#.to_owned()),
        "[ -~]{0,40}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_bytes_read_without_panic(data in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut reader = TapeReader::new(data.as_slice()).with_max_line_bytes(256);
        let read = (&mut reader).filter(Result::is_ok).count() as u64;
        let segments = data.split(|b| *b == b'\n').count() as u64;
        prop_assert!(read + reader.skips().count <= segments);
        let mut builder = StatsBuilder::new();
        add_tape(data.as_slice(), &mut builder).expect("memory");
        let _ = serde_json::to_string(&builder.finish(None)).expect("serialise");
    }

    #[test]
    fn spliced_tape_lines_read_and_count_without_panic(parts in proptest::collection::vec(line_fragment(), 0..12)) {
        let tape = parts.join("\n");
        let mut builder = StatsBuilder::new();
        let skips = add_tape(tape.as_bytes(), &mut builder).expect("memory");
        let stats = builder.finish(None);
        // Blank means ASCII white space only; a leading byte order mark is dropped.
        let body = tape.strip_prefix('\u{feff}').unwrap_or(&tape);
        let non_blank = body
            .split('\n')
            .filter(|l| !l.bytes().all(|b| b.is_ascii_whitespace()))
            .count() as u64;
        prop_assert_eq!(stats.session.records.total + skips.count, non_blank);
        let merged = merge_planes(stats.clone(), stats, None);
        let _ = serde_json::to_string(&merged).expect("serialise");
    }

    #[test]
    fn generated_calls_pair_as_built(
        calls in proptest::collection::vec((0u32..1000, any::<bool>(), any::<bool>()), 1..40)
    ) {
        // Each call: a latency, whether it is answered, whether it failed.
        let mut writer = TapeWriter::new(Vec::new());
        for (i, (latency, answered, failed)) in calls.iter().enumerate() {
            let t0 = fitness_shared::time::format_iso_ms(1_787_000_000_000 + i as i64 * 10_000);
            let t1 = fitness_shared::time::format_iso_ms(1_787_000_000_000 + i as i64 * 10_000 + i64::from(*latency));
            let req = format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"t"}}}}"#);
            writer.write_wire_frame(&t0, Direction::In, &req, None).expect("write");
            if *answered {
                let res = format!(r#"{{"jsonrpc":"2.0","id":{i},"result":{{"isError":{failed}}}}}"#);
                writer.write_wire_frame(&t1, Direction::Out, &res, None).expect("write");
            }
        }
        let tape = writer.into_inner();
        let lines: Vec<Line> = TapeReader::new(tape.as_slice()).map(|l| l.expect("io").line).collect();
        prop_assert!(lines.iter().all(|l| matches!(l, Line::Message(_))));
        let mut builder = StatsBuilder::new();
        add_tape(tape.as_slice(), &mut builder).expect("memory");
        let stats = builder.finish(None);
        let t = &stats.tools[0];
        prop_assert_eq!(t.calls, calls.len() as u64);
        prop_assert_eq!(t.pending, calls.iter().filter(|c| !c.1).count() as u64);
        prop_assert_eq!(t.errors, calls.iter().filter(|c| c.1 && c.2).count() as u64);
        let mut timed: Vec<u32> = calls.iter().filter(|c| c.1).map(|c| c.0).collect();
        timed.sort_unstable();
        let expect_p50 = (!timed.is_empty()).then(|| f64::from(timed[timed.len().div_ceil(2) - 1]));
        prop_assert_eq!(t.p50_ms.map(|n| n.0), expect_p50);
    }
}
