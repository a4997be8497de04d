//! Headless Chromium driven through chromedriver (WebDriver), for tests.
//!
//! `Browser::start` launches chromedriver on a free loopback port and opens a
//! session with the flags that work on these machines (no sandbox, no
//! background networking, a fresh profile directory). Dropping the `Browser`
//! kills chromedriver and with it Chromium, also when the test panicked.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use fantoccini::{Client, ClientBuilder};

/// A DevTools command sent through chromedriver (`goog/cdp/execute`): what
/// WebDriver itself cannot do, such as emulating `prefers-color-scheme` or
/// running a script before a page's own.
#[derive(Debug)]
struct Cdp {
    cmd: String,
    params: serde_json::Value,
}

impl fantoccini::wd::WebDriverCompatibleCommand for Cdp {
    fn endpoint(
        &self,
        base_url: &url::Url,
        session_id: Option<&str>,
    ) -> Result<url::Url, url::ParseError> {
        base_url.join(&format!(
            "session/{}/goog/cdp/execute",
            session_id.unwrap_or_default()
        ))
    }

    fn method_and_body(&self, _url: &url::Url) -> (http::Method, Option<String>) {
        let body = serde_json::json!({ "cmd": self.cmd, "params": self.params });
        (http::Method::POST, Some(body.to_string()))
    }
}

/// Send a DevTools command to the browser behind `client`.
pub async fn cdp(
    client: &Client,
    cmd: &str,
    params: serde_json::Value,
) -> anyhow::Result<serde_json::Value> {
    client
        .issue_cmd(Cdp {
            cmd: cmd.to_owned(),
            params,
        })
        .await
        .with_context(|| format!("DevTools {cmd}"))
}

/// Emulate `prefers-color-scheme: dark` (or light) from now on.
pub async fn color_scheme(client: &Client, dark: bool) -> anyhow::Result<()> {
    let value = if dark { "dark" } else { "light" };
    cdp(
        client,
        "Emulation.setEmulatedMedia",
        serde_json::json!({ "features": [{ "name": "prefers-color-scheme", "value": value }] }),
    )
    .await?;
    Ok(())
}

/// Turn the pages' own scripts off (or on) from the next navigation on:
/// a reader with JavaScript disabled.
pub async fn scripts_enabled(client: &Client, on: bool) -> anyhow::Result<()> {
    cdp(
        client,
        "Emulation.setScriptExecutionDisabled",
        serde_json::json!({ "value": !on }),
    )
    .await?;
    Ok(())
}

/// Empty the browser's HTTP cache (a test that changes a published file
/// must not read the copy the browser kept).
pub async fn clear_cache(client: &Client) -> anyhow::Result<()> {
    cdp(client, "Network.clearBrowserCache", serde_json::json!({})).await?;
    Ok(())
}

/// Where screenshots go: `FITNESS_SHOTS`, or `fitness-screenshots/` in the
/// temporary directory.
pub fn screenshot_dir() -> PathBuf {
    std::env::var_os("FITNESS_SHOTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("fitness-screenshots"))
}

/// Write a screenshot of the window as `name` in [`screenshot_dir`];
/// returns the path.
pub async fn screenshot(client: &Client, name: &str) -> anyhow::Result<PathBuf> {
    let png = client.screenshot().await?;
    let dir = screenshot_dir();
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(name);
    std::fs::write(&path, png)?;
    Ok(path)
}

/// Where chromium lives (override with `FITNESS_CHROMIUM`).
pub fn chromium_path() -> PathBuf {
    std::env::var_os("FITNESS_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

/// Where chromedriver lives (override with `CHROMEDRIVER`).
pub fn chromedriver_path() -> PathBuf {
    std::env::var_os("CHROMEDRIVER")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromedriver"))
}

/// A chromedriver process plus one WebDriver session.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Start chromedriver and a headless Chromium session with a window of
    /// `width` x `height` CSS pixels.
    pub async fn start(width: u32, height: u32) -> anyhow::Result<Self> {
        let port = free_port()?;
        let mut driver = Command::new(chromedriver_path())
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {}", chromedriver_path().display()))?;
        let profile = tempfile::tempdir()?;
        let caps = serde_json::json!({
            "goog:chromeOptions": {
                "binary": chromium_path(),
                "args": [
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-quic",
                    "--disable-dev-shm-usage",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                    "--no-first-run",
                    format!("--window-size={width},{height}"),
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        });
        let caps = match caps {
            serde_json::Value::Object(map) => map,
            _ => unreachable!("literal object"),
        };
        let url = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(20);
        let client = loop {
            match ClientBuilder::rustls()?
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(client) => break client,
                Err(err) => {
                    if let Ok(Some(status)) = driver.try_wait() {
                        bail!("chromedriver exited early with {status}");
                    }
                    if Instant::now() > deadline {
                        let _ = driver.kill();
                        let _ = driver.wait();
                        bail!("could not open a WebDriver session on {url}: {err}");
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        Ok(Self {
            client,
            driver,
            _profile: profile,
        })
    }

    /// End the WebDriver session politely (closes Chromium), then stop
    /// chromedriver. Dropping without calling this still kills both.
    pub async fn close(mut self) -> anyhow::Result<()> {
        let result = self.client.clone().close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
        result.context("closing the WebDriver session")
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // Killing chromedriver takes its Chromium children with it: chromedriver
        // starts Chromium in its own process group and reaps it on exit, and a
        // SIGKILL leaves Chromium orphaned, so kill the whole group we created.
        kill_tree(self.driver.id());
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// Kill every descendant of `pid` (best effort, Linux `/proc`).
fn kill_tree(pid: u32) {
    for child in children_of(pid) {
        kill_tree(child);
        // The `kill` command keeps this safe Rust (no libc FFI).
        let _ = Command::new("kill")
            .arg("-9")
            .arg(child.to_string())
            .status();
    }
}

fn children_of(pid: u32) -> Vec<u32> {
    let path = format!("/proc/{pid}/task/{pid}/children");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|s| s.parse().ok())
        .collect()
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> anyhow::Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}
