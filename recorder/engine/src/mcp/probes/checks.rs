//! The probes themselves, one function each.

use fitness_shared::tape::jsonrpc::error_text;
use serde_json::{Value, json};

use super::super::connect::Era;
use super::super::raw::{Reply, initialize_frame, modern_meta, request_frame};
use super::conn::{ProbeContext, RawConn};
use super::result::{ProbeResult, corr_id};

/// The bogus revision a server must not echo back.
pub const BOGUS_VERSION: &str = "1999-01-01";
/// The current revision of the protocol.
pub const CURRENT_VERSION: &str = "2026-07-28";
const METHOD_NOT_FOUND: i64 = -32601;
const HEADER_MISMATCH: i64 = -32020;

/// Run every probe, in a fixed order.
pub async fn run_all(ctx: &ProbeContext) -> Vec<ProbeResult> {
    vec![
        spec_currency(ctx),
        bogus_version(ctx).await,
        header_mismatch(ctx).await,
        method_header_mismatch(ctx).await,
        server_discover(ctx),
        cache_hints(ctx).await,
        deprecation_surface(ctx).await,
        origin_check(ctx).await,
        dns_rebinding(ctx).await,
        unknown_method(ctx).await,
    ]
}

fn spec_currency(ctx: &ProbeContext) -> ProbeResult {
    const ID: &str = "spec_currency";
    let v = &ctx.negotiated_version;
    let evidence = vec![corr_id("connect")];
    let result = if v == CURRENT_VERSION {
        ProbeResult::pass(
            ID,
            format!("negotiated {v}, the current revision (modern era)"),
        )
    } else {
        ProbeResult::fail(
            ID,
            format!(
                "negotiated {v} ({:?} era) when offered {CURRENT_VERSION}",
                ctx.era
            )
            .to_lowercase(),
        )
    };
    result.with_evidence(evidence)
}

fn server_discover(ctx: &ProbeContext) -> ProbeResult {
    const ID: &str = "server_discover";
    let evidence = vec![corr_id("connect")];
    match ctx.era {
        Era::Modern => ProbeResult::pass(ID, "server/discover answered; the session is modern"),
        Era::Legacy => ProbeResult::fail(
            ID,
            "server/discover was refused; the client fell back to initialize",
        ),
    }
    .with_evidence(evidence)
}

async fn open(
    ctx: &ProbeContext,
    id: &'static str,
    handshake: bool,
) -> Result<RawConn, ProbeResult> {
    let conn = if handshake {
        RawConn::open(ctx, id).await
    } else {
        RawConn::open_bare(ctx, id)
    };
    conn.map_err(|e| ProbeResult::unknown(id, format!("could not open a probe connection: {e:#}")))
}

fn describe(reply: &Reply) -> String {
    match reply {
        Reply::Response(v) => match v.get("error") {
            Some(e) => format!("error {}", error_text(e)),
            None => "a result".into(),
        },
        Reply::Batch(items) => format!("a batch of {} responses", items.len()),
        Reply::Silence(why) => why.clone(),
    }
}

async fn bogus_version(ctx: &ProbeContext) -> ProbeResult {
    const ID: &str = "bogus_version";
    let mut conn = match open(ctx, ID, false).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let answer = match ctx.era {
        Era::Legacy => {
            conn.request(
                &initialize_frame("probe-bogus", BOGUS_VERSION),
                "probe-bogus",
                &[],
            )
            .await
        }
        Era::Modern => {
            let mut meta = modern_meta();
            meta["io.modelcontextprotocol/protocolVersion"] = json!(BOGUS_VERSION);
            let frame = json!({"jsonrpc":"2.0","id":"probe-bogus","method":"server/discover",
                               "params":{"_meta": meta}})
            .to_string();
            let header = [("mcp-protocol-version", BOGUS_VERSION.to_owned())];
            conn.request(&frame, "probe-bogus", &header).await
        }
    };
    conn.close().await;
    let echoed = |v: &Value| {
        v.get("protocolVersion").and_then(Value::as_str) == Some(BOGUS_VERSION)
            || v.get("supportedVersions")
                .and_then(Value::as_array)
                .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(BOGUS_VERSION)))
    };
    match &answer.reply {
        Reply::Response(v) => match v.get("result") {
            Some(result) if echoed(result) => ProbeResult::fail(
                ID,
                format!("echoed {BOGUS_VERSION} back instead of counter-offering"),
            ),
            Some(result) => {
                let offered = result
                    .get("protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .or_else(|| result.get("supportedVersions").map(Value::to_string))
                    .unwrap_or_else(|| "no version".into());
                ProbeResult::pass(ID, format!("counter-offered {offered} for {BOGUS_VERSION}"))
            }
            None => ProbeResult::pass(
                ID,
                format!("refused {BOGUS_VERSION} with {}", describe(&answer.reply)),
            ),
        },
        Reply::Batch(_) => ProbeResult::fail(ID, "answered a single request with a batch"),
        Reply::Silence(why) => {
            ProbeResult::unknown(ID, format!("no answer to {BOGUS_VERSION}: {why}"))
        }
    }
}

