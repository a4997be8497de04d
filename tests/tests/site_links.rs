//! Every link on a published site resolves. The anchor site and the demo
//! site are published as a user publishes them; headless Chromium crawls
//! every page (the board, every record page, every server's history, every
//! replay) as rendered, collects every `href` and `src` on each, and each
//! one must answer 2xx (a fragment must name an element on its page).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use fantoccini::{Client, Locator};
use fitness_e2e::browser::Browser;
use fitness_e2e::serve::StaticServer;
use fitness_e2e::site::{Publish, publish_site};
use fitness_shared::site::Page;

/// What a crawl saw.
#[derive(Debug, Default)]
struct Crawl {
    /// Pages visited in the browser.
    pages: usize,
    /// Distinct URLs fetched (links, scripts, stylesheets, data).
    checked: usize,
    /// `url -> status` for every answer that was not 2xx.
    broken: BTreeMap<String, String>,
}

/// Every `href` and `src` on the page as it is now, resolved.
async fn links_on(c: &Client) -> anyhow::Result<Vec<String>> {
    let v = c
        .execute(
            r#"return [...document.querySelectorAll('[href],[src]')]
                 .map(e => e.href !== undefined && e.getAttribute('href') !== null ? e.href : e.src)
                 .filter(u => typeof u === 'string' && u.length > 0);"#,
            vec![],
        )
        .await?;
    Ok(serde_json::from_value(v)?)
}

/// HTTP statuses of `urls`, fetched by the page.
async fn statuses(c: &Client, urls: &[String]) -> anyhow::Result<Vec<u16>> {
    let v = c
        .execute_async(
            r#"const [urls, done] = [arguments[0], arguments[arguments.length - 1]];
               Promise.all(urls.map(u => fetch(u, { cache: 'no-store' })
                   .then(r => r.arrayBuffer().then(() => r.status), () => 0)))
                 .then(done);"#,
            vec![serde_json::to_value(urls)?],
        )
        .await?;
    Ok(serde_json::from_value(v)?)
}

/// Whether the URL names a page the crawl should visit: a viewer page
/// under `root`, or a run's replay.
fn visit_key(root: &url::Url, link: &url::Url) -> Option<String> {
    if link.origin() != root.origin() {
        return None;
    }
    let rel = link.path().strip_prefix(root.path())?;
    Page::parse(rel)?;
    let replay = link
        .query_pairs()
        .any(|(k, v)| k == "view" && v == "replay");
    let traced = link.query_pairs().any(|(k, _)| k == "trace");
    // One visit per page and per replay: filters and deep links into a
    // page are checked by fetching them, not visited one by one.
    match (
        replay || traced,
        link.query_pairs().any(|(k, _)| k == "run"),
    ) {
        (true, _) | (false, true) => Some(format!("{}?{}", link.path(), link.query()?)),
        (false, false) => Some(link.path().to_owned()),
    }
    .map(|k| {
        k.split("&corr=")
            .next()
            .unwrap_or_default()
            .split("&event=")
            .next()
            .unwrap_or_default()
            .to_owned()
    })
}

async fn wait_live(c: &Client, replay: bool) -> anyhow::Result<()> {
    let css = if replay {
        "#integrity, #replay-error"
    } else {
        "#fitness-app[data-ready='1']"
    };
    c.wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css(css))
        .await
        .with_context(|| format!("{css} never appeared"))?;
    Ok(())
}

/// Crawl the site served at `root` from its board.
async fn crawl(c: &Client, root: &str) -> anyhow::Result<Crawl> {
    let root = url::Url::parse(root)?;
    let mut out = Crawl::default();
    let mut queue: VecDeque<url::Url> = VecDeque::from([root.clone()]);
    let mut seen_pages: BTreeSet<String> = BTreeSet::new();
    let mut checked: BTreeSet<String> = BTreeSet::new();
    // (page URL without fragment, fragment): to check on that page.
    let mut fragments: BTreeSet<(String, String)> = BTreeSet::new();
    seen_pages.insert(visit_key(&root, &root).context("the root is a page")?);
    while let Some(page) = queue.pop_front() {
        let replay = page.query().is_some_and(|q| q.contains("view=replay"));
        c.goto(page.as_str()).await?;
        wait_live(c, replay)
            .await
            .with_context(|| page.to_string())?;
        out.pages += 1;
        let mut fresh = Vec::new();
        for link in links_on(c).await? {
            let mut url = url::Url::parse(&link).with_context(|| link.clone())?;
            anyhow::ensure!(
                url.origin() == root.origin(),
                "{page} links off the site: {url}"
            );
            if let Some(fragment) = url.fragment().map(str::to_owned) {
                url.set_fragment(None);
                fragments.insert((url.to_string(), fragment));
            }
            if let Some(key) = visit_key(&root, &url)
                && seen_pages.insert(key)
            {
                queue.push_back(url.clone());
            }
            if checked.insert(url.to_string()) {
                fresh.push(url.to_string());
            }
        }
        for chunk in fresh.chunks(40) {
            for (url, status) in chunk.iter().zip(statuses(c, chunk).await?) {
                if !(200..300).contains(&status) {
                    out.broken
                        .insert(url.clone(), format!("HTTP {status} (linked from {page})"));
                }
            }
        }
    }
    out.checked = checked.len();
    // Fragments name an element of the page they point into.
    let mut by_page: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (page, fragment) in fragments {
        by_page.entry(page).or_default().push(fragment);
    }
    for (page, ids) in by_page {
        c.goto(&page).await?;
        let replay = page.contains("view=replay");
        wait_live(c, replay).await?;
        for id in ids {
            if c.find(Locator::Id(&id)).await.is_err() {
                out.broken
                    .insert(format!("{page}#{id}"), "no element with that id".to_owned());
            }
        }
    }
    Ok(out)
}

