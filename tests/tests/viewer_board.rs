//! The published anchor board in a real browser: a site is laid out in a
//! temporary directory from the viewer build, a board built from the 33
//! imported anchor records, and each run's record; headless Chromium opens it.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use fantoccini::{Client, Locator};
use fitness_e2e::{anchor_import, browser::Browser, copy_dir, serve::StaticServer, viewer_dist};
use fitness_shared::board::build_board;
use fitness_shared::record::RunRecord;
use fitness_shared::record::import::ImportSet;

const HF_EXTENDED: &str = "huggingface-co-2026-08-20T17-23-48-886Z";

/// dist + data/board.json + runs/<id>/record.json + standing-notes/<hex>.json,
/// as `fitness publish` lays it out.
fn write_site(site: &Path, records: &[RunRecord], set: &ImportSet) -> anyhow::Result<()> {
    copy_dir(&viewer_dist()?, site)?;
    let mut board = build_board(records, "2026-11-30T00:00:00Z", None);
    board.attach_standing_notes(&set.standing_notes)?;
    std::fs::create_dir_all(site.join("standing-notes"))?;
    for (id, notes) in &set.standing_notes {
        let hex = id.trim_start_matches("sha256:");
        std::fs::write(
            site.join(format!("standing-notes/{hex}.json")),
            serde_json::to_vec(notes)?,
        )?;
    }
    std::fs::create_dir_all(site.join("data"))?;
    std::fs::write(site.join("data/board.json"), serde_json::to_vec(&board)?)?;
    for record in records {
        let dir = site.join("runs").join(&record.run.id);
        std::fs::create_dir_all(&dir)?;
        std::fs::write(dir.join("record.json"), serde_json::to_vec(record)?)?;
    }
    Ok(())
}

/// The anchor site laid out in a temporary directory (kept while the
/// returned guard lives), served, and a browser at 1400 x 900.
async fn anchor_site() -> anyhow::Result<(ImportSet, tempfile::TempDir, StaticServer, Browser)> {
    let set = anchor_import()?;
    let site = tempfile::tempdir()?;
    write_site(site.path(), &set.records, &set)?;
    let server = StaticServer::start(site.path()).await?;
    let browser = Browser::start(1400, 900).await?;
    Ok((set, site, server, browser))
}

async fn count(client: &Client, css: &str) -> anyhow::Result<usize> {
    Ok(client.find_all(Locator::Css(css)).await?.len())
}

async fn wait_for(client: &Client, css: &str) -> anyhow::Result<fantoccini::elements::Element> {
    client
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("{css} never appeared"))
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