async fn header_mismatch(ctx: &ProbeContext) -> ProbeResult {
    let name = ctx.read_only_tool.clone().unwrap_or_default();
    header_probe(
        ctx,
        "header_mismatch",
        "Mcp-Name",
        [
            ("mcp-method", "tools/call".to_owned()),
            ("mcp-name", "fitness-not-the-tool".to_owned()),
        ],
        &name,
    )
    .await
}

/// The method header disagreeing with the body: a `tools/call` sent with
/// `Mcp-Method: tools/list` (and the right `Mcp-Name`), which a 2026-07-28
/// server must refuse as it refuses a mismatched name.
async fn method_header_mismatch(ctx: &ProbeContext) -> ProbeResult {
    let name = ctx.read_only_tool.clone().unwrap_or_default();
    header_probe(
        ctx,
        "method_header_mismatch",
        "Mcp-Method",
        [
            ("mcp-method", "tools/list".to_owned()),
            ("mcp-name", name.clone()),
        ],
        &name,
    )
    .await
}

/// A `tools/call` of the first tool that only reads, whose `headers`
/// disagree with its body
/// in `header`: pass when refused (HTTP 400 or -32020), fail when served.
async fn header_probe(
    ctx: &ProbeContext,
    id: &'static str,
    header: &str,
    headers: [(&str, String); 2],
    tool: &str,
) -> ProbeResult {
    if ctx.http().is_none() {
        return ProbeResult::unknown(
            id,
            format!("stdio carries no {header} header; not applicable"),
        );
    }
    if ctx.era == Era::Legacy {
        return ProbeResult::unknown(
            id,
            format!("legacy era: {header} headers are a 2026-07-28 rule"),
        );
    }
    if tool.is_empty() {
        return ProbeResult::unknown(
            id,
            "the server lists no tool that only reads, and a probe never calls one that may write",
        );
    }
    let mut conn = match open(ctx, id, true).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let request_id = format!("probe-{id}");
    let frame = request_frame(
        &request_id,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
        Era::Modern,
    );
    let answer = conn.request(&frame, &request_id, &headers).await;
    conn.close().await;
    let status = answer.status.unwrap_or(0);
    if status == 400 || answer.reply.error_code() == Some(HEADER_MISMATCH) {
        ProbeResult::pass(
            id,
            format!(
                "mismatched {header} refused (HTTP {status}, {})",
                describe(&answer.reply)
            ),
        )
    } else if answer.status.is_none() {
        ProbeResult::unknown(id, format!("no HTTP answer: {}", describe(&answer.reply)))
    } else {
        ProbeResult::fail(
            id,
            format!(
                "mismatched {header} accepted: HTTP {status}, {}",
                describe(&answer.reply)
            ),
        )
    }
}

async fn cache_hints(ctx: &ProbeContext) -> ProbeResult {
    const ID: &str = "cache_hints";
    let mut conn = match open(ctx, ID, true).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let frame = request_frame("probe-cache", "tools/list", json!({}), ctx.era);
    let answer = conn.request(&frame, "probe-cache", &[]).await;
    conn.close().await;
    let Some(result) = answer.reply.result() else {
        return ProbeResult::unknown(ID, format!("tools/list gave {}", describe(&answer.reply)));
    };
    let ttl = result.get("ttlMs").and_then(Value::as_u64);
    let scope = result.get("cacheScope").and_then(Value::as_str);
    match (ttl, scope) {
        (Some(_), Some("public")) if ctx.authenticated() => ProbeResult::fail(
            ID,
            "tools/list is cacheScope public although the request was authenticated",
        ),
        (Some(ttl), Some(scope)) => ProbeResult::pass(
            ID,
            format!("tools/list carries ttlMs {ttl} and cacheScope {scope}"),
        ),
        _ if ctx.era == Era::Legacy => ProbeResult::unknown(
            ID,
            "legacy era: ttlMs/cacheScope are 2026-07-28 fields; none sent",
        ),
        _ => ProbeResult::fail(ID, "tools/list lacks ttlMs or cacheScope"),
    }
}

