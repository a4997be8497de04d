//! Servers behind a login: the MCP authorization flow (OAuth 2.1 with
//! PKCE), built on rmcp's `auth` feature. rmcp does discovery (the 401's
//! `WWW-Authenticate`, protected-resource and authorization-server
//! metadata with their fallbacks), client registration (pre-registered,
//! a Client ID Metadata Document, or dynamic), PKCE S256, the `resource`
//! parameter, state checking, scope selection and refresh. What is ours:
//!
//! * the approval ([`approve`]): a loopback redirect on 127.0.0.1 with the
//!   browser opened for the operator (`$BROWSER`, else the URL printed), or,
//!   non-interactive, following the authorization URL's redirects until one
//!   reaches the redirect URI (authorization servers that approve without
//!   a person: the conformance suite's, CI's);
//! * the token store ([`store`]): one 0600 file per server URL;
//! * the first request that finds out whether a server wants a login at all
//!   ([`challenge`]).

mod approve;
pub mod store;

use std::time::Duration;

use rmcp::transport::auth::{
    AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore,
};

pub use approve::Approval;
pub use store::FileCredentialStore;

/// Scope step-ups after a login, at most.
pub const MAX_STEP_UPS: u32 = 2;

/// The client name registered with an authorization server.
pub const CLIENT_NAME: &str = "fitness";

/// What `fitness login` asks for.
#[derive(Debug, Clone)]
pub struct LoginRequest {
    /// The MCP server's URL.
    pub url: String,
    pub approval: Approval,
    /// A client registered beforehand (else a Client ID Metadata Document
    /// where the server supports one, else dynamic registration).
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// The https URL of this client's metadata document.
    pub client_metadata_url: Option<String>,
    /// Scopes to ask for (else the server's hint, else its supported list).
    pub scopes: Vec<String>,
    /// How long the operator has to approve.
    pub wait: Duration,
}

/// A completed login: its manager (which refreshes the token from its
/// store) and what was granted.
pub struct Login {
    pub manager: AuthorizationManager,
    pub client_id: String,
    pub scopes: Vec<String>,
    /// The redirect URI registered for this client.
    pub redirect_uri: String,
    /// Step-ups made so far ([`MAX_STEP_UPS`] at most).
    step_ups: std::sync::atomic::AtomicU32,
}

/// What the first, anonymous request found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Challenge {
    /// 401 (or 403), with its `WWW-Authenticate` header when there was one.
    Unauthorized(Option<String>),
    /// The server answered without asking for authorization.
    Open(u16),
}

/// Send the MCP `initialize` a client would, without a token, and read
/// whether the server asks for authorization.
pub async fn challenge(url: &str, timeout: Duration) -> anyhow::Result<Challenge> {
    let client = crate::http::http_client_builder()?
        .redirect(crate::http::same_origin_redirects())
        .timeout(timeout)
        .build()?;
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": CLIENT_NAME, "version": fitness_shared::VERSION}}
    });
    let response = client
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .map_err(|e| anyhow::anyhow!("could not reach {url}: {}", approve::deepest(&e)))?;
    let status = response.status().as_u16();
    if status == 401 || status == 403 {
        let header = response
            .headers()
            .get(reqwest::header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        return Ok(Challenge::Unauthorized(header));
    }
    Ok(Challenge::Open(status))
}

/// Run the authorization flow for `req.url`, keeping the token in `store`.
/// `say` hears what the operator must do (the URL to open).
pub async fn login(
    req: &LoginRequest,
    store: impl CredentialStore + 'static,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<Login> {
    let challenge = match challenge(&req.url, Duration::from_secs(30)).await? {
        Challenge::Unauthorized(header) => header,
        Challenge::Open(status) => anyhow::bail!(
            "{} answered HTTP {status} without asking for authorization: there is nothing to log in to",
            req.url
        ),
    };
    login_with(req, challenge.as_deref(), store, say).await
}

