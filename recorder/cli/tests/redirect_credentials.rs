//! Credentials never follow a redirect to another origin. A local server
//! answers every request with a 307 to a second local server on another
//! port (another origin); the raw HTTP probes, the rmcp streamable-HTTP
//! transport and both model clients are pointed at the first, and the
//! second must never see the bearer token, an operator header or an API
//! key. A redirect within the same origin is still followed.

use crate::common;

use std::process::Output;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use common::{FITNESS, run_bounded_in, text};
use fitness_recorder::mcp::connect::HttpTarget;
use fitness_recorder::mcp::raw::RawHttp;
use fitness_recorder::mcp::tap::Tap;
use serde_json::json;

const BEARER: &str = "redirect-bearer-5a1f0c";
const HEADER: &str = "redirect-header-77b2e1";
const OPENAI_KEY: &str = "redirect-openai-0c9d3a";
const ANTHROPIC_KEY: &str = "redirect-anthropic-e41b6f";

/// What one server saw: path and every header value.
type Seen = Arc<Mutex<Vec<(String, Vec<String>)>>>;

fn record(seen: &Seen, uri: &Uri, headers: &HeaderMap) {
    let values = headers
        .iter()
        .map(|(k, v)| format!("{k}: {}", String::from_utf8_lossy(v.as_bytes())))
        .collect();
    seen.lock()
        .expect("lock")
        .push((uri.path().to_owned(), values));
}

struct Servers {
    origin: String,
    origin_seen: Seen,
    elsewhere_seen: Seen,
    rt: tokio::runtime::Runtime,
}

/// The second origin: records everything, answers 404.
async fn elsewhere(State(seen): State<Seen>, uri: Uri, headers: HeaderMap) -> Response {
    record(&seen, &uri, &headers);
    (StatusCode::NOT_FOUND, "you should not be here").into_response()
}

#[derive(Clone)]
struct OriginState {
    seen: Seen,
    elsewhere: String,
}

/// The first origin: `/same/...` redirects within itself to `/ok/...`,
/// which answers like an OpenAI-compatible API; everything else redirects
/// to the other origin, same path.
async fn origin(State(state): State<OriginState>, uri: Uri, headers: HeaderMap) -> Response {
    record(&state.seen, &uri, &headers);
    let path = uri.path();
    if let Some(rest) = path.strip_prefix("/same/v1") {
        return (
            StatusCode::TEMPORARY_REDIRECT,
            [("location", format!("/ok{rest}"))],
        )
            .into_response();
    }
    if path.starts_with("/ok/") {
        return axum::Json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "followed within the origin"},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}
        }))
        .into_response();
    }
    (
        StatusCode::TEMPORARY_REDIRECT,
        [("location", format!("{}{path}", state.elsewhere))],
    )
        .into_response()
}

fn servers() -> Servers {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let bind = || {
        rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind 127.0.0.1")
    };
    let (a, b) = (bind(), bind());
    let origin_url = format!("http://{}", a.local_addr().expect("addr"));
    let elsewhere_url = format!("http://{}", b.local_addr().expect("addr"));
    let (origin_seen, elsewhere_seen) = (Seen::default(), Seen::default());
    let other = Router::new()
        .fallback(elsewhere)
        .with_state(elsewhere_seen.clone());
    let first = Router::new().fallback(origin).with_state(OriginState {
        seen: origin_seen.clone(),
        elsewhere: elsewhere_url,
    });
    rt.spawn(async move {
        let _ = axum::serve(b, other).await;
    });
    rt.spawn(async move {
        let _ = axum::serve(a, first).await;
    });
    Servers {
        origin: origin_url,
        origin_seen,
        elsewhere_seen,
        rt,
    }
}

fn fitness(args: &[&str], env: &[(&str, String)], limit: Duration) -> Output {
    run_bounded_in(None, env, args, limit)
}

/// No header value the second origin saw holds any of `secrets`.
fn assert_never_reached(s: &Servers, secrets: &[&str]) {
    let seen = s.elsewhere_seen.lock().expect("lock");
    for (path, headers) in seen.iter() {
        for h in headers {
            for secret in secrets {
                assert!(
                    !h.contains(secret),
                    "the other origin got {secret} on {path}: {h}"
                );
            }
        }
    }
}

