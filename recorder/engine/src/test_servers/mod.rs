//! In-tree MCP servers, good and bad, behind the hidden `fitness
//! fixture-server NAME` subcommand (the command line is the CLI's). The tests probe them; the demo reuses
//! them. Each has the same three tools (`echo`, `add`, `reverse`).

mod asks;
mod correct;
mod echo;
mod misbehaving;

use std::net::SocketAddr;

use anyhow::Context as _;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

pub use asks::{AsksServer, HARBOUR_NOTES, SURVEY};
pub use correct::CorrectServer;
pub use echo::EchoServer;
pub use misbehaving::{FLOOD_COUNT, Fault, HUGE_LINE, hostile_tools};

/// Which fixture to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FixtureName {
    /// rmcp, both eras (2026-07-28 and legacy), stdio or HTTP.
    Correct,
    /// rmcp, legacy revisions only (no `server/discover`).
    Legacy,
    /// Echoes the offered protocol version, even `1999-01-01`.
    BogusEcho,
    /// HTTP only: modern, but accepts a mismatched `Mcp-Name` header.
    LaxHeaders,
    /// HTTP only: modern, but accepts a mismatched `Mcp-Method` header.
    LaxMethod,
    /// HTTP only: rmcp's defaults, which check `Host` and not `Origin`: a
    /// foreign Origin with a valid Host gets in, a foreign Host does not.
    HostOnly,
    /// Never answers `tools/call`.
    Hang,
    /// Exits in the middle of a `tools/call`.
    Crash,
    /// Writes garbage on stdout between frames.
    Garbage,
    /// Floods notifications during a `tools/call`.
    Flood,
    /// rmcp, modern, but advertises `resources.subscribe` (removed vocabulary
    /// in 2026-07-28).
    OldSubscribe,
    /// Gains a tool after its first `tools/call` and says so with
    /// `notifications/tools/list_changed`.
    ListChanged,
    /// Echoes its environment and, over HTTP, each request's URL and
    /// headers (for the redaction tests); stdio or HTTP.
    Echo,
    /// Floods notifications without end from its first `tools/call`.
    FloodForever,
    /// Answers its first `tools/call` with one 200 MB line.
    HugeLine,
    /// Lists tools with schemas no bounded argument set satisfies.
    HostileSchemas,
    /// A database whose tools all declare they read, one of which creates
    /// a table on its first call.
    ReadThatWrites,
    /// rmcp, 2026-07-28: tools answered `InputRequiredResult` (a sampling
    /// request, an elicitation request) until the client answers; stdio.
    Asks,
    /// HTTP only: the correct server behind a bearer token
    /// ([`AUTH_FIXTURE_TOKEN`]) that it stops taking after
    /// [`AUTH_FIXTURE_CALLS`] `tools/call` requests (a revoked login).
    AuthExpiring,
}

/// The token the auth-expiring fixture takes.
pub const AUTH_FIXTURE_TOKEN: &str = "fixture-token-7f3a9c";
/// `tools/call` requests the auth-expiring fixture answers before its 401s.
pub const AUTH_FIXTURE_CALLS: u64 = 5;

impl FixtureName {
    /// Every fixture with its command-line name.
    pub const ALL: &[(&str, FixtureName)] = &[
        ("correct", FixtureName::Correct),
        ("legacy", FixtureName::Legacy),
        ("bogus-echo", FixtureName::BogusEcho),
        ("lax-headers", FixtureName::LaxHeaders),
        ("lax-method", FixtureName::LaxMethod),
        ("host-only", FixtureName::HostOnly),
        ("hang", FixtureName::Hang),
        ("crash", FixtureName::Crash),
        ("garbage", FixtureName::Garbage),
        ("flood", FixtureName::Flood),
        ("old-subscribe", FixtureName::OldSubscribe),
        ("list-changed", FixtureName::ListChanged),
        ("echo", FixtureName::Echo),
        ("flood-forever", FixtureName::FloodForever),
        ("huge-line", FixtureName::HugeLine),
        ("hostile-schemas", FixtureName::HostileSchemas),
        ("read-that-writes", FixtureName::ReadThatWrites),
        ("auth-expiring", FixtureName::AuthExpiring),
        ("asks", FixtureName::Asks),
    ];

