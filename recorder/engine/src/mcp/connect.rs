//! Connecting to a server the way real clients do, through rmcp 3.x: a stdio
//! child or streamable HTTP, the modern era (`server/discover`) first with a
//! fallback to the legacy `initialize` handshake. Every request is bounded by a
//! timeout; server-to-client requests are answered by [`FitnessClient`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientConfig,
    CreateMessageRequestMethod, ElicitRequestParams, ElicitResult, ErrorData, Implementation,
    ProtocolVersion, Tool,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, RequestContext, RunningService,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;

use super::input::{Answering, InputCounts, InputDesk};
use super::stdio::StdioChild;
use super::tap::Tap;
use super::tapped::{SharedCorrId, TappedTransport};
use super::trace::Tracer;
use super::unreachable::Unreachable;
// Where and how a session runs; the probes' raw client needs them too.
pub use super::target::{Era, HttpTarget, Target};

/// Rounds of input a call may ask for before it answers.
pub const INPUT_ROUNDS: usize = 10;

/// How long any one MCP request may take unless the operator says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

/// The client side: answers `roots/list` and `ping` (rmcp's defaults),
/// re-lists tools on `notifications/tools/list_changed`, and answers a
/// server's requests for input (sampling, elicitation) where the session
/// serves them ([`InputDesk`]).
#[derive(Clone)]
pub struct FitnessClient {
    tap: Tap,
    tools: Arc<Mutex<Option<Vec<String>>>>,
    relists: Arc<std::sync::atomic::AtomicU64>,
    timeout: Duration,
    /// The handshake is the legacy `initialize`: it offers the newest
    /// revision that has one (2025-11-25), not one that has none.
    initialize: bool,
    /// Who answers the server's requests for input, for the trial in
    /// flight.
    answering: Answering,
}

impl FitnessClient {
    fn new(tap: Tap, timeout: Duration, initialize: bool, answering: Answering) -> Self {
        FitnessClient {
            tap,
            tools: Arc::default(),
            relists: Arc::default(),
            timeout,
            initialize,
            answering,
        }
    }

    /// The capabilities the session declares: only what it serves, and the
    /// tasks extension, whose tasks [`Session::call_tool`] polls.
    fn capabilities(&self) -> ClientCapabilities {
        let serves = self.answering.desk.serves();
        let mut declared = serde_json::Map::new();
        if serves.sampling {
            declared.insert("sampling".into(), json!({}));
        }
        if serves.elicitation {
            declared.insert("elicitation".into(), json!({"form": {}}));
        }
        declared.insert(
            "extensions".into(),
            json!({ rmcp::model::TASKS_EXTENSION_ID: {} }),
        );
        serde_json::from_value(serde_json::Value::Object(declared)).unwrap_or_default()
    }
}

impl ClientHandler for FitnessClient {
    fn get_info(&self) -> ClientConfig {
        let config = ClientConfig::new(
            self.capabilities(),
            Implementation::new("fitness", fitness_shared::VERSION),
        );
        if self.initialize {
            config.with_protocol_version(ProtocolVersion::V_2025_11_25)
        } else {
            config
        }
    }

