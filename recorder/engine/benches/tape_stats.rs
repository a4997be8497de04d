//! `fitness tape stats` throughput and peak memory over the anchor's tapes.
//!
//! `cargo bench -p fitness-recorder --bench tape_stats [-- ITERATIONS]`
//! For each anchor run: both tapes streamed into a plane each, merged, and
//! serialised, as `fitness tape stats mcp.jsonl agent.jsonl --json` does.
//! Prints one JSON line: bytes, best and median wall time, MB/s, peak RSS.

use std::fs::File;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Instant;

use fitness_shared::tape::add_tape;
use fitness_shared::tape::stats::{StatsBuilder, merge_planes};

fn anchor_traces() -> PathBuf {
    let dir = std::env::var_os("FITNESS_ANCHOR_DIR").map_or_else(
        || {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../fixtures/anchor-board"
            ))
        },
        PathBuf::from,
    );
    let traces = dir.join("traces");
    assert!(
        traces.is_dir(),
        "no anchor traces at {}; set FITNESS_ANCHOR_DIR",
        traces.display()
    );
    traces
}

fn plane(path: &Path) -> fitness_shared::tape::Stats {
    let file = File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut builder = StatsBuilder::new();
    add_tape(BufReader::with_capacity(256 * 1024, file), &mut builder).expect("tape reads");
    builder.finish(Some(path.display().to_string()))
}

fn one_run(dir: &Path) -> usize {
    let merged = merge_planes(
        plane(&dir.join("mcp.jsonl")),
        plane(&dir.join("agent.jsonl")),
        None,
    );
    serde_json::to_string(&merged).expect("serialise").len()
}

/// Peak resident set size of this process, in KiB (Linux).
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() {
    let iterations: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(20);
    let traces = anchor_traces();
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&traces)
        .expect("traces lists")
        .map(|e| e.expect("entry").path())
        .collect();
    runs.sort();
    let bytes: u64 = runs
        .iter()
        .flat_map(|d| [d.join("mcp.jsonl"), d.join("agent.jsonl")])
        .map(|p| std::fs::metadata(&p).expect("stat").len())
        .sum();
    for _ in 0..3 {
        runs.iter().for_each(|d| {
            one_run(d);
        });
    }
    let mut times: Vec<f64> = (0..iterations)
        .map(|_| {
            let start = Instant::now();
            let out: usize = runs.iter().map(|d| one_run(d)).sum();
            std::hint::black_box(out);
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!(
        "{}",
        serde_json::json!({
            "impl": "fitness (rust)",
            "files": runs.len() * 2,
            "bytes": bytes,
            "iters": iterations,
            "bestMs": times[0],
            "medianMs": median,
            "mbPerSec": bytes as f64 / 1e6 / (median / 1e3),
            "peakRssKb": peak_rss_kib(),
        })
    );
}
