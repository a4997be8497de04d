//! The approval step of a login: where the authorization server sends the
//! operator's browser back (a loopback redirect on 127.0.0.1), and how the
//! code gets there.

use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// How the authorization URL is approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Approval {
    /// A person approves in a browser: `$BROWSER` is opened with the URL
    /// where set, and the URL is printed either way (a headless machine).
    Browser,
    /// Nobody approves: the authorization URL's redirects are followed
    /// until one reaches the redirect URI (an authorization server that
    /// approves without a person, as the conformance suite's and CI's do).
    NonInteractive,
}

/// Redirects followed at most, non-interactive.
const MAX_HOPS: usize = 10;
/// A request to the loopback listener is read up to this many bytes.
const MAX_REQUEST: usize = 16 * 1024;
/// Time for one hop of the non-interactive approval.
const HOP_TIMEOUT: Duration = Duration::from_secs(30);

/// The loopback redirect: a listener on 127.0.0.1 and its URI.
pub(super) struct Redirect {
    listener: TcpListener,
    uri: String,
}

impl Redirect {
    pub(super) async fn bind() -> anyhow::Result<Redirect> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| {
            anyhow::anyhow!("could not listen on 127.0.0.1 for the login's redirect: {e}")
        })?;
        let port = listener.local_addr()?.port();
        Ok(Redirect {
            listener,
            uri: format!("http://127.0.0.1:{port}/callback"),
        })
    }

    /// The listener of a redirect URI registered before (a step-up reuses
    /// the login's); when its port is taken, a person's browser could not
    /// come back, but a non-interactive approval never needs it.
    pub(super) async fn at(uri: &str) -> anyhow::Result<Redirect> {
        let port = reqwest::Url::parse(uri)?.port().unwrap_or(0);
        let listener = match TcpListener::bind(("127.0.0.1", port)).await {
            Ok(l) => l,
            Err(_) => TcpListener::bind(("127.0.0.1", 0)).await?,
        };
        Ok(Redirect {
            listener,
            uri: uri.to_owned(),
        })
    }

    pub(super) fn uri(&self) -> String {
        self.uri.clone()
    }

    /// The redirect URL the authorization server sent back (with `code`
    /// and `state`), within `wait`.
    pub(super) async fn approve(
        self,
        auth_url: &str,
        approval: Approval,
        wait: Duration,
        say: &mut dyn FnMut(&str),
    ) -> anyhow::Result<String> {
        let callback = self.approval(auth_url, approval, wait, say).await?;
        // The state sent must come back: another is a forged or stale
        // redirect, refused before any code is exchanged.
        let sent = state_of(auth_url);
        let back = state_of(&callback);
        anyhow::ensure!(
            sent.is_some() && sent == back,
            "the authorization server sent back a state this login did not send (a forged or \
             stale redirect): refused, nothing exchanged or stored"
        );
        Ok(callback)
    }

    async fn approval(
        self,
        auth_url: &str,
        approval: Approval,
        wait: Duration,
        say: &mut dyn FnMut(&str),
    ) -> anyhow::Result<String> {
        match approval {
            Approval::NonInteractive => tokio::time::timeout(wait, follow(auth_url, &self.uri))
                .await
                .map_err(|_| {
                    anyhow::anyhow!(
                        "the authorization server did not approve within {}s",
                        wait.as_secs()
                    )
                })?,
            Approval::Browser => {
                say(&format!(
                    "Open this URL to log in (waiting {} s for the approval):\n\n  {auth_url}\n",
                    wait.as_secs()
                ));
                open_browser(auth_url, say);
                tokio::time::timeout(wait, self.callback())
                    .await
                    .map_err(|_| {
                        anyhow::anyhow!("no approval came back within {}s", wait.as_secs())
                    })?
            }
        }
    }

    /// Wait for the browser's request to the redirect URI; answer it, and
    /// give back its URL. Other requests (a favicon) get a 404.
    async fn callback(self) -> anyhow::Result<String> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let mut buf = vec![0u8; MAX_REQUEST];
            let mut got = 0;
            let line = loop {
                let n = match tokio::time::timeout(
                    Duration::from_secs(10),
                    stream.read(&mut buf[got..]),
                )
                .await
                {
                    Ok(Ok(n)) => n,
                    _ => break None,
                };
                got += n;
                if let Some(end) = buf[..got].windows(2).position(|w| w == b"\r\n") {
                    break Some(String::from_utf8_lossy(&buf[..end]).into_owned());
                }
                if n == 0 || got == buf.len() {
                    break None;
                }
            };
            let Some(path) = line.as_deref().and_then(|l| {
                let mut parts = l.split(' ');
                (parts.next() == Some("GET"))
                    .then(|| parts.next())
                    .flatten()
            }) else {
                continue;
            };
            if !path.starts_with("/callback") {
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let page = "<!doctype html><title>fitness login</title><p>Logged in: you can close this tab and go back to the terminal.</p>";
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(reply.as_bytes()).await;
            let _ = stream.shutdown().await;
            let base = self.uri.trim_end_matches("/callback");
            return Ok(format!("{base}{path}"));
        }
    }
}

