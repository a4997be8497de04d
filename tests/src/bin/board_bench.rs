//! Board benchmark: our published board beside the reference
//! implementation's own static board, in one headless Chromium, at 33 runs
//! (the anchor) and at 1,000 runs (the anchor's records cloned with new
//! ids, suite hashes and start times). Both sites are synthesised from the
//! same `fitness-report/1` records (ours through `fitness publish --import`,
//! theirs as the `data/runs.json` their board reads) and served the same
//! way: `fitness serve`'s router, on-the-fly gzip, each site's own
//! `_headers`.
//!
//! For each load (cache cleared first, so every load is a first visit) a
//! script injected before the page's own records, in the page:
//! - first contentful paint (the paint timing entry);
//! - the first screen of rows: the first animation frame in which the
//!   board's rows span one viewport height;
//! - layout shift (every `layout-shift` entry without recent input), until
//!   our page is hydrated and a second after.
//!
//! Printed: medians of 7 loads per site, the ratios ours / reference
//! (goal: at most 0.5 for both measures at both sizes), two lower bounds of
//! first paint beside them (a one-line page, and our board page cut before
//! its rows), the layout shift of
//! hydration (goal: under 0.01), board.json per run gzipped (goal: at most
//! 1 KB), the board page's HTML per row, and the viewer's wasm + JS
//! gzipped (goal: under 400 KB).
//!
//! `BOARD_BENCH_URLS=url,url` measures those pages instead (first paint and
//! first screen of rows only), for trying a change to a published page.
//!
//! Needs the viewer build (`trunk build --release`, or FITNESS_DIST) and
//! the reference's static board: `FITNESS_REFERENCE_SITE`, by default
//! `../shared/fixtures/anchor-board/reference-site` beside the workspace
//! (the team's read-only copy; it is not part of this repository).
//! Run: `cargo run --release -p fitness-e2e --bin board_bench`.

use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use fantoccini::Client;
use fitness_e2e::browser::{Browser, cdp, clear_cache};
use fitness_e2e::serve::StaticServer;
use fitness_e2e::site::anchor_dir;
use fitness_e2e::{copy_dir, viewer_dist};
use serde_json::Value;

/// Loads per site and size; the median is printed.
const LOADS: usize = 7;
/// The viewport the first screen is measured in.
const WIDTH: u32 = 1400;
const HEIGHT: u32 = 900;

/// The floor of first paint: one line of text and nothing to fetch. Its
/// one row lets the first-screen probe finish; only its paint is reported.
const FLOOR_PAGE: &str = "<!doctype html><meta charset=utf-8><title>floor</title>\
<li class=run-row style=\"height:100vh\">floor</li>";

/// Our board page without its rows: everything above the board section
/// (the head with its stylesheet, the masthead, the summary and the tier
/// cards), closed off, with no script. What the board shows before its
/// first row cannot paint faster than this, so it bounds how far the first
/// contentful paint can fall by changing how the rows are drawn. `None`
/// when the page has no board section.
fn without_rows(page: &str) -> Option<String> {
    let cut = page[..page.find(" id=\"board\"")?].rfind("<section")?;
    let head_end = page.find("</head>")?;
    let mut head = page[..head_end].to_owned();
    while let Some(at) = head.find("<script") {
        let end = at + head[at..].find("</script>")? + "</script>".len();
        head.replace_range(at..end, "");
    }
    Some(format!(
        "{head}{}</main></div></body></html>",
        &page[head_end..cut]
    ))
}

/// Runs before any of the page's own scripts: records the first
/// contentful paint, the frame in which the rows fill one screen, and
/// every layout shift.
const PROBE: &str = r#"
window.__bench = { fcp: null, rows: null, cls: 0 };
new PerformanceObserver(list => {
  for (const e of list.getEntries()) {
    if (e.name === 'first-contentful-paint') window.__bench.fcp = e.startTime;
  }
}).observe({ type: 'paint', buffered: true });
new PerformanceObserver(list => {
  for (const e of list.getEntries()) {
    if (!e.hadRecentInput) window.__bench.cls += e.value;
  }
}).observe({ type: 'layout-shift', buffered: true });
(function screen() {
  const rows = document.querySelectorAll('article.row, li.run-row');
  let top = Infinity, bottom = -Infinity;
  for (const row of rows) {
    const r = row.getBoundingClientRect();
    if (r.height === 0) continue;
    top = Math.min(top, r.top);
    bottom = Math.max(bottom, r.bottom);
    if (bottom - top >= innerHeight) {
      window.__bench.rows = performance.now();
      return;
    }
  }
  requestAnimationFrame(screen);
})();
"#;

