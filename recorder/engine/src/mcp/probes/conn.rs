//! A raw connection for one probe: a fresh stdio child, or plain HTTP with
//! its own session, in the era the main session negotiated.

use std::time::Duration;

use serde_json::Value;

use super::super::connect::{Era, HttpTarget, Target};
use super::super::raw::{RawHttp, RawStdio, Reply, initialize_frame, request_frame};
use super::super::tap::Tap;
use super::result::corr_id;

/// What every probe knows about the server before it starts.
#[derive(Clone)]
pub struct ProbeContext {
    pub target: Target,
    pub tap: Tap,
    pub era: Era,
    pub negotiated_version: String,
    pub timeout: Duration,
    /// Names of the server's tools, from the main session.
    pub tools: Vec<String>,
    /// The first tool that only reads ([`crate::access::may_write`]): the
    /// one a probe's `tools/call` names.
    pub read_only_tool: Option<String>,
    /// The capabilities the server declared in the handshake.
    pub capabilities: Value,
}

impl ProbeContext {
    pub fn authenticated(&self) -> bool {
        match &self.target {
            Target::Http(h) => h.bearer.is_some() || !h.headers.is_empty(),
            Target::Stdio(s) => !s.env.is_empty(),
        }
    }
    pub fn http(&self) -> Option<&HttpTarget> {
        match &self.target {
            Target::Http(h) => Some(h),
            Target::Stdio(_) => None,
        }
    }
}

/// A raw connection, taped under `probe::<id>`.
pub enum RawConn {
    Stdio(Box<RawStdio>),
    Http {
        http: RawHttp,
        session: Option<String>,
        version: String,
        modern: bool,
        corr: String,
    },
}

/// The HTTP status of the last exchange (stdio has none).
pub struct Answer {
    pub reply: Reply,
    pub status: Option<u16>,
}

impl RawConn {
    /// Open without any handshake.
    pub fn open_bare(ctx: &ProbeContext, probe: &str) -> anyhow::Result<RawConn> {
        let corr = corr_id(probe);
        Ok(match &ctx.target {
            Target::Stdio(s) => RawConn::Stdio(Box::new(RawStdio::spawn(
                s,
                ctx.tap.clone(),
                &corr,
                ctx.timeout,
            )?)),
            Target::Http(h) => RawConn::Http {
                http: RawHttp::new(h, ctx.tap.clone(), ctx.timeout)?,
                session: None,
                version: ctx.negotiated_version.clone(),
                modern: ctx.era == super::super::connect::Era::Modern,
                corr,
            },
        })
    }

    /// Open and, in the legacy era, complete an `initialize` handshake.
    pub async fn open(ctx: &ProbeContext, probe: &str) -> anyhow::Result<RawConn> {
        let mut conn = Self::open_bare(ctx, probe)?;
        if ctx.era == Era::Legacy {
            let init = conn
                .request(
                    &initialize_frame("probe-init", &ctx.negotiated_version),
                    "probe-init",
                    &[],
                )
                .await;
            if matches!(init.reply, Reply::Response(_)) {
                conn.notify(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                    .await;
            }
        }
        Ok(conn)
    }

    /// Send a notification (no reply expected).
    pub async fn notify(&mut self, frame: &str) {
        match self {
            RawConn::Stdio(s) => {
                s.send(frame).await;
            }
            RawConn::Http { .. } => {
                let _ = self.request(frame, "", &[]).await;
            }
        }
    }

    /// [`RawConn::request`], knowing at once when no answer is coming: over
    /// stdio a `ping` follows the frame as a barrier
    /// ([`super::super::raw::RawStdio::request_or_barrier`]); over HTTP
    /// every request has its own response.
    pub async fn request_or_barrier(&mut self, frame: &str, id: &str, era: Era) -> Answer {
        match self {
            RawConn::Stdio(s) => {
                let barrier_id = format!("{id}-barrier");
                let barrier = request_frame(&barrier_id, "ping", serde_json::json!({}), era);
                Answer {
                    reply: s.request_or_barrier(frame, id, &barrier, &barrier_id).await,
                    status: None,
                }
            }
            RawConn::Http { .. } => self.request(frame, id, &[]).await,
        }
    }

    /// Send one request frame and wait for the reply with `id`.
    pub async fn request(&mut self, frame: &str, id: &str, headers: &[(&str, String)]) -> Answer {
        match self {
            RawConn::Stdio(s) => Answer {
                reply: s.request(frame, id).await,
                status: None,
            },
            RawConn::Http {
                http,
                session,
                version,
                modern,
                corr,
            } => {
                // The headers a correct client sends; the probe's own override them.
                let parsed = serde_json::from_str::<Value>(frame).ok();
                let method = parsed
                    .as_ref()
                    .and_then(|v| v.get("method").and_then(Value::as_str).map(str::to_owned));
                let mut all: Vec<(&str, String)> = Vec::new();
                if let Some(sid) = session.as_ref() {
                    all.push(("mcp-session-id", sid.clone()));
                }
                if method.as_deref() != Some("initialize") {
                    all.push(("mcp-protocol-version", version.clone()));
                }
                if *modern && let Some(m) = &method {
                    all.push(("mcp-method", m.clone()));
                    let name = parsed
                        .as_ref()
                        .and_then(|v| v.get("params")?.get("name")?.as_str().map(str::to_owned));
                    if let Some(name) = name {
                        all.push(("mcp-name", name));
                    }
                }
                all.retain(|(k, _)| !headers.iter().any(|(h, _)| h.eq_ignore_ascii_case(k)));
                all.extend(headers.iter().cloned());
                let wanted = if id.is_empty() { None } else { Some(id) };
                let exchange = http.post(frame, wanted, &all, corr).await;
                if session.is_none() {
                    session.clone_from(&exchange.session_id);
                }
                Answer {
                    reply: exchange.reply,
                    status: exchange.status,
                }
            }
        }
    }

    pub async fn close(self) {
        if let RawConn::Stdio(s) = self {
            s.close().await;
        }
    }
}
