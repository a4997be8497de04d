//! The HTTP exchange both provider clients share: one POST of a JSON body,
//! bounded retries with exponential backoff on 429 / 5xx / timeouts /
//! connection failures (honouring `Retry-After`, capped), and a log of every
//! attempt for the tape. Keys travel only in the headers the caller builds;
//! nothing here logs a header or a body.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;

use super::types::{Attempt, AttemptFailure, BACKOFF_CAP, ClientOptions, LlmError, LlmErrorClass};

/// First backoff; doubled per retry.
const BACKOFF_BASE: Duration = Duration::from_millis(250);
/// How much of an error body goes into a message.
const ERROR_SNIPPET: usize = 300;

/// A successful exchange: the parsed body and every attempt.
/// A provider's parsed reply made a [`ChatResponse`]: tool names restored,
/// the model the provider named (else ours), the attempt log kept; a body
/// that did not parse is a `Malformed` error on the last attempt.
pub fn reply(
    ex: Exchange,
    parsed: Result<super::types::ParsedReply, String>,
    names: &ToolNames,
    fallback_model: &str,
) -> Result<super::types::ChatResponse, LlmError> {
    match parsed {
        Ok((mut content, stop, usage, model)) => {
            names.restore(&mut content);
            let (usage, usage_rejected) = match usage {
                Ok(usage) => (usage, None),
                Err(why) => (None, Some(why)),
            };
            Ok(super::types::ChatResponse {
                content,
                stop,
                usage,
                usage_rejected,
                model: model.unwrap_or_else(|| fallback_model.to_owned()),
                duration_ms: ex.duration_ms,
                ttft_ms: ex.ttft_ms,
                attempts: u32::try_from(ex.log.len()).unwrap_or(u32::MAX),
                log: ex.log,
            })
        }
        Err(why) => Err(malformed_reply(ex.status, why, ex.log)),
    }
}

/// A 2xx whose body is JSON but not the provider's shape.
fn malformed_reply(status: u16, why: String, mut log: Vec<super::types::Attempt>) -> LlmError {
    if let Some(last) = log.last_mut() {
        last.failure = Some(super::types::AttemptFailure {
            class: LlmErrorClass::Malformed,
            message: why.clone(),
            backoff_ms: None,
        });
    }
    LlmError {
        class: LlmErrorClass::Malformed,
        status: Some(status),
        message: why,
        attempts: u32::try_from(log.len()).unwrap_or(u32::MAX),
        log,
    }
}

pub struct Exchange {
    pub body: Value,
    pub status: u16,
    pub log: Vec<Attempt>,
    pub duration_ms: u64,
    /// Milliseconds from the last attempt's start to its first streamed
    /// token; `None` for an unstreamed reply.
    pub ttft_ms: Option<u64>,
}

/// POST `body` to `url` with `headers`, each attempt bounded by
/// `opts.timeout`, retrying up to `opts.max_retries` times.
pub async fn post_json(
    client: &reqwest::Client,
    url: &str,
    headers: &[(&str, String)],
    body: &Value,
    opts: &ClientOptions,
) -> Result<Exchange, LlmError> {
    let timeout = opts.timeout;
    let started = Instant::now();
    let mut log: Vec<Attempt> = Vec::new();
    let payload = serde_json::to_vec(body).map_err(|e| {
        LlmError::local(
            LlmErrorClass::BadRequest,
            format!("request not serialisable: {e}"),
        )
    })?;
    let wants_stream = body.get("stream") == Some(&Value::Bool(true));
    let mut attempt = 0u32;
    loop {
        attempt += 1;
        let waited = ms(pause::wait_turn(url).await);
        let t0 = Instant::now();
        // An unstreamed attempt is bounded as a whole; a streamed one by the
        // gap between its bytes and by STREAM_WALL_FACTOR x the timeout.
        let wall = if wants_stream {
            timeout.saturating_mul(STREAM_WALL_FACTOR)
        } else {
            timeout
        };
        let mut req = client
            .post(url)
            .timeout(wall)
            .header("content-type", "application/json")
            .body(payload.clone());
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        match try_once(req, timeout, t0).await {
            Tried::Answered {
                body,
                status,
                ttft_ms,
            } => {
                log.push(Attempt {
                    attempt,
                    endpoint: url.to_owned(),
                    status: Some(status),
                    duration_ms: ms(t0.elapsed()),
                    failure: None,
                    rate_wait_ms: waited,
                });
                return Ok(Exchange {
                    body,
                    status,
                    log,
                    duration_ms: ms(started.elapsed()),
                    ttft_ms,
                });
            }
            Tried::Unreadable { status, message } => {
                let f = (LlmErrorClass::Malformed, Some(status), message, None);
                return Err(fail(&mut log, (attempt, waited), url, t0, f, None));
            }
            Tried::Failed(f) => {
                if let Some(err) = step(&mut log, (attempt, waited), url, t0, f, opts).await {
                    return Err(err);
                }
            }
        }
    }
}

