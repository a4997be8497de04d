//! `fitness login URL`: the MCP authorization flow against a server that
//! answers 401, its token kept for the operator only; `probe`, `ask`,
//! `suite` and `run` then take `--login`.

use std::time::Duration;

use fitness_recorder::auth::{self, Approval, FileCredentialStore, LoginRequest};
use fitness_recorder::mcp::connect::{HttpTarget, Session, Target};
use fitness_recorder::mcp::tap::Tap;

#[derive(Debug, clap::Args)]
#[command(
    long_about = "Log in to an MCP server that needs authorization (OAuth 2.1 with PKCE): discovery from the server's 401, client registration (a pre-registered client, a Client ID Metadata Document, or dynamic registration), approval in a browser (a loopback redirect on 127.0.0.1; $BROWSER is opened where set, the URL is printed either way), the code exchanged for a token. The token is kept in a file only you can read (0600) under ~/.config/fitness/logins (or $XDG_CONFIG_HOME, or $FITNESS_LOGIN_DIR), refreshed before it expires, and never written to a tape, a record or a site. Then pass --login to probe, ask, suite or run."
)]
pub struct LoginArgs {
    /// The MCP server's URL (http or https).
    #[arg(value_name = "URL")]
    pub url: String,
    /// Follow the authorization URL's redirects instead of waiting for a
    /// person (an authorization server that approves by itself, in CI).
    #[arg(long)]
    pub non_interactive: bool,
    /// A client registered with the authorization server beforehand.
    #[arg(long, value_name = "ID")]
    pub client_id: Option<String>,
    /// With --client-id: the environment variable holding its secret.
    #[arg(long, value_name = "VAR", requires = "client_id")]
    pub client_secret_env: Option<String>,
    /// The https URL of this client's metadata document, used as its client
    /// id where the server supports Client ID Metadata Documents.
    #[arg(long, value_name = "URL")]
    pub client_metadata_url: Option<String>,
    /// A scope to ask for (repeatable); else the server's hint.
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// Seconds to wait for the approval.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub wait: u64,
}

pub fn run(args: LoginArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.url.starts_with("http://") || args.url.starts_with("https://"),
        "URL must be an http(s) URL: a stdio server needs no login"
    );
    let client_secret = match &args.client_secret_env {
        Some(var) => Some(
            std::env::var(var)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| {
                    anyhow::anyhow!(
                        "--client-secret-env {var}: the environment variable {var} is not set"
                    )
                })?,
        ),
        None => None,
    };
    if let Some(secret) = &client_secret {
        fitness_recorder::secrets::register(
            vec![fitness_shared::redact::Secret::env("CLIENT_SECRET", secret)],
            vec![],
        );
    }
    let request = LoginRequest {
        url: args.url.clone(),
        approval: if args.non_interactive {
            Approval::NonInteractive
        } else {
            Approval::Browser
        },
        client_id: args.client_id.clone(),
        client_secret,
        client_metadata_url: args.client_metadata_url.clone(),
        scopes: args.scopes.clone(),
        wait: Duration::from_secs(args.wait.max(1)),
    };
    let store = FileCredentialStore::for_url(&args.url)?;
    let path = store.path().to_owned();
    let runtime = crate::process::runtime()?;
    let outcome = runtime.block_on(crate::process::until_interrupted(async {
        let login = auth::login(&request, store, &mut |s| eprintln!("{s}")).await?;
        let token = auth::stored_token(&args.url).await?;
        let tools = tools_with(&args.url, token).await;
        anyhow::Ok((login, tools))
    }));
    runtime.shutdown_timeout(Duration::from_secs(2));
    let Some(outcome) = outcome else {
        anyhow::bail!("interrupted: no login was kept");
    };
    let (login, tools) = outcome?;
    let scopes = if login.scopes.is_empty() {
        "no scope named".to_owned()
    } else {
        login.scopes.join(" ")
    };
    let tools = match tools {
        Ok(n) => format!("{n} tool(s) listed with it"),
        Err(e)
            if e.downcast_ref::<fitness_recorder::mcp::unreachable::Unreachable>()
                .and_then(|u| u.refused)
                .is_some() =>
        {
            "but the server refused the new token (401): it does not take what its \
             authorization server issued"
                .to_owned()
        }
        Err(e) => format!("but listing the tools with it failed: {e:#}"),
    };
    crate::process::print_line(&fitness_recorder::secrets::redact(&format!(
        "logged in to {} (client {}, scopes: {scopes}); {tools}\ntoken kept in {} (mode 0600): pass --login to probe, ask, suite or run",
        args.url,
        login.client_id,
        path.display()
    )))
}

/// The tools the server lists to a client holding `token`.
async fn tools_with(url: &str, token: String) -> anyhow::Result<usize> {
    let target = Target::Http(HttpTarget {
        url: url.to_owned(),
        headers: vec![],
        bearer: Some(token),
        login: false,
    });
    let session = Session::connect(&target, Tap::disabled(), None, Duration::from_secs(30)).await?;
    let tools = session.list_tools().await;
    session.close().await;
    Ok(tools?.len())
}
