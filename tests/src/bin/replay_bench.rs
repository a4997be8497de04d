//! Replay benchmark: time to the first timeline row in headless Chromium, and
//! the renderer's resident memory, for the largest anchor tape pair and for a
//! synthetic 50 MB pair; then the time to scroll the synthetic list to its end.
//! Beside the list, the run's shape (the timeline strip): when it is drawn,
//! measured from the moment the tapes' last bytes arrived (the browser's own
//! resource timing), against the list's whole timeline in the same opening.
//!
//! Needs the viewer build (`trunk build --release`, or FITNESS_DIST).
//! Run: `cargo run --release -p fitness-e2e --bin replay_bench`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use anyhow::Context;
use fantoccini::{Client, Locator};
use fitness_e2e::{browser::Browser, copy_dir, serve::StaticServer, viewer_dist, workspace_root};

/// Openings per tape pair; medians are reported.
const RUNS: usize = 5;
const HF: &str = "huggingface-co-2026-08-20T17-23-48-886Z";

fn iso(ms: u64) -> String {
    let s = ms / 1000;
    format!(
        "2026-08-20T{:02}:{:02}:{:02}.{:03}Z",
        (s / 3600) % 24,
        (s / 60) % 60,
        s % 60,
        ms % 1000
    )
}

/// A synthetic pair of about `target` bytes each: tools/call pairs with long
/// results and harness events on the wire plane; turns on the agent plane.
fn synthetic(target: usize) -> (String, String) {
    let filler: String = "lorem ipsum dolor sit amet ".repeat(50);
    let arms = [
        "",
        "::construct",
        "::null-no-tools",
        "::null-stubbed-empty",
        "::null-random",
        "::screen",
    ];
    let mut mcp = String::from(
        r#"{"v":1,"type":"meta","startedAt":"2026-08-20T00:00:00.000Z","label":"synthetic","command":["bench"],"kind":"mcp"}"#,
    );
    mcp.push('\n');
    let mut i = 0u64;
    while mcp.len() < target {
        let corr = format!("task-{}{}", i / 12, arms[(i / 2) as usize % arms.len()]);
        let t = i * 40;
        if i.is_multiple_of(10) {
            let _ = writeln!(
                mcp,
                r#"{{"t":"{}","dir":"event","kind":"fitness.task_start","raw":{{"taskId":"task-{}"}},"corr_id":"{corr}"}}"#,
                iso(t),
                i / 12
            );
        }
        let _ = writeln!(
            mcp,
            r#"{{"t":"{}","dir":"in","raw":{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"tool_{}","arguments":{{"q":"query {i}"}}}}}},"corr_id":"{corr}"}}"#,
            iso(t),
            i % 7
        );
        let _ = writeln!(
            mcp,
            r#"{{"t":"{}","dir":"out","raw":{{"jsonrpc":"2.0","id":{i},"result":{{"content":[{{"type":"text","text":"result {i}: {filler}"}}]}}}},"corr_id":"{corr}"}}"#,
            iso(t + 25)
        );
        i += 1;
    }
    let mut agent = String::from(
        r#"{"v":1,"type":"meta","startedAt":"2026-08-20T00:00:00.000Z","label":"synthetic","command":["bench"],"kind":"llm"}"#,
    );
    agent.push('\n');
    let mut j = 0u64;
    while agent.len() < target {
        let corr = format!("task-{}{}", j / 12, arms[(j / 2) as usize % arms.len()]);
        let _ = writeln!(
            agent,
            r#"{{"t":"{}","type":"turn","role":"assistant","model":"claude-sonnet-5","usage":{{"input_tokens":1000,"output_tokens":50}},"blocks":[{{"type":"text","text":"thinking about {j}: {filler}"}},{{"type":"tool_use","id":"u{j}","name":"tool_{}","input":{{}}}}],"corr_id":"{corr}"}}"#,
            iso(j * 40 + 5),
            j % 7
        );
        let _ = writeln!(
            agent,
            r#"{{"t":"{}","type":"turn","role":"user","blocks":[{{"type":"tool_result","tool_use_id":"u{j}","content":"{filler}"}}],"corr_id":"{corr}"}}"#,
            iso(j * 40 + 30)
        );
        j += 1;
    }
    (mcp, agent)
}