    // Sampling stays a request of the revisions servers speak today
    // (2025-11-25, and 2026-07-28's input requests), whatever rmcp's
    // deprecation says of a later one.
    #[expect(deprecated, reason = "servers in the registries still sample")]
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, ErrorData> {
        let sent = serde_json::to_value(&params).unwrap_or_default();
        match self.answering.sample(&sent).await {
            Ok(answer) => serde_json::from_value(answer).map_err(|e| {
                ErrorData::internal_error(
                    format!("the client's answer did not form a result: {e}"),
                    None,
                )
            }),
            Err(why) if why == super::input::NOT_SERVED => {
                Err(ErrorData::method_not_found::<CreateMessageRequestMethod>())
            }
            Err(why) => Err(ErrorData::internal_error(why, None)),
        }
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let sent = serde_json::to_value(&request).unwrap_or_default();
        let answer = self.answering.elicit(&sent).await;
        serde_json::from_value::<ElicitResult>(answer)
            .or_else(|_| serde_json::from_value::<ElicitResult>(json!({"action": "decline"})))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.tap
            .event("fitness.list_changed", json!({"list": "tools"}), None);
        let peer = context.peer.clone();
        let tools = self.tools.clone();
        let relists = self.relists.clone();
        let timeout = self.timeout;
        tokio::spawn(async move {
            if let Ok(Ok(list)) = tokio::time::timeout(timeout, peer.list_all_tools()).await {
                let names = list.into_iter().map(|t| t.name.to_string()).collect();
                *tools.lock().unwrap_or_else(|p| p.into_inner()) = Some(names);
                relists.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        });
    }
}

/// A live session.
pub struct Session {
    pub service: RunningService<RoleClient, FitnessClient>,
    child: Option<StdioChild>,
    timeout: Duration,
    corr_id: SharedCorrId,
    /// Held by a tagged call from its request to its response.
    calls: tokio::sync::Mutex<()>,
    /// A request the server refused with 401 in the middle of the session
    /// (after rmcp's one refresh, with a login): the session has lost its
    /// authorization.
    auth_lost: std::sync::Mutex<Option<String>>,
    /// The server's requests for input: what the session serves, who
    /// answers, the counts.
    desk: InputDesk,
    answering: Answering,
    /// The run's trace context: each call carries its trial's trace.
    tracer: std::sync::Mutex<Option<Tracer>>,
}

/// A call in flight under its trial's corr_id; the session's other trials
/// wait for it (see [`Session::tagged`]).
pub struct Tagged<'a> {
    session: &'a Session,
    _turn: tokio::sync::MutexGuard<'a, ()>,
}

impl Drop for Tagged<'_> {
    fn drop(&mut self) {
        self.session.corr_id.set(None);
    }
}

/// A request the server refused for its authorization: 401 (no token, or
/// one it no longer takes) or 403 `insufficient_scope`, with the
/// `WWW-Authenticate` challenge to authorize with.
#[derive(Debug, thiserror::Error)]
#[error("{what} was refused: the server answered {status} ({})", if *.status == 401 { "authorization required" } else { "insufficient scope" })]
pub struct Challenged {
    pub what: String,
    pub status: u16,
    pub www_authenticate: String,
}

/// The error of a failed request: [`Challenged`] where the server refused
/// it for its authorization.
fn failed(what: &str, e: &rmcp::ServiceError) -> anyhow::Error {
    if let rmcp::ServiceError::TransportSend(t) = e
        && let Some(h) = t.error.downcast_ref::<super::unreachable::HttpError>()
    {
        let status = match h {
            super::unreachable::HttpError::AuthRequired(_) => Some(401),
            super::unreachable::HttpError::InsufficientScope(_) => Some(403),
            _ => None,
        };
        if let (Some(status), Some(header)) = (status, h.auth_challenge()) {
            return anyhow::Error::new(Challenged {
                what: what.to_owned(),
                status,
                www_authenticate: header.to_owned(),
            });
        }
    }
    anyhow::anyhow!("{what} failed: {e}")
}

/// Why a `tools/call` has no result: the session's error (a JSON-RPC
/// error from the server, a transport that failed), or what went wrong
/// around it, in words (no answer in time, a task that failed or never
/// finished).
#[derive(Debug)]
pub enum CallFailed {
    Service(rmcp::ServiceError),
    Said(String),
}

/// What the handshake established.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerFacts {
    pub era: Era,
    pub negotiated_version: String,
    pub server_info: Option<serde_json::Value>,
    pub capabilities: serde_json::Value,
}

/// The streamable HTTP client's configuration for `h`: its headers and
/// token, and the same bounds on bodies and events as the raw probes.
fn http_config(h: &HttpTarget) -> anyhow::Result<StreamableHttpClientTransportConfig> {
    let mut custom = HashMap::new();
    for (k, v) in &h.headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| anyhow::anyhow!("bad header name {k:?}: {e}"))?;
        let value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|e| anyhow::anyhow!("bad value for header {k:?}: {e}"))?;
        custom.insert(name, value);
    }
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(h.url.as_str()).custom_headers(custom);
    // rmcp reads bodies and events within these, as the raw probes do.
    config.max_json_response_size = crate::http::MAX_BODY;
    config.max_sse_event_size = super::frames::MAX_EVENT;
    // With a login, rmcp's AuthClient supplies (and refreshes) the token.
    if let Some(token) = h.bearer.as_ref().filter(|_| !h.login) {
        config = config.auth_header(token.clone());
    }
    Ok(config)
}

