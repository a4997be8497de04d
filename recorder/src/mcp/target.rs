//! Where a server is and which handshake a session speaks: what the rmcp
//! sessions ([`connect`](super::connect)) and the probes' hand-written
//! JSON-RPC ([`raw`](super::raw)) both need, so neither imports the other's.

use rmcp::model::ProtocolVersion;

use super::stdio::StdioTarget;

/// An HTTP server and the credentials to reach it (never taped).
#[derive(Debug, Clone)]
pub struct HttpTarget {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub bearer: Option<String>,
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
