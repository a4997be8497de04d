//! Why a server could not be reached, as one sentence an operator can act
//! on: what happened and what to do next. rmcp's transport errors print the
//! transport's Rust type names; the sentence keeps the causes they wrap
//! (`connection refused`, `401`, the OS error) and drops the rest.

use std::error::Error;
use std::time::Duration;

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

pub(crate) type HttpError = StreamableHttpError<reqwest::Error>;

/// A handshake that did not complete, said once. `retry` is whether the
/// legacy `initialize` handshake could fare better than `server/discover`
/// did (it cannot when the program never started or nothing listens).
#[derive(Debug, thiserror::Error)]
#[error("{sentence}")]
pub struct Unreachable {
    pub sentence: String,
    pub retry: bool,
    /// The server refused the handshake for its authorization: 401, or 403
    /// (`insufficient_scope`).
    pub refused: Option<u16>,
}

impl Unreachable {
    pub(crate) fn new(sentence: String, retry: bool) -> Unreachable {
        Unreachable {
            sentence,
            retry,
            refused: None,
        }
    }

    /// The program could not be started at all.
    pub fn not_started(command: &str, e: &std::io::Error) -> Unreachable {
        let what = match e.kind() {
            std::io::ErrorKind::NotFound => "there is no such program".to_owned(),
            std::io::ErrorKind::PermissionDenied => "it is not executable".to_owned(),
            _ => lower_first(&e.to_string()),
        };
        Unreachable::new(
            format!(
                "could not start `{command}` ({what}): check the command after `--` \
                 (is the server installed, and on PATH?)"
            ),
            false,
        )
    }

    /// A stdio program (`command` quoted) that did not answer in time.
    pub fn silent_program(command: &str, timeout: Duration) -> Unreachable {
        Unreachable::new(
            format!(
                "{command} did not answer the MCP handshake within {}s: is it an MCP \
                 server that speaks JSON-RPC on stdin and stdout?",
                timeout.as_secs()
            ),
            true,
        )
    }

    /// A URL that did not answer in time.
    pub fn silent_url(url: &str, timeout: Duration) -> Unreachable {
        Unreachable::new(
            format!(
                "{url} did not answer the MCP handshake within {}s: is it the server's \
                 MCP endpoint (often `/mcp`), and is the server up?",
                timeout.as_secs()
            ),
            true,
        )
    }

    /// The handshake with `whom` (a quoted command or a URL) failed.
    pub fn handshake(whom: &str, e: &ClientInitializeError) -> Unreachable {
        let ClientInitializeError::TransportError { error, .. } = e else {
            return Unreachable::new(
                format!(
                    "the MCP handshake with {whom} failed ({}): is it an MCP server?",
                    lower_first(&e.to_string())
                ),
                true,
            );
        };
        let http = error.error.downcast_ref::<HttpError>();
        if let Some(h @ (HttpError::AuthRequired(_) | HttpError::InsufficientScope(_))) = http {
            let status = if matches!(h, HttpError::AuthRequired(_)) {
                401
            } else {
                403
            };
            let mut refused = Unreachable::new(
                format!(
                    "{whom} answered 401 Unauthorized: this server needs authorization: run \
                     `fitness login {whom}`, then pass --login (or pass a token you hold with \
                     --header-env 'Authorization=VAR', VAR holding `Bearer <token>`)"
                ),
                false,
            );
            refused.refused = Some(status);
            return refused;
        }
        // The HTTP client's own error carries the cause (`connection
        // refused`); rmcp's wrapper does not link to it as a source.
        let chain = match http {
            Some(HttpError::Client(e)) => causes(e),
            _ => causes(error.error.as_ref()),
        };
        if let Some(HttpError::Client(e)) = http
            && (e.is_connect() || e.is_timeout())
        {
            let deepest = chain.last().map_or(String::new(), |c| c.to_string());
            if deepest.to_lowercase().contains("certificate") {
                return Unreachable::new(
                    format!(
                        "could not connect to {whom}: TLS: {deepest} (for a server whose CA \
                         is not a system root, pass --ca-cert FILE or set {})",
                        crate::http::CA_CERT_ENV
                    ),
                    false,
                );
            }
            return Unreachable::new(
                format!(
                    "could not connect to {whom} ({}): is the server running, and at that address?",
                    lower_first(without_os_code(&deepest))
                ),
                false,
            );
        }
        let said: Vec<String> = chain.iter().map(|c| c.to_string()).collect();
        Unreachable::new(
            format!(
                "the MCP handshake with {whom} failed ({}): is it an MCP server?",
                lower_first(&distinct(&said).join(": "))
            ),
            true,
        )
    }

    /// The sentence for a server that failed both handshakes: one failure
    /// said once, two different ones both said.
    pub fn both(modern: &Unreachable, legacy: Unreachable) -> Unreachable {
        if modern.sentence == legacy.sentence {
            return legacy;
        }
        Unreachable::new(
            format!(
                "{} (server/discover had failed first: {})",
                legacy.sentence, modern.sentence
            ),
            false,
        )
    }
}

/// `e` and every error under it.
fn causes<'a>(e: &'a (dyn Error + 'static)) -> Vec<&'a (dyn Error + 'static)> {
    let mut chain = vec![e];
    let mut at = e;
    while let Some(next) = at.source() {
        chain.push(next);
        at = next;
    }
    chain
}

/// The messages of a cause chain, each said once: a wrapper that repeats
/// its source's text (`Client error: X` over `X`) keeps only its own part.
fn distinct(said: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, message) in said.iter().enumerate() {
        let own = match said.get(i + 1) {
            Some(next) if !next.is_empty() => message
                .strip_suffix(next.as_str())
                .map(|s| s.trim_end_matches([':', ' ']).to_owned())
                .unwrap_or_else(|| message.clone()),
            _ => message.clone(),
        };
        if !own.is_empty() && !out.contains(&own) {
            out.push(own);
        }
    }
    out
}

/// `Connection refused (os error 111)` without its number.
fn without_os_code(s: &str) -> &str {
    match s.rfind(" (os error ") {
        Some(at) if s.ends_with(')') => &s[..at],
        _ => s,
    }
}

fn lower_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        // An acronym (`HTTP`, `TLS`) keeps its case.
        Some(c) if chars.clone().next().is_some_and(char::is_lowercase) => {
            c.to_lowercase().chain(chars).collect()
        }
        _ => s.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapper_that_repeats_its_cause_is_said_once() {
        let said = [
            "Client error: error sending request".to_owned(),
            "error sending request".to_owned(),
        ];
        assert_eq!(distinct(&said), ["Client error", "error sending request"]);
    }

    #[test]
    fn the_same_failure_twice_is_said_once() {
        let a = Unreachable::silent_program("cat", Duration::from_secs(20));
        let b = Unreachable::silent_program("cat", Duration::from_secs(20));
        assert_eq!(Unreachable::both(&a, b).sentence, a.sentence);
    }
}
