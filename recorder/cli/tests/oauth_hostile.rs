//! `fitness login` against authorization servers that misbehave: a
//! redirect whose `state` is not the one sent, a token endpoint that sends
//! 50 MB, metadata that names an authorization server on another origin
//! with an issuer that is not its own, and a server that keeps answering
//! 401 after a login. Each ends in a clear error, in bounded time, with no
//! secret printed and nothing stored.

use crate::common;

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use common::{run_bounded_in, s, text};
use serde_json::json;

const LIMIT: Duration = Duration::from_secs(120);

/// What the server does wrong.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Fault {
    /// `/authorize` sends the browser back with a state of its own.
    ForeignState,
    /// `/token` answers with 50 MB.
    HugeToken,
    /// The protected-resource metadata names an authorization server whose
    /// metadata gives another issuer.
    IssuerMismatch,
    /// Every MCP request is 401, with a token or without.
    AlwaysUnauthorized,
    /// Tokens live one second, and a refresh is refused (`invalid_grant`).
    RefreshRejected,
}

#[derive(Clone)]
struct Hostile {
    fault: Fault,
    origin: String,
}

const TOKEN: &str = "hostile-access-token-5d1e";

async fn mcp(State(h): State<Hostile>, headers: HeaderMap) -> Response {
    let with_token = headers.get("authorization").and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {TOKEN}"));
    if with_token && h.fault != Fault::AlwaysUnauthorized {
        // The handshake is not what these tests are about: a bare error.
        return (StatusCode::BAD_REQUEST, "not an MCP server past the login").into_response();
    }
    (
        StatusCode::UNAUTHORIZED,
        [(
            "www-authenticate",
            format!(
                "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                h.origin
            ),
        )],
    )
        .into_response()
}

async fn resource(State(h): State<Hostile>) -> Response {
    axum::Json(json!({
        "resource": format!("{}/mcp", h.origin),
        "authorization_servers": [h.origin.clone()],
    }))
    .into_response()
}

async fn metadata(State(h): State<Hostile>) -> Response {
    let issuer = if h.fault == Fault::IssuerMismatch {
        "https://evil.example.com".to_owned()
    } else {
        h.origin.clone()
    };
    axum::Json(json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{}/authorize", h.origin),
        "token_endpoint": format!("{}/token", h.origin),
        "registration_endpoint": format!("{}/register", h.origin),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }))
    .into_response()
}

async fn register() -> Response {
    (
        StatusCode::CREATED,
        axum::Json(json!({"client_id": "hostile-client", "redirect_uris": []})),
    )
        .into_response()
}

async fn authorize(
    State(h): State<Hostile>,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    let redirect = q.get("redirect_uri").cloned().unwrap_or_default();
    let state = if h.fault == Fault::ForeignState {
        "someone-elses-state".to_owned()
    } else {
        q.get("state").cloned().unwrap_or_default()
    };
    Redirect::to(&format!("{redirect}?code=the-code&state={state}")).into_response()
}

async fn token(
    State(h): State<Hostile>,
    axum::Form(form): axum::Form<std::collections::HashMap<String, String>>,
) -> Response {
    if h.fault == Fault::RefreshRejected {
        if form.get("grant_type").map(String::as_str) == Some("refresh_token") {
            return (
                StatusCode::BAD_REQUEST,
                axum::Json(json!({"error": "invalid_grant", "error_description": "the refresh token expired"})),
            )
                .into_response();
        }
        // Long enough for the login itself to list the tools with it on a
        // busy machine (at 1 s the login's own call found it expired).
        return axum::Json(json!({
            "access_token": TOKEN, "token_type": "Bearer", "expires_in": 4,
            "refresh_token": "hostile-refresh-token-9b2c",
        }))
        .into_response();
    }
    if h.fault == Fault::HugeToken {
        let padding = "x".repeat(50 * 1024 * 1024);
        return (
            [("content-type", "application/json")],
            format!("{{\"access_token\":\"{TOKEN}\",\"token_type\":\"Bearer\",\"padding\":\"{padding}\"}}"),
        )
            .into_response();
    }
    axum::Json(json!({"access_token": TOKEN, "token_type": "Bearer", "expires_in": 3600}))
        .into_response()
}