/// One load's measures, in milliseconds since navigation start.
#[derive(Debug, Clone, Copy)]
struct Load {
    fcp: f64,
    rows: f64,
    cls: f64,
}

async fn load(c: &Client, url: &str, ours: bool) -> anyhow::Result<Load> {
    clear_cache(c).await?;
    c.goto("about:blank").await?;
    c.goto(url).await?;
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut ready_at: Option<Instant> = None;
    loop {
        let state = c
            .execute(
                "return [window.__bench, !!document.querySelector('#fitness-app[data-ready=\"1\"]')];",
                vec![],
            )
            .await?;
        let bench = &state[0];
        let live = state[1].as_bool().unwrap_or(false) || !ours;
        let done = bench["fcp"].is_number() && bench["rows"].is_number();
        if done && live {
            // Our page: a second after hydration, so any shift it caused is in.
            let at = *ready_at.get_or_insert_with(Instant::now);
            if !ours || at.elapsed() > Duration::from_secs(1) {
                return Ok(Load {
                    fcp: bench["fcp"].as_f64().unwrap_or(f64::NAN),
                    rows: bench["rows"].as_f64().unwrap_or(f64::NAN),
                    cls: bench["cls"].as_f64().unwrap_or(0.0),
                });
            }
        }
        anyhow::ensure!(Instant::now() < deadline, "{url}: no first screen of rows");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn gzip_len(bytes: &[u8]) -> anyhow::Result<usize> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(bytes)?;
    Ok(enc.finish()?.len())
}

fn verdict(ok: bool) -> &'static str {
    if ok { "meets" } else { "MISSES" }
}

/// The anchor's `fitness-report/1` records, cloned to `n` with new ids,
/// suite hashes and start times (the 33 first, unchanged).
fn v1_records(n: usize) -> anyhow::Result<Vec<Value>> {
    let anchor: Vec<Value> =
        serde_json::from_slice(&std::fs::read(anchor_dir().join("runs.json"))?)?;
    let mut out = Vec::with_capacity(n);
    for copy in 0.. {
        for record in &anchor {
            if out.len() == n {
                return Ok(out);
            }
            let mut r = record.clone();
            if copy > 0 {
                let run = r["run"].as_object_mut().context("a run block")?;
                let id = run["id"].as_str().unwrap_or_default().to_owned();
                run.insert("id".into(), format!("{id}-c{copy}").into());
                let hash = run["suiteHash"].as_str().unwrap_or_default().to_owned();
                run.insert(
                    "suiteHash".into(),
                    fitness_shared::integrity::sha256_hex(format!("{hash}{copy}").as_bytes())
                        .into(),
                );
                let at = run["startedAt"].as_str().unwrap_or_default().to_owned();
                run.insert(
                    "startedAt".into(),
                    fitness_e2e::site::shifted(&at, copy).into(),
                );
            }
            out.push(r);
        }
    }
    Ok(out)
}

/// The reference implementation's static board (its files, no data).
fn reference_site() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::var_os("FITNESS_REFERENCE_SITE")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            fitness_e2e::workspace_root().join("../shared/fixtures/anchor-board/reference-site")
        });
    anyhow::ensure!(
        dir.join("index.html").is_file() && dir.join("app.js").is_file(),
        "no reference board at {} (set FITNESS_REFERENCE_SITE)",
        dir.display()
    );
    Ok(dir)
}

