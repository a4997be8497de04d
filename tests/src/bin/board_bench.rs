//! Board benchmark: time to the first board paint (the first row in the DOM)
//! in headless Chromium for the anchor board (33 runs) and for a synthetic
//! 5,016-run board, and the gzipped size of the viewer's wasm + JS, each
//! against its goal (1 s, 3 s, 400 KB).
//!
//! The synthetic board is the anchor's 33 imported records under 152 server
//! names, built with the real `fitness_shared::board` code `fitness publish`
//! uses. Each board is timed in a fresh browser profile that has opened a
//! blank page (cold: nothing of the site cached) and then three times warm
//! (the wasm and JS in the HTTP cache);
//! the median warm time is printed beside the cold one.
//!
//! Needs the viewer build (`trunk build --release`, or FITNESS_DIST).
//! Run: `cargo run --release -p fitness-e2e --bin board_bench`.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use fantoccini::{Client, Locator};
use fitness_e2e::{anchor_import, browser::Browser, copy_dir, serve::StaticServer, viewer_dist};
use fitness_shared::board::build_board;
use fitness_shared::record::RunRecord;
use fitness_shared::record::import::ImportSet;

const COPIES: usize = 152;

/// The viewer, `data/board.json` and every record, laid out as publish does.
/// Returns the size of board.json in bytes.
fn write_site(site: &Path, records: &[RunRecord], set: &ImportSet) -> anyhow::Result<usize> {
    copy_dir(&viewer_dist()?, site)?;
    let mut board = build_board(records, "2026-11-30T00:00:00Z", None);
    board.attach_standing_notes(&set.standing_notes)?;
    std::fs::create_dir_all(site.join("data"))?;
    let bytes = serde_json::to_vec(&board)?;
    std::fs::write(site.join("data/board.json"), &bytes)?;
    for record in records {
        let dir = site.join("runs").join(&record.run.id);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("record.json"), serde_json::to_vec(record)?)?;
    }
    Ok(bytes.len())
}

/// Milliseconds from navigation to the first board row in the DOM.
async fn first_paint(c: &Client, url: &str) -> anyhow::Result<Duration> {
    let started = Instant::now();
    c.goto(url).await?;
    c.wait()
        .at_most(Duration::from_secs(120))
        .every(Duration::from_millis(5))
        .for_element(Locator::Css("article.row"))
        .await
        .context("no board row")?;
    Ok(started.elapsed())
}

/// (cold, median of three warm) first-paint times, and the rows painted.
async fn measure(url: &str) -> anyhow::Result<(Duration, Duration, usize)> {
    let browser = Browser::start(1400, 900).await?;
    let c = browser.client.clone();
    let result = async {
        // The browser itself is started first (a blank page), so "cold" is a
        // reader's first visit: nothing of the site cached.
        c.goto("about:blank").await?;
        let cold = first_paint(&c, url).await?;
        let mut warm = Vec::new();
        for _ in 0..3 {
            warm.push(first_paint(&c, url).await?);
        }
        warm.sort();
        let rows = c.find_all(Locator::Css("article.row")).await?.len();
        anyhow::Ok((cold, warm[1], rows))
    }
    .await;
    browser.close().await?;
    result
}

fn gzip_len(bytes: &[u8]) -> anyhow::Result<usize> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes)?;
    Ok(enc.finish()?.len())
}

fn verdict(ok: bool) -> &'static str {
    if ok { "meets" } else { "MISSES" }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let set = anchor_import()?;
    let mut synthetic = Vec::with_capacity(set.records.len() * COPIES);
    for copy in 0..COPIES {
        for record in &set.records {
            let mut r = record.clone();
            r.run.id = format!("{}-s{copy}", r.run.id);
            r.server.slug = format!("{}-s{copy}", r.server.slug);
            synthetic.push(r);
        }
    }

    // Size: every .wasm and .js file the viewer build ships, gzipped.
    let dist = viewer_dist()?;
    let (mut raw, mut gz) = (0usize, 0usize);
    for entry in std::fs::read_dir(&dist)? {
        let path = entry?.path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if matches!(ext, "wasm" | "js") {
            let bytes = std::fs::read(&path)?;
            raw += bytes.len();
            gz += gzip_len(&bytes)?;
        }
    }
    println!(
        "viewer wasm + JS: {:.1} KB raw, {:.1} KB gzipped; goal under 400 KB: {}",
        raw as f64 / 1024.0,
        gz as f64 / 1024.0,
        verdict(gz < 400 * 1024)
    );

    for (name, records, goal) in [
        ("anchor board", &set.records, Duration::from_secs(1)),
        ("synthetic board", &synthetic, Duration::from_secs(3)),
    ] {
        let site = tempfile::tempdir()?;
        let board_bytes = write_site(site.path(), records, &set)?;
        let server = StaticServer::start(site.path()).await?;
        let (cold, warm, rows) = measure(&server.url("/")).await?;
        println!(
            "{name}: {} runs, board.json {:.0} KB; first row after {} ms cold, {} ms warm (median of 3); {rows} rows painted; goal under {} ms: {}",
            records.len(),
            board_bytes as f64 / 1024.0,
            cold.as_millis(),
            warm.as_millis(),
            goal.as_millis(),
            verdict(cold < goal && warm < goal)
        );
    }
    Ok(())
}
