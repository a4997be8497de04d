//! A scripted fake model API on 127.0.0.1 for the provider-client tests:
//! it records every request (path, headers, JSON body) and answers each with
//! the next scripted reply (status, headers, body, delay). It speaks
//! whatever wire API the script's bodies are written in.
#![allow(dead_code, reason = "each test file uses a different subset")]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(&'static str, String)>,
    pub body: String,
    pub delay: Duration,
    /// A streamed body: each piece sent after its pause (the body is then
    /// ignored).
    pub pieces: Vec<(Duration, String)>,
}

impl Reply {
    pub fn json(body: Value) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type", "application/json".into())],
            body: body.to_string(),
            delay: Duration::ZERO,
            pieces: Vec::new(),
        }
    }

    pub fn status(status: u16, body: &str) -> Reply {
        Reply {
            status,
            headers: vec![],
            body: body.to_owned(),
            delay: Duration::ZERO,
            pieces: Vec::new(),
        }
    }

    /// `text/event-stream` sent in `pieces`, each after its pause.
    pub fn stream(pieces: Vec<(Duration, String)>) -> Reply {
        Reply {
            status: 200,
            headers: vec![("content-type", "text/event-stream".into())],
            body: String::new(),
            delay: Duration::ZERO,
            pieces,
        }
    }

    pub fn header(mut self, k: &'static str, v: &str) -> Reply {
        self.headers.push((k, v.to_owned()));
        self
    }

    pub fn delayed(mut self, d: Duration) -> Reply {
        self.delay = d;
        self
    }
}

#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: HeaderMap,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

#[derive(Default)]
struct Inner {
    script: VecDeque<Reply>,
    seen: Vec<Seen>,
}

/// The fake server; stops when dropped.
pub struct FakeApi {
    pub base: String,
    inner: Arc<Mutex<Inner>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FakeApi {
    /// Start on 127.0.0.1 with `script`; `base` is `http://127.0.0.1:PORT`.
    pub async fn start(script: Vec<Reply>) -> FakeApi {
        let inner = Arc::new(Mutex::new(Inner {
            script: script.into(),
            seen: Vec::new(),
        }));
        let app = Router::new().fallback(handle).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("addr");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        FakeApi {
            base: format!("http://{addr}"),
            inner,
            task,
        }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.inner.lock().expect("lock").seen.clone()
    }

    pub fn left(&self) -> usize {
        self.inner.lock().expect("lock").script.len()
    }
}

async fn handle(
    State(inner): State<Arc<Mutex<Inner>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let reply = {
        let mut g = inner.lock().expect("lock");
        g.seen.push(Seen {
            path: uri.path().to_owned(),
            headers,
            body: serde_json::from_slice(&body).unwrap_or(Value::Null),
        });
        g.script.pop_front()
    };
    let Some(reply) = reply else {
        return (StatusCode::IM_A_TEAPOT, "script exhausted").into_response();
    };
    tokio::time::sleep(reply.delay).await;
    let status = StatusCode::from_u16(reply.status).expect("status");
    let mut resp = if reply.pieces.is_empty() {
        (status, reply.body).into_response()
    } else {
        let pieces = futures::stream::unfold(reply.pieces.into_iter(), |mut it| async move {
            let (pause, piece) = it.next()?;
            tokio::time::sleep(pause).await;
            Some((Ok::<_, std::io::Error>(Bytes::from(piece)), it))
        });
        (status, axum::body::Body::from_stream(pieces)).into_response()
    };
    for (k, v) in reply.headers {
        resp.headers_mut()
            .insert(k, v.parse().expect("header value"));
    }
    resp
}
