//! The replay in a real browser: the anchor site is published by `fitness
//! publish` (the 33 runs, the tapes of the 8 that have them, signed by the
//! site's key), served by `fitness serve`'s router, and opened in headless
//! Chromium. What the page shows is compared with the shared crate's
//! figures for the same tapes (`fitness tape stats` and the timeline
//! builder), and the integrity badge is read in each of its states.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use fantoccini::{Client, Locator};
use fitness_e2e::site::{Publish, Site, publish_site};
use fitness_e2e::{anchor_import, browser::Browser, serve::StaticServer, workspace_root};
use fitness_shared::integrity;
use fitness_shared::record::RunRecord;
use fitness_shared::tape::Plane;
use fitness_shared::tape::stats::{Origin, Stats};
use fitness_shared::tape::timeline::{EntryKind, Timeline, TimelineBuilder};
use fitness_shared::tape::{StatsBuilder, add_tape};

const HF: &str = "huggingface-co-2026-08-20T17-23-48-886Z";
const TAMPERED: &str = "mcp-vercel-com-2026-08-20T18-17-32-685Z";
/// A refused run (DEGENERATE) with both tapes.
const REFUSED: &str = "mcp-docs-astro-build-2026-08-19T22-07-34-673Z";
/// A run whose record names an agent tape the site does not serve.
const MISSING: &str = "mcp-svelte-dev-2026-08-19T23-51-53-742Z";
/// A timeline row once every tape has been read (before that, the page
/// shows a preview of the timeline's settled beginning).
const LOADED_ROW: &str = ".replay[data-complete='1'] .tl-row";
/// A trial on the huggingface tapes that the test site names as a probe's
/// evidence (the reference's probe frames carry no corr_id of their own).
const EVIDENCE: &str = "trending-model-rank3::screen";

fn traces() -> PathBuf {
    workspace_root().join("fixtures/anchor-board/traces")
}

/// The anchor's records, the huggingface run's first probe naming
/// [`EVIDENCE`] as its evidence.
fn anchor_records() -> anyhow::Result<(Vec<RunRecord>, fitness_shared::record::import::ImportSet)> {
    let set = anchor_import()?;
    let mut records = set.records.clone();
    let hf = records
        .iter_mut()
        .find(|r| r.run.id == HF)
        .context("no huggingface run")?;
    hf.probes
        .findings
        .first_mut()
        .context("the huggingface record has no probes")?
        .evidence = vec![EVIDENCE.to_owned()];
    Ok((records, set))
}

/// Remove a published file and the `.gz` the server would send instead.
fn remove_published(path: &Path) -> anyhow::Result<()> {
    std::fs::remove_file(path)?;
    let mut gz = path.as_os_str().to_owned();
    gz.push(".gz");
    let _ = std::fs::remove_file(PathBuf::from(gz));
    Ok(())
}

/// The anchor site as `fitness publish` writes it, signed by the site's
/// key; then one byte of one published tape changes, one published tape
/// goes missing, and a hostile trace is put under `xss/`.
fn write_site() -> anyhow::Result<Site> {
    let (records, set) = anchor_records()?;
    let site = publish_site(Publish {
        records: Some((&records, &set.standing_notes)),
        anchor: false,
        ..Publish::default()
    })?;
    let root = &site.root;
    let tampered = root.join("runs").join(TAMPERED).join("mcp.jsonl");
    let mut bytes = std::fs::read(&tampered)?;
    let at = bytes
        .iter()
        .position(|&b| b == b'V')
        .context("no 'V' in the tape")?;
    bytes[at] = b'W';
    remove_published(&tampered)?;
    std::fs::write(&tampered, bytes)?;
    remove_published(&root.join("runs").join(MISSING).join("agent.jsonl"))?;

    let xss = root.join("xss");
    std::fs::create_dir_all(&xss)?;
    std::fs::write(xss.join("mcp.jsonl"), XSS_MCP)?;
    std::fs::write(xss.join("agent.jsonl"), XSS_AGENT)?;
    Ok(site)
}

const XSS_MCP: &str = concat!(
    r#"{"v":1,"type":"meta","startedAt":"2026-08-20T17:00:00.000Z","label":"<b>label</b>","command":["x"],"kind":"mcp"}"#,
    "\n",
    r#"{"t":"2026-08-20T17:00:01.000Z","dir":"in","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"<img src=x onerror=\"window.__xss=1\">"}},"corr_id":"t1"}"#,
    "\n",
    r#"{"t":"2026-08-20T17:00:01.500Z","dir":"out","raw":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"<script>window.__xss=2</script><img src=x onerror=\"window.__xss=3\">"}]}},"corr_id":"t1"}"#,
    "\n",
    r#"{"t":"2026-08-20T17:00:03.000Z","type":"end","reason":"done","durationMs":3000}"#,
    "\n",
);

const XSS_AGENT: &str = concat!(
    r#"{"v":1,"type":"meta","startedAt":"2026-08-20T17:00:00.000Z","label":"x","command":["x"],"kind":"llm"}"#,
    "\n",
    r#"{"t":"2026-08-20T17:00:02.000Z","type":"turn","role":"assistant","model":"m","blocks":[{"type":"text","text":"<img src=x onerror=\"window.__xss=4\"><script>window.__xss=5</script>"}],"corr_id":"t1"}"#,
    "\n",
);