/// What one attempt came to.
enum Tried {
    /// A JSON body from a 2xx reply.
    Answered {
        body: Value,
        status: u16,
        ttft_ms: Option<u64>,
    },
    /// The server answered, unreadably. Not retried: the server answered,
    /// and answering again is unlikely to change it.
    Unreadable { status: u16, message: String },
    /// A failure that [`step`] may retry.
    Failed(Failed),
}

/// Send one attempt and read its reply. A streamed reply (the request asked
/// for `stream: true` and the server obliged) is folded back into the body
/// an unstreamed call returns; any other is read whole.
async fn try_once(req: reqwest::RequestBuilder, timeout: Duration, t0: Instant) -> Tried {
    let resp = match req.send().await {
        Ok(resp) => resp,
        Err(e) => {
            let class = if e.is_timeout() {
                LlmErrorClass::Timeout
            } else {
                LlmErrorClass::Transport
            };
            return Tried::Failed((class, None, transport_message(&e, timeout), None));
        }
    };
    let status = resp.status();
    let code = status.as_u16();
    let retry_after = retry_after(resp.headers());
    let read = if status.is_success() && is_event_stream(resp.headers()) {
        read_stream(resp, timeout, t0).await
    } else {
        read_whole(resp, timeout).await
    };
    let (text, streamed, ttft_ms) = match read {
        Ok(Read::Whole(text)) => (text, None, None),
        Ok(Read::Streamed(body, ttft)) => (String::new(), Some(body), ttft),
        Err((LlmErrorClass::Malformed, message)) => {
            return Tried::Unreadable {
                status: code,
                message,
            };
        }
        Err((class, message)) => return Tried::Failed((class, Some(code), message, None)),
    };
    if !status.is_success() {
        let message = format!("HTTP {code}: {}", snippet(&text));
        let class = if model_output_failed(&text) {
            LlmErrorClass::ModelOutput
        } else {
            classify_status(status)
        };
        return Tried::Failed((class, Some(code), message, retry_after));
    }
    let body = match streamed.map_or_else(|| serde_json::from_str::<Value>(&text), Ok) {
        Ok(body) => body,
        Err(e) => {
            return Tried::Unreadable {
                status: code,
                message: format!("the response is not JSON ({e}): {}", snippet(&text)),
            };
        }
    };
    // OpenRouter and some proxies report upstream failures as a 200 whose
    // body is only an `error` object.
    if let Some((upstream, message)) = body_error(&body) {
        let upstream = StatusCode::from_u16(upstream).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let class = if model_output_failed(&message) {
            LlmErrorClass::ModelOutput
        } else {
            classify_status(upstream)
        };
        let message = format!("error in a {code} body: {message}");
        return Tried::Failed((class, Some(upstream.as_u16()), message, None));
    }
    Tried::Answered {
        body,
        status: code,
        ttft_ms,
    }
}

type Failed = (LlmErrorClass, Option<u16>, String, Option<Duration>);

/// A streamed attempt may last this many times the per-attempt timeout, so
/// long as no gap between its bytes is longer than the timeout.
pub const STREAM_WALL_FACTOR: u32 = 10;

/// A reply body as read.
enum Read {
    /// The text of an unstreamed body.
    Whole(String),
    /// A streamed reply folded into its unstreamed form, and the time to its
    /// first token.
    Streamed(Value, Option<u64>),
}

