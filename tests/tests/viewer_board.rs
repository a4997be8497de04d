//! The published anchor board in a real browser: `fitness publish` writes
//! the site (the 33 imported anchor runs, their tapes, signed), `fitness
//! serve`'s router serves it with its own headers, and headless Chromium
//! opens it with JavaScript off, then on.

use std::time::{Duration, Instant};

use anyhow::Context;
use fantoccini::{Client, Locator};
use fitness_e2e::anchor_import;
use fitness_e2e::browser::{Browser, color_scheme, screenshot, scripts_enabled};
use fitness_e2e::serve::StaticServer;
use fitness_e2e::site::{Publish, cloned_anchor, publish_site};
use fitness_shared::record::RunRecord;

const HF: &str = "huggingface-co-2026-08-20T17-23-48-886Z";
const VERCEL: &str = "mcp-vercel-com-2026-08-20T18-17-32-685Z";
/// A visible row: in a group the tier filter does not hide.
const SHOWN_ROW: &str = "section.group:not([hidden]) article.row";

async fn count(client: &Client, css: &str) -> anyhow::Result<usize> {
    Ok(client.find_all(Locator::Css(css)).await?.len())
}

async fn text(client: &Client, css: &str) -> anyhow::Result<String> {
    Ok(client
        .find(Locator::Css(css))
        .await
        .with_context(|| css.to_owned())?
        .text()
        .await?)
}

async fn wait_for(client: &Client, css: &str) -> anyhow::Result<fantoccini::elements::Element> {
    client
        .wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("{css} never appeared"))
}

/// The page is live: the wasm has hydrated it (or rendered it).
async fn live(client: &Client) -> anyhow::Result<()> {
    wait_for(client, "#fitness-app[data-ready='1']").await?;
    Ok(())
}

async fn scroll_to(client: &Client, css: &str) -> anyhow::Result<()> {
    client
        .execute(
            "document.querySelector(arguments[0]).scrollIntoView();",
            vec![serde_json::Value::from(css)],
        )
        .await?;
    Ok(())
}