impl Session {
    /// Connect and complete the handshake within `timeout`: modern
    /// `server/discover` first; when that fails (a legacy-only server may
    /// answer discover with an unsupported-version error rather than
    /// -32601), a fresh connection with the legacy `initialize`.
    pub async fn connect(
        target: &Target,
        tap: Tap,
        corr_id: Option<String>,
        timeout: Duration,
    ) -> anyhow::Result<Session> {
        Self::connect_serving(target, tap, corr_id, timeout, InputDesk::default()).await
    }

    /// [`Session::connect`], declaring that the session answers the
    /// server's requests for input that `desk` serves, answered and
    /// counted there (one desk may outlive many sessions: a run's server
    /// started again over a restored copy keeps its counts).
    pub async fn connect_serving(
        target: &Target,
        tap: Tap,
        corr_id: Option<String>,
        timeout: Duration,
        desk: InputDesk,
    ) -> anyhow::Result<Session> {
        let auto = ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        };
        let modern = match Self::connect_with(
            target,
            tap.clone(),
            corr_id.clone(),
            timeout,
            auto,
            desk.clone(),
        )
        .await
        {
            Ok(session) => return Ok(session),
            Err(modern) => modern,
        };
        // No program to start, nothing listening: a legacy handshake cannot
        // fare better, so none is made (and none is taped).
        if !modern.retry {
            return Err(modern.into());
        }
        tap.event(
            "fitness.fallback",
            json!({"to": "initialize", "why": modern.sentence}),
            corr_id.as_deref(),
        );
        Self::connect_with(
            target,
            tap,
            corr_id,
            timeout,
            ClientLifecycleMode::Initialize,
            desk,
        )
        .await
        .map_err(|legacy| Unreachable::both(&modern, legacy).into())
    }

    /// Connect as a client of the 2025-11-25 revision does: `initialize`
    /// only, no `server/discover` first (the conformance suite's client
    /// scenarios are of that revision).
    pub async fn connect_initialize(
        target: &Target,
        tap: Tap,
        timeout: Duration,
    ) -> anyhow::Result<Session> {
        Self::connect_with(
            target,
            tap,
            None,
            timeout,
            ClientLifecycleMode::Initialize,
            InputDesk::default(),
        )
        .await
        .map_err(Into::into)
    }

    async fn connect_with(
        target: &Target,
        tap: Tap,
        corr_id: Option<String>,
        timeout: Duration,
        lifecycle: ClientLifecycleMode,
        desk: InputDesk,
    ) -> Result<Session, Unreachable> {
        let initialize = matches!(lifecycle, ClientLifecycleMode::Initialize);
        let corr_id = SharedCorrId::new(corr_id.as_deref());
        let answering = Answering {
            desk: desk.clone(),
            tap: tap.clone(),
            corr_id: corr_id.clone(),
        };
        let client = FitnessClient::new(tap.clone(), timeout, initialize, answering.clone());
        match target {
            Target::Stdio(s) => {
                let (pipe, mut child) = StdioChild::spawn_shared(s, tap, corr_id.clone())?;
                let served =
                    tokio::time::timeout(timeout, client.serve_with_lifecycle(pipe, lifecycle))
                        .await;
                let command = format!("`{}`", s.command_line().join(" "));
                let mut why = match served {
                    Ok(Ok(service)) => {
                        return Ok(Session {
                            service,
                            child: Some(child),
                            timeout,
                            corr_id,
                            calls: tokio::sync::Mutex::new(()),
                            auth_lost: std::sync::Mutex::new(None),
                            desk,
                            answering,
                            tracer: std::sync::Mutex::new(None),
                        });
                    }
                    Ok(Err(e)) => Unreachable::handshake(&command, &e),
                    Err(_) => Unreachable::silent_program(&command, timeout),
                };
                let stderr = child.stderr_tail();
                child.kill().await;
                why.sentence.push_str(&stderr_note(&stderr));
                Err(why)
            }
            Target::Http(h) => {
                let unbuilt = |e: anyhow::Error| Unreachable::new(format!("{e:#}"), false);
                let config = http_config(h).map_err(unbuilt)?;
                let http = mcp_http_client().map_err(unbuilt)?;
                let served = if h.login {
                    let manager = crate::auth::manager_for(&h.url).await.map_err(unbuilt)?;
                    let transport = StreamableHttpClientTransport::with_client(
                        rmcp::transport::auth::AuthClient::new(http, manager),
                        config,
                    );
                    let tapped = TappedTransport::new(transport, tap, corr_id.clone());
                    tokio::time::timeout(timeout, client.serve_with_lifecycle(tapped, lifecycle))
                        .await
                } else {
                    let transport = StreamableHttpClientTransport::with_client(http, config);
                    let tapped = TappedTransport::new(transport, tap, corr_id.clone());
                    tokio::time::timeout(timeout, client.serve_with_lifecycle(tapped, lifecycle))
                        .await
                };
                let service = served
                    .map_err(|_| Unreachable::silent_url(&h.url, timeout))?
                    .map_err(|e| Unreachable::handshake(&h.url, &e))?;
                Ok(Session {
                    service,
                    child: None,
                    timeout,
                    corr_id,
                    calls: tokio::sync::Mutex::new(()),
                    auth_lost: std::sync::Mutex::new(None),
                    desk,
                    answering,
                    tracer: std::sync::Mutex::new(None),
                })
            }
        }
    }

    pub fn facts(&self) -> Option<ServerFacts> {
        let info = self.service.peer_info()?;
        let version = info.protocol_version.to_string();
        Some(ServerFacts {
            era: Era::of(&version),
            negotiated_version: version,
            server_info: info
                .server_info
                .as_ref()
                .and_then(|s| serde_json::to_value(s).ok()),
            capabilities: serde_json::to_value(&info.capabilities).unwrap_or_default(),
        })
    }

    /// A request within the timeout; a failure noted ([`Session::note_failure`]).
    async fn bounded<T>(
        &self,
        what: &str,
        request: impl std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    ) -> anyhow::Result<T> {
        tokio::time::timeout(self.timeout, request)
            .await
            .map_err(|_| anyhow::anyhow!("{what} got no answer within {:?}", self.timeout))?
            .map_err(|e| self.note_failure(what, &e))
    }

    /// Every tool, all pages, within the timeout.
    pub async fn list_tools(&self) -> anyhow::Result<Vec<Tool>> {
        self.bounded("tools/list", self.service.list_all_tools())
            .await
    }

    /// One `tools/call`, each request within the timeout, as a current
    /// client makes it ([`Session::call`]); a failure in words.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Map<String, serde_json::Value>,
    ) -> anyhow::Result<CallToolResult> {
        let params = CallToolRequestParams::new(name.to_owned()).with_arguments(arguments);
        self.call(params).await.map_err(|e| match e {
            CallFailed::Service(e) => self.note_failure(&format!("tools/call {name}"), &e),
            CallFailed::Said(said) => anyhow::anyhow!(said),
        })
    }

    /// One `tools/call` as a current client makes it, each request within
    /// the timeout: an `InputRequiredResult` is answered and the call made
    /// again with the answers (at most [`INPUT_ROUNDS`] times), and a task
    /// the server made of the call is polled to its end, cancelled at its
    /// deadline ([`super::tasks`]).
    pub async fn call(
        &self,
        mut params: CallToolRequestParams,
    ) -> Result<CallToolResult, CallFailed> {
        // The trial's trace, a span for this call, in the call's `_meta`.
        let tracer = self
            .tracer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let span = tracer
            .as_ref()
            .zip(self.corr_id.get())
            .map(|(t, corr)| t.open(&corr, &format!("tools/call {}", params.name)));
        if let Some(span) = &span {
            let mut meta = params.meta.take().map(|m| m.0.0).unwrap_or_default();
            meta.insert("traceparent".into(), json!(span.traceparent()));
            params.meta = Some(meta.into());
        }
        let result = self.call_untraced(params).await;
        if let (Some(t), Some(span)) = (tracer, span) {
            let ok = result.as_ref().is_ok_and(|r| r.is_error != Some(true));
            t.finish(span, ok);
        }
        result
    }

    /// [`Session::call`] without its span.
    async fn call_untraced(
        &self,
        mut params: CallToolRequestParams,
    ) -> Result<CallToolResult, CallFailed> {
        let name = params.name.to_string();
        for _ in 0..INPUT_ROUNDS {
            let answered = tokio::time::timeout(
                self.timeout,
                self.service.peer().call_tool_once(params.clone()),
            )
            .await
            .map_err(|_| {
                CallFailed::Said(format!(
                    "tools/call {name} got no answer within {:?}",
                    self.timeout
                ))
            })?
            .map_err(CallFailed::Service)?;
            match answered {
                CallToolResponse::Complete(result) => return Ok(result),
                CallToolResponse::InputRequired(asked) => {
                    let requests = serde_json::to_value(&asked.input_requests)
                        .ok()
                        .and_then(|v| v.as_object().cloned())
                        .unwrap_or_default();
                    if requests.is_empty() && asked.request_state.is_none() {
                        return Err(CallFailed::Said(format!(
                            "tools/call {name} asked for input and named none"
                        )));
                    }
                    let answers = self.answering.fulfil(&requests).await;
                    params.input_responses = (!answers.is_empty())
                        .then(|| serde_json::from_value(serde_json::Value::Object(answers)).ok())
                        .flatten();
                    params.request_state = asked.request_state;
                }
                CallToolResponse::Task(created) => {
                    return super::tasks::await_task(
                        self.service.peer(),
                        &self.answering,
                        created.task,
                        self.timeout,
                    )
                    .await
                    .map_err(|e| CallFailed::Said(format!("tools/call {name}: {e:#}")));
                }
                _ => {
                    return Err(CallFailed::Said(format!(
                        "tools/call {name} answered a result of an unknown kind"
                    )));
                }
            }
        }
        Err(CallFailed::Said(format!(
            "tools/call {name} asked for input {INPUT_ROUNDS} times without an answer"
        )))
    }

    /// Carry `tracer`'s trace context on every call from now on.
    pub fn set_tracer(&self, tracer: Option<Tracer>) {
        *self
            .tracer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = tracer;
    }

    /// The longest a call may take: a task the server makes of it is
    /// polled for [`super::tasks::TASK_TIMEOUTS`] request timeouts.
    pub fn call_limit(&self) -> Duration {
        self.timeout * (super::tasks::TASK_TIMEOUTS + 1)
    }

    /// Every resource the server lists (all pages), as JSON objects.
    pub async fn list_resources(&self) -> anyhow::Result<Vec<serde_json::Value>> {
        let listed = self
            .bounded("resources/list", self.service.list_all_resources())
            .await?;
        Ok(as_json(&listed))
    }

    /// Every resource template the server lists, as JSON objects.
    pub async fn list_resource_templates(&self) -> anyhow::Result<Vec<serde_json::Value>> {
        let listed = self
            .bounded(
                "resources/templates/list",
                self.service.list_all_resource_templates(),
            )
            .await?;
        Ok(as_json(&listed))
    }

    /// One `resources/read`: the result as JSON (`{contents: [...]}`).
    pub async fn read_resource(&self, uri: &str) -> anyhow::Result<serde_json::Value> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_owned());
        let read = self
            .bounded("resources/read", self.service.read_resource(params))
            .await?;
        Ok(serde_json::to_value(&read).unwrap_or_default())
    }

    /// Every prompt the server lists, as JSON objects.
    pub async fn list_prompts(&self) -> anyhow::Result<Vec<serde_json::Value>> {
        let listed = self
            .bounded("prompts/list", self.service.list_all_prompts())
            .await?;
        Ok(as_json(&listed))
    }

    /// Wait for the session's turn, then tag every wire line with `corr_id`
    /// until the guard drops. Trials in flight together share one session:
    /// their model calls overlap, their tool calls take turns, so each
    /// request and its response carry the id of the trial that made it.
    pub async fn tagged(&self, corr_id: &str) -> Tagged<'_> {
        let turn = self.calls.lock().await;
        self.corr_id.set(Some(corr_id));
        Tagged {
            session: self,
            _turn: turn,
        }
    }

    /// The corr_id written on this session's wire lines from now on (the
    /// stages that run alone: generation, the random arm). One cell per
    /// session: trials in flight together use [`Session::tagged`].
    pub fn set_corr_id(&self, corr_id: Option<&str>) {
        self.corr_id.set(corr_id);
    }

    /// The corr_id wire lines carry now.
    pub fn corr_id(&self) -> Option<std::sync::Arc<str>> {
        self.corr_id.get()
    }

    /// The server's requests for input: who answers them from now on,
    /// and how many there were.
    pub fn input(&self) -> &InputDesk {
        &self.desk
    }

    /// The requests for input the server made on this session.
    pub fn input_counts(&self) -> InputCounts {
        self.desk.counts()
    }

    /// The timeout that bounds every request.
    /// The wire tape this session's frames go to: a second session of the
    /// same run (a fresh process to read again from) tapes there too.
    pub fn tap(&self) -> Tap {
        self.service.service().tap.clone()
    }

    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How many times a list_changed notification led to a re-list.
    pub fn relists(&self) -> u64 {
        self.service
            .service()
            .relists
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Tool names from the latest re-list, if one happened.
    pub fn relisted_tools(&self) -> Option<Vec<String>> {
        self.service
            .service()
            .tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Why the server is gone, when it is: the connection closed under the
    /// client (a stdio child that exited or closed stdout, an HTTP session
    /// the transport gave up on), with the child's last stderr lines.
    pub fn lost(&self) -> Option<String> {
        if let Some(why) = self
            .auth_lost
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
        {
            return Some(why);
        }
        if !self.service.peer().is_transport_closed() {
            return None;
        }
        let stderr = self
            .stderr_tail()
            .map(|t| stderr_note(&t))
            .unwrap_or_default();
        Some(format!(
            "lost the server: the server closed the connection{stderr}"
        ))
    }

    /// Note a request that failed: a 401 in the middle of the session
    /// means it lost its authorization ([`Session::lost`]).
    pub fn note_failure(&self, what: &str, e: &rmcp::ServiceError) -> anyhow::Error {
        let error = failed(what, e);
        if let Some(c) = error.downcast_ref::<Challenged>()
            && c.status == 401
        {
            *self
                .auth_lost
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(format!(
                "lost authorization (the server stopped taking the credential): {what} was \
                 refused with 401 Unauthorized in the middle of the run, a login's token \
                 refreshed once first; log in again with fitness login"
            ));
        }
        error
    }

    /// The tail of the child's stderr (stdio only).
    pub fn stderr_tail(&self) -> Option<String> {
        self.child.as_ref().map(StdioChild::stderr_tail)
    }

    /// End the session and kill the child, within a bounded time.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(Duration::from_secs(3), self.service.close()).await;
        if let Some(child) = self.child.as_mut() {
            child.kill().await;
        }
    }
}