fn is_event_stream(headers: &reqwest::header::HeaderMap) -> bool {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// The whole body within `timeout` and [`crate::http::MAX_BODY`].
async fn read_whole(
    resp: reqwest::Response,
    timeout: Duration,
) -> Result<Read, (LlmErrorClass, String)> {
    let body = crate::http::body_within(resp, crate::http::MAX_BODY);
    match tokio::time::timeout(timeout, body).await {
        Ok(Ok(bytes)) => Ok(Read::Whole(String::from_utf8_lossy(&bytes).into_owned())),
        Ok(Err(e @ crate::http::BodyError::TooLong(_))) => {
            Err((LlmErrorClass::Malformed, format!("reading the body: {e}")))
        }
        Ok(Err(crate::http::BodyError::Read(e))) => {
            let class = if e.is_timeout() {
                LlmErrorClass::Timeout
            } else {
                LlmErrorClass::Transport
            };
            Err((class, format!("reading the body: {e}")))
        }
        Err(_) => Err((
            LlmErrorClass::Timeout,
            format!("the body did not arrive within {timeout:?}"),
        )),
    }
}

/// A streamed reply's events, each gap within `timeout`, the whole within
/// [`crate::http::MAX_BODY`] bytes. An error event reads as the `error`
/// body an unstreamed call would have returned; a stream cut before its
/// last event is a transport failure (retried).
async fn read_stream(
    mut resp: reqwest::Response,
    timeout: Duration,
    t0: Instant,
) -> Result<Read, (LlmErrorClass, String)> {
    let mut assembly = super::stream::Assembly::default();
    let mut bytes = 0usize;
    let mut ttft = None;
    loop {
        let chunk = match tokio::time::timeout(timeout, resp.chunk()).await {
            Err(_) => {
                return Err((
                    LlmErrorClass::Timeout,
                    format!("the stream sent nothing for {timeout:?}"),
                ));
            }
            Ok(Err(e)) => {
                let class = if e.is_timeout() {
                    LlmErrorClass::Timeout
                } else {
                    LlmErrorClass::Transport
                };
                return Err((class, format!("reading the stream: {e}")));
            }
            Ok(Ok(None)) => break,
            Ok(Ok(Some(chunk))) => chunk,
        };
        bytes = bytes.saturating_add(chunk.len());
        if bytes > crate::http::MAX_BODY {
            return Err((
                LlmErrorClass::Malformed,
                format!(
                    "reading the stream: longer than {} bytes",
                    crate::http::MAX_BODY
                ),
            ));
        }
        assembly.feed(&chunk).map_err(|why| {
            (
                LlmErrorClass::Malformed,
                format!("reading the stream: {why}"),
            )
        })?;
        if ttft.is_none() && assembly.started {
            ttft = Some(ms(t0.elapsed()));
        }
        if assembly.done {
            break;
        }
    }
    if let Some(error) = assembly.error {
        return Ok(Read::Streamed(serde_json::json!({ "error": error }), ttft));
    }
    if !assembly.done && !assembly.finished() {
        return Err((
            LlmErrorClass::Transport,
            "the stream ended before its last event".to_owned(),
        ));
    }
    Ok(Read::Streamed(assembly.body(), ttft))
}

/// Record a failed attempt; wait and return `None` when another attempt is
/// due, else the final error.
async fn step(
    log: &mut Vec<Attempt>,
    (attempt, waited): (u32, u64),
    url: &str,
    t0: Instant,
    failed: Failed,
    opts: &ClientOptions,
) -> Option<LlmError> {
    let retryable = matches!(
        failed.0,
        LlmErrorClass::RateLimited
            | LlmErrorClass::Server
            | LlmErrorClass::Timeout
            | LlmErrorClass::Transport
    );
    if retryable && attempt <= opts.max_retries {
        let wait = backoff(attempt, failed.3).min(opts.max_backoff);
        // A refusal for rate (429, or 529 overloaded) holds every call of
        // the run to this endpoint, not only this one: N trials in flight
        // wait together instead of retrying in lockstep.
        if failed.0 == LlmErrorClass::RateLimited || failed.1 == Some(529) {
            pause::hold(url, wait);
        }
        let _ = fail(log, (attempt, waited), url, t0, failed, Some(wait));
        tokio::time::sleep(wait).await;
        None
    } else {
        Some(fail(log, (attempt, waited), url, t0, failed, None))
    }
}

/// The run's calls to one endpoint share one rate budget: after a refusal
/// for rate, no call to that endpoint is sent before the refusal's wait is
/// over. Each wait is bounded ([`BACKOFF_CAP`]), so a provider that keeps
/// refusing ends in errors after the bounded retries, never in a hang.
mod pause {
    use std::collections::HashMap;
    use std::sync::{LazyLock, Mutex};
    use std::time::{Duration, Instant};

    static UNTIL: LazyLock<Mutex<HashMap<String, Instant>>> =
        LazyLock::new(|| Mutex::new(HashMap::new()));

    fn until(url: &str) -> Option<Instant> {
        UNTIL
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(url)
            .copied()
    }

    /// Hold every call to `url` for `wait` from now (the later hold wins).
    pub fn hold(url: &str, wait: Duration) {
        let at = Instant::now() + wait;
        let mut held = UNTIL.lock().unwrap_or_else(|p| p.into_inner());
        let entry = held.entry(url.to_owned()).or_insert(at);
        *entry = (*entry).max(at);
    }

    /// Wait until `url` is no longer held; how long that was.
    pub async fn wait_turn(url: &str) -> Duration {
        let started = Instant::now();
        while let Some(at) = until(url).filter(|at| *at > Instant::now()) {
            tokio::time::sleep_until(at.into()).await;
        }
        started.elapsed()
    }
}

fn fail(
    log: &mut Vec<Attempt>,
    (attempt, waited): (u32, u64),
    url: &str,
    t0: Instant,
    (class, status, message, _): Failed,
    wait: Option<Duration>,
) -> LlmError {
    log.push(Attempt {
        attempt,
        endpoint: url.to_owned(),
        status,
        duration_ms: ms(t0.elapsed()),
        failure: Some(AttemptFailure {
            class,
            message: message.clone(),
            backoff_ms: wait.map(ms),
        }),
        rate_wait_ms: waited,
    });
    LlmError {
        class,
        status,
        message,
        attempts: attempt,
        log: log.clone(),
    }
}

/// The wait before attempt `attempt + 1`: `Retry-After` when the server gave
/// one, else 250 ms doubled per retry; never more than [`BACKOFF_CAP`].
pub fn backoff(attempt: u32, retry_after: Option<Duration>) -> Duration {
    let exp = BACKOFF_BASE.saturating_mul(1u32 << attempt.saturating_sub(1).min(16));
    retry_after.unwrap_or(exp).min(BACKOFF_CAP)
}

pub fn classify_status(status: StatusCode) -> LlmErrorClass {
    match status.as_u16() {
        429 => LlmErrorClass::RateLimited,
        401 | 403 => LlmErrorClass::Auth,
        408 => LlmErrorClass::Timeout,
        // Anthropic's "overloaded" is 529; every 5xx is the server's.
        500..=599 => LlmErrorClass::Server,
        _ => LlmErrorClass::BadRequest,
    }
}

/// Error texts by which an API says the model's own reply could not be
/// read, whatever status it chose for it: llama.cpp's server (500 "Failed
/// to parse tool call arguments as JSON"), OpenAI (500 "The model produced
/// invalid content"), Groq (400 `tool_use_failed`).
const MODEL_OUTPUT_FAILURES: &[&str] = &[
    "failed to parse tool call",
    "model produced invalid content",
    "tool_use_failed",
];

/// Does an error body say the model's reply could not be read?
pub fn model_output_failed(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    MODEL_OUTPUT_FAILURES.iter().any(|m| lower.contains(m))
}

/// An `{"error": …}` body with no reply in it: its code (an HTTP status,
/// 500 when it names none) and message.
fn body_error(body: &Value) -> Option<(u16, String)> {
    let obj = body.as_object()?;
    if obj.contains_key("choices") || obj.contains_key("content") {
        return None;
    }
    let err = obj.get("error").filter(|e| !e.is_null())?;
    let code = err
        .get("code")
        .and_then(|c| {
            c.as_u64()
                .or_else(|| c.as_str().and_then(|s| s.parse().ok()))
        })
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| (400..=599).contains(c))
        .unwrap_or(500);
    let message = err
        .get("message")
        .and_then(Value::as_str)
        .map_or_else(|| snippet(&err.to_string()), snippet);
    Some((code, message))
}