/// Milliseconds from the tapes' last byte arriving (resource timing) to
/// now, in the page's clock.
async fn since_tapes_arrived(c: &Client) -> anyhow::Result<f64> {
    let v = c
        .execute(
            "const ends = performance.getEntriesByType('resource') \
               .filter(e => e.name.includes('.jsonl')).map(e => e.responseEnd); \
             return performance.now() - Math.max(...ends);",
            vec![],
        )
        .await?;
    v.as_f64().context("resource timing of the tapes")
}

/// (time to the app's root, time to the first timeline row, time until every
/// tape is read and the whole timeline is shown), and, from the tapes'
/// arrival, (the whole list shown, the strip drawn) in milliseconds.
async fn first_row(
    c: &Client,
    url: &str,
) -> anyhow::Result<((Duration, Duration, Duration), (f64, f64))> {
    let started = Instant::now();
    c.goto(url).await?;
    c.wait()
        .at_most(Duration::from_secs(120))
        .every(Duration::from_millis(5))
        .for_element(Locator::Css("#fitness-app"))
        .await
        .context("the app never started")?;
    let app = started.elapsed();
    c.wait()
        .at_most(Duration::from_secs(120))
        .every(Duration::from_millis(5))
        .for_element(Locator::Css(".tl-row"))
        .await
        .context("no timeline row")?;
    let row = started.elapsed();
    c.wait()
        .at_most(Duration::from_secs(120))
        .every(Duration::from_millis(5))
        .for_element(Locator::Css(".replay[data-complete='1'] .tl-row"))
        .await
        .context("the timeline never completed")?;
    let complete = started.elapsed();
    let list_after = since_tapes_arrived(c).await?;
    c.wait()
        .at_most(Duration::from_secs(120))
        .every(Duration::from_millis(5))
        .for_element(Locator::Css("#timeline-strip .strip-lane"))
        .await
        .context("the strip was never drawn")?;
    let strip_after = since_tapes_arrived(c).await?;
    Ok(((app, row, complete), (list_after, strip_after)))
}