/// Both sites for one set of records: (ours, reference).
fn sites(
    records: &[Value],
    dir: &Path,
) -> anyhow::Result<(std::path::PathBuf, std::path::PathBuf)> {
    let runs = dir.join("runs.json");
    std::fs::write(&runs, serde_json::to_vec(records)?)?;
    let key = dir.join("publisher.key");
    fitness_recorder::integrity::generate(&key)?;
    let ours = dir.join("ours");
    fitness_recorder::publish::publish(&fitness_recorder::publish::PublishOptions {
        runs: Vec::new(),
        import: Some(runs.clone()),
        traces: Some(anchor_dir().join("traces")),
        out: ours.clone(),
        viewer: Some(viewer_dist()?),
        no_viewer: false,
        sign_key: Some(key),
        published_at: Some("2026-11-30T00:00:00.000Z".to_owned()),
        replace: true,
    })?;
    let reference = dir.join("reference");
    copy_dir(&reference_site()?, &reference)?;
    std::fs::create_dir_all(reference.join("data"))?;
    std::fs::copy(&runs, reference.join("data/runs.json"))?;
    Ok((ours, reference))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
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

    let browser = Browser::start(WIDTH, HEIGHT).await?;
    let c = browser.client.clone();
    let result = async {
        cdp(
            &c,
            "Page.addScriptToEvaluateOnNewDocument",
            serde_json::json!({ "source": PROBE }),
        )
        .await?;
        // Pages named on the command line instead of the two boards.
        if let Ok(urls) = std::env::var("BOARD_BENCH_URLS") {
            for url in urls.split(',') {
                let mut xs = Vec::new();
                for _ in 0..LOADS {
                    xs.push(load(&c, url, false).await?);
                }
                let fcp = median(xs.iter().map(|l| l.fcp).collect());
                let rows = median(xs.iter().map(|l| l.rows).collect());
                println!("{url}: fcp {fcp:.0} ms, rows {rows:.0} ms");
            }
            return Ok(());
        }
        for n in [33usize, 1000] {
            let dir = tempfile::tempdir()?;
            let records = v1_records(n)?;
            let (ours_dir, ref_dir) = sites(&records, dir.path())?;
            let ours = StaticServer::start_site(&ours_dir).await?;
            let reference = StaticServer::start_site(&ref_dir).await?;

            let board_gz = std::fs::read(ours_dir.join("data/board.json.gz"))?.len();
            let page = std::fs::read(ours_dir.join("index.html"))?;
            let page_gz = gzip_len(&page)?;

            // The floor: a page of one line of text, served the same way.
            std::fs::write(ref_dir.join("floor.html"), FLOOR_PAGE)?;
            // The bound: our page above its rows (it has no rows, so the
            // first-screen probe needs the floor's one row to finish).
            let page_text = String::from_utf8_lossy(&page);
            let bound = without_rows(&page_text)
                .context("the board page has no board section to cut before")?;
            std::fs::write(
                ours_dir.join("bound.html"),
                bound.replace("</main>", "<li class=run-row style=\"height:100vh\"></li></main>"),
            )?;

            // Alternate the sites, so none has the machine to itself.
            let (mut o, mut r, mut f, mut b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            for _ in 0..LOADS {
                o.push(load(&c, &ours.url("/"), true).await?);
                r.push(load(&c, &reference.url("/"), false).await?);
                f.push(load(&c, &reference.url("/floor.html"), false).await?);
                b.push(load(&c, &ours.url("/bound.html"), false).await?);
            }
            let m = |xs: &[Load], f: fn(&Load) -> f64| median(xs.iter().map(f).collect());
            let (o_fcp, r_fcp) = (m(&o, |l| l.fcp), m(&r, |l| l.fcp));
            let (o_rows, r_rows) = (m(&o, |l| l.rows), m(&r, |l| l.rows));
            let cls = o.iter().map(|l| l.cls).fold(0.0, f64::max);
            println!("{n} runs:");
            println!(
                "  first contentful paint: ours {o_fcp:.0} ms, reference {r_fcp:.0} ms; ratio {:.2} (goal at most 0.5: {})",
                o_fcp / r_fcp,
                verdict(o_fcp / r_fcp <= 0.5)
            );
            let f_fcp = m(&f, |l| l.fcp);
            println!(
                "  the floor, a page of one line: {f_fcp:.0} ms; floor / reference {:.2} (no page can paint below it here)",
                f_fcp / r_fcp
            );
            let b_fcp = m(&b, |l| l.fcp);
            println!(
                "  our page above its rows (masthead, summary, tier cards; no rows, no script): {b_fcp:.0} ms; / reference {:.2} (no way of drawing the rows can paint below it)",
                b_fcp / r_fcp
            );
            println!(
                "  first screen of rows:   ours {o_rows:.0} ms, reference {r_rows:.0} ms; ratio {:.2} (goal at most 0.5: {})",
                o_rows / r_rows,
                verdict(o_rows / r_rows <= 0.5)
            );
            println!(
                "  layout shift while the wasm hydrates: {cls:.4} at most over {LOADS} loads (goal under 0.01: {})",
                verdict(cls < 0.01)
            );
            println!(
                "  board.json: {:.0} bytes per run gzipped (goal at most 1 KB: {}); board page {:.0} KB, {:.0} bytes of HTML per row ({:.0} gzipped)",
                board_gz as f64 / n as f64,
                verdict(board_gz <= n * 1024),
                page.len() as f64 / 1024.0,
                page.len() as f64 / n as f64,
                page_gz as f64 / n as f64
            );
        }
        anyhow::Ok(())
    }
    .await;
    browser.close().await?;
    result
}