fn tape_bytes(run: &str, name: &str) -> anyhow::Result<Vec<u8>> {
    let path = traces().join(run).join(name);
    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
}

fn stats_of(bytes: &[u8]) -> anyhow::Result<Stats> {
    let mut b = StatsBuilder::new();
    add_tape(bytes, &mut b)?;
    Ok(b.finish(None))
}

fn timeline_of(run: &str) -> anyhow::Result<Timeline> {
    let mut b = TimelineBuilder::new();
    for (name, plane) in [("mcp.jsonl", Plane::Mcp), ("agent.jsonl", Plane::Agent)] {
        let t = b.add_tape(plane);
        b.push_tape(t, &tape_bytes(run, name)?);
    }
    Ok(b.finish())
}

async fn wait_for(client: &Client, css: &str) -> anyhow::Result<fantoccini::elements::Element> {
    client
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("{css} never appeared"))
}

/// The integrity badge's text, once it is there; an error unless it says
/// unverified.
async fn unverified_badge(client: &Client) -> anyhow::Result<String> {
    let badge = wait_for(client, "#integrity").await?;
    let text = badge.text().await?;
    anyhow::ensure!(
        badge.attr("data-state").await?.as_deref() == Some("unverified"),
        "{text}"
    );
    Ok(text)
}

async fn attr_u64(client: &Client, css: &str, attr: &str) -> anyhow::Result<u64> {
    let el = client
        .find(Locator::Css(css))
        .await
        .with_context(|| css.to_owned())?;
    let v = el
        .attr(attr)
        .await?
        .with_context(|| format!("{css} has no {attr}"))?;
    v.parse().with_context(|| format!("{css} {attr}={v:?}"))
}

async fn screenshot(client: &Client, name: &str) -> anyhow::Result<()> {
    let png = client.screenshot().await?;
    std::fs::write(std::env::temp_dir().join(name), png)?;
    Ok(())
}

async fn shown_after_kind(client: &Client, kind: &str) -> anyhow::Result<u64> {
    client
        .find(Locator::Css("#filter-kind"))
        .await?
        .select_by_value(kind)
        .await?;
    // The count re-renders synchronously on change; read it once settled.
    tokio::time::sleep(Duration::from_millis(200)).await;
    attr_u64(client, "#shown-count", "data-shown").await
}

async fn with_site<F, Fut>(width: u32, f: F) -> anyhow::Result<()>
where
    F: FnOnce(Client, String) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let site = write_site()?;
    let server = StaticServer::start_site(&site.root).await?;
    let browser = Browser::start(width, 900).await?;
    let outcome = f(browser.client.clone(), server.url("/")).await;
    browser.close().await?;
    outcome
}