/// Serve the hostile server on 127.0.0.1 in a thread of its own; its URL.
fn serve(fault: Fault) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr: SocketAddr = listener.local_addr().expect("addr");
    let origin = format!("http://127.0.0.1:{}", addr.port());
    let state = Hostile {
        fault,
        origin: origin.clone(),
    };
    let app = Router::new()
        .route("/mcp", post(mcp).get(mcp))
        .route("/.well-known/oauth-protected-resource/mcp", get(resource))
        .route("/.well-known/oauth-authorization-server", get(metadata))
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .with_state(state);
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            listener.set_nonblocking(true).expect("nonblocking");
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let _ = axum::serve(listener, app).await;
        });
    });
    format!("{origin}/mcp")
}

/// `fitness login URL --non-interactive` against `fault`: its output, and
/// whether anything was stored.
fn login(fault: Fault) -> (std::process::Output, bool) {
    let url = serve(fault);
    let dir = tempfile::tempdir().expect("temp dir");
    login_at(&url, &dir.path().join("logins"))
}

fn login_at(url: &str, logins: &std::path::Path) -> (std::process::Output, bool) {
    let logins = logins.to_owned();
    let out = run_bounded_in(
        None,
        &[("FITNESS_LOGIN_DIR", s(&logins).to_owned())],
        &["login", url, "--non-interactive"],
        LIMIT,
    );
    let stored = std::fs::read_dir(&logins).is_ok_and(|mut d| d.next().is_some());
    (out, stored)
}

#[test]
fn a_redirect_with_a_foreign_state_is_refused() {
    let (out, stored) = login(Fault::ForeignState);
    assert!(!out.status.success());
    let said = text(&out);
    assert!(said.contains("a state this login did not send"), "{said}");
    assert!(!stored, "nothing is stored");
}

#[test]
fn a_token_endpoint_that_sends_50_mb_is_refused_in_bounded_memory() {
    let (out, stored) = login(Fault::HugeToken);
    assert!(!out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains("exchanging the authorization code"), "{said}");
    assert!(!said.contains(TOKEN), "no token printed: {said}");
    assert!(said.len() < 4096, "the error is a sentence, not the body");
    assert!(!stored, "nothing is stored");
}

#[test]
fn metadata_whose_issuer_is_not_its_own_is_refused() {
    let (out, stored) = login(Fault::IssuerMismatch);
    assert!(!out.status.success());
    let said = text(&out);
    assert!(said.contains("discovering how"), "{said}");
    assert!(said.to_lowercase().contains("issuer"), "{said}");
    assert!(!stored, "nothing is stored");
}

#[test]
fn a_server_that_answers_401_after_the_login_says_so() {
    let (out, stored) = login(Fault::AlwaysUnauthorized);
    // The login itself completes and is kept; listing the tools with it
    // fails, and the output says so in words, without the token.
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("the server refused the new token (401)"),
        "{said}"
    );
    assert!(!said.contains(TOKEN), "no token printed: {said}");
    assert!(stored);
}

#[test]
fn an_expired_login_whose_refresh_is_refused_says_to_log_in_again() {
    let url = serve(Fault::RefreshRejected);
    let dir = tempfile::tempdir().expect("temp dir");
    let logins = dir.path().join("logins");
    let (out, stored) = login_at(&url, &logins);
    assert!(out.status.success(), "{}", text(&out));
    assert!(stored);
    std::thread::sleep(Duration::from_millis(4500));
    let probe = run_bounded_in(
        None,
        &[("FITNESS_LOGIN_DIR", s(&logins).to_owned())],
        &["probe", &url, "--login"],
        LIMIT,
    );
    assert!(!probe.status.success());
    let said = text(&probe);
    assert!(
        said.contains("has expired and could not be refreshed"),
        "{said}"
    );
    assert!(said.contains(&format!("fitness login {url}")), "{said}");
    assert!(
        !said.contains("hostile-refresh-token"),
        "no token printed: {said}"
    );
}