    /// The hand-written stdio fault this fixture is, if it is one.
    pub fn fault(self) -> Option<Fault> {
        match self {
            FixtureName::BogusEcho => Some(Fault::EchoesBogusVersion),
            FixtureName::Hang => Some(Fault::NeverAnswersToolsCall),
            FixtureName::Crash => Some(Fault::CrashesMidCall),
            FixtureName::Garbage => Some(Fault::GarbageOnStdout),
            FixtureName::Flood => Some(Fault::FloodsNotifications),
            FixtureName::ListChanged => Some(Fault::ChangesToolsAfterCall),
            FixtureName::FloodForever => Some(Fault::FloodsForever),
            FixtureName::HugeLine => Some(Fault::HugeLine),
            FixtureName::HostileSchemas => Some(Fault::HostileSchemas),
            FixtureName::ReadThatWrites => Some(Fault::ReadThatWrites),
            FixtureName::Correct
            | FixtureName::Legacy
            | FixtureName::LaxHeaders
            | FixtureName::LaxMethod
            | FixtureName::HostOnly
            | FixtureName::OldSubscribe
            | FixtureName::Echo
            | FixtureName::Asks
            | FixtureName::AuthExpiring => None,
        }
    }
}

impl std::str::FromStr for FixtureName {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        FixtureName::ALL
            .iter()
            .find(|(n, _)| *n == s)
            .map(|(_, f)| *f)
            .ok_or_else(|| format!("unknown fixture {s:?}"))
    }
}

/// Run a hand-written faulty fixture on stdin/stdout until stdin closes
/// (synchronous: these fixtures misbehave below any MCP library).
pub fn run_fault(
    fault: Fault,
    http: Option<SocketAddr>,
    data: Option<std::path::PathBuf>,
) -> anyhow::Result<()> {
    anyhow::ensure!(http.is_none(), "this fixture speaks stdio only");
    Ok(misbehaving::run(fault, data)?)
}

/// Serve an rmcp fixture until its input closes (stdio) or it is killed
/// (HTTP, on `http`, 127.0.0.1 only).
pub async fn serve(
    name: FixtureName,
    http: Option<SocketAddr>,
    bound: &dyn Fn(SocketAddr),
) -> anyhow::Result<()> {
    if let Some(fault) = name.fault() {
        anyhow::bail!("the fixture {fault:?} is not an rmcp server: run it with run_fault");
    }
    if name == FixtureName::Echo {
        return match http {
            None => {
                let service = EchoServer::new().serve(rmcp::transport::stdio()).await?;
                service.waiting().await?;
                Ok(())
            }
            Some(addr) => {
                anyhow::ensure!(addr.ip().is_loopback(), "fixtures bind 127.0.0.1 only");
                serve_router(addr, http_service(|| Ok(EchoServer::new()), true), bound).await
            }
        };
    }
    if name == FixtureName::Asks {
        anyhow::ensure!(http.is_none(), "this fixture speaks stdio only");
        let service = AsksServer::new().serve(rmcp::transport::stdio()).await?;
        service.waiting().await?;
        return Ok(());
    }
    if name == FixtureName::AuthExpiring {
        let addr = http.context("this fixture speaks HTTP only (--http ADDR)")?;
        anyhow::ensure!(addr.ip().is_loopback(), "fixtures bind 127.0.0.1 only");
        let router = http_service(
            || Ok(CorrectServer::new("fitness-fixture-auth-expiring", false)),
            true,
        )
        .layer(axum::middleware::from_fn(expiring_bearer));
        return serve_router(addr, router, bound).await;
    }
    let legacy_only = name == FixtureName::Legacy;
    // Which header a lax fixture overwrites with the body's own value, so a
    // mismatch in it is never noticed.
    let lax = match name {
        FixtureName::LaxHeaders => Some("mcp-name"),
        FixtureName::LaxMethod => Some("mcp-method"),
        _ => None,
    };
    let host_only = name == FixtureName::HostOnly;
    anyhow::ensure!(
        !(host_only && http.is_none()),
        "this fixture speaks HTTP only (--http ADDR)"
    );
    let server_name = match name {
        FixtureName::Legacy => "fitness-fixture-legacy",
        FixtureName::LaxHeaders => "fitness-fixture-lax-headers",
        FixtureName::LaxMethod => "fitness-fixture-lax-method",
        FixtureName::HostOnly => "fitness-fixture-host-only",
        FixtureName::OldSubscribe => "fitness-fixture-old-subscribe",
        _ => "fitness-fixture-correct",
    };
    let subscribe = name == FixtureName::OldSubscribe;
    anyhow::ensure!(
        !(subscribe && http.is_some()),
        "this fixture speaks stdio only"
    );
    match (http, lax) {
        (None, None) => {
            let mut server = CorrectServer::new(server_name, legacy_only);
            if subscribe {
                server = server.with_resources_subscribe();
            }
            let service = server.serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
            Ok(())
        }
        (addr, _) => {
            let addr = addr.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
            anyhow::ensure!(addr.ip().is_loopback(), "fixtures bind 127.0.0.1 only");
            serve_http(addr, server_name, legacy_only, lax, host_only, bound).await
        }
    }
}

