//! Any bytes through the tape reader, the line model, the writer and the
//! stats: nothing may panic, and what the reader accepts must round-trip.
//!
//! One home for the target's check: `fuzz_targets/tape_reader.rs` hands it
//! libFuzzer's inputs, and the e2e test `fuzz_corpus` replays the committed
//! corpus through it on the stable toolchain in every test run.

use fitness_shared::tape::stats::{StatsBuilder, merge_planes};
use fitness_shared::tape::{Line, TapeReader, TapeWriter, add_tape};

pub fn check(data: &[u8]) {
    // Typed reading, with a small line bound so the too-long path runs too.
    let mut reader = TapeReader::new(data).with_max_line_bytes(4096);
    let mut lines = Vec::new();
    for item in &mut reader {
        let Ok(numbered) = item else { return };
        lines.push(numbered.line);
    }
    let segments = data.split(|b| *b == b'\n').count() as u64;
    assert!(lines.len() as u64 + reader.skips().count <= segments);

    // Whatever was read writes back and reads again, line for line. (A line
    // with a duplicated key may change kind on the way: JSON.parse rules keep
    // the last value, and the typed model then accepts what it refused.)
    let mut writer = TapeWriter::new(Vec::new());
    let mut written = Vec::new();
    for line in &lines {
        if writer.write_line(line).is_ok() {
            written.push(line.clone());
        }
    }
    let out = writer.into_inner();
    let again: Vec<Line> = TapeReader::new(out.as_slice())
        .map(|l| l.expect("reading from memory").line)
        .collect();
    assert_eq!(again.len(), written.len());

    // Stats of the same bytes as one plane and as two.
    let mut mcp = StatsBuilder::new();
    let _ = add_tape(data, &mut mcp);
    let mut agent = StatsBuilder::new();
    let half = data.len() / 2;
    let _ = add_tape(&data[half..], &mut agent);
    let merged = merge_planes(mcp.finish(None), agent.finish(None), None);
    let _ = serde_json::to_string(&merged).expect("stats serialise");
}
