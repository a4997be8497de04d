//! Where a server is and which handshake a session speaks: what the rmcp
//! sessions ([`connect`](super::connect)) and the probes' hand-written
//! JSON-RPC ([`raw`](super::raw)) both need, so neither imports the other's.

use fitness_shared::redact::Secret;
use rmcp::model::ProtocolVersion;

use super::stdio::StdioTarget;

/// Environment variable holding a bearer token for HTTP servers.
pub const BEARER_ENV: &str = "FITNESS_MCP_BEARER_TOKEN";

/// An HTTP server and the credentials to reach it (never taped).
#[derive(Debug, Clone)]
pub struct HttpTarget {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub bearer: Option<String>,
    /// Sessions take their token from `fitness login`'s store through
    /// rmcp's authorization manager, which refreshes it once on a 401
    /// (the raw probes send `bearer`, the token as it was at the start).
    pub login: bool,
}

/// Where the server is.
#[derive(Debug, Clone)]
pub enum Target {
    Stdio(StdioTarget),
    Http(HttpTarget),
}

impl Target {
    pub fn describe(&self) -> Vec<String> {
        match self {
            Target::Stdio(s) => s.command_line(),
            Target::Http(h) => vec![h.url.clone()],
        }
    }

    /// The operator's own paths on a stdio server's command line: the
    /// absolute paths that exist among its arguments (`/srv/repo`,
    /// `--repository=/srv/repo`), each once. An HTTP target gives none.
    pub fn operator_paths(&self) -> Vec<String> {
        let Target::Stdio(stdio) = self else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for arg in &stdio.args {
            let value = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
            let path = std::path::Path::new(value);
            if path.is_absolute() && path.exists() && !out.iter().any(|o: &String| o == value) {
                out.push(value.trim_end_matches('/').to_owned());
            }
        }
        out
    }
}

/// Which handshake the session used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Era {
    /// `initialize` / `notifications/initialized`, up to 2025-11-25.
    Legacy,
    /// `server/discover` and per-request `_meta`, 2026-07-28.
    Modern,
}

impl Era {
    pub fn of(version: &str) -> Era {
        if version >= ProtocolVersion::NO_INITIALIZE.as_str() {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
}

impl Target {
    /// Hand the secrets policy everything secret about this target: its
    /// `--env` and `--header` values, the bearer token, URL credentials,
    /// and in a command line the values of credential-like flags
    /// (`--api-key X`, `--token=X`) and the credentials of any URL argument.
    pub fn register_secrets(&self) {
        let mut secrets = Vec::new();
        let mut urls = Vec::new();
        match self {
            Target::Http(h) => {
                urls.push(h.url.clone());
                for (k, v) in &h.headers {
                    secrets.push(Secret::header(k, v));
                }
                if let Some(token) = &h.bearer {
                    secrets.push(Secret::env(BEARER_ENV, token));
                }
            }
            Target::Stdio(s) => {
                for (k, v) in &s.env {
                    secrets.push(Secret::env(k, v));
                }
                let (args, found_urls) = crate::secrets::argument_secrets(&s.args);
                secrets.extend(args);
                urls.extend(found_urls);
            }
        }
        crate::secrets::register(secrets, urls);
    }
}