async fn serve_http(
    addr: SocketAddr,
    name: &'static str,
    legacy_only: bool,
    lax: Option<&'static str>,
    host_only: bool,
    bound: &dyn Fn(SocketAddr),
) -> anyhow::Result<()> {
    let mut router = http_service(
        move || Ok(CorrectServer::new(name, legacy_only)),
        !host_only,
    );
    match lax {
        Some("mcp-name") => {
            router = router.layer(axum::middleware::from_fn(make_mcp_name_match));
        }
        Some(_) => {
            router = router.layer(axum::middleware::from_fn(make_mcp_method_match));
        }
        None => {}
    }
    serve_router(addr, router, bound).await
}

/// `/mcp` serving a fresh `S` per session. A correct local server refuses
/// foreign browser origins (DNS rebinding) with `check_origin`; without it,
/// rmcp's defaults check the Host header only.
fn http_service<S, F>(factory: F, check_origin: bool) -> axum::Router
where
    S: rmcp::ServerHandler + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let mut config = StreamableHttpServerConfig::default().with_sse_keep_alive(None);
    if check_origin {
        config = config.with_allowed_origins(["http://localhost:*", "http://127.0.0.1:*"]);
    }
    let service: StreamableHttpService<S, LocalSessionManager> =
        StreamableHttpService::new(factory, Default::default(), config);
    axum::Router::new().nest_service("/mcp", service)
}

/// Serve `router` on `addr`; `bound` is told the address it is bound to
/// (the command line prints it: a test reads it to learn the port).
async fn serve_router(
    addr: SocketAddr,
    router: axum::Router,
    bound: &dyn Fn(SocketAddr),
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    bound(listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}

/// The auth-expiring fixture's gate: 401 without the token, and with it
/// once [`AUTH_FIXTURE_CALLS`] `tools/call` requests have been answered.
async fn expiring_bearer(request: Request, next: Next) -> Response {
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let unauthorized = || {
        Response::builder()
            .status(401)
            .header(
                "www-authenticate",
                "Bearer error=\"invalid_token\", error_description=\"the token was revoked\"",
            )
            .body(Body::empty())
            .unwrap_or_default()
    };
    let authorized = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        == Some(&format!("Bearer {AUTH_FIXTURE_TOKEN}"));
    if !authorized {
        return unauthorized();
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 4 << 20).await else {
        return unauthorized();
    };
    let is_call = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .is_some_and(|v| v.get("method").and_then(serde_json::Value::as_str) == Some("tools/call"));
    if is_call && CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= AUTH_FIXTURE_CALLS {
        return unauthorized();
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The lax-headers fixture's fault: overwrite `Mcp-Name` with the body's
/// tool name, so a mismatched header is never noticed.
async fn make_mcp_name_match(request: Request, next: Next) -> Response {
    overwrite_header(request, next, "mcp-name", |v| {
        v.get("params")?.get("name")?.as_str().map(str::to_owned)
    })
    .await
}

/// The lax-method fixture's fault: overwrite `Mcp-Method` with the body's
/// method.
async fn make_mcp_method_match(request: Request, next: Next) -> Response {
    overwrite_header(request, next, "mcp-method", |v| {
        v.get("method")?.as_str().map(str::to_owned)
    })
    .await
}

/// Overwrite `header` with what `from_body` reads from the JSON body.
async fn overwrite_header(
    request: Request,
    next: Next,
    header: &'static str,
    from_body: fn(&serde_json::Value) -> Option<String>,
) -> Response {
    let (mut parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, 4 << 20).await else {
        return next.run(Request::from_parts(parts, Body::empty())).await;
    };
    let value = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| from_body(&v));
    if let Some(value) = value
        && let Ok(value) = axum::http::HeaderValue::from_str(&value)
    {
        parts.headers.insert(header, value);
    }
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}
