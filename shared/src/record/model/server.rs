//! The server measured: how it was reached and how it speaks.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The server as connected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerIdentity {
    pub target: ServerTarget,
    /// Short stable name used for grouping attempts (`huggingface-co`).
    pub slug: String,
    pub era: Era,
    /// The protocol revision the connection negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated_version: Option<String>,
    pub transport: TransportShape,
    pub sessions: Sessions,
    pub credential_context: CredentialContext,
    /// `serverInfo` as the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The `server/discover` result (modern era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discover: Option<Value>,
}

/// How the server was reached.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerTarget {
    Url { url: String },
    Command { argv: Vec<String> },
}

impl ServerTarget {
    /// The target as pages print it: the URL, or the command line with its
    /// program named by file name (`fitness demo-server good`, not the
    /// absolute path of the binary on the machine that ran it).
    pub fn display(&self) -> String {
        match self {
            ServerTarget::Url { url } => url.clone(),
            ServerTarget::Command { argv } => {
                let mut words = argv.iter();
                let program = words
                    .next()
                    .map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p))
                    .unwrap_or_default();
                std::iter::once(program)
                    .chain(words.map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
    }
}

/// Protocol era: `initialize` (legacy) or `server/discover` (modern).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    Legacy,
    Modern,
}

/// The transport and the framing its responses used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransportShape {
    Stdio,
    /// Streamable HTTP answering with SSE-framed responses.
    HttpSse,
    /// Streamable HTTP answering with plain JSON bodies.
    HttpJson,
}

/// Whether the server issued a session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sessions {
    Sessionful,
    Sessionless,
}

/// The credentials the measurement was collected under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CredentialContext {
    Anonymous,
    FreeKey,
    OwnerKey,
}

impl CredentialContext {
    /// Its name as every page prints it: `anonymous`, `free-key`, `owner-key`.
    pub fn label(self) -> &'static str {
        match self {
            CredentialContext::Anonymous => "anonymous",
            CredentialContext::FreeKey => "free-key",
            CredentialContext::OwnerKey => "owner-key",
        }
    }
}