async fn crawl_site(site: &Path) -> anyhow::Result<Crawl> {
    let server = StaticServer::start_site(site).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = crawl(&browser.client, &server.url("/")).await;
    browser.close().await?;
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_link_on_the_published_anchor_site_resolves() -> anyhow::Result<()> {
    let site = publish_site(Publish::default())?;
    let crawl = crawl_site(&site.root).await?;
    eprintln!(
        "anchor site: {} pages visited, {} links checked",
        crawl.pages, crawl.checked
    );
    // The board, 33 records, 14 servers' histories, 8 replays.
    anyhow::ensure!(crawl.pages >= 1 + 33 + 8, "{} pages", crawl.pages);
    anyhow::ensure!(crawl.broken.is_empty(), "broken: {:#?}", crawl.broken);
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_link_on_the_demo_site_resolves_and_the_demo_reads_verified() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let runs = dir.path().join("fitness-demo/runs");
    let site = dir.path().join("fitness-demo/site");
    let out = std::process::Command::new(fitness_e2e::fitness_bin()?)
        .args(["demo", "--no-serve", "--out"])
        .arg(&runs)
        .arg("--site")
        .arg(&site)
        .arg("--viewer")
        .arg(fitness_e2e::viewer_dist()?)
        .output()?;
    anyhow::ensure!(
        out.status.success(),
        "fitness demo: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The demo made its own key on first use, beside its runs.
    anyhow::ensure!(dir.path().join("fitness-demo/demo.key").is_file());
    let crawl = crawl_site(&site).await?;
    eprintln!(
        "demo site: {} pages visited, {} links checked",
        crawl.pages, crawl.checked
    );
    anyhow::ensure!(crawl.broken.is_empty(), "broken: {:#?}", crawl.broken);

    // Signed by the demo's key: every row reads verified, and the target is
    // the command a user types, not the binary's path on this machine.
    let server = StaticServer::start_site(&site).await?;
    let browser = Browser::start(1400, 900).await?;
    let c = browser.client.clone();
    let outcome = async {
        c.goto(&server.url("/")).await?;
        wait_live(&c, false).await?;
        let rows = c.find_all(Locator::Css("article.row")).await?.len();
        let verified = c
            .find_all(Locator::Css("article.row[data-signature='verified']"))
            .await?
            .len();
        anyhow::ensure!(
            rows >= 8 && verified == rows,
            "{verified} of {rows} rows verified"
        );
        let targets: Vec<String> = {
            let mut t = Vec::new();
            for el in c.find_all(Locator::Css("article.row .target")).await? {
                t.push(el.text().await?);
            }
            t
        };
        anyhow::ensure!(
            targets.iter().any(|t| t == "fitness demo-server good"),
            "{targets:?}"
        );
        anyhow::ensure!(!targets.iter().any(|t| t.contains('/')), "{targets:?}");
        // The demo's suites are schema-walk/1's, which dictate the calls:
        // every row says so, and so does its scored group.
        let relay = c
            .find_all(Locator::Css("article.row .chip.relay"))
            .await?
            .len();
        anyhow::ensure!(relay == rows, "{relay} of {rows} rows carry the relay chip");
        let scored = c
            .find(Locator::Css("section.group[data-tier='scored'] .statement"))
            .await?
            .text()
            .await?;
        anyhow::ensure!(
            scored.ends_with(fitness_shared::generators::RELAY_SENTENCE),
            "{scored}"
        );
        let good = c
            .find(Locator::Css("article.row[data-outcome='SCORED'] a.replay"))
            .await?
            .attr("href")
            .await?
            .unwrap_or_default();
        c.goto(&server.url(&format!("/{good}"))).await?;
        let badge = c
            .wait()
            .at_most(Duration::from_secs(60))
            .for_element(Locator::Css("#integrity"))
            .await?;
        let state = badge.attr("data-state").await?;
        let text = badge.text().await?;
        anyhow::ensure!(state.as_deref() == Some("verified"), "{state:?}: {text}");
        // Our own tapes draw the run's shape: a lane per arm with every
        // call, a tick per gate verdict the recorder taped, and each drive
        // trial reads as a conversation with one verdict per repetition, as
        // many passed as the record counts.
        let run_dir = site.join(good.split("?").next().unwrap_or_default());
        let (lanes, gates) = fitness_e2e::tapes::marks_by_lane(&run_dir)?;
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run_dir.join("record.json"))?)?;
        let order = record["gates"]["order"].as_array().map_or(0, Vec::len);
        anyhow::ensure!(
            gates.len() >= order && gates.iter().all(|g| g.1),
            "{gates:?}"
        );
        let strip = c
            .wait()
            .at_most(Duration::from_secs(60))
            .for_element(Locator::Css("#timeline-strip"))
            .await?;
        anyhow::ensure!(
            strip.attr("data-lanes").await?.as_deref() == Some(lanes.len().to_string().as_str()),
            "{lanes:?}"
        );
        let total: u64 = lanes.values().sum();
        anyhow::ensure!(
            strip.attr("data-marks").await?.as_deref() == Some(total.to_string().as_str())
        );
        anyhow::ensure!(c.find_all(Locator::Css(".strip-tick")).await?.len() == gates.len());
        let task = &record["score"]["tasks"][0];
        let id = task["task_id"].as_str().unwrap_or_default();
        c.goto(&server.url(&format!("/{good}&trial={id}"))).await?;
        let trial = c
            .wait()
            .at_most(Duration::from_secs(60))
            .for_element(Locator::Css("#trial"))
            .await?;
        let attr = |name: &'static str| {
            let trial = trial.clone();
            async move { trial.attr(name).await.map(|v| v.unwrap_or_default()) }
        };
        anyhow::ensure!(
            attr("data-attempts").await?.parse::<u64>().ok()
                == Some(task["reps"].as_u64().context("the task's reps")?),
            "{task}"
        );
        anyhow::ensure!(
            attr("data-passed").await?.parse::<u64>().ok()
                == Some(
                    task["reps_succeeded"]
                        .as_u64()
                        .context("the task's reps succeeded")?
                ),
            "{task}"
        );
        // The strip reads at a glance, on the scored run and a refused
        // one, at both widths: no two labels on its axis overlap, and every
        // lane's marks span a visible width.
        let refused = c
            .find(Locator::Css(
                "article.row:not([data-outcome='SCORED']) a.replay",
            ))
            .await;
        let refused = match refused {
            Ok(link) => link.attr("href").await?.unwrap_or_default(),
            Err(_) => {
                c.goto(&server.url("/")).await?;
                wait_live(&c, false).await?;
                c.find(Locator::Css(
                    "article.row:not([data-outcome='SCORED']) a.replay",
                ))
                .await?
                .attr("href")
                .await?
                .unwrap_or_default()
            }
        };
        for width in [1400, 390] {
            c.set_window_size(width, 900).await?;
            for (name, href) in [("scored", &good), ("refused", &refused)] {
                c.goto(&server.url(&format!("/{href}"))).await?;
                strip_reads(&c, &format!("demo-strip-{name}-{width}")).await?;
            }
        }
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}

