//! One probe run: connect, list tools, optionally call tools, run the probes,
//! and gather what `fitness probe` prints.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::connect::{Era, Session, Target};
use super::probes::{self, ProbeContext, ProbeResult};
use super::raw::{RawHttp, initialize_frame, request_frame};
use super::tap::Tap;

/// What the server is, as far as the handshake and a raw exchange tell.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerSummary {
    pub era: Era,
    pub negotiated_version: String,
    pub server_info: Option<Value>,
    /// `stdio`, `streamable-http+sse` or `streamable-http+json`.
    pub transport_shape: String,
    pub sessionful: Option<bool>,
    pub capabilities: Value,
    /// Re-lists done on `notifications/tools/list_changed`.
    pub relists: u64,
}

/// One tool call requested on the command line.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallOutcome {
    pub tool: String,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    pub detail: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub server: ServerSummary,
    pub tools: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<CallOutcome>,
    pub probes: Vec<ProbeResult>,
}

/// Connect and probe. An error means the server could not be reached.
pub async fn probe(
    target: &Target,
    tap: Tap,
    timeout: Duration,
    calls: &[(String, Map<String, Value>)],
) -> anyhow::Result<Report> {
    let session = Session::connect(
        target,
        tap.clone(),
        Some(probes::corr_id("connect")),
        timeout,
    )
    .await?;
    let Some(facts) = session.facts() else {
        session.close().await;
        anyhow::bail!("the handshake finished without server information");
    };
    let listed = match session.list_tools().await {
        Ok(tools) => tools,
        Err(e) => {
            tap.event(
                "fitness.error",
                json!({"what": format!("{e:#}")}),
                Some("probe::connect"),
            );
            Vec::new()
        }
    };
    let tools: Vec<String> = listed.iter().map(|t| t.name.to_string()).collect();
    // A probe that sends a tools/call sends it to a tool that only reads: a
    // server that wrongly serves the call must not change anything.
    let read_only_tool = listed
        .iter()
        .find(|t| !crate::access::may_write(t))
        .map(|t| t.name.to_string());
    let call_outcomes = call_each(&session, calls).await;
    let relists = session.relists();
    session.close().await;

    let (transport_shape, sessionful) = transport_shape(target, &tap, timeout, &facts).await?;

    let ctx = ProbeContext {
        target: target.clone(),
        tap: tap.clone(),
        era: facts.era,
        negotiated_version: facts.negotiated_version.clone(),
        timeout: timeout.min(Duration::from_secs(10)),
        tools: tools.clone(),
        read_only_tool,
        capabilities: facts.capabilities.clone(),
    };
    let probe_results = probes::run_all(&ctx).await;
    Ok(Report {
        server: ServerSummary {
            era: facts.era,
            negotiated_version: facts.negotiated_version,
            server_info: facts.server_info,
            transport_shape,
            sessionful,
            capabilities: facts.capabilities,
            relists,
        },
        tools,
        calls: call_outcomes,
        probes: probe_results,
    })
}

/// Call each named tool once, as the operator asked.
async fn call_each(session: &Session, calls: &[(String, Map<String, Value>)]) -> Vec<CallOutcome> {
    let mut call_outcomes = Vec::with_capacity(calls.len());
    for (name, args) in calls {
        call_outcomes.push(match session.call_tool(name, args.clone()).await {
            Ok(result) => CallOutcome {
                tool: name.clone(),
                ok: true,
                is_error: result.is_error,
                detail: first_text(&result),
            },
            Err(e) => CallOutcome {
                tool: name.clone(),
                ok: false,
                is_error: None,
                detail: format!("{e:#}"),
            },
        });
    }
    call_outcomes
}

/// How the server answers over its transport (for HTTP, asked once more on
/// a raw request: SSE or JSON, with a session or not).
async fn transport_shape(
    target: &Target,
    tap: &Tap,
    timeout: Duration,
    facts: &super::connect::ServerFacts,
) -> anyhow::Result<(String, Option<bool>)> {
    Ok(match target {
        Target::Stdio(_) => ("stdio".to_owned(), Some(true)),
        Target::Http(h) => {
            let raw = RawHttp::new(h, tap.clone(), timeout)?;
            let frame = match facts.era {
                Era::Legacy => initialize_frame("probe-shape", &facts.negotiated_version),
                Era::Modern => {
                    request_frame("probe-shape", "server/discover", json!({}), Era::Modern)
                }
            };
            let got = raw
                .post(&frame, Some("probe-shape"), &[], "probe::transport_shape")
                .await;
            let shape = match got.content_type.as_deref() {
                Some(c) if c.starts_with("text/event-stream") => "streamable-http+sse",
                Some(c) if c.starts_with("application/json") => "streamable-http+json",
                _ => "streamable-http",
            };
            (
                shape.to_owned(),
                got.status.map(|_| got.session_id.is_some()),
            )
        }
    })
}

fn first_text(result: &rmcp::model::CallToolResult) -> String {
    let value = serde_json::to_value(result).unwrap_or_default();
    let text = value
        .get("content")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find_map(|b| b.get("text").and_then(Value::as_str)))
        .unwrap_or("");
    text.chars().take(200).collect()
}

impl Report {
    /// The human table.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let name = self
            .server
            .server_info
            .as_ref()
            .and_then(|s| s.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("(unnamed)");
        let era = match self.server.era {
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        };
        out.push_str(&format!(
            "server   {name}, protocol {} ({era} era), {}\n",
            self.server.negotiated_version, self.server.transport_shape
        ));
        out.push_str(&format!(
            "tools    {} ({})\n",
            self.tools.len(),
            self.tools.join(", ")
        ));
        for call in &self.calls {
            out.push_str(&format!(
                "call     {} {}: {}\n",
                call.tool,
                if call.ok && call.is_error != Some(true) {
                    "ok"
                } else {
                    "failed"
                },
                call.detail
            ));
        }
        out.push('\n');
        let width = self.probes.iter().map(|p| p.id.len()).max().unwrap_or(0);
        for p in &self.probes {
            out.push_str(&format!(
                "{:<width$}  {:<7}  {}\n",
                p.id,
                p.status(),
                p.detail
            ));
        }
        out
    }
}
