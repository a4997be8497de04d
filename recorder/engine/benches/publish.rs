//! Publish 5,000 synthetic runs (the anchor's 33 real records, cloned under
//! new ids and servers) and report the time and board.json bytes per run
//! gzipped, against the reference implementation's published figure of
//! about 3.2 KB per run gzipped (it ships every full record in one file).
//!
//! `cargo bench -p fitness-recorder --bench publish [-- RUNS]`

#[path = "common/synthetic.rs"]
mod synthetic;

use std::io::Write as _;
use std::time::Instant;

const REFERENCE_BYTES_PER_RUN_GZ: f64 = 3200.0;

fn main() -> anyhow::Result<()> {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(5000);
    let (anchor, _) = synthetic::anchor()?;
    let tmp = tempfile::tempdir()?;
    let runs_dir = tmp.path().join("runs");
    synthetic::write_runs(&runs_dir, 0..runs, &anchor, None)?;

    let out = tmp.path().join("site");
    let args = fitness_recorder::publish::PublishOptions {
        runs: vec![runs_dir],
        import: None,
        traces: None,
        out: out.clone(),
        viewer: None,
        no_viewer: true,
        sign_key: None,
        published_at: Some("2026-11-30T00:00:00.000Z".into()),
        replace: true,
    };
    let started = Instant::now();
    let published = fitness_recorder::publish::publish(&args)?;
    let elapsed = started.elapsed();

    let board = std::fs::read(out.join("data/board.json"))?;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&board)?;
    let gz = enc.finish()?.len();
    let per_run = gz as f64 / runs as f64;
    println!(
        "publish {runs} runs: {:.2} s ({:.0} runs/s); board.json {} bytes, {} gzipped = {:.0} B/run gzipped ({} rows)",
        elapsed.as_secs_f64(),
        runs as f64 / elapsed.as_secs_f64(),
        board.len(),
        gz,
        per_run,
        published.board.rows.len()
    );
    println!(
        "ratio against the reference's ~{REFERENCE_BYTES_PER_RUN_GZ:.0} B/run gzipped: {:.3} (goal: under 1 KB/run)",
        per_run / REFERENCE_BYTES_PER_RUN_GZ
    );
    Ok(())
}