#[test]
fn the_raw_http_probes_never_carry_credentials_to_another_origin() {
    let s = servers();
    let target = HttpTarget {
        url: format!("{}/mcp", s.origin),
        headers: vec![("X-Api-Key".to_owned(), HEADER.to_owned())],
        bearer: Some(BEARER.to_owned()),
        login: false,
    };
    let raw = RawHttp::new(&target, Tap::disabled(), Duration::from_secs(5)).expect("client");
    let frame = r#"{"jsonrpc":"2.0","id":"p1","method":"tools/list","params":{}}"#;
    let posted =
        s.rt.block_on(raw.post(frame, Some("p1"), &[], "probe::redirect"));
    let got = s.rt.block_on(raw.get(&target.url, "probe::redirect"));
    // The 307 comes back to the probe; it is not followed.
    assert_eq!(posted.status, Some(307));
    assert_eq!(got.status, Some(307));
    assert_never_reached(&s, &[BEARER, HEADER]);
    assert!(
        s.elsewhere_seen.lock().expect("lock").is_empty(),
        "nothing at all went to the other origin"
    );
}

#[test]
fn the_probes_and_the_mcp_transport_never_carry_credentials_to_another_origin() {
    let s = servers();
    let url = format!("{}/mcp", s.origin);
    let header = format!("X-Api-Key: {HEADER}");
    let out = fitness(
        &[
            "probe",
            "--json",
            "--timeout",
            "5",
            "--header",
            &header,
            &url,
        ],
        &[("FITNESS_MCP_BEARER_TOKEN", BEARER.to_owned())],
        Duration::from_secs(120),
    );
    // Whatever the probes concluded, the redirect was offered and refused.
    let asked = s.origin_seen.lock().expect("lock").len();
    assert!(
        asked >= 2,
        "the probes reached the first origin: {}",
        text(&out)
    );
    assert_never_reached(&s, &[BEARER, HEADER]);
    assert!(
        s.origin_seen
            .lock()
            .expect("lock")
            .iter()
            .any(|(_, h)| h.iter().any(|v| v.contains(HEADER))),
        "the first origin did get the header"
    );
}

#[test]
fn the_model_clients_never_carry_keys_to_another_origin_but_follow_within_it() {
    let s = servers();
    let dir = tempfile::tempdir().expect("tempdir");
    let ask = |provider: &str, env: Vec<(&str, String)>| {
        let runner = format!("{provider}/m");
        let out = dir.path().join(provider);
        fitness(
            &[
                "ask",
                "--runner",
                &runner,
                "--timeout",
                "10",
                "--out",
                out.to_str().expect("utf-8"),
                "Say hi.",
                "--",
                FITNESS,
                "fixture-server",
                "correct",
            ],
            &env,
            Duration::from_secs(120),
        )
    };
    let out = ask(
        "openai",
        vec![
            ("OPENAI_BASE_URL", format!("{}/v1", s.origin)),
            ("OPENAI_API_KEY", OPENAI_KEY.to_owned()),
        ],
    );
    assert_never_reached(&s, &[OPENAI_KEY]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("307"), "{}", text(&out));
    let out = ask(
        "anthropic",
        vec![
            ("ANTHROPIC_BASE_URL", s.origin.clone()),
            ("ANTHROPIC_API_KEY", ANTHROPIC_KEY.to_owned()),
        ],
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert_never_reached(&s, &[OPENAI_KEY, ANTHROPIC_KEY]);
    let keyed = |key: &str| {
        s.origin_seen
            .lock()
            .expect("lock")
            .iter()
            .any(|(_, h)| h.iter().any(|v| v.contains(key)))
    };
    assert!(
        keyed(OPENAI_KEY) && keyed(ANTHROPIC_KEY),
        "both asked the first origin"
    );

    // Within the origin a redirect is followed, key and all.
    let out = ask(
        "openai",
        vec![
            ("OPENAI_BASE_URL", format!("{}/same/v1", s.origin)),
            ("OPENAI_API_KEY", OPENAI_KEY.to_owned()),
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("followed within the origin"),
        "{}",
        text(&out)
    );
    assert_never_reached(&s, &[OPENAI_KEY]);
}