/// The server's wait: `retry-after-ms` (milliseconds), else `Retry-After`
/// in seconds or as an HTTP date; fractions allowed, never more than
/// [`BACKOFF_CAP`]. A negative, non-finite or unreadable value is no wait
/// at all (the exponential backoff applies); a date in the past is zero.
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let seconds = |s: f64| {
        (s.is_finite() && s >= 0.0)
            .then(|| Duration::try_from_secs_f64(s.min(BACKOFF_CAP.as_secs_f64())).ok())
            .flatten()
    };
    if let Some(wait) = header("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .and_then(|ms| seconds(ms / 1000.0))
    {
        return Some(wait);
    }
    let value = header("retry-after")?;
    match value.parse::<f64>() {
        Ok(s) => seconds(s),
        Err(_) => {
            let at = httpdate::parse_http_date(value).ok()?;
            let wait = at
                .duration_since(std::time::SystemTime::now())
                .unwrap_or(Duration::ZERO);
            Some(wait.min(BACKOFF_CAP))
        }
    }
}

fn transport_message(e: &reqwest::Error, timeout: Duration) -> String {
    if e.is_timeout() {
        format!("no answer within {timeout:?}")
    } else if e.is_connect() {
        format!("could not connect: {e}")
    } else {
        format!("transport error: {e}")
    }
}

