//! Raw JSON-RPC beside rmcp, for the probes: a correct client never sends a
//! bogus version or a mismatched header, so these requests are written by
//! hand. Every frame is taped with the probe's corr_id (`probe::<id>`); HTTP
//! exchanges also get a `fitness.http` event with the status and the headers
//! that matter (never the credentials).

use std::time::Duration;

use fitness_shared::tape::Direction;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use super::frames::{MAX_EVENT, SseItem, SseParser};
use super::stdio::{StdioChild, StdioTarget, TapReader, TapWriter};
use super::tap::Tap;
use super::target::{Era, HttpTarget};
use crate::http::{MAX_BODY, body_within, http_client_builder};

/// The modern era's per-request metadata (no `initialize` in 2026-07-28).
pub fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fitness-probe", "version": fitness_shared::VERSION},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A legacy `initialize` request for `version`.
pub fn initialize_frame(id: &str, version: &str) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "fitness-probe", "version": fitness_shared::VERSION}
        }
    })
    .to_string()
}

/// A request frame; in the modern era its params carry the `_meta` block.
pub fn request_frame(id: &str, method: &str, params: Value, era: Era) -> String {
    let mut params = params;
    if era == Era::Modern
        && let Value::Object(map) = &mut params
    {
        map.insert("_meta".into(), modern_meta());
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// What came back for one request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A JSON-RPC response (result or error) with the request's id.
    Response(Value),
    /// A JSON array: the server answered a batch.
    Batch(Vec<Value>),
    /// Nothing within the timeout, or the connection closed.
    Silence(String),
}

impl Reply {
    pub fn error_code(&self) -> Option<i64> {
        match self {
            Reply::Response(v) => v.get("error")?.get("code")?.as_i64(),
            _ => None,
        }
    }
    pub fn result(&self) -> Option<&Value> {
        match self {
            Reply::Response(v) => v.get("result"),
            _ => None,
        }
    }
}

/// A raw line-speaking stdio connection to a fresh child.
pub struct RawStdio {
    child: StdioChild,
    read: BufReader<TapReader<ChildStdout>>,
    write: TapWriter<ChildStdin>,
    timeout: Duration,
}

impl RawStdio {
    pub fn spawn(
        target: &StdioTarget,
        tap: Tap,
        corr_id: &str,
        timeout: Duration,
    ) -> anyhow::Result<RawStdio> {
        let ((read, write), child) = StdioChild::spawn(target, tap, Some(corr_id.to_owned()))?;
        Ok(RawStdio {
            child,
            read: BufReader::new(read),
            write,
            timeout,
        })
    }

    pub async fn send(&mut self, frame: &str) -> bool {
        self.write.write_all(frame.as_bytes()).await.is_ok()
            && self.write.write_all(b"\n").await.is_ok()
            && self.write.flush().await.is_ok()
    }

    /// Send `frame` and wait for the response with `id` (or an array).
    pub async fn request(&mut self, frame: &str, id: &str) -> Reply {
        if !self.send(frame).await {
            return Reply::Silence("the server's stdin is closed".into());
        }
        self.wait_for(id).await
    }

    /// Send `frame`, then `barrier` (a request with the id `barrier_id`,
    /// such as a `ping`). A server that drops `frame` without a word still
    /// answers the barrier: then `frame` has no answer coming, known at
    /// once instead of after the timeout (a short grace after the
    /// barrier's answer is left for a server that answers out of order).
    pub async fn request_or_barrier(
        &mut self,
        frame: &str,
        id: &str,
        barrier: &str,
        barrier_id: &str,
    ) -> Reply {
        if !self.send(frame).await || !self.send(barrier).await {
            return Reply::Silence("the server's stdin is closed".into());
        }
        let deadline = tokio::time::Instant::now() + self.timeout;
        match self.wait_for_ids(&[id, barrier_id], deadline).await {
            (1, Reply::Response(_)) => {
                let grace = tokio::time::Instant::now() + BARRIER_GRACE;
                match self.wait_for_ids(&[id], grace.min(deadline)).await {
                    (_, Reply::Silence(_)) => Reply::Silence(
                        "no answer: a request sent after it was answered first".into(),
                    ),
                    (_, reply) => reply,
                }
            }
            (_, reply) => reply,
        }
    }

    async fn wait_for(&mut self, id: &str) -> Reply {
        let deadline = tokio::time::Instant::now() + self.timeout;
        self.wait_for_ids(&[id], deadline).await.1
    }

    /// The first reply to one of `ids` (its index; a batch or an error
    /// with a null id counts as the first's), or silence at `deadline`.
    async fn wait_for_ids(
        &mut self,
        ids: &[&str],
        deadline: tokio::time::Instant,
    ) -> (usize, Reply) {
        let mut line = String::new();
        loop {
            line.clear();
            let read = tokio::time::timeout_at(deadline, self.read.read_line(&mut line)).await;
            match read {
                Err(_) => {
                    return (
                        0,
                        Reply::Silence(format!("no answer within {:?}", self.timeout)),
                    );
                }
                Ok(Err(e)) => return (0, Reply::Silence(format!("read failed: {e}"))),
                Ok(Ok(0)) => return (0, Reply::Silence("the server closed stdout".into())),
                Ok(Ok(_)) => {}
            }
            let Ok(value) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if let Value::Array(items) = value {
                return (0, Reply::Batch(items));
            }
            if answers_null_id(&value) {
                return (0, Reply::Response(value));
            }
            if value.get("method").is_none()
                && let Some(i) = ids
                    .iter()
                    .position(|id| value.get("id").and_then(Value::as_str) == Some(*id))
            {
                return (i, Reply::Response(value));
            }
            // A server-to-client request: answer it, or some servers hang.
            if let (Some(req_id), Some(method)) = (value.get("id"), value.get("method")) {
                let answer = match method.as_str() {
                    Some("roots/list") => {
                        json!({"jsonrpc":"2.0","id":req_id,"result":{"roots":[]}})
                    }
                    Some("ping") => json!({"jsonrpc":"2.0","id":req_id,"result":{}}),
                    _ => {
                        json!({"jsonrpc":"2.0","id":req_id,"error":{"code":-32601,"message":"method not found"}})
                    }
                };
                self.send(&answer.to_string()).await;
            }
        }
    }

    /// The legacy handshake, so later requests are in a session.
    pub async fn initialize(&mut self, version: &str) -> Reply {
        let reply = self
            .request(&initialize_frame("probe-init", version), "probe-init")
            .await;
        if matches!(reply, Reply::Response(_)) {
            self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
                .await;
        }
        reply
    }

    pub async fn close(mut self) {
        let _ = self.write.shutdown().await;
        self.child.kill().await;
    }
}

/// How long a reply may still come after a barrier sent behind it was
/// answered.
const BARRIER_GRACE: Duration = Duration::from_millis(150);

/// An error with a null id: the answer to a frame the server could not
/// read an id from (a batch it refuses, a frame that does not parse).
fn answers_null_id(v: &Value) -> bool {
    v.get("id").is_some_and(Value::is_null) && v.get("error").is_some()
}

/// One HTTP exchange, as seen by the probe.
#[derive(Debug, Clone)]
pub struct HttpExchange {
    pub status: Option<u16>,
    pub content_type: Option<String>,
    pub session_id: Option<String>,
    pub reply: Reply,
}

/// Request headers we may record; credentials are never among them.
const RECORDED_REQUEST_HEADERS: &[&str] = &[
    "host",
    "origin",
    "mcp-method",
    "mcp-name",
    "mcp-protocol-version",
    "accept",
    "content-type",
];
/// Response headers that matter to the probes.
const RECORDED_RESPONSE_HEADERS: &[&str] = &[
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "www-authenticate",
    "access-control-allow-origin",
    "allow",
];

/// Plain HTTP to an MCP endpoint.
pub struct RawHttp {
    client: reqwest::Client,
    target: HttpTarget,
    tap: Tap,
    timeout: Duration,
}

impl RawHttp {
    pub fn new(target: &HttpTarget, tap: Tap, timeout: Duration) -> anyhow::Result<RawHttp> {
        let client = http_client_builder()?
            .timeout(timeout)
            .build()
            .map_err(|e| anyhow::anyhow!("failed to build the HTTP client: {e}"))?;
        Ok(RawHttp {
            client,
            target: target.clone(),
            tap,
            timeout,
        })
    }

    /// POST one frame with `headers` (beside the user's auth), read the reply.
    pub async fn post(
        &self,
        frame: &str,
        id: Option<&str>,
        headers: &[(&str, String)],
        corr_id: &str,
    ) -> HttpExchange {
        let mut request = self
            .client
            .post(&self.target.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(frame.to_owned());
        for (k, v) in &self.target.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        if let Some(token) = &self.target.bearer {
            request = request.bearer_auth(token);
        }
        for (k, v) in headers {
            request = request.header(*k, v.as_str());
        }
        self.tap.frame(Direction::In, frame, Some(corr_id));
        let mut recorded = serde_json::Map::new();
        recorded.insert("content-type".into(), "application/json".into());
        recorded.insert(
            "accept".into(),
            "application/json, text/event-stream".into(),
        );
        for (k, v) in headers {
            if RECORDED_REQUEST_HEADERS.contains(&k.to_ascii_lowercase().as_str()) {
                recorded.insert(k.to_ascii_lowercase(), Value::String(v.clone()));
            }
        }
        self.exchange(request, "POST", Value::Object(recorded), id, corr_id)
            .await
    }

    /// GET the endpoint (used to look for a legacy HTTP+SSE stream).
    pub async fn get(&self, url: &str, corr_id: &str) -> HttpExchange {
        let mut request = self.client.get(url).header("accept", "text/event-stream");
        for (k, v) in &self.target.headers {
            request = request.header(k.as_str(), v.as_str());
        }
        if let Some(token) = &self.target.bearer {
            request = request.bearer_auth(token);
        }
        self.exchange(
            request,
            "GET",
            json!({"accept": "text/event-stream"}),
            None,
            corr_id,
        )
        .await
    }

    async fn exchange(
        &self,
        request: reqwest::RequestBuilder,
        method: &str,
        request_headers: Value,
        id: Option<&str>,
        corr_id: &str,
    ) -> HttpExchange {
        let url = request
            .try_clone()
            .and_then(|r| r.build().ok())
            .map(|r| r.url().path().to_owned())
            .unwrap_or_default();
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                let why = if e.is_timeout() {
                    format!("no answer within {:?}", self.timeout)
                } else {
                    format!("request failed: {e}")
                };
                self.tap.event(
                    "fitness.http",
                    json!({"method": method, "path": url, "requestHeaders": request_headers, "error": why}),
                    Some(corr_id),
                );
                return HttpExchange {
                    status: None,
                    content_type: None,
                    session_id: None,
                    reply: Reply::Silence(why),
                };
            }
        };
        let status = response.status().as_u16();
        let mut response_headers = serde_json::Map::new();
        for name in RECORDED_RESPONSE_HEADERS {
            if let Some(v) = response.headers().get(*name).and_then(|v| v.to_str().ok()) {
                response_headers.insert((*name).into(), Value::String(v.to_owned()));
            }
        }
        let header = |n: &str| {
            response
                .headers()
                .get(n)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let content_type = header("content-type");
        let session_id = header("mcp-session-id");
        self.tap.event(
            "fitness.http",
            json!({"method": method, "path": url, "status": status,
                   "requestHeaders": request_headers, "responseHeaders": response_headers}),
            Some(corr_id),
        );
        let is_sse = content_type
            .as_deref()
            .is_some_and(|c| c.starts_with("text/event-stream"));
        let reply = if is_sse {
            self.read_sse(response, id, corr_id).await
        } else {
            self.read_json(response, status, corr_id).await
        };
        HttpExchange {
            status: Some(status),
            content_type,
            session_id,
            reply,
        }
    }

    /// Read a JSON body (one message or a batch), bounded in size and time.
    async fn read_json(&self, response: reqwest::Response, status: u16, corr_id: &str) -> Reply {
        let body = tokio::time::timeout(self.timeout, body_within(response, MAX_BODY))
            .await
            .map(|r| r.map(|b| String::from_utf8_lossy(&b).into_owned()));
        match body {
            Ok(Ok(body)) if !body.trim().is_empty() => {
                self.tap.frame(Direction::Out, body.trim(), Some(corr_id));
                match serde_json::from_str::<Value>(&body) {
                    Ok(Value::Array(items)) => Reply::Batch(items),
                    Ok(v) => Reply::Response(v),
                    Err(_) => Reply::Silence("the body is not JSON".into()),
                }
            }
            Ok(Ok(_)) => Reply::Silence(format!("empty body, status {status}")),
            Ok(Err(e)) => Reply::Silence(format!("reading the body failed: {e}")),
            Err(_) => Reply::Silence(format!("no body within {:?}", self.timeout)),
        }
    }

    /// Read SSE `data:` events until the response with `id` (or the end).
    async fn read_sse(
        &self,
        response: reqwest::Response,
        id: Option<&str>,
        corr_id: &str,
    ) -> Reply {
        let mut response = response;
        let mut events = SseParser::new(MAX_EVENT);
        let mut ready = Vec::new();
        let deadline = tokio::time::Instant::now() + self.timeout;
        loop {
            let chunk = match tokio::time::timeout_at(deadline, response.chunk()).await {
                Err(_) => return Reply::Silence(format!("no event within {:?}", self.timeout)),
                Ok(Ok(None)) => return Reply::Silence("the event stream ended".into()),
                Ok(Err(e)) => return Reply::Silence(format!("stream failed: {e}")),
                Ok(Ok(Some(c))) => c,
            };
            events.push(&chunk, |item| ready.push(item));
            for item in ready.drain(..) {
                let frame = match item {
                    SseItem::Event(frame) => frame,
                    SseItem::TooLong => {
                        self.tap.event(
                            "fitness.oversized_event",
                            json!({"limit": MAX_EVENT}),
                            Some(corr_id),
                        );
                        continue;
                    }
                };
                self.tap.frame(Direction::Out, &frame, Some(corr_id));
                match serde_json::from_str::<Value>(&frame) {
                    Ok(Value::Array(items)) => return Reply::Batch(items),
                    Ok(v) => {
                        let matches = id.is_none()
                            || answers_null_id(&v)
                            || (v.get("id").and_then(Value::as_str) == id
                                && v.get("method").is_none());
                        if matches {
                            return Reply::Response(v);
                        }
                    }
                    Err(_) => {}
                }
            }
        }
    }
}