/// Listed items as JSON objects.
fn as_json<T: serde::Serialize>(items: &[T]) -> Vec<serde_json::Value> {
    items
        .iter()
        .filter_map(|i| serde_json::to_value(i).ok())
        .collect()
}

fn stderr_note(stderr: &str) -> String {
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    if tail.is_empty() {
        String::new()
    } else {
        let lines: Vec<&str> = tail.into_iter().rev().collect();
        format!("; its stderr ends with:\n  {}", lines.join("\n  "))
    }
}

/// The client rmcp's streamable HTTP transport uses: rmcp's own defaults (no
/// idle pooling; only same-origin 307/308 redirects) with our TLS trust.
pub fn mcp_http_client() -> anyhow::Result<reqwest::Client> {
    crate::http::http_client_builder()?
        .pool_max_idle_per_host(0)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            let keeps_body = matches!(
                attempt.status(),
                reqwest::StatusCode::TEMPORARY_REDIRECT | reqwest::StatusCode::PERMANENT_REDIRECT
            );
            let same_origin = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if !keeps_body || !same_origin {
                attempt.stop()
            } else if attempt.previous().len() > 10 {
                attempt.error("exceeded 10 redirects")
            } else {
                attempt.follow()
            }
        }))
        .build()
        .map_err(|e| anyhow::anyhow!("failed to build the HTTP client: {e}"))
}