fn snippet(text: &str) -> String {
    let t: String = text.chars().take(ERROR_SNIPPET).collect();
    if t.len() < text.len() {
        format!("{t}…")
    } else {
        t
    }
}

pub fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// A reqwest client for model calls (the per-request timeout is set on each
/// request). It follows a redirect only within the API's origin, so a key
/// never reaches another host.
pub fn client() -> Result<reqwest::Client, LlmError> {
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .redirect(crate::http::same_origin_redirects())
        .build()
        .map_err(|e| {
            LlmError::local(
                LlmErrorClass::Transport,
                format!("HTTP client unavailable: {e}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_honours_retry_after_and_is_capped() {
        assert_eq!(backoff(1, None), Duration::from_millis(250));
        assert_eq!(backoff(2, None), Duration::from_millis(500));
        assert_eq!(backoff(3, None), Duration::from_millis(1000));
        assert_eq!(
            backoff(1, Some(Duration::from_secs(2))),
            Duration::from_secs(2)
        );
        assert_eq!(backoff(1, Some(Duration::from_secs(3600))), BACKOFF_CAP);
        assert_eq!(backoff(40, None), BACKOFF_CAP);
    }

    #[test]
    fn retry_after_in_every_form_is_capped_and_nonsense_ignored() {
        let wait = |pairs: &[(&'static str, &str)]| {
            let mut h = reqwest::header::HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, v.parse().expect("header value"));
            }
            retry_after(&h)
        };
        let secs = Duration::from_secs;
        assert_eq!(wait(&[("retry-after", "2")]), Some(secs(2)));
        assert_eq!(
            wait(&[("retry-after", "0.5")]),
            Some(Duration::from_millis(500))
        );
        assert_eq!(wait(&[("retry-after", "1e30")]), Some(BACKOFF_CAP));
        assert_eq!(wait(&[("retry-after-ms", "1e30")]), Some(BACKOFF_CAP));
        assert_eq!(
            wait(&[("retry-after-ms", "1500")]),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            wait(&[("retry-after-ms", "1.7e308"), ("retry-after", "3")]),
            Some(BACKOFF_CAP)
        );
        for nonsense in ["-1", "NaN", "inf", "-inf", "soon", "", "1e400"] {
            assert_eq!(wait(&[("retry-after", nonsense)]), None, "{nonsense:?}");
            assert_eq!(wait(&[("retry-after-ms", nonsense)]), None, "{nonsense:?}");
        }
        // A bad retry-after-ms falls back to Retry-After.
        assert_eq!(
            wait(&[("retry-after-ms", "-5"), ("retry-after", "1")]),
            Some(secs(1))
        );
        let later = httpdate::fmt_http_date(std::time::SystemTime::now() + secs(3600));
        assert_eq!(wait(&[("retry-after", &later)]), Some(BACKOFF_CAP));
        let soon = httpdate::fmt_http_date(std::time::SystemTime::now() + secs(8));
        let got = wait(&[("retry-after", &soon)]).expect("a wait");
        assert!(got <= secs(8) && got >= secs(6), "{got:?}");
        assert_eq!(
            wait(&[("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT")]),
            Some(Duration::ZERO)
        );
    }

    #[test]
    fn an_api_saying_the_model_wrote_an_unreadable_call_is_the_models_output() {
        let llama = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 2, column 29","type":"server_error"}}"#;
        let openai = r#"{"error":{"message":"The model produced invalid content. Consider modifying your prompt if you are seeing this error persistently.","type":"model_error"}}"#;
        let groq = r#"{"error":{"message":"Failed to call a function. Please adjust your prompt.","type":"invalid_request_error","code":"tool_use_failed"}}"#;
        for body in [llama, openai, groq] {
            assert!(super::model_output_failed(body), "{body}");
        }
        assert!(!super::model_output_failed(
            r#"{"error":{"code":500,"message":"the model is loading","type":"server_error"}}"#
        ));
    }

    #[test]
    fn statuses_are_classified() {
        assert_eq!(
            classify_status(StatusCode::TOO_MANY_REQUESTS),
            LlmErrorClass::RateLimited
        );
        assert_eq!(
            classify_status(StatusCode::from_u16(529).expect("status")),
            LlmErrorClass::Server
        );
        assert_eq!(
            classify_status(StatusCode::UNAUTHORIZED),
            LlmErrorClass::Auth
        );
        assert_eq!(
            classify_status(StatusCode::BAD_REQUEST),
            LlmErrorClass::BadRequest
        );
    }
}

/// Tool names as the provider APIs accept them (`^[a-zA-Z0-9_-]{1,64}$`),
/// mapped both ways for one request: MCP allows names such as `files.read`
/// or `db/query` that both APIs reject. A valid name is sent unchanged.
pub struct ToolNames {
    to_wire: std::collections::HashMap<String, String>,
    from_wire: std::collections::HashMap<String, String>,
}

impl ToolNames {
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> ToolNames {
        let mut to_wire = std::collections::HashMap::new();
        let mut from_wire: std::collections::HashMap<String, String> =
            std::collections::HashMap::new();
        let mut names: Vec<&str> = names.into_iter().collect();
        // Valid names first, so they keep their own spelling.
        names.sort_by_key(|n| !is_wire_name(n));
        for name in names {
            if to_wire.contains_key(name) {
                continue;
            }
            let base: String = name
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .take(64)
                .collect();
            let base = if base.is_empty() {
                "tool".to_owned()
            } else {
                base
            };
            let mut wire = base.clone();
            let mut n = 2;
            while from_wire.contains_key(&wire) {
                let suffix = format!("_{n}");
                let keep = 64 - suffix.len();
                wire = format!("{}{suffix}", &base[..base.len().min(keep)]);
                n += 1;
            }
            to_wire.insert(name.to_owned(), wire.clone());
            from_wire.insert(wire, name.to_owned());
        }
        ToolNames { to_wire, from_wire }
    }

    pub fn to_wire(&self, name: &str) -> String {
        self.to_wire
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    }

    /// The request with tool names (offered and in the history) as sent.
    pub fn request(&self, request: &super::types::ChatRequest) -> super::types::ChatRequest {
        let mut r = request.clone();
        for t in &mut r.tools {
            t.name = self.to_wire(&t.name);
        }
        for m in &mut r.messages {
            for b in &mut m.content {
                if let super::types::ContentBlock::ToolUse { name, .. } = b {
                    *name = self.to_wire(name);
                }
            }
        }
        r
    }

    /// A reply's tool names back as the server spells them.
    pub fn restore(&self, content: &mut [super::types::ContentBlock]) {
        for b in content {
            if let super::types::ContentBlock::ToolUse { name, .. } = b {
                *name = self.from_wire(name);
            }
        }
    }

    pub fn from_wire(&self, name: &str) -> String {
        self.from_wire
            .get(name)
            .cloned()
            .unwrap_or_else(|| name.to_owned())
    }
}

fn is_wire_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 64
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod name_tests {
    use super::ToolNames;

    #[test]
    fn invalid_names_are_mapped_both_ways_without_collisions() {
        let names = ToolNames::new(["files.read", "files_read", "db/query", "ok-name"]);
        assert_eq!(names.to_wire("files_read"), "files_read");
        assert_eq!(names.to_wire("files.read"), "files_read_2");
        assert_eq!(names.to_wire("db/query"), "db_query");
        assert_eq!(names.to_wire("ok-name"), "ok-name");
        for n in ["files.read", "files_read", "db/query", "ok-name"] {
            assert_eq!(names.from_wire(&names.to_wire(n)), n);
        }
        let long = "x".repeat(70);
        assert_eq!(ToolNames::new([long.as_str()]).to_wire(&long).len(), 64);
    }
}