/// [`login`], answering a challenge already received (a 401's
/// `WWW-Authenticate`, or none: discovery from the well-known places).
pub async fn login_with(
    req: &LoginRequest,
    challenge: Option<&str>,
    store: impl CredentialStore + 'static,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<Login> {
    let challenge = challenge.map(str::to_owned);
    let mut manager = AuthorizationManager::new(req.url.as_str())
        .await
        .map_err(|e| anyhow::anyhow!("{}: {e}", req.url))?;
    manager.set_credential_store(store);
    // A login and at most two step-ups: three authorizations in all, so a
    // server that refuses every scope cannot keep the operator approving.
    let mut upgrades = rmcp::transport::auth::ScopeUpgradeConfig::default();
    upgrades.max_upgrade_attempts = MAX_STEP_UPS;
    manager.set_scope_upgrade_config(upgrades);
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| anyhow::anyhow!("discovering how {} authorizes: {e}", req.url))?;
    manager.set_metadata(resolution.metadata);

    let redirect = approve::Redirect::bind().await?;
    let redirect_uri = redirect.uri();
    let mut request =
        AuthorizationRequest::new(redirect.uri()).with_client_name(CLIENT_NAME.to_owned());
    if let Some(c) = &challenge {
        request = request.with_challenge(c.clone());
    }
    if !req.scopes.is_empty() {
        request = request.with_scopes(req.scopes.iter().cloned());
    }
    if let Some(id) = &req.client_id {
        request = request.with_preregistered_client(id.clone());
    }
    if let Some(secret) = &req.client_secret {
        request = request.with_client_secret(secret.clone());
    }
    if let Some(url) = &req.client_metadata_url {
        request = request.with_client_metadata_url(url.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| anyhow::anyhow!("registering with the authorization server: {e}"))?;
    let callback = redirect
        .approve(session.get_authorization_url(), req.approval, req.wait, say)
        .await?;
    session.handle_callback_url(&callback).await.map_err(|e| {
        anyhow::anyhow!(
            "exchanging the authorization code at the token endpoint: {e} (an answer over \
                 rmcp's size bound, one that is not a token, or none within 30 s)"
        )
    })?;
    let credentials = session
        .auth_manager
        .get_credentials()
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let scopes = session.auth_manager.get_current_scopes().await;
    let client_id = credentials.0;
    // The token joins the redaction policy before anything could tape it.
    if let Ok(token) = session.auth_manager.get_access_token().await {
        register_token(&token);
    }
    Ok(Login {
        manager: session.auth_manager,
        client_id,
        scopes,
        redirect_uri,
        step_ups: std::sync::atomic::AtomicU32::new(0),
    })
}

/// Step up a login after a 403 `insufficient_scope`: authorize again for
/// the scopes the challenge names, beside those held (a bounded number of
/// times: rmcp counts the attempts). The new token.
pub async fn step_up(
    login: &Login,
    www_authenticate: &str,
    approval: Approval,
    wait: Duration,
    say: &mut dyn FnMut(&str),
) -> anyhow::Result<String> {
    // rmcp counts its attempts but starts again after each success: a
    // server that wants more scope after every grant is stopped here.
    let made = login
        .step_ups
        .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    anyhow::ensure!(
        made < MAX_STEP_UPS,
        "the server still refuses for want of scope after {MAX_STEP_UPS} step-ups: stopping"
    );
    let base = reqwest::Url::parse(&login.redirect_uri)?;
    let params = rmcp::transport::auth::WWWAuthenticateParams::parse(www_authenticate, &base);
    let scope = params.scope.ok_or_else(|| {
        anyhow::anyhow!("the server refused for want of scope without naming the scope it wants")
    })?;
    let auth_url = login
        .manager
        .request_scope_upgrade(&scope)
        .await
        .map_err(|e| anyhow::anyhow!("asking for the scope `{scope}`: {e}"))?;
    let redirect = approve::Redirect::at(&login.redirect_uri).await?;
    let callback = redirect.approve(&auth_url, approval, wait, say).await?;
    let callback = rmcp::transport::auth::AuthorizationCallback::from_redirect_url(&callback)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    login
        .manager
        .exchange_code_for_token_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(|e| anyhow::anyhow!("exchanging the authorization code: {e}"))?;
    let token = login
        .manager
        .get_access_token()
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    register_token(&token);
    Ok(token)
}

/// The stored login of `url`, refreshed when it is about to expire: a
/// bearer token, known to the redaction policy.
pub async fn stored_token(url: &str) -> anyhow::Result<String> {
    let manager = manager_for(url).await?;
    let token = manager.get_access_token().await.map_err(|e| match e {
        rmcp::transport::auth::AuthError::AuthorizationRequired => anyhow::anyhow!(
            "the login for {url} has expired and could not be refreshed: run `fitness login {url}` again"
        ),
        e => anyhow::anyhow!("refreshing the login for {url}: {e}"),
    })?;
    register_token(&token);
    Ok(token)
}

/// The authorization manager of `url`'s stored login, for a session's
/// transport (rmcp's `AuthClient`): it sends the stored token, refreshes it
/// before expiry and once on a 401, and keeps the refreshed one in the store.
pub async fn manager_for(url: &str) -> anyhow::Result<AuthorizationManager> {
    let store = FileCredentialStore::for_url(url)?;
    // No login at all: said before any request is made.
    if store.load().await.ok().flatten().is_none() {
        anyhow::bail!("no login for {url}: run `fitness login {url}` first");
    }
    let mut manager = AuthorizationManager::new(url)
        .await
        .map_err(|e| anyhow::anyhow!("{url}: {e}"))?;
    manager.set_credential_store(store);
    let found = manager
        .initialize_from_store()
        .await
        .map_err(|e| anyhow::anyhow!("reading the login for {url}: {e}"))?;
    anyhow::ensure!(
        found,
        "the login for {url} is no longer valid (its authorization server changed): run `fitness login {url}` again"
    );
    Ok(manager)
}

/// A token is a secret: redacted wherever it could appear.
fn register_token(token: &str) {
    crate::secrets::register(
        vec![fitness_shared::redact::Secret::env(
            "OAUTH_ACCESS_TOKEN",
            token,
        )],
        vec![],
    );
}