async fn deprecation_surface(ctx: &ProbeContext) -> ProbeResult {
    const ID: &str = "deprecation_surface";
    // A server that drops a batch says so by silence: a ping sent behind
    // it tells that at once (and the wait is short in any case).
    let mut short = ctx.clone();
    short.timeout = ctx.timeout.min(std::time::Duration::from_secs(3));
    let ctx = &short;
    let mut conn = match open(ctx, ID, true).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let single = request_frame("probe-batch", "ping", json!({}), ctx.era);
    let batch = format!("[{single}]");
    let answer = conn
        .request_or_barrier(&batch, "probe-batch", ctx.era)
        .await;
    conn.close().await;
    let mut findings = Vec::new();
    let mut checked = Vec::new();
    match &answer.reply {
        Reply::Batch(_) => {
            findings.push("accepts JSON-RPC batches (removed in 2025-06-18)".to_owned())
        }
        Reply::Response(v) if v.get("result").is_some() => {
            findings.push("answered a batched request (removed in 2025-06-18)".to_owned())
        }
        Reply::Response(_) => checked.push(format!("batch refused ({})", describe(&answer.reply))),
        Reply::Silence(_) if answer.status.is_some_and(|s| s >= 400) => checked.push(format!(
            "batch refused (HTTP {})",
            answer.status.unwrap_or(0)
        )),
        Reply::Silence(why) => checked.push(format!("batch not answered ({why})")),
    }
    if let Some(h) = ctx.http() {
        let sse = sse_url(&h.url);
        let Ok(http) = super::super::raw::RawHttp::new(h, ctx.tap.clone(), ctx.timeout) else {
            return ProbeResult::unknown(ID, "could not build an HTTP client");
        };
        let got = http.get(&sse, &corr_id(ID)).await;
        let is_stream = got
            .content_type
            .as_deref()
            .is_some_and(|c| c.starts_with("text/event-stream"));
        if got.status == Some(200) && is_stream {
            findings.push(format!("offers the deprecated HTTP+SSE endpoint at {sse}"));
        } else {
            checked.push("no HTTP+SSE endpoint".into());
        }
    }
    let (removed, notes) = removed_vocabulary(ctx.era, &ctx.capabilities);
    findings.extend(removed);
    checked.extend(notes);
    let mut evidence = vec![corr_id(ID)];
    evidence.push(corr_id("connect"));
    let result = if !findings.is_empty() {
        ProbeResult::fail(ID, findings.join("; "))
    } else {
        ProbeResult::pass(ID, checked.join("; "))
    };
    result.with_evidence(evidence)
}

/// Vocabulary the negotiated revision removed, as the server's declared
/// capabilities show it (findings), and vocabulary that is only deprecated
/// (notes, not findings). Batching and HTTP+SSE are checked on the wire.
///
/// - 2026-07-28 made `resources/subscribe` / `resources/unsubscribe`
///   legacy-only (`subscriptions/listen` replaces them), so a modern session
///   advertising `resources.subscribe` offers removed vocabulary.
/// - SEP-2577 deprecates logging, sampling and roots without removing them.
/// - A legacy session's removed vocabulary up to 2025-11-25 is batching and
///   the HTTP+SSE transport, both probed directly.
pub fn removed_vocabulary(era: Era, capabilities: &Value) -> (Vec<String>, Vec<String>) {
    let mut findings = Vec::new();
    let mut notes = Vec::new();
    let subscribe = capabilities
        .pointer("/resources/subscribe")
        .and_then(Value::as_bool)
        == Some(true);
    match era {
        Era::Modern if subscribe => findings.push(
            "advertises resources.subscribe, removed in 2026-07-28 (subscriptions/listen replaces it)"
                .to_owned(),
        ),
        Era::Modern => notes.push("no removed 2026-07-28 vocabulary declared".to_owned()),
        Era::Legacy => {}
    }
    if era == Era::Modern && capabilities.get("logging").is_some() {
        notes.push("declares logging (deprecated by SEP-2577, not removed)".to_owned());
    }
    (findings, notes)
}

/// The legacy HTTP+SSE endpoint sits beside the MCP endpoint at `/sse`.
fn sse_url(url: &str) -> String {
    match url.rfind('/') {
        Some(i) if i > url.find("://").map_or(0, |p| p + 2) => format!("{}/sse", &url[..i]),
        _ => format!("{}/sse", url.trim_end_matches('/')),
    }
}

