//! The built viewer starts in a real browser: headless Chromium loads the
//! Trunk release build over http://127.0.0.1 and the wasm renders the app's
//! root element, which the static `index.html` does not contain.

use std::time::Duration;

use anyhow::Context;
use fantoccini::Locator;
use fitness_e2e::{browser::Browser, serve::StaticServer, viewer_dist};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_viewer_renders_its_root_in_chromium() -> anyhow::Result<()> {
    let dist = viewer_dist()?;
    let static_html = std::fs::read_to_string(dist.join("index.html"))?;
    assert!(
        !static_html.contains("fitness-app"),
        "the root element must come from the wasm, not from the static page"
    );

    let server = StaticServer::start(&dist).await?;
    let browser = Browser::start(1400, 900).await?;
    let outcome = async {
        browser.client.goto(&server.url("/")).await?;
        let root = browser
            .client
            .wait()
            .at_most(Duration::from_secs(20))
            .for_element(Locator::Css("#fitness-app[data-ready='1']"))
            .await
            .context("the viewer's root element never rendered: the wasm did not start")?;
        let text = root.text().await?;
        // The masthead is set in capitals by the stylesheet.
        anyhow::ensure!(
            text.to_lowercase().contains("fitness report"),
            "root text was {text:?}"
        );
        anyhow::ensure!(
            text.contains(&format!("viewer {}", env!("CARGO_PKG_VERSION"))),
            "root text was {text:?}"
        );
        Ok(())
    }
    .await;
    browser.close().await?;
    outcome
}