async fn screenshot(client: &Client, name: &str) -> anyhow::Result<()> {
    let png = client.screenshot().await?;
    std::fs::write(std::env::temp_dir().join(name), png)?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anchor_board_and_record_page_in_chromium() -> anyhow::Result<()> {
    let (set, _site, server, browser) = anchor_site().await?;
    let outcome = async {
        let c = &browser.client;
        let started = Instant::now();
        c.goto(&server.url("/")).await?;
        wait_for(c, "article.row").await?;
        eprintln!("anchor board: first row after {:?}", started.elapsed());
        anyhow::ensure!(count(c, "article.row").await? == 33, "rows");
        anyhow::ensure!(
            count(c, "article.row .result.scored").await? == 7,
            "scored slots"
        );
        anyhow::ensure!(
            count(c, "article.row .result.refused").await? == 26,
            "refused slots"
        );
        anyhow::ensure!(
            count(c, "article.row[data-outcome='SCORED']").await? == 7,
            "scored rows"
        );

        // This site is imported without tapes, so every row says it has none.
        let none = count(c, "article.row .no-tapes").await?;
        let links = count(c, "article.row a.tape").await?;
        anyhow::ensure!(
            none == 33 && links == 0,
            "rows without tapes {none}, tape links {links}"
        );

        let headline = c
            .find(Locator::Css(".summary .headline"))
            .await?
            .text()
            .await?;
        anyhow::ensure!(
            headline == "26 of 33 published runs published no score.",
            "{headline:?}"
        );

        let hf = c
            .find(Locator::Css(&format!(
                "article.row[data-run-id='{HF_EXTENDED}'] .interval-text"
            )))
            .await?
            .text()
            .await?;
        anyhow::ensure!(
            hf.contains("95% CI") && hf.contains(" of "),
            "interval text {hf:?}"
        );

        let refused = "article.row[data-run-id='mcp-vercel-com-2026-08-20T18-17-32-685Z']";
        let code = c
            .find(Locator::Css(&format!("{refused} .result.refused .code")))
            .await?
            .text()
            .await?;
        anyhow::ensure!(code == "INSUFFICIENT_SURFACE", "code {code:?}");
        let reason = c
            .find(Locator::Css(&format!("{refused} .result.refused .reason")))
            .await?
            .text()
            .await?;
        anyhow::ensure!(!reason.is_empty(), "empty reason");

        let page = c.source().await?;
        anyhow::ensure!(!page.contains('\u{2014}'), "an em-dash on the board");

        // Standing notes: each set the rows carry is printed once, in the
        // methods section, with its notes and the number of runs carrying it;
        // each carrying row links to its set and says how many it carries.
        let carried: Vec<&RunRecord> = set
            .records
            .iter()
            .filter(|r| r.notes.standing.is_some())
            .collect();
        anyhow::ensure!(
            !carried.is_empty(),
            "the anchor import carries standing notes"
        );
        let printed = c
            .find_all(Locator::Css(".methods section.standing-set"))
            .await?;
        anyhow::ensure!(
            printed.len() == set.standing_notes.len(),
            "{} sets printed, {} published",
            printed.len(),
            set.standing_notes.len()
        );
        for (id, notes) in &set.standing_notes {
            let css = format!(".methods section.standing-set[data-set-id='{id}']");
            let items = count(c, &format!("{css} ol.standing-notes li")).await?;
            anyhow::ensure!(items == notes.notes.len(), "{id}: {items} notes printed");
            let runs = carried
                .iter()
                .filter(|r| r.notes.standing.as_ref().is_some_and(|s| &s.set_id == id))
                .count();
            let meta = c
                .find(Locator::Css(&format!("{css} .standing-meta")))
                .await?
                .text()
                .await?;
            anyhow::ensure!(
                meta.contains(&format!("{runs} runs on this board carry these notes")),
                "{id}: {meta:?}"
            );
            // Printed once: a note appears on the board as many times as
            // there are sets holding it (two generators may share a note),
            // never once per row.
            let body = c.find(Locator::Css("#fitness-app")).await?.text().await?;
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
        anyhow::ensure!(
            count(c, "article.row a.standing-link").await? == carried.len(),
            "standing links on rows"
        );
        for record in &carried {
            let standing = record.notes.standing.as_ref().expect("filtered");
            let link = c
                .find(Locator::Css(&format!(
                    "article.row[data-run-id='{}'] a.standing-link",
                    record.run.id
                )))
                .await?;
            let text = link.text().await?;
            anyhow::ensure!(
                text == format!("{} standing notes", standing.count),
                "{}: {text:?}",
                record.run.id
            );
            let href = link.attr("href").await?.unwrap_or_default();
            let target = href.trim_start_matches('#');
            let set_id = c
                .find(Locator::Id(target))
                .await
                .with_context(|| format!("{href} points nowhere"))?
                .attr("data-set-id")
                .await?;
            anyhow::ensure!(
                set_id.as_deref() == Some(standing.set_id.as_str()),
                "{href}"
            );
        }
        screenshot(c, "fitness-board-1400.png").await?;
        scroll_to(c, "section.group[data-tier='scored']").await?;
        screenshot(c, "fitness-board-1400-scored.png").await?;
        scroll_to(c, "section.group[data-tier='free'] article.row").await?;
        screenshot(c, "fitness-board-1400-refused.png").await?;
        scroll_to(c, ".methods section.standing-set").await?;
        screenshot(c, "fitness-board-1400-standing.png").await?;

        // The tier filter is kept in the URL.
        c.goto(&server.url("/?tier=scored")).await?;
        wait_for(c, "section.group").await?;
        anyhow::ensure!(count(c, "section.group[data-tier='scored'] article.row").await? == 7);
        anyhow::ensure!(count(c, "section.group[data-tier='free']").await? == 0);

        c.goto(&server.url(&format!("/?run={HF_EXTENDED}"))).await?;
        let ext = wait_for(c, "section.extensions").await?.text().await?;
        let notes = c.find(Locator::Css("section.notes")).await?.text().await?;
        anyhow::ensure!(
            notes.contains("standing notes, published once as the set sha256:")
                && notes.contains("Read them in the board's methods section"),
            "notes {notes:?}"
        );
        for pooled in ["10/12", "16/18", "22/24"] {
            anyhow::ensure!(
                ext.contains(pooled),
                "extension sequence lacks {pooled}: {ext:?}"
            );
        }
        screenshot(c, "fitness-record-1400.png").await?;
        // The record links to its set on the board, and the board, rendered
        // after it loads, still scrolls to the set.
        let hf_set = set
            .records
            .iter()
            .find(|r| r.run.id == HF_EXTENDED)
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
        c.goto(&server.url(&format!("/?run={HF_EXTENDED}"))).await?;
        wait_for(c, "section.extensions").await?;
        scroll_to(c, "section.extensions").await?;
        screenshot(c, "fitness-record-1400-extensions.png").await?;
        scroll_to(c, "section.gates").await?;
        screenshot(c, "fitness-record-1400-gates.png").await?;

        // A construct refusal reads the MCP tape: calls, errors, no response.
        c.goto(&server.url("/?run=knowledge-mcp-global-api-aws-2026-08-20T16-45-18-024Z"))
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
        screenshot(c, "fitness-record-1400-construct.png").await?;

        c.set_window_size(390, 844).await?;
        c.goto(&server.url("/")).await?;
        wait_for(c, "article.row").await?;
        screenshot(c, "fitness-board-390.png").await?;
        scroll_to(c, "section.group[data-tier='scored'] article.row").await?;
        screenshot(c, "fitness-board-390-scored.png").await?;
        scroll_to(c, "section.group[data-tier='free'] article.row").await?;
        screenshot(c, "fitness-board-390-refused.png").await?;
        c.goto(&server.url("/?run=mcp-vercel-com-2026-08-20T18-17-32-685Z"))
            .await?;
        wait_for(c, "section.deciding").await?;
        screenshot(c, "fitness-record-390-refused.png").await?;
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// A 5,016-run synthetic board (the anchor's 33 records under 152 server
/// names) still renders every row; the time to the first row is printed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn synthetic_5000_run_board_renders_every_row() -> anyhow::Result<()> {
    let set = anchor_import()?;
    let anchor = &set.records;
    let mut records = Vec::with_capacity(anchor.len() * 152);
    for copy in 0..152 {
        for record in anchor {
            let mut r = record.clone();
            r.run.id = format!("{}-s{copy}", r.run.id);
            r.server.slug = format!("{}-s{copy}", r.server.slug);
            records.push(r);
        }
    }
    let site = tempfile::tempdir()?;
    write_site(site.path(), &records, &set)?;
    let server = StaticServer::start(site.path()).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = async {
        let c = &browser.client;
        let started = Instant::now();
        c.goto(&server.url("/")).await?;
        wait_for(c, "article.row").await?;
        eprintln!("5,016-run board: first row after {:?}", started.elapsed());
        // Every group paints its first rows, then says how many more it holds.
        for button in c.find_all(Locator::Css("button.show-all")).await? {
            button.click().await?;
        }
        let rows = count(c, "article.row").await?;
        anyhow::ensure!(rows == 5016, "{rows} rows");
        anyhow::ensure!(count(c, ".result.refused").await? == 26 * 152);
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
    let (_set, _site, server, browser) = anchor_site().await?;
    let outcome = async {
        let c = &browser.client;
        c.goto(&server.url("/")).await?;
        wait_for(c, "article.row").await?;
        // Lives as long as the page: a reload would drop it.
        c.execute("window.__samePage = 'yes';", vec![]).await?;
        let same_page = || async {
            let v = c
                .execute("return window.__samePage || null;", vec![])
                .await?;
            anyhow::Ok(v == serde_json::json!("yes"))
        };

        let row = format!("article.row[data-run-id='{HF_EXTENDED}']");
        c.find(Locator::Css(&format!("{row} a.open-record")))
            .await?
            .click()
            .await?;
        wait_for(c, "section.extensions").await?;
        anyhow::ensure!(c.current_url().await?.query() == Some(&format!("run={HF_EXTENDED}")[..]));
        anyhow::ensure!(same_page().await?, "opening a record reloaded the page");
        anyhow::ensure!(
            count(c, "article.row").await? == 0,
            "the board is still shown"
        );

        // The record's link back to the board, then Back to the record.
        c.find(Locator::Css("nav.back a")).await?.click().await?;
        wait_for(c, "article.row").await?;
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

        // A tier filter link on the board.
        c.back().await?;
        wait_for(c, "article.row").await?;
        c.find(Locator::Css("a[href='?tier=scored']"))
            .await?
            .click()
            .await?;
        let deadline = Instant::now() + Duration::from_secs(30);
        while count(c, "article.row").await? != 7 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        anyhow::ensure!(count(c, "article.row").await? == 7, "scored filter");
        anyhow::ensure!(c.current_url().await?.query() == Some("tier=scored"));
        anyhow::ensure!(same_page().await?, "the tier filter reloaded the page");
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}