/// A foreign `Origin` with a valid `Host`: what a browser page on another
/// site sends to a local server it reaches by its real address.
async fn origin_check(ctx: &ProbeContext) -> ProbeResult {
    let headers = [("origin", "http://fitness-rebinding.invalid".to_owned())];
    foreign_request(ctx, "origin", "a foreign Origin", &headers).await
}

/// Both `Host` and `Origin` foreign (`evil.example.com`): what the official
/// conformance suite's dns-rebinding-protection scenario sends, a page that
/// rebound its own name to the server's address. A server that checks only
/// one of the two headers passes one of these probes and fails the other.
async fn dns_rebinding(ctx: &ProbeContext) -> ProbeResult {
    let headers = [
        ("host", "evil.example.com".to_owned()),
        ("origin", "http://evil.example.com".to_owned()),
    ];
    foreign_request(ctx, "dns_rebinding", "a foreign Host and Origin", &headers).await
}

/// Send the session's first request with `headers` on a fresh connection:
/// 4xx passes, 2xx fails.
async fn foreign_request(
    ctx: &ProbeContext,
    id: &'static str,
    what: &str,
    headers: &[(&str, String)],
) -> ProbeResult {
    if ctx.http().is_none() {
        return ProbeResult::unknown(id, "stdio has no Host or Origin; not applicable");
    }
    let mut conn = match open(ctx, id, false).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let corr = format!("probe-{id}");
    let frame = match ctx.era {
        Era::Legacy => initialize_frame(&corr, &ctx.negotiated_version),
        Era::Modern => request_frame(&corr, "server/discover", json!({}), Era::Modern),
    };
    let answer = conn.request(&frame, &corr, headers).await;
    conn.close().await;
    match answer.status {
        Some(s) if (400..500).contains(&s) => {
            ProbeResult::pass(id, format!("{what} was refused with HTTP {s}"))
        }
        Some(s) if (200..300).contains(&s) => {
            ProbeResult::fail(id, format!("{what} was accepted (HTTP {s})"))
        }
        Some(s) => ProbeResult::unknown(id, format!("HTTP {s} to {what}")),
        None => ProbeResult::unknown(id, format!("no HTTP answer: {}", describe(&answer.reply))),
    }
}

async fn unknown_method(ctx: &ProbeContext) -> ProbeResult {
    const ID: &str = "unknown_method";
    let mut conn = match open(ctx, ID, true).await {
        Ok(c) => c,
        Err(r) => return r,
    };
    let frame = request_frame(
        "probe-unknown",
        "fitness/no-such-method",
        json!({}),
        ctx.era,
    );
    let answer = conn.request(&frame, "probe-unknown", &[]).await;
    conn.close().await;
    match (&answer.reply, answer.reply.error_code()) {
        (_, Some(METHOD_NOT_FOUND)) => ProbeResult::pass(ID, "an unknown method got -32601"),
        (Reply::Silence(why), _) => ProbeResult::unknown(ID, format!("no answer: {why}")),
        _ => ProbeResult::fail(
            ID,
            format!("an unknown method got {}", describe(&answer.reply)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{Era, removed_vocabulary, sse_url};
    use serde_json::json;

    #[test]
    fn removed_vocabulary_depends_on_the_negotiated_era() {
        let subscribe = json!({"tools": {}, "resources": {"subscribe": true}});
        let (findings, _) = removed_vocabulary(Era::Modern, &subscribe);
        assert_eq!(findings.len(), 1);
        assert!(findings[0].contains("resources.subscribe"));
        // The same capability is current vocabulary up to 2025-11-25.
        let (findings, notes) = removed_vocabulary(Era::Legacy, &subscribe);
        assert!(findings.is_empty() && notes.is_empty());
        let (findings, notes) =
            removed_vocabulary(Era::Modern, &json!({"tools": {}, "logging": {}}));
        assert!(findings.is_empty());
        assert!(notes.iter().any(|n| n.contains("SEP-2577")), "{notes:?}");
        let (findings, _) = removed_vocabulary(
            Era::Modern,
            &json!({"resources": {"subscribe": false, "listChanged": true}}),
        );
        assert!(findings.is_empty());
    }

    #[test]
    fn sse_endpoint_sits_beside_the_mcp_endpoint() {
        assert_eq!(
            sse_url("http://127.0.0.1:3001/mcp"),
            "http://127.0.0.1:3001/sse"
        );
        assert_eq!(
            sse_url("http://127.0.0.1:3001"),
            "http://127.0.0.1:3001/sse"
        );
    }
}