/// Open the replay from an already loaded page through an in-page link (so
/// a `longtask` observer registered first sees the whole load), wait for the
/// whole timeline, and return (the longest main-thread task in ms, how many
/// tasks took over 50 ms): how long input could wait while tapes are read.
async fn main_thread_blocking(
    c: &Client,
    server: &StaticServer,
    url: &str,
) -> anyhow::Result<(f64, u64)> {
    c.goto(&server.url("/?view=none")).await?;
    c.wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css("#fitness-app"))
        .await?;
    c.execute(
        "window.__long = []; \
         new PerformanceObserver(l => l.getEntries().forEach(e => window.__long.push(e.duration))).observe({type: 'longtask'}); \
         const a = document.createElement('a'); a.id = 'bench-link'; a.href = arguments[0]; a.textContent = 'replay'; \
         document.body.appendChild(a);",
        vec![serde_json::Value::from(url)],
    )
    .await?;
    c.find(Locator::Css("#bench-link")).await?.click().await?;
    c.wait()
        .at_most(Duration::from_secs(120))
        .every(Duration::from_millis(20))
        .for_element(Locator::Css(".replay[data-complete='1'] .tl-row"))
        .await
        .context("the timeline never completed")?;
    // Let the observer deliver the last entries.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let long: Vec<f64> =
        serde_json::from_value(c.execute("return window.__long || [];", vec![]).await?)?;
    let same_page = c
        .execute("return Array.isArray(window.__long);", vec![])
        .await?;
    anyhow::ensure!(
        same_page == serde_json::json!(true),
        "the link reloaded the page"
    );
    Ok((long.iter().copied().fold(0.0, f64::max), long.len() as u64))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let site = tempfile::tempdir()?;
    copy_dir(&viewer_dist()?, site.path())?;
    let traces = workspace_root()
        .join("fixtures/anchor-board/traces")
        .join(HF);
    copy_dir(&traces, &site.path().join("hf"))?;
    let (mcp, agent) = synthetic(25 << 20);
    std::fs::create_dir_all(site.path().join("synthetic"))?;
    std::fs::write(site.path().join("synthetic/mcp.jsonl"), &mcp)?;
    std::fs::write(site.path().join("synthetic/agent.jsonl"), &agent)?;
    let server = StaticServer::start(site.path()).await?;

    // The issue's goals: first paint under 0.5 s and under 3 s, memory
    // under 10x the tapes.
    for (name, dir, bytes, goal_ms) in [
        (
            "largest anchor pair (huggingface)",
            "hf",
            {
                std::fs::metadata(traces.join("mcp.jsonl"))?.len()
                    + std::fs::metadata(traces.join("agent.jsonl"))?.len()
            },
            500,
        ),
        (
            "synthetic pair",
            "synthetic",
            (mcp.len() + agent.len()) as u64,
            3000,
        ),
    ] {
        let browser = Browser::start(1400, 900).await?;
        let c = browser.client.clone();
        let url = server.url(&format!("/?trace={dir}/mcp.jsonl;{dir}/agent.jsonl"));
        let result = async {
            // Warm: a reader opens the site first, then its replay; the first
            // navigation of a fresh browser profile pays start-up costs.
            // Five openings, the median reported: one opening on two busy
            // cores varies by a few hundred milliseconds.
            let mut runs = Vec::new();
            for _ in 0..RUNS {
                c.goto(&server.url("/?view=none")).await?;
                c.wait()
                    .at_most(Duration::from_secs(60))
                    .for_element(Locator::Css("#fitness-app"))
                    .await?;
                runs.push(first_row(&c, &url).await?);
            }
            let median = |f: fn(&(Duration, Duration, Duration)) -> Duration| {
                let mut v: Vec<Duration> = runs.iter().map(|r| f(&r.0)).collect();
                v.sort();
                v[v.len() / 2]
            };
            let median_ms = |f: fn(&(f64, f64)) -> f64| {
                let mut v: Vec<f64> = runs.iter().map(|r| f(&r.1)).collect();
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            };
            let (app, paint, complete) = (median(|r| r.0), median(|r| r.1), median(|r| r.2));
            let (list_after, strip_after) = (median_ms(|r| r.0), median_ms(|r| r.1));
            let paints: Vec<String> = runs.iter().map(|r| r.0.1.as_millis().to_string()).collect();
            // The tab's memory: the JS heap plus the wasm's linear memory.
            let mem = c
                .execute(
                    "return (performance.memory ? performance.memory.usedJSHeapSize : 0) + window.wasmBindings.wasm_memory_bytes();",
                    vec![],
                )
                .await?
                .as_f64()
                .unwrap_or(0.0);
            let total: u64 = c
                .find(Locator::Css("#shown-count"))
                .await?
                .attr("data-total")
                .await?
                .unwrap_or_default()
                .parse()
                .unwrap_or(0);
            let started = Instant::now();
            c.execute("const l = document.querySelector('.vlist'); l.scrollTop = l.scrollHeight;", vec![])
                .await?;
            let last = total.saturating_sub(1);
            c.wait()
                .at_most(Duration::from_secs(30))
                .every(Duration::from_millis(5))
                .for_element(Locator::Css(&format!(".tl-row[data-n='{last}']")))
                .await
                .context("the last row never rendered")?;
            let scroll = started.elapsed();
            println!(
                "{name}: {:.1} MB, {total} entries: app started after {} ms, first timeline row after {} ms, whole timeline after {} ms; scroll to the end {} ms; tab memory (JS heap + wasm memory) {:.0} MB ({:.1}x the tapes)",
                bytes as f64 / 1e6,
                app.as_millis(),
                paint.as_millis(),
                complete.as_millis(),
                scroll.as_millis(),
                mem / 1e6,
                mem / bytes as f64
            );
            let (longest, long_tasks) = main_thread_blocking(&c, &server, &url).await?;
            println!(
                "  while it loads (opened from the board by a link, in place): {long_tasks} main-thread tasks over 50 ms, the longest {longest:.0} ms"
            );
            let met = |ok: bool| if ok { "met" } else { "NOT met" };
            println!(
                "  after the tapes' last byte arrived: the whole list (today's replay) in {list_after:.0} ms, the list with the strip drawn in {strip_after:.0} ms ({:.2}x); goal under 1,500 ms: {}",
                strip_after / list_after.max(1.0),
                met(strip_after < 1500.0)
            );
            println!(
                "  medians of {RUNS} openings (first rows after {} ms)",
                paints.join(", ")
            );
            println!(
                "  first paint goal under {goal_ms} ms: {}; memory goal under 10x: {}",
                met(paint.as_millis() < goal_ms),
                met(mem < 10.0 * bytes as f64)
            );
            anyhow::Ok(())
        }
        .await;
        browser.close().await?;
        result?;
    }
    Ok(())
}