/// Runs with tapes among the anchor's (those with a traces directory).
fn runs_with_tapes(records: &[RunRecord]) -> usize {
    records
        .iter()
        .filter(|r| {
            fitness_e2e::site::anchor_dir()
                .join("traces")
                .join(&r.run.id)
                .is_dir()
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_board_every_record_and_a_servers_history_read_with_javascript_off()
-> anyhow::Result<()> {
    let site = publish_site(Publish::default())?;
    let server = StaticServer::start_site(&site.root).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = async {
        let c = &browser.client;
        scripts_enabled(c, false).await?;
        c.goto(&server.url("/")).await?;
        wait_for(c, "article.row").await?;
        anyhow::ensure!(count(c, "article.row").await? == 33, "rows");
        anyhow::ensure!(count(c, "article.row .result.scored").await? == 7);
        anyhow::ensure!(count(c, "article.row .result.refused").await? == 26);
        anyhow::ensure!(
            count(c, "#fitness-app[data-ready]").await? == 0,
            "no script ran, so nothing says it did"
        );
        anyhow::ensure!(
            text(c, ".summary .headline").await? == "26 of 33 published runs published no score."
        );
        // The masthead spend: a floor, summed from the records.
        let spend = text(c, ".spend").await?;
        anyhow::ensure!(
            spend.contains("at least $") && spend.contains("A floor"),
            "{spend}"
        );
        // Column headings over the rows, with the shared axis labelled once.
        let head = text(c, ".board-head").await?;
        for word in [
            "RUN",
            "FIRST-TRY SUCCESS",
            "PROBES AND COST",
            "EVIDENCE",
            "0",
            "50",
            "100",
        ] {
            anyhow::ensure!(head.to_uppercase().contains(word), "{word} in {head:?}");
        }
        // The tier summary: one card per tier with its count.
        for (tier, n) in [("free", 15), ("cheap", 7), ("paid", 4), ("scored", 7)] {
            let got = text(c, &format!(".tier-card[data-tier='{tier}'] .tier-count")).await?;
            anyhow::ensure!(got == n.to_string(), "{tier}: {got}");
        }
        // Every imported pass keeps its number and says what our rule reads.
        anyhow::ensure!(count(c, "article.row .caveat[data-reads='EXTEND']").await? == 7);
        let caveat = text(c, &format!("article.row[data-run-id='{HF}'] .caveat")).await?;
        anyhow::ensure!(
            caveat.contains("reads EXTEND") && caveat.contains("74.2%") && caveat.contains("90%"),
            "{caveat}"
        );
        // Per-task economics on the scored rows.
        let econ = text(c, &format!("article.row[data-run-id='{HF}'] .economics")).await?;
        anyhow::ensure!(
            econ.ends_with("per completed task") && econ.contains("calls"),
            "{econ}"
        );
        screenshot(c, "fitness-board-nojs-1400.png").await?;

        // The record page is a directory of its own.
        c.goto(&server.url(&format!("/runs/{HF}/"))).await?;
        let ext = wait_for(c, "section.extensions").await?.text().await?;
        for pooled in ["10/12", "16/18", "22/24"] {
            anyhow::ensure!(
                ext.contains(pooled),
                "extension sequence lacks {pooled}: {ext:?}"
            );
        }
        anyhow::ensure!(
            count(c, ".signature-state[data-signature='verified']").await? == 1,
            "the record page states its signature"
        );
        anyhow::ensure!(count(c, "article.record .caveat").await? == 1);

        c.goto(&server.url("/servers/huggingface-co/")).await?;
        wait_for(c, "section.server-history").await?;
        anyhow::ensure!(count(c, "article.row").await? == 3, "huggingface's history");
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// The HTML the server sent for this page's root element, and the root
/// element as it is now (after hydration), with `data-ready` taken out.
async fn sent_and_live(c: &Client) -> anyhow::Result<(String, String)> {
    let got = c
        .execute_async(
            r#"const done = arguments[arguments.length - 1];
               fetch(location.href).then(r => r.text()).then(html => {
                 const sent = new DOMParser().parseFromString(html, 'text/html');
                 const clean = s => s.replace(/ data-ready="1"/g, '');
                 done([clean(sent.getElementById('fitness-root').innerHTML),
                       clean(document.getElementById('fitness-root').innerHTML)]);
               });"#,
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(got)?)
}

/// When this page first painted, and when it started fetching the viewer's
/// wasm (ms since navigation).
async fn first_paint_and_wasm_fetch(c: &Client) -> anyhow::Result<(f64, f64)> {
    let got = c
        .execute(
            r#"const paint = performance.getEntriesByName('first-contentful-paint')[0];
               const wasm = performance.getEntriesByType('resource').find(e => e.name.endsWith('.wasm'));
               return [paint ? paint.startTime : null, wasm ? wasm.startTime : null];"#,
            vec![],
        )
        .await?;
    let (paint, wasm): (Option<f64>, Option<f64>) = serde_json::from_value(got)?;
    Ok((
        paint.context("no first contentful paint")?,
        wasm.context("the viewer's wasm was not fetched")?,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hydration_leaves_every_prerendered_page_as_it_was_and_makes_it_live() -> anyhow::Result<()>
{
    let site = publish_site(Publish::default())?;
    let server = StaticServer::start_site(&site.root).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = async {
        let c = &browser.client;
        for path in [
            "/".to_owned(),
            format!("/runs/{HF}/"),
            format!("/runs/{VERCEL}/"),
            "/servers/huggingface-co/".to_owned(),
        ] {
            c.goto(&server.url(&path)).await?;
            live(c).await?;
            let (sent, now) = sent_and_live(c).await?;
            anyhow::ensure!(sent.len() > 1000, "{path}: {} bytes sent", sent.len());
            anyhow::ensure!(sent == now, "{path}: hydration changed the page");
            let (paint, wasm) = first_paint_and_wasm_fetch(c).await?;
            anyhow::ensure!(
                wasm >= paint,
                "{path}: the viewer was fetched at {wasm} ms, before the first paint at {paint} ms"
            );
        }
        // Live: the tier filter works in place, on the page as sent.
        c.goto(&server.url("/")).await?;
        live(c).await?;
        c.execute("window.__samePage = 'yes';", vec![]).await?;
        c.find(Locator::Css("a.filter[data-tier='scored']"))
            .await?
            .click()
            .await?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while count(c, SHOWN_ROW).await? != 7 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::ensure!(count(c, SHOWN_ROW).await? == 7, "the scored filter");
        anyhow::ensure!(c.current_url().await?.query() == Some("tier=scored"));
        anyhow::ensure!(
            count(c, "a.filter[data-tier='scored'][aria-current='true']").await? == 1,
            "the chosen filter says so"
        );
        let same = c
            .execute("return window.__samePage || null;", vec![])
            .await?;
        anyhow::ensure!(
            same == serde_json::json!("yes"),
            "the filter reloaded the page"
        );
        // A filter in the URL of a fresh load applies too.
        c.goto(&server.url("/?tier=paid")).await?;
        live(c).await?;
        anyhow::ensure!(count(c, SHOWN_ROW).await? == 4, "the paid filter");
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anchor_board_and_record_page_in_chromium() -> anyhow::Result<()> {
    let set = anchor_import()?;
    let site = publish_site(Publish::default())?;
    let server = StaticServer::start_site(&site.root).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = async {
        let c = &browser.client;
        let started = Instant::now();
        c.goto(&server.url("/")).await?;
        wait_for(c, "article.row").await?;
        eprintln!("anchor board: first row after {:?}", started.elapsed());
        live(c).await?;
        anyhow::ensure!(count(c, "article.row").await? == 33, "rows");
        anyhow::ensure!(count(c, "article.row[data-outcome='SCORED']").await? == 7);

        // The runs published with tapes link both; the others say they have none.
        let with = runs_with_tapes(&set.records);
        anyhow::ensure!(with > 0, "the anchor has tapes");
        anyhow::ensure!(count(c, "article.row a.tape").await? == with * 2, "tape links");
        anyhow::ensure!(count(c, "article.row .no-tapes").await? == 33 - with);
        anyhow::ensure!(count(c, "article.row a.replay").await? == with);
        // Each tape link names the file once under its run, and it is there.
        let statuses = c
            .execute_async(
                r#"const done = arguments[arguments.length - 1];
                   const links = [...document.querySelectorAll('article.row a.tape')];
                   Promise.all(links.map(a => fetch(a.href).then(r => [a.getAttribute('href'), r.status])))
                     .then(done);"#,
                vec![],
            )
            .await?;
        let statuses: Vec<(String, u16)> = serde_json::from_value(statuses)?;
        for (href, status) in &statuses {
            anyhow::ensure!(status == &200, "{href}: HTTP {status}");
            anyhow::ensure!(href.matches("runs/").count() == 1, "{href}");
        }
        // Every row is signed by the site's key, and says so.
        anyhow::ensure!(count(c, "article.row[data-signature='verified']").await? == 33);
        let chip = text(c, &format!("article.row[data-run-id='{HF}'] .chip.signature")).await?;
        anyhow::ensure!(chip.starts_with("Verified · key "), "{chip}");
        // Other attempts are named with their outcome and group, each a
        // link, and the server's history is one link away.
        let attempt = text(c, &format!("article.row[data-run-id='{HF}'] .attempt")).await?;
        anyhow::ensure!(
            attempt.starts_with("Run 3 of 3 of this server; the others: run 1 (INSUFFICIENT_SURFACE, in Refused at a free gate); run 2 ("),
            "{attempt}"
        );
        anyhow::ensure!(
            count(c, &format!("article.row[data-run-id='{HF}'] .attempt a.other-attempt")).await? == 2,
            "each other run is linked"
        );
        let page = c.source().await?;
        anyhow::ensure!(!page.contains('\u{2014}'), "an em-dash on the board");

        // Standing notes: each set the rows carry is printed once, in the
        // methods section, with the number of runs carrying it; each
        // carrying row links to its set.
        let carried: Vec<&RunRecord> = set
            .records
            .iter()
            .filter(|r| r.notes.standing.is_some())
            .collect();
        anyhow::ensure!(!carried.is_empty());
        anyhow::ensure!(
            count(c, ".methods section.standing-set").await? == set.standing_notes.len()
        );
        for (id, notes) in &set.standing_notes {
            let css = format!(".methods section.standing-set[data-set-id='{id}']");
            let items = count(c, &format!("{css} ol.standing-notes li")).await?;
            anyhow::ensure!(items == notes.notes.len(), "{id}: {items} notes printed");
            let runs = carried
                .iter()
                .filter(|r| r.notes.standing.as_ref().is_some_and(|s| &s.set_id == id))
                .count();
            let meta = text(c, &format!("{css} .standing-meta")).await?;
            anyhow::ensure!(
                meta.contains(&format!("{runs} runs on this board carry these notes")),
                "{id}: {meta:?}"
            );
            let body = text(c, "#fitness-app").await?;
            for note in &notes.notes {
                let sets = set
                    .standing_notes
                    .values()
                    .filter(|s| s.notes.contains(note))
                    .count();
                let seen = body.matches(note.as_str()).count();
                anyhow::ensure!(seen == sets, "{id}: {note:?} appears {seen} times");
            }
        }
        anyhow::ensure!(count(c, "article.row a.standing-link").await? == carried.len());

        // The board, a record and a replay at both widths, light and dark.
        for dark in [false, true] {
            color_scheme(c, dark).await?;
            let scheme = if dark { "dark" } else { "light" };
            for (width, height) in [(1400, 900), (390, 844)] {
                c.set_window_size(width, height).await?;
                let name = |what: &str| format!("fitness-{what}-{width}-{scheme}.png");
                c.goto(&server.url("/")).await?;
                live(c).await?;
                screenshot(c, &name("board")).await?;
                scroll_to(c, "section.group[data-tier='scored'] article.row").await?;
                screenshot(c, &name("board-scored")).await?;
                scroll_to(c, "section.group[data-tier='free'] article.row").await?;
                screenshot(c, &name("board-refused")).await?;
                c.goto(&server.url(&format!("/runs/{HF}/"))).await?;
                live(c).await?;
                screenshot(c, &name("record")).await?;
                c.goto(&server.url(&format!("/runs/{HF}/?view=replay"))).await?;
                wait_for(c, ".replay[data-complete='1'] .tl-row").await?;
                screenshot(c, &name("replay")).await?;
                scroll_to(c, "#timeline-strip").await?;
                screenshot(c, &name("replay-strip")).await?;
                c.goto(&server.url(&format!(
                    "/runs/{HF}/?view=replay&trial=trending-model-rank3%3A%3Aconstruct"
                )))
                .await?;
                wait_for(c, "#trial .verdict").await?;
                screenshot(c, &name("replay-trial")).await?;
            }
        }
        color_scheme(c, false).await?;
        c.set_window_size(1400, 900).await?;

        // Each task of the record's per-task table links its drive trials'
        // conversation in the replay, and the link opens it.
        c.goto(&server.url(&format!("/runs/{HF}/"))).await?;
        live(c).await?;
        let rows = count(c, "section.tasks div.scroll:first-of-type tbody tr").await?;
        let links = c.find_all(Locator::Css("section.tasks a.read-trial")).await?;
        anyhow::ensure!(rows > 0 && links.len() == rows, "{} links, {rows} tasks", links.len());
        let first = c
            .find(Locator::Css("section.tasks tbody tr th code"))
            .await?
            .text()
            .await?;
        links[0].click().await?;
        let trial = wait_for(c, "#trial").await?;
        anyhow::ensure!(trial.attr("data-trial").await?.as_deref() == Some(first.as_str()));
        anyhow::ensure!(count(c, "#trial .verdict").await? > 0);

        // The old record URL still works, rendered in the browser.
        c.goto(&server.url(&format!("/?run={HF}"))).await?;
        let ext = wait_for(c, "section.extensions").await?.text().await?;
        anyhow::ensure!(ext.contains("22/24"), "{ext}");
        let notes = text(c, "section.notes").await?;
        anyhow::ensure!(
            notes.contains("standing notes, published once as the set sha256:")
                && notes.contains("Read them in the board's methods section"),
            "notes {notes:?}"
        );
        // The record links to its set on the board, and the board scrolls there.
        let hf_set = set
            .records
            .iter()
            .find(|r| r.run.id == HF)
            .and_then(|r| r.notes.standing.clone())
            .context("the huggingface run carries standing notes")?;
        c.find(Locator::Css("section.notes a.standing-on-board"))
            .await?
            .click()
            .await?;
        let target = wait_for(
            c,
            &format!(
                ".methods section.standing-set[data-set-id='{}']",
                hf_set.set_id
            ),
        )
        .await?;
        let mut top = f64::MAX;
        for _ in 0..50 {
            top = c
                .execute(
                    "return arguments[0].getBoundingClientRect().top;",
                    vec![serde_json::to_value(&target)?],
                )
                .await?
                .as_f64()
                .unwrap_or(f64::MAX);
            if (0.0..900.0).contains(&top) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        anyhow::ensure!(
            (0.0..900.0).contains(&top),
            "the board did not scroll to the set (top {top})"
        );

        // A construct refusal reads the MCP tape: calls, errors, no response.
        c.goto(&server.url(
            "/runs/knowledge-mcp-global-api-aws-2026-08-20T16-45-18-024Z/",
        ))
        .await?;
        let tape = wait_for(c, "section.deciding .tape-counts")
            .await?
            .text()
            .await?;
        anyhow::ensure!(
            tape.contains("Tool calls recorded: 54")
                && tape.contains("Requests with no matching response: 54"),
            "construct tape counts {tape:?}"
        );
        anyhow::ensure!(
            !c.source().await?.contains('\u{2014}'),
            "an em-dash on a record page"
        );
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// Links between the viewer's pages change the page without reloading it
/// (the page's own JavaScript state survives), the URL follows, and Back and
/// Forward return to the pages they name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_between_pages_navigate_in_place_and_back_returns() -> anyhow::Result<()> {
    let site = publish_site(Publish::default())?;
    let server = StaticServer::start_site(&site.root).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = async {
        let c = &browser.client;
        c.goto(&server.url("/")).await?;
        live(c).await?;
        // Lives as long as the page: a reload would drop it.
        c.execute("window.__samePage = 'yes';", vec![]).await?;
        let same_page = || async {
            let v = c
                .execute("return window.__samePage || null;", vec![])
                .await?;
            anyhow::Ok(v == serde_json::json!("yes"))
        };

        let row = format!("article.row[data-run-id='{HF}']");
        c.find(Locator::Css(&format!("{row} a.open-record")))
            .await?
            .click()
            .await?;
        wait_for(c, "section.extensions").await?;
        anyhow::ensure!(c.current_url().await?.path() == format!("/runs/{HF}/"));
        anyhow::ensure!(same_page().await?, "opening a record reloaded the page");
        anyhow::ensure!(
            count(c, "article.row").await? == 0,
            "the board is still shown"
        );
        // Links on a page reached in place lead where they say.
        let history = c
            .find(Locator::Css("article.record a.history"))
            .await?
            .attr("href")
            .await?
            .unwrap_or_default();
        anyhow::ensure!(history == "../../servers/huggingface-co/", "{history}");

        // The record's link back to the board, then Back to the record.
        c.find(Locator::Css("nav.back a")).await?.click().await?;
        wait_for(c, "article.row").await?;
        anyhow::ensure!(c.current_url().await?.path() == "/");
        anyhow::ensure!(
            same_page().await?,
            "the link to the board reloaded the page"
        );
        c.back().await?;
        wait_for(c, "section.extensions").await?;
        c.back().await?;
        wait_for(c, "article.row").await?;
        anyhow::ensure!(count(c, "article.row").await? == 33, "rows after Back");
        anyhow::ensure!(same_page().await?, "Back reloaded the page");
        c.forward().await?;
        wait_for(c, "section.extensions").await?;
        anyhow::ensure!(same_page().await?, "Forward reloaded the page");

        // The server's history, in place.
        c.find(Locator::Css("article.record a.history"))
            .await?
            .click()
            .await?;
        wait_for(c, "section.server-history").await?;
        anyhow::ensure!(c.current_url().await?.path() == "/servers/huggingface-co/");
        anyhow::ensure!(count(c, "article.row").await? == 3);
        anyhow::ensure!(same_page().await?, "the history reloaded the page");

        // A tier filter on the board.
        c.back().await?;
        c.back().await?;
        wait_for(c, "article.row").await?;
        c.find(Locator::Css("a.filter[data-tier='scored']"))
            .await?
            .click()
            .await?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while count(c, SHOWN_ROW).await? != 7 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::ensure!(count(c, SHOWN_ROW).await? == 7, "scored filter");
        anyhow::ensure!(c.current_url().await?.query() == Some("tier=scored"));
        anyhow::ensure!(same_page().await?, "the tier filter reloaded the page");
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// A 1,000-run board (the anchor's 33 cloned, each server rerun about 30
/// times): every row is in the page, each names its other attempts by
/// count with a link to the server's history, which lists every run; the
/// index stays within 1 KB per run gzipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_1000_run_board_counts_other_attempts_and_links_each_history() -> anyhow::Result<()> {
    let set = anchor_import()?;
    let mut records = cloned_anchor(31)?;
    records.truncate(1000);
    let site = publish_site(Publish {
        records: Some((&records, &set.standing_notes)),
        anchor: false,
        ..Publish::default()
    })?;
    let board_json = std::fs::read(site.root.join("data/board.json"))?;
    let gz = std::fs::read(site.root.join("data/board.json.gz"))?;
    anyhow::ensure!(
        gz.len() <= 1000 * 1024,
        "board.json is {} bytes gzipped for 1,000 runs ({} raw)",
        gz.len(),
        board_json.len()
    );
    let server = StaticServer::start_site(&site.root).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = async {
        let c = &browser.client;
        let started = Instant::now();
        c.goto(&server.url("/")).await?;
        wait_for(c, "article.row").await?;
        eprintln!("1,000-run board: first row after {:?}", started.elapsed());
        live(c).await?;
        eprintln!("1,000-run board: live after {:?}", started.elapsed());
        anyhow::ensure!(count(c, "article.row").await? == 1000, "rows");
        let svelte = records
            .iter()
            .filter(|r| r.server.slug == "mcp-svelte-dev")
            .count();
        let last = records
            .iter()
            .filter(|r| r.server.slug == "mcp-svelte-dev")
            .max_by_key(|r| r.run.started_at.clone())
            .context("svelte runs")?;
        // The newest run sits in its group's folded part: read its text
        // whether or not the group is open.
        let attempt = c
            .execute(
                "return document.querySelector(arguments[0]).textContent;",
                vec![format!("article.row[data-run-id='{}'] .attempt", last.run.id).into()],
            )
            .await?
            .as_str()
            .unwrap_or_default()
            .to_owned();
        // The nearest few are named and linked; the rest are counted and
        // left to the history: the row does not grow with the reruns.
        let named = fitness_shared::board::NAMED_ATTEMPTS;
        anyhow::ensure!(
            attempt.starts_with(&format!(
                "Run {svelte} of {svelte} of this server; the others: "
            )) && attempt.contains(&format!(
                "; {} more on the server's history.",
                svelte - 1 - named
            )),
            "{attempt}"
        );
        anyhow::ensure!(
            count(
                c,
                &format!("article.row[data-run-id='{}'] .attempt a", last.run.id)
            )
            .await?
                == named + 1,
            "the named runs and the history, not one link per attempt"
        );
        // A large group folds its rows past the first 50 away, and opens.
        let summary = c.find(Locator::Css("details.more > summary")).await?;
        let label = summary.text().await?;
        anyhow::ensure!(label.starts_with("Show the other "), "{label}");
        summary.click().await?;
        anyhow::ensure!(count(c, "details.more[open]").await? == 1);
        // The history page lists every run of the server.
        c.goto(&server.url("/servers/mcp-svelte-dev/")).await?;
        live(c).await?;
        anyhow::ensure!(count(c, "article.row").await? == svelte, "svelte history");
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// A scored record that kept each task's repetitions shows how they agree,
/// beside first-try success: pass^k with its interval, the tasks that
/// flip, and each task's count, with JavaScript off and once live, at 390
/// and 1,400 px.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scored_record_page_shows_how_its_repetitions_agree() -> anyhow::Result<()> {
    use fitness_shared::record::Consistency;
    let set = anchor_import()?;
    let mut record: RunRecord = set
        .records
        .iter()
        .find(|r| r.run.id == HF)
        .cloned()
        .context("the anchor's scored run")?;
    let score = record.score.as_mut().context("scored")?;
    // Three repetitions of each task: the first of them as recorded, the
    // others so that some tasks flip.
    let n = score.tasks.len();
    for (i, task) in score.tasks.iter_mut().enumerate() {
        task.reps = Some(3);
        task.reps_succeeded = Some(match (task.success, i % 3) {
            (false, _) => 0,
            (true, 0) => 2,
            (true, _) => 3,
        });
    }
    score.consistency = Consistency::of(&score.tasks);
    let c = score.consistency.clone().context("counts for every task")?;
    anyhow::ensure!(c.flipping > 0 && c.tasks as usize == n, "{c:?}");
    let site = publish_site(Publish {
        records: Some((std::slice::from_ref(&record), &set.standing_notes)),
        anchor: false,
        ..Publish::default()
    })?;
    let server = StaticServer::start_site(&site.root).await?;
    for width in [390, 1400] {
        let browser = Browser::start(width, 900).await?;
        let outcome = async {
            let c_ = &browser.client;
            for js in [false, true] {
                scripts_enabled(c_, js).await?;
                c_.goto(&server.url(&format!("/runs/{HF}/"))).await?;
                if js {
                    live(c_).await?;
                } else {
                    wait_for(c_, "article.record").await?;
                }
                let line = text(c_, "article.record .consistency").await?;
                anyhow::ensure!(
                    line.starts_with("Consistency over 3 repetitions per task")
                        && line.contains(&c.every_rep.text())
                        && line.contains(&format!("{} of {} tasks flip", c.flipping, c.tasks))
                        && line.contains("not a rank"),
                    "{line}"
                );
                let table = text(c_, "section.tasks table").await?;
                anyhow::ensure!(
                    table.contains("Repetitions answered") && table.contains("2 of 3"),
                    "{table}"
                );
                if js {
                    scroll_to(c_, "article.record .consistency").await?;
                    screenshot(c_, &format!("fitness-record-consistency-{width}.png")).await?;
                }
            }
            Ok(())
        }
        .await;
        browser.close().await?;
        outcome?;
    }
    Ok(())
}