/// The `state` query parameter of a URL.
fn state_of(url: &str) -> Option<String> {
    reqwest::Url::parse(url)
        .ok()?
        .query_pairs()
        .find(|(k, _)| k == "state")
        .map(|(_, v)| v.into_owned())
}

/// Follow `auth_url`'s redirects (never reading a body past a bound) until
/// one points at `redirect_uri`.
async fn follow(auth_url: &str, redirect_uri: &str) -> anyhow::Result<String> {
    let client = crate::http::http_client_builder()?
        .redirect(reqwest::redirect::Policy::none())
        .timeout(HOP_TIMEOUT)
        .build()?;
    let mut at = reqwest::Url::parse(auth_url)
        .map_err(|e| anyhow::anyhow!("the authorization URL is not a URL: {e}"))?;
    for _ in 0..MAX_HOPS {
        let response = client
            .get(at.clone())
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("the authorization server: {}", deepest(&e)))?;
        let status = response.status();
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let Some(location) = location.filter(|_| status.is_redirection()) else {
            anyhow::bail!(
                "the authorization server answered HTTP {} without sending the browser back: \
                 it needs a person to approve; log in without --non-interactive",
                status.as_u16()
            );
        };
        let next = at.join(&location).map_err(|e| {
            anyhow::anyhow!("the authorization server redirected to a non-URL: {e}")
        })?;
        if next.as_str().starts_with(redirect_uri) {
            return Ok(next.into());
        }
        at = next;
    }
    anyhow::bail!("the authorization server redirected more than {MAX_HOPS} times")
}

/// Open `url` with `$BROWSER` (a `:`-separated list of commands, `%s` for
/// the URL), when set; say so when it fails.
fn open_browser(url: &str, say: &mut dyn FnMut(&str)) {
    let Some(browsers) = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty())
    else {
        return;
    };
    for command in browsers.split(':').filter(|c| !c.trim().is_empty()) {
        let line = if command.contains("%s") {
            command.replace("%s", url)
        } else {
            format!("{command} {url}")
        };
        let mut words = line.split_whitespace();
        let Some(program) = words.next() else {
            continue;
        };
        let started = std::process::Command::new(program)
            .args(words)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        if started.is_ok() {
            return;
        }
    }
    say("($BROWSER could not be started: open the URL yourself)");
}

/// The innermost cause of an error (`connection refused`), which says
/// what happened; the wrappers above it only say where.
pub(super) fn deepest(e: &(dyn std::error::Error + 'static)) -> String {
    let mut at = e;
    while let Some(next) = at.source() {
        at = next;
    }
    at.to_string()
}
