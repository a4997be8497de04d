//! Incremental publish against a full publish, measured in the same run:
//! a 5,000-run site gets 10 new runs (`fitness publish NEW --out SITE`, the
//! site merged), against publishing all 5,010 runs into a fresh site; and
//! the same 5,010 inputs published over the site again (all unchanged).
//! Prints both times and their ratio.
//!
//! `cargo bench -p fitness-recorder --bench publish_incremental [-- RUNS] [-- tapes]`
//! (`tapes`: each run carries real anchor tapes, as published sites do; the
//! default publishes records only, the cheapest full publish there is.)

#[path = "common/synthetic.rs"]
mod synthetic;

use std::path::Path;
use std::time::{Duration, Instant};

use fitness_recorder::publish::{PublishOptions, publish};

fn args(runs: Vec<std::path::PathBuf>, out: &Path, replace: bool) -> PublishOptions {
    PublishOptions {
        runs,
        import: None,
        traces: None,
        out: out.to_owned(),
        viewer: None,
        no_viewer: true,
        sign_key: None,
        published_at: None,
        replace,
    }
}

fn timed(a: &PublishOptions) -> anyhow::Result<(Duration, usize)> {
    let started = Instant::now();
    let published = publish(a)?;
    Ok((started.elapsed(), published.board.rows.len()))
}

fn main() -> anyhow::Result<()> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let runs: usize = argv.iter().find_map(|a| a.parse().ok()).unwrap_or(5000);
    let with_tapes = argv.iter().any(|a| a == "tapes");
    let added = 10;
    let (anchor, traces) = synthetic::anchor()?;
    let traces = with_tapes.then_some(traces.as_path());

    let tmp = tempfile::tempdir()?;
    let old = tmp.path().join("old");
    let new = tmp.path().join("new");
    synthetic::write_runs(&old, 0..runs, &anchor, traces)?;
    synthetic::write_runs(&new, runs..runs + added, &anchor, traces)?;

    // The full publish: every run into a fresh site.
    let full_site = tmp.path().join("full");
    let (full, full_rows) = timed(&args(vec![old.clone(), new.clone()], &full_site, true))?;
    std::fs::remove_dir_all(&full_site)?;

    // The existing site (untimed), then the 10 new runs merged into it.
    let site = tmp.path().join("site");
    publish(&args(vec![old.clone()], &site, true))?;
    let (incremental, rows) = timed(&args(vec![new.clone()], &site, false))?;
    anyhow::ensure!(
        rows == full_rows,
        "{rows} rows after the merge, {full_rows} in full"
    );
    // Everything again over the merged site: nothing changed.
    let (again, _) = timed(&args(vec![old, new], &site, false))?;

    let tapes = if with_tapes {
        "with tapes"
    } else {
        "records only"
    };
    println!(
        "full publish of {} runs ({tapes}): {:.2} s",
        runs + added,
        full.as_secs_f64()
    );
    println!(
        "incremental: {added} runs added to a {runs}-run site: {:.2} s; ratio {:.3} of the full publish ({:.1}x faster)",
        incremental.as_secs_f64(),
        incremental.as_secs_f64() / full.as_secs_f64(),
        full.as_secs_f64() / incremental.as_secs_f64()
    );
    println!(
        "incremental: all {} runs again, none changed: {:.2} s; ratio {:.3}",
        runs + added,
        again.as_secs_f64(),
        again.as_secs_f64() / full.as_secs_f64()
    );
    Ok(())
}