/// The replay of `run`: its URL under the site root.
fn replay(root: &str, run: &str) -> String {
    format!("{root}runs/{run}/?view=replay")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anchor_replay_is_verified_and_counts_equal_the_stats() -> anyhow::Result<()> {
    let mcp = stats_of(&tape_bytes(HF, "mcp.jsonl")?)?;
    let agent = stats_of(&tape_bytes(HF, "agent.jsonl")?)?;
    with_site(1400, |c, root| async move {
        let started = Instant::now();
        c.goto(&replay(&root, HF)).await?;
        wait_for(&c, "#shown-count").await?;
        eprintln!("replay of {HF}: timeline after {:?}", started.elapsed());
        wait_for(&c, LOADED_ROW).await?;
        screenshot(&c, "replay-hf-1400.png").await?;

        let badge = c.find(Locator::Css("#integrity")).await?;
        let state = badge.attr("data-state").await?;
        let text = badge.text().await?;
        anyhow::ensure!(state.as_deref() == Some("verified"), "badge {state:?}: {text}");
        anyhow::ensure!(text.contains("publisher key"), "{text}");

        for (name, stats) in [("mcp.jsonl", &mcp), ("agent.jsonl", &agent)] {
            let li = format!("li.tape-count[data-tape='{name}']");
            let r = &stats.session.records;
            for (attr, want) in [
                ("data-message", r.message),
                ("data-event", r.event),
                ("data-turn", r.turn),
                ("data-meta", r.meta),
                ("data-end", r.end),
                ("data-other", r.other),
                ("data-skipped", stats.session.skipped_lines),
            ] {
                let got = attr_u64(&c, &li, attr).await?;
                anyhow::ensure!(got == want, "{name} {attr}: page {got}, stats {want}");
            }
            let (calls, pending) = stats
                .tools
                .iter()
                .filter(|t| t.origin != Origin::Turn)
                .fold((0, 0), |(c, p), t| (c + t.calls, p + t.pending));
            if name == "mcp.jsonl" {
                anyhow::ensure!(
                    attr_u64(&c, &li, "data-tool-calls").await? == calls
                        && attr_u64(&c, &li, "data-tool-pending").await? == pending,
                    "tools/call figures differ from the stats ({calls} calls, {pending} pending)"
                );
            }
        }

        // The rows per kind: every turn and every event line is one entry;
        // wire lines are pairs, lone requests, lone responses, notifications.
        let total = mcp.session.records.total + agent.session.records.total;
        anyhow::ensure!(attr_u64(&c, "#shown-count", "data-total").await? <= total);
        let turns = shown_after_kind(&c, "turn").await?;
        anyhow::ensure!(
            turns == mcp.session.records.turn + agent.session.records.turn,
            "turn rows {turns}"
        );
        let events = shown_after_kind(&c, "event").await?;
        anyhow::ensure!(
            events == mcp.session.records.event + agent.session.records.event,
            "event rows {events}"
        );
        let calls = shown_after_kind(&c, "call").await?;
        let responses = shown_after_kind(&c, "response").await?;
        let notes = shown_after_kind(&c, "notification").await?;
        let pairs = attr_u64(&c, "li.tape-count[data-tape='mcp.jsonl']", "data-pairs").await?
            + attr_u64(&c, "li.tape-count[data-tape='agent.jsonl']", "data-pairs").await?;
        let messages = mcp.session.records.message + agent.session.records.message;
        anyhow::ensure!(
            calls + pairs + responses + notes == messages,
            "wire rows: {calls} calls ({pairs} answered) + {responses} lone responses + {notes} notifications != {messages} messages"
        );
        // Virtualised: far fewer rows in the DOM than entries.
        let _ = shown_after_kind(&c, "").await?;
        let in_dom = c.find_all(Locator::Css(".tl-row")).await?.len();
        anyhow::ensure!(in_dom > 5 && in_dom < 80, "{in_dom} rows in the DOM");
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_links_open_the_event_and_the_trial() -> anyhow::Result<()> {
    let timeline = timeline_of(HF)?;
    // An answered tools/call deep in the timeline, so the list must scroll.
    let entry = timeline
        .entries
        .iter()
        .skip(timeline.entries.len() / 2)
        .find(|e| e.kind == EntryKind::Call && !e.pending)
        .context("no answered call in the second half")?
        .clone();
    let (trial, _, trial_len) = timeline.trials[3].clone();
    with_site(1400, |c, root| async move {
        c.goto(&format!("{}&event={}", replay(&root, HF), entry.n))
            .await?;
        let detail = wait_for(&c, &format!("#detail .detail-body[data-n='{}']", entry.n)).await?;
        let text = detail.text().await?;
        anyhow::ensure!(text.contains(&format!("Entry #{}", entry.n)), "{text}");
        anyhow::ensure!(
            text.contains(&entry.title),
            "title {:?} not in {text}",
            entry.title
        );
        anyhow::ensure!(text.contains("mcp.jsonl line"), "no raw lines in {text}");
        let row = wait_for(&c, &format!(".tl-row.selected[data-n='{}']", entry.n)).await?;
        // The selected row is inside the list's visible area.
        let visible = c
            .execute(
                "const r = arguments[0].getBoundingClientRect(); \
                 const l = document.querySelector('.vlist').getBoundingClientRect(); \
                 return r.top >= l.top && r.bottom <= l.bottom;",
                vec![serde_json::to_value(&row)?],
            )
            .await?;
        anyhow::ensure!(
            visible == serde_json::Value::Bool(true),
            "selected row not in view"
        );
        screenshot(&c, "replay-hf-deeplink.png").await?;

        let corr: String = url_encode(&trial);
        c.goto(&format!("{}&corr={corr}", replay(&root, HF)))
            .await?;
        wait_for(&c, LOADED_ROW).await?;
        let shown = attr_u64(&c, "#shown-count", "data-shown").await?;
        anyhow::ensure!(
            shown == trial_len as u64,
            "trial {trial}: {shown} shown, {trial_len} expected"
        );
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_record_page_links_probe_evidence_into_the_replay() -> anyhow::Result<()> {
    let timeline = timeline_of(HF)?;
    let expected = timeline
        .entries
        .iter()
        .filter(|e| e.corr_id.as_deref() == Some(EVIDENCE))
        .count();
    anyhow::ensure!(expected > 0, "no entries for {EVIDENCE}");
    with_site(1400, |c, root| async move {
        c.goto(&format!("{root}runs/{HF}/")).await?;
        let link = wait_for(&c, ".probes-section a.evidence").await?;
        anyhow::ensure!(link.text().await? == EVIDENCE);
        anyhow::ensure!(
            !c.find_all(Locator::Css("a.open-replay")).await?.is_empty(),
            "the record page links its replay"
        );
        // Nothing of the replay is fetched before the reader opens it: the
        // page has painted, hydrated and gone idle with no tape asked for.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let tapes_fetched = |c: Client| async move {
            let v = c
                .execute(
                    "return performance.getEntriesByType('resource').map(e => e.name).filter(n => n.includes('.jsonl')).length;",
                    vec![],
                )
                .await?;
            anyhow::Ok(v.as_u64().unwrap_or(0))
        };
        let before = tapes_fetched(c.clone()).await?;
        anyhow::ensure!(before == 0, "{before} tape requests before the replay was opened");
        link.click().await?;
        wait_for(&c, LOADED_ROW).await?;
        let after = tapes_fetched(c.clone()).await?;
        anyhow::ensure!(after >= 2, "opening the replay fetched {after} tapes, not both");
        let shown = attr_u64(&c, "#shown-count", "data-shown").await?;
        anyhow::ensure!(
            shown == expected as u64,
            "{shown} shown, {expected} expected"
        );
        let selected = c
            .find(Locator::Css("#filter-corr"))
            .await?
            .prop("value")
            .await?
            .unwrap_or_default();
        anyhow::ensure!(selected == EVIDENCE, "trial filter {selected:?}");
        Ok(())
    })
    .await
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tape_with_one_byte_changed_is_unverified() -> anyhow::Result<()> {
    // At a phone's width: the badge and the list still read.
    with_site(390, |c, root| async move {
        c.goto(&replay(&root, TAMPERED)).await?;
        let text = unverified_badge(&c).await?;
        anyhow::ensure!(
            text.contains("mcp.jsonl sha256 differs from the record"),
            "{text}"
        );
        anyhow::ensure!(
            !text.contains("agent.jsonl"),
            "the agent tape is intact: {text}"
        );
        wait_for(&c, LOADED_ROW).await?;
        screenshot(&c, "replay-tampered-390.png").await?;
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tape_html_renders_as_text_and_runs_nothing() -> anyhow::Result<()> {
    with_site(1400, |c, root| async move {
        c.goto(&format!("{root}?trace=xss/mcp.jsonl;xss/agent.jsonl"))
            .await?;
        wait_for(&c, LOADED_ROW).await?;
        let badge = c.find(Locator::Css("#integrity")).await?;
        anyhow::ensure!(badge.attr("data-state").await?.as_deref() == Some("unchecked"));
        // Open every entry's detail pane: each shows its raw JSON.
        let n = attr_u64(&c, "#shown-count", "data-total").await?;
        let mut seen = String::new();
        for i in 0..n {
            c.find(Locator::Css(&format!(".tl-row[data-n='{i}']")))
                .await?
                .click()
                .await?;
            let d = wait_for(&c, &format!("#detail .detail-body[data-n='{i}']")).await?;
            seen.push_str(&d.text().await?);
            seen.push_str(&c.find(Locator::Css(".vlist")).await?.text().await?);
        }
        anyhow::ensure!(seen.contains("<script>window.__xss=2</script>"), "{seen}");
        anyhow::ensure!(seen.contains("onerror"), "{seen}");
        tokio::time::sleep(Duration::from_millis(500)).await;
        let flag = c
            .execute(
                "return window.__xss === undefined ? null : window.__xss;",
                vec![],
            )
            .await?;
        anyhow::ensure!(flag.is_null(), "a payload ran: window.__xss = {flag}");
        let injected = c
            .execute(
                "return document.querySelectorAll('#fitness-app img, #fitness-app script').length;",
                vec![],
            )
            .await?;
        anyhow::ensure!(
            injected == serde_json::json!(0),
            "{injected} elements injected"
        );
        screenshot(&c, "replay-xss.png").await?;
        Ok(())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_third_party_page_embeds_a_replay_a_run_a_board_and_an_iframe() -> anyhow::Result<()> {
    let site = write_site()?;
    let server = StaticServer::start_site(&site.root).await?;
    let host_dir = tempfile::tempdir()?;
    let root = server.url("/");
    let host_html = format!(
        r#"<!doctype html><html><head><meta charset="utf-8"><title>A third party</title></head>
<body><h1>Someone else's page</h1>
<section id="replay-slot"><script src="{root}embed.js" data-fitness="replay" data-src="{root}?run={HF}&amp;view=replay"></script></section>
<section id="run-slot"><script src="{root}embed.js" data-fitness="run" data-src="{root}?run={HF}"></script></section>
<section id="board-slot"><script src="{root}embed.js" data-fitness="board" data-src="{root}"></script></section>
<iframe id="frame" src="{root}?run={TAMPERED}&amp;view=replay&amp;embed=1" width="1200" height="700"></iframe>
</body></html>"#
    );
    std::fs::write(host_dir.path().join("index.html"), host_html)?;
    let host = StaticServer::start(host_dir.path()).await?;
    anyhow::ensure!(host.addr.port() != server.addr.port());
    let browser = Browser::start(1400, 1000).await?;
    let outcome = async {
        let c = &browser.client;
        c.goto(&host.url("/")).await?;
        let badge = wait_for(c, "#replay-slot .fitness-embed #integrity").await?;
        anyhow::ensure!(
            badge.attr("data-state").await?.as_deref() == Some("verified"),
            "embedded replay: {}",
            badge.text().await?
        );
        wait_for(c, "#replay-slot .replay[data-complete='1'] .tl-row").await?;
        wait_for(c, "#board-slot .fitness-embed article.row").await?;
        let record = wait_for(c, "#run-slot .fitness-embed article.record").await?;
        anyhow::ensure!(record.attr("data-run-id").await?.as_deref() == Some(HF));
        let rows = c
            .find_all(Locator::Css("#board-slot article.row"))
            .await?
            .len();
        anyhow::ensure!(rows == 33, "embedded board rows {rows}");
        // Links in the embedded board lead to the publishing site.
        let href = c
            .find(Locator::Css("#board-slot article.row a.open-record"))
            .await?
            .attr("href")
            .await?
            .unwrap_or_default();
        anyhow::ensure!(href.starts_with(&root), "record link {href}");
        anyhow::ensure!(
            c.find_all(Locator::Css(".masthead")).await?.is_empty(),
            "an embedded view has no masthead"
        );
        // The viewer's stylesheet styles the viewer only: the host page keeps
        // the browser's default body margin.
        let margin = c
            .execute("return getComputedStyle(document.body).marginTop;", vec![])
            .await?;
        anyhow::ensure!(
            margin == serde_json::json!("8px"),
            "host body margin {margin}"
        );
        screenshot(c, "embed-host.png").await?;

        c.find(Locator::Css("#frame")).await?.enter_frame().await?;
        let badge = wait_for(c, ".fitness-embed #integrity").await?;
        anyhow::ensure!(badge.attr("data-state").await?.as_deref() == Some("unverified"));
        anyhow::ensure!(c.find_all(Locator::Css(".masthead")).await?.is_empty());
        c.enter_parent_frame().await?;
        c.execute("document.getElementById('frame').scrollIntoView();", vec![])
            .await?;
        screenshot(c, "embed-iframe.png").await?;
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// Serves the viewer and, under `/slow/`, the huggingface tapes: the first
/// `head` bytes of each at once, the rest only once `release` turns true.
async fn start_held_server(
    site: &Path,
    head: usize,
    release: tokio::sync::watch::Receiver<bool>,
) -> anyhow::Result<(String, tokio::task::JoinHandle<()>)> {
    use axum::extract::Path as UrlPath;
    let handler = move |UrlPath(name): UrlPath<String>| {
        let release = release.clone();
        async move {
            let bytes = match name.as_str() {
                "mcp.jsonl" | "agent.jsonl" => tape_bytes(HF, &name).unwrap_or_default(),
                _ => return axum::http::StatusCode::NOT_FOUND.into_response(),
            };
            let cut = head.min(bytes.len());
            let (first, rest) = (bytes[..cut].to_vec(), bytes[cut..].to_vec());
            let body = futures::stream::iter([Ok::<_, std::io::Error>(first)]).chain(
                futures::stream::once(async move {
                    let mut release = release;
                    let _ = release.wait_for(|go| *go).await;
                    Ok(rest)
                }),
            );
            axum::body::Body::from_stream(body).into_response()
        }
    };
    use axum::response::IntoResponse;
    use futures::StreamExt;
    let app = axum::Router::new()
        .route("/slow/{name}", axum::routing::get(handler))
        .fallback_service(tower_http::services::ServeDir::new(site));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Ok((format!("http://{addr}/"), task))
}

/// Titles of the rows on screen, in order.
async fn row_titles(c: &Client) -> anyhow::Result<Vec<(u64, String)>> {
    let v = c
        .execute(
            "return Array.from(document.querySelectorAll('.tl-row')).map(r => [Number(r.dataset.n), r.querySelector('.title').textContent]).sort((a, b) => a[0] - b[0]);",
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(v)?)
}

/// While a large pair is still arriving, the page already shows the
/// timeline's first entries, and they are the finished timeline's first
/// entries, in the same order: nothing moves when the rest arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_entries_show_before_the_tapes_are_read_and_do_not_move() -> anyhow::Result<()> {
    let site = write_site()?;
    let (release, held) = tokio::sync::watch::channel(false);
    let (root, task) = start_held_server(&site.root, 256 << 10, held).await?;
    let browser = Browser::start(1400, 900).await?;
    let c = browser.client.clone();
    let outcome = async {
        c.goto(&format!("{root}?trace=slow/mcp.jsonl;slow/agent.jsonl"))
            .await?;
        wait_for(&c, ".replay[data-complete='0'] .tl-row").await?;
        let status = c.find(Locator::Css("#replay-status")).await?.text().await?;
        anyhow::ensure!(status.contains("Reading the tapes"), "status: {status}");
        let early = row_titles(&c).await?;
        anyhow::ensure!(!early.is_empty());
        // The per-tape counts wait for the whole tapes.
        anyhow::ensure!(c.find(Locator::Css("li.tape-count")).await.is_err());
        screenshot(&c, "replay-preview.png").await?;
        release.send(true)?;
        wait_for(&c, LOADED_ROW).await?;
        let late = row_titles(&c).await?;
        let expected = timeline_of(HF)?;
        let total = attr_u64(&c, "#shown-count", "data-total").await?;
        anyhow::ensure!(total == expected.entries.len() as u64, "{total} entries");
        for (n, title) in &early {
            anyhow::ensure!(
                late.iter().any(|(m, t)| m == n && t == title),
                "entry {n} {title:?} moved or changed once the tapes were read"
            );
            anyhow::ensure!(
                expected.entries[*n as usize].title == *title,
                "entry {n}: {title:?}, the timeline says {:?}",
                expected.entries[*n as usize].title
            );
        }
        Ok(())
    }
    .await;
    browser.close().await?;
    task.abort();
    outcome
}

/// A tape the record names but the site does not serve: the badge says which
/// and why, and the tape that is there is still replayed in full.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_tape_is_named_and_the_other_is_still_replayed() -> anyhow::Result<()> {
    let expected = {
        let mut b = TimelineBuilder::new();
        let t = b.add_tape(Plane::Mcp);
        b.push_tape(t, &tape_bytes(MISSING, "mcp.jsonl")?);
        b.finish()
    };
    with_site(1400, |c, root| async move {
        c.goto(&replay(&root, MISSING)).await?;
        let text = unverified_badge(&c).await?;
        anyhow::ensure!(
            text.contains("agent.jsonl") && text.contains("HTTP 404"),
            "{text}"
        );
        anyhow::ensure!(
            !text.contains("mcp.jsonl"),
            "the wire tape is intact: {text}"
        );
        wait_for(&c, LOADED_ROW).await?;
        let total = attr_u64(&c, "#shown-count", "data-total").await?;
        anyhow::ensure!(
            total == expected.entries.len() as u64,
            "{total} entries, the wire tape alone has {}",
            expected.entries.len()
        );
        anyhow::ensure!(c.find_all(Locator::Css("li.tape-count")).await?.len() == 1);
        Ok(())
    })
    .await
}

/// The fingerprint of the public key in a key file.
fn fingerprint_of(key: &Path) -> anyhow::Result<String> {
    let seed = fitness_recorder::integrity::read_secret(key)?;
    let public = integrity::decode_public_key(&integrity::signing::public_key_b64(&seed))?;
    Ok(integrity::key_fingerprint(public.as_bytes()))
}

/// The state a record page states, and its sentence.
async fn record_state(c: &Client, root: &str, run: &str) -> anyhow::Result<(String, String)> {
    fitness_e2e::browser::clear_cache(c).await?;
    c.goto(&format!("{root}runs/{run}/")).await?;
    wait_for(c, "#fitness-app[data-ready='1']").await?;
    // The page checks the record's bytes once it is live.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let p = wait_for(c, ".signature-state").await?;
    Ok((
        p.attr("data-signature").await?.unwrap_or_default(),
        p.text().await?,
    ))
}

/// The replay badge's state and text, once the tapes are read.
async fn badge_state(c: &Client, root: &str, run: &str) -> anyhow::Result<(String, String)> {
    fitness_e2e::browser::clear_cache(c).await?;
    c.goto(&replay(root, run)).await?;
    let badge = wait_for(c, "#integrity").await?;
    Ok((
        badge.attr("data-state").await?.unwrap_or_default(),
        badge.text().await?,
    ))
}

/// The board row's signature state.
async fn row_state(c: &Client, root: &str, run: &str) -> anyhow::Result<String> {
    c.goto(root).await?;
    let row = wait_for(c, &format!("article.row[data-run-id='{run}']")).await?;
    Ok(row.attr("data-signature").await?.unwrap_or_default())
}

/// Verified means one thing: signed by the key the site publishes, which
/// the badge names. The board row, the record page and the replay agree.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verified_is_signed_by_the_sites_own_key_and_names_it() -> anyhow::Result<()> {
    let site = write_site()?;
    let fingerprint = fingerprint_of(site.key.as_ref().context("a signed site")?)?;
    let server = StaticServer::start_site(&site.root).await?;
    let browser = Browser::start(1400, 900).await?;
    let c = browser.client.clone();
    let root = server.url("/");
    let outcome = async {
        anyhow::ensure!(row_state(&c, &root, HF).await? == "verified");
        let (state, text) = record_state(&c, &root, HF).await?;
        anyhow::ensure!(
            state == "verified" && text.contains(&fingerprint),
            "{state}: {text}"
        );
        let (state, text) = badge_state(&c, &root, HF).await?;
        anyhow::ensure!(state == "verified", "{state}: {text}");
        anyhow::ensure!(
            text.starts_with("Verified.") && text.contains(&fingerprint),
            "the badge names the site's key {fingerprint}: {text}"
        );

        // The same record file, re-signed by another key after publishing:
        // its signature is valid, but it is not this site's.
        let other = site.other_key()?;
        let other_fp = fingerprint_of(&other)?;
        let path = site.root.join("runs").join(HF).join("record.json");
        let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(&path)?)?;
        integrity::signing::sign_record(
            &mut value,
            &fitness_recorder::integrity::read_secret(&other)?,
        )?;
        remove_published(&path)?;
        std::fs::write(&path, integrity::record_file_bytes(&value)?)?;
        let (state, text) = record_state(&c, &root, HF).await?;
        anyhow::ensure!(state == "other-key", "{state}: {text}");
        anyhow::ensure!(
            text.contains(&other_fp) && text.contains(&fingerprint) && !text.contains("Verified"),
            "{text}"
        );
        let (state, text) = badge_state(&c, &root, HF).await?;
        anyhow::ensure!(state == "other-key", "{state}: {text}");
        anyhow::ensure!(
            text.starts_with("Not verified") && text.contains(&other_fp),
            "{text}"
        );

        // A record file that is another run's: the run asked for is not the
        // record served.
        let src = site.root.join("runs").join(TAMPERED).join("record.json");
        let dst = site.root.join("runs").join(MISSING).join("record.json");
        remove_published(&dst)?;
        std::fs::copy(&src, &dst)?;
        let (state, text) = badge_state(&c, &root, MISSING).await?;
        anyhow::ensure!(state == "unverified", "{state}: {text}");
        anyhow::ensure!(
            text.contains(&format!("holds the record of run {TAMPERED}")),
            "{text}"
        );
        fitness_e2e::browser::clear_cache(&c).await?;
        c.goto(&format!("{root}runs/{MISSING}/?embed=1")).await?;
        let error = wait_for(&c, "p.error").await?.text().await?;
        anyhow::ensure!(error.contains("holds the record of run"), "{error}");
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// A site that publishes no key vouches for nothing: records signed by the
/// runs' own key read "no site key", unsigned ones "unsigned", on the row,
/// the record page and the replay alike, and never verified.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_site_key_nothing_reads_verified() -> anyhow::Result<()> {
    let (records, set) = anchor_records()?;
    let browser = Browser::start(1400, 900).await?;
    let c = browser.client.clone();
    let outcome = async {
        for (signed, expected) in [(true, "no-site-key"), (false, "unsigned")] {
            let site = publish_site(Publish {
                records: Some((&records, &set.standing_notes)),
                anchor: false,
                sign: false,
                records_signed: signed,
            })?;
            let server = StaticServer::start_site(&site.root).await?;
            let root = server.url("/");
            anyhow::ensure!(
                row_state(&c, &root, HF).await? == expected,
                "{expected}: row"
            );
            let (state, text) = record_state(&c, &root, HF).await?;
            anyhow::ensure!(
                state == expected && !text.contains("Verified"),
                "{state}: {text}"
            );
            let (state, text) = badge_state(&c, &root, HF).await?;
            anyhow::ensure!(state == expected, "{expected}: badge {state}: {text}");
            anyhow::ensure!(!text.contains("Verified"), "{text}");
            if signed {
                anyhow::ensure!(text.contains("publishes no key"), "{text}");
            }
        }
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_strip_draws_a_lane_per_arm_with_every_call_and_links_a_span() -> anyhow::Result<()> {
    // The scored run's lanes at both widths; a refused run's at one.
    for (run, widths) in [(HF, &[1400, 390][..]), (REFUSED, &[1400][..])] {
        strip_matches_the_tapes(run, widths).await?;
    }
    let timeline = timeline_of(HF)?;
    // A span in the middle of the run, and the entries whose time is in it.
    let shape = fitness_shared::tape::timeline::Shape::of(&timeline);
    let length = shape.end_ms - shape.start_ms;
    let (from, to) = ((length * 0.5) as u64, (length * 0.6) as u64);
    let in_span = timeline
        .entries
        .iter()
        .filter(|e| {
            e.t_ms.is_some_and(|t| {
                t >= shape.start_ms + from as f64 && t <= shape.start_ms + to as f64
            })
        })
        .count() as u64;
    anyhow::ensure!(in_span > 0, "an empty span proves nothing");
    // A span's link reopens the same view: the list holds its entries only.
    with_site(1400, |c, root| async move {
        c.goto(&format!("{}&span={from}-{to}", replay(&root, HF)))
            .await?;
        wait_for(&c, "#strip-span").await?;
        wait_for(&c, LOADED_ROW).await?;
        let shown = attr_u64(&c, "#shown-count", "data-shown").await?;
        anyhow::ensure!(shown == in_span, "{shown} shown, {in_span} in the span");
        screenshot(&c, "replay-strip-span-1400.png").await?;
        c.find(Locator::Css("#strip-span button"))
            .await?
            .click()
            .await?;
        tokio::time::sleep(Duration::from_millis(200)).await;
        let all = attr_u64(&c, "#shown-count", "data-shown").await?;
        anyhow::ensure!(all == attr_u64(&c, "#shown-count", "data-total").await?);
        anyhow::ensure!(!c.current_url().await?.as_str().contains("span="));
        Ok(())
    })
    .await
}

/// Point at the drive lane (the hover names a call), then drag across its
/// middle third: the list shows only that span, and the URL says so.
async fn drag_a_span(c: &Client) -> anyhow::Result<()> {
    use fantoccini::actions::{InputSource, MOUSE_BUTTON_LEFT, MouseActions, PointerAction};
    let lane = c
        .find(Locator::Css(".strip-lane[data-lane='drive'] svg"))
        .await?;
    let width = c
        .execute(
            "return arguments[0].getBoundingClientRect().width;",
            vec![serde_json::to_value(&lane)?],
        )
        .await?
        .as_f64()
        .context("the lane's width")?;
    let total = attr_u64(c, "#shown-count", "data-total").await?;
    let drag = MouseActions::new("mouse".to_owned())
        .then(PointerAction::MoveToElement {
            element: lane.clone(),
            duration: None,
            x: -width / 6.0,
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::MoveBy {
            duration: Some(Duration::from_millis(100)),
            x: width / 3.0,
            y: 0.0,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    c.perform_actions(drag).await?;
    let hover = c.find(Locator::Css("#strip-hover")).await?.text().await?;
    anyhow::ensure!(hover.starts_with("drive · #"), "hover: {hover}");
    wait_for(c, "#strip-span").await?;
    let shown = attr_u64(c, "#shown-count", "data-shown").await?;
    anyhow::ensure!(shown > 0 && shown < total, "{shown} of {total} shown");
    anyhow::ensure!(c.current_url().await?.as_str().contains("span="));
    screenshot(c, "replay-strip-drag-1400.png").await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trial_reads_as_a_conversation_with_its_verdict_and_wire_frames() -> anyhow::Result<()> {
    use fitness_shared::tape::timeline::Arm;
    let timeline = timeline_of(HF)?;
    let (corr, _, _) = timeline
        .trials
        .iter()
        .find(|(_, arm, _)| *arm == Arm::Construct)
        .context("a construct trial")?
        .clone();
    // From the tape lines: the trial's turns, its verdicts, its wire entries.
    let mut turns = 0u64;
    let mut verdicts = 0u64;
    let mut passed = 0u64;
    for name in ["mcp.jsonl", "agent.jsonl"] {
        for line in String::from_utf8(tape_bytes(HF, name)?)?.lines() {
            let v: serde_json::Value = serde_json::from_str(line)?;
            if v["corr_id"] != corr.as_str() {
                continue;
            }
            turns += u64::from(v["type"] == "turn");
            if v["kind"] == "fitness.task_end" {
                verdicts += 1;
                passed += u64::from(v["raw"]["success"] == true);
            }
        }
    }
    let wire = timeline
        .entries
        .iter()
        .filter(|e| e.corr_id.as_deref() == Some(&corr) && e.plane == Plane::Mcp)
        .filter(|e| !matches!(e.kind, EntryKind::Event | EntryKind::Turn))
        .map(|e| e.n)
        .collect::<Vec<_>>();
    anyhow::ensure!(
        turns > 2 && verdicts > 0 && !wire.is_empty(),
        "a trial worth reading"
    );
    for width in [1400, 390] {
        let (corr, wire) = (corr.clone(), wire.clone());
        with_site(width, |c, root| async move {
            c.goto(&format!(
                "{}&trial={}",
                replay(&root, HF),
                url_encode(&corr)
            ))
            .await?;
            let section = wait_for(&c, "#trial").await?;
            anyhow::ensure!(section.attr("data-trial").await?.as_deref() == Some(corr.as_str()));
            anyhow::ensure!(attr_u64(&c, "#trial", "data-attempts").await? == verdicts);
            anyhow::ensure!(attr_u64(&c, "#trial", "data-passed").await? == passed);
            let steps = c.find_all(Locator::Css("#trial .step")).await?.len() as u64;
            anyhow::ensure!(steps == turns, "{steps} steps, {turns} turns on the tapes");
            let shown = c.find_all(Locator::Css("#trial .verdict")).await?.len() as u64;
            anyhow::ensure!(shown == verdicts, "{shown} verdicts shown");
            let frames = c
                .find_all(Locator::Css("#trial .wire-frame button"))
                .await?;
            anyhow::ensure!(frames.len() == wire.len(), "{} wire frames", frames.len());
            let calls = c
                .find_all(Locator::Css("#trial .assistant .call"))
                .await?
                .len();
            anyhow::ensure!(calls > 0, "the agent's tool calls are shown");
            screenshot(&c, &format!("replay-trial-{width}.png")).await?;
            if width == 1400 {
                // A wire frame opens its raw JSON in the detail pane.
                frames[0].click().await?;
                wait_for(&c, &format!("#detail .detail-body[data-n='{}']", wire[0])).await?;
                // Closing the trial takes it out of the URL.
                c.find(Locator::Css("#trial .close")).await?.click().await?;
                tokio::time::sleep(Duration::from_millis(200)).await;
                anyhow::ensure!(c.find_all(Locator::Css("#trial")).await?.is_empty());
                anyhow::ensure!(!c.current_url().await?.as_str().contains("trial="));
                // The detail pane reopens it.
                c.find(Locator::Css("#detail .read-trial"))
                    .await?
                    .click()
                    .await?;
                wait_for(&c, "#trial").await?;
                anyhow::ensure!(c.current_url().await?.as_str().contains("trial="));
            }
            Ok(())
        })
        .await?;
    }
    Ok(())
}

/// The strip of `run` at each width: a lane per arm with as many marks as
/// the tapes have calls, one path per kind of mark, a tick per gate verdict.
async fn strip_matches_the_tapes(run: &'static str, widths: &[u32]) -> anyhow::Result<()> {
    let (lanes, gates) = fitness_e2e::tapes::marks_by_lane(&traces().join(run))?;
    anyhow::ensure!(!gates.is_empty(), "the reference tapes carry gate events");
    let gates = gates.len() as u64;
    for &width in widths {
        let lanes = lanes.clone();
        with_site(width, |c, root| async move {
            c.goto(&replay(&root, run)).await?;
            wait_for(&c, "#timeline-strip").await?;
            let drawn = attr_u64(&c, "#timeline-strip", "data-lanes").await?;
            anyhow::ensure!(
                drawn == lanes.len() as u64,
                "{drawn} lanes, tapes {lanes:?}"
            );
            let total: u64 = lanes.values().sum();
            anyhow::ensure!(attr_u64(&c, "#timeline-strip", "data-marks").await? == total);
            for (arm, n) in &lanes {
                let got =
                    attr_u64(&c, &format!(".strip-lane[data-lane='{arm}']"), "data-marks").await?;
                anyhow::ensure!(got == *n, "lane {arm}: {got} marks, the tapes have {n}");
                // One path per kind of mark, never a node per mark.
                let paths = c
                    .find_all(Locator::Css(&format!(
                        ".strip-lane[data-lane='{arm}'] path"
                    )))
                    .await?
                    .len();
                anyhow::ensure!(paths == 4, "lane {arm}: {paths} paths");
            }
            let ticks = c.find_all(Locator::Css(".strip-tick")).await?;
            anyhow::ensure!(ticks.len() as u64 == gates, "{} ticks", ticks.len());
            screenshot(&c, &format!("replay-strip-{run}-{width}.png")).await?;
            // A tick opens its gate's event in the list and the detail pane.
            if run == HF && width == 1400 {
                ticks[0].click().await?;
                let detail = wait_for(&c, "#detail .detail-body").await?;
                anyhow::ensure!(detail.text().await?.contains("fitness.gate"));
                drag_a_span(&c).await?;
            }
            Ok(())
        })
        .await?;
    }
    Ok(())
}
