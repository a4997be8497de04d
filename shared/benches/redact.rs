//! Cost of redaction on the tape writer: every line of the anchor's 16
//! tapes written through a plain [`TapeWriter`] and through a redacting one
//! (the pattern rules plus five operator values, as a run with `--env`,
//! `--header` and provider keys has), interleaved in rounds so a load spike
//! on a shared machine hits both.
//!
//! `cargo bench -p fitness-shared --bench redact [-- ROUNDS]` (default 5).
//! Prints one JSON line: bytes, best time of each, the ratio
//! redacting/plain, and redacting throughput in MB/s.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fitness_shared::redact::{Redactor, Secret};
use fitness_shared::tape::{Line, TapeWriter};

fn anchor_lines() -> Vec<Line> {
    let root = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/anchor-board/traces"
    ));
    let mut lines = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    for dir in dirs {
        for name in ["mcp.jsonl", "agent.jsonl"] {
            let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            lines.extend(text.lines().filter_map(|l| Line::parse(l).ok()));
        }
    }
    lines
}

fn write_all(lines: &[Line], mut writer: TapeWriter<Vec<u8>>) -> (Duration, usize) {
    let started = Instant::now();
    for line in lines {
        writer.write_line(line).expect("written");
    }
    let elapsed = started.elapsed();
    (elapsed, writer.into_inner().len())
}

fn main() {
    let rounds: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5);
    let lines = anchor_lines();
    let policy = Arc::new(Redactor::with_urls(
        &[
            Secret::env("API_KEY", "bench-env-value-0f3a9c"),
            Secret::env("OPENAI_API_KEY", "sk-proj-benchbenchbench0123456789"),
            Secret::header("Authorization", "Bearer bench-bearer-7d21e0aa"),
            Secret::header("X-Api-Key", "bench-header-5c8e1b"),
            Secret::env("DB_PASSWORD", "bench-password-a1b2c3"),
        ],
        &["https://user:bench-url-pass@example.com/mcp?api_key=bench-query-99".to_owned()],
    ));
    let (mut plain, mut redacting) = (Duration::MAX, Duration::MAX);
    let mut bytes = 0;
    for _ in 0..rounds {
        let (t, n) = write_all(&lines, TapeWriter::new(Vec::new()));
        plain = plain.min(t);
        bytes = n;
        let (t, _) = write_all(&lines, TapeWriter::redacting(Vec::new(), policy.clone()));
        redacting = redacting.min(t);
    }
    let ratio = redacting.as_secs_f64() / plain.as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "bench": "redact",
            "lines": lines.len(),
            "bytes": bytes,
            "plain_ms": plain.as_secs_f64() * 1e3,
            "redacting_ms": redacting.as_secs_f64() * 1e3,
            "ratio": (ratio * 100.0).round() / 100.0,
            "redacting_mb_s": (bytes as f64 / 1e6 / redacting.as_secs_f64()).round(),
        })
    );
}
