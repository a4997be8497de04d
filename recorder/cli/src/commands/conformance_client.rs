//! `fitness conformance-client URL` (hidden): the plain client path the
//! official conformance suite's client scenarios drive (`conformance client
//! --command 'fitness conformance-client'`). It connects as any client
//! would (logging in first when the server answers 401, non-interactively,
//! the token kept in memory only), lists the tools and calls each with
//! arguments its schema accepts. No probe, no tape: the scenarios judge
//! what a client does, not what it measures.

use std::time::Duration;

use fitness_recorder::auth::{self, Approval, LoginRequest};
use fitness_recorder::mcp::connect::{Challenged, HttpTarget, Session, Target};
use fitness_recorder::mcp::tap::Tap;
use rmcp::transport::auth::InMemoryCredentialStore;
use serde_json::{Map, Value, json};

/// The client metadata document the conformance suite's authorization
/// servers accept as a client id (they never fetch it).
const CONFORMANCE_CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

#[derive(Debug, clap::Args)]
pub struct ConformanceClientArgs {
    /// The scenario's server URL (the suite appends it).
    #[arg(value_name = "URL")]
    pub url: String,
}

pub fn run(args: ConformanceClientArgs) -> anyhow::Result<()> {
    let runtime = crate::process::runtime()?;
    let outcome = runtime.block_on(client(&args.url));
    runtime.shutdown_timeout(Duration::from_secs(2));
    outcome
}

async fn client(url: &str) -> anyhow::Result<()> {
    let timeout = Duration::from_secs(20);
    let mut login: Option<auth::Login> = None;
    let mut session = match connect(url, None, timeout).await {
        Ok(s) => s,
        // The handshake itself refused: log in from its challenge.
        Err(e) => match auth::challenge(url, timeout).await? {
            auth::Challenge::Unauthorized(header) => {
                let done = log_in(url, header.as_deref(), timeout).await?;
                let token = done
                    .manager
                    .get_access_token()
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
                login = Some(done);
                connect(url, Some(token), timeout).await?
            }
            auth::Challenge::Open(_) => return Err(e),
        },
    };
    let tools = loop {
        match session.list_tools().await {
            Ok(tools) => break tools,
            Err(e) => {
                session = answer(url, &mut login, e, session, timeout).await?;
            }
        }
    };
    for tool in &tools {
        let args = arguments(&tool.input_schema);
        loop {
            match session.call_tool(&tool.name, args.clone()).await {
                Ok(_) => break,
                Err(e) if e.downcast_ref::<Challenged>().is_some() => {
                    session = answer(url, &mut login, e, session, timeout).await?;
                }
                Err(e) => {
                    eprintln!("{e:#}");
                    break;
                }
            }
        }
    }
    session.close().await;
    Ok(())
}

/// Answer a refusal: a 401 is answered by logging in (once), a 403
/// `insufficient_scope` by stepping up (rmcp bounds the attempts); then a
/// fresh session with the new token. Any other error ends the client.
async fn answer(
    url: &str,
    login: &mut Option<auth::Login>,
    e: anyhow::Error,
    session: Session,
    timeout: Duration,
) -> anyhow::Result<Session> {
    let Some(challenged) = e.downcast_ref::<Challenged>() else {
        return Err(e);
    };
    let token = match (challenged.status, login.as_ref()) {
        (401, None) => {
            let done = log_in(url, Some(&challenged.www_authenticate), timeout).await?;
            let token = done
                .manager
                .get_access_token()
                .await
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            *login = Some(done);
            token
        }
        (403, Some(l)) => {
            auth::step_up(
                l,
                &challenged.www_authenticate,
                Approval::NonInteractive,
                timeout,
                &mut |s| eprintln!("{s}"),
            )
            .await?
        }
        _ => return Err(e),
    };
    session.close().await;
    connect(url, Some(token), timeout).await
}

/// Log in, non-interactively, the token in memory only; the suite's
/// context names a pre-registered client where the scenario has one.
async fn log_in(
    url: &str,
    challenge: Option<&str>,
    timeout: Duration,
) -> anyhow::Result<auth::Login> {
    let context = context();
    let request = LoginRequest {
        url: url.to_owned(),
        approval: Approval::NonInteractive,
        client_id: context["client_id"].as_str().map(str::to_owned),
        client_secret: context["client_secret"].as_str().map(str::to_owned),
        client_metadata_url: Some(CONFORMANCE_CLIENT_METADATA_URL.to_owned()),
        scopes: vec![],
        wait: timeout,
    };
    auth::login_with(
        &request,
        challenge,
        InMemoryCredentialStore::new(),
        &mut |s| eprintln!("{s}"),
    )
    .await
}

async fn connect(url: &str, bearer: Option<String>, timeout: Duration) -> anyhow::Result<Session> {
    let target = Target::Http(HttpTarget {
        url: url.to_owned(),
        headers: vec![],
        bearer,
        login: false,
    });
    Session::connect_initialize(&target, Tap::disabled(), timeout).await
}

/// The suite's context for this scenario (a pre-registered client's id and
/// secret), or an empty object.
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_else(|| json!({}))
}

/// Arguments a tool's schema accepts: each required property a plain value
/// of its type.
fn arguments(schema: &Map<String, Value>) -> Map<String, Value> {
    let required = fitness_recorder::suite::schema_args::required_names(schema.get("required"));
    let mut args = Map::new();
    for (name, p) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if !required.contains(&name.as_str()) {
            continue;
        }
        let value = match p.get("type").and_then(Value::as_str) {
            Some("integer") | Some("number") => json!(2),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("test"),
        };
        args.insert(name.clone(), value);
    }
    args
}