/// The strip on the page: no two labels on its axis (gate markers, idle
/// breaks) intersect, and every lane's marks span at least 2 CSS pixels.
async fn strip_reads(c: &fantoccini::Client, shot: &str) -> anyhow::Result<()> {
    c.wait()
        .at_most(Duration::from_secs(60))
        .for_element(Locator::Css("#timeline-strip .strip-lane"))
        .await?;
    let seen = c
        .execute(
            r#"
const boxes = [...document.querySelectorAll('#timeline-strip .strip-tick, #timeline-strip .strip-break-label')]
  .map(e => e.getBoundingClientRect());
const overlaps = [];
for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
  const a = boxes[i], b = boxes[j];
  if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
    overlaps.push([i, j]);
}
const lanes = [...document.querySelectorAll('#timeline-strip .strip-lane')].map(l => {
  const rs = [...l.querySelectorAll('path')].map(p => p.getBoundingClientRect()).filter(r => r.width > 0);
  const w = rs.length ? Math.max(...rs.map(r => r.right)) - Math.min(...rs.map(r => r.left)) : 0;
  return [l.dataset.lane, w];
});
document.getElementById('timeline-strip').scrollIntoView();
return {labels: boxes.length, overlaps, lanes};
"#,
            vec![],
        )
        .await?;
    fitness_e2e::browser::screenshot(c, &format!("{shot}.png")).await?;
    anyhow::ensure!(
        seen["labels"].as_u64() > Some(0),
        "{shot}: no labels drawn: {seen}"
    );
    anyhow::ensure!(
        seen["overlaps"].as_array().is_some_and(Vec::is_empty),
        "{shot}: labels overlap: {seen}"
    );
    for lane in seen["lanes"].as_array().context("lanes")? {
        anyhow::ensure!(
            lane[1].as_f64().is_some_and(|w| w >= 2.0),
            "{shot}: lane {} is not visibly wide: {seen}",
            lane[0]
        );
    }
    Ok(())
}
