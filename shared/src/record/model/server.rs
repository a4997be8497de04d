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
    /// What the credential was (never its value), where one was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<CredentialUsed>,
    /// The tools listed with the credential against those listed without
    /// it (HTTP targets measured under a credential).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface_delta: Option<SurfaceDelta>,
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

/// What a run's credential was: its kind, the header names that carried
/// it, the scopes a login was granted. Detail only: the run's group is its
/// [`CredentialContext`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CredentialUsed {
    pub kind: CredentialKind,
    /// The headers that carried a credential, by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<String>,
    /// The scopes an OAuth login was granted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
}

/// How the credential was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CredentialKind {
    /// A token from `fitness login` (OAuth 2.1).
    Oauth,
    /// A bearer token the operator held (`FITNESS_MCP_BEARER_TOKEN`).
    Bearer,
    /// Headers the operator gave (a key header).
    Header,
}

impl CredentialUsed {
    /// One line, as the record page prints it.
    pub fn text(&self) -> String {
        let kind = match self.kind {
            CredentialKind::Oauth => "an OAuth token from fitness login".to_owned(),
            CredentialKind::Bearer => "a bearer token".to_owned(),
            CredentialKind::Header => format!("the header(s) {}", self.headers.join(", ")),
        };
        if self.scopes.is_empty() {
            kind
        } else {
            format!("{kind}, scopes {}", self.scopes.join(" "))
        }
    }
}

/// The tool surface under the credential against the anonymous one,
/// listed with no credential at all (zero tokens).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SurfaceDelta {
    /// The anonymous listing was refused (401 or 403), not empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_anonymously: Option<u16>,
    /// Tools listed only with the credential.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_with_credential: Vec<String>,
    /// Tools listed only without it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only_anonymous: Vec<String>,
    /// Tools listed both ways with different input schemas.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed_schema: Vec<String>,
    /// The anonymous listing failed otherwise, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl SurfaceDelta {
    /// One sentence, as the record page prints it.
    pub fn text(&self) -> String {
        if let Some(status) = self.refused_anonymously {
            return format!("Refused anonymously ({status}): every tool needs the credential.");
        }
        if let Some(e) = &self.error {
            return format!("The anonymous listing failed: {e}.");
        }
        let mut parts = Vec::new();
        if !self.only_with_credential.is_empty() {
            parts.push(format!(
                "only with the credential: {}",
                self.only_with_credential.join(", ")
            ));
        }
        if !self.only_anonymous.is_empty() {
            parts.push(format!(
                "only without it: {}",
                self.only_anonymous.join(", ")
            ));
        }
        if !self.changed_schema.is_empty() {
            parts.push(format!(
                "a different input schema: {}",
                self.changed_schema.join(", ")
            ));
        }
        if parts.is_empty() {
            "The same tools, with the same schemas, with and without the credential.".to_owned()
        } else {
            let mut s = parts.join("; ");
            if let Some(first) = s.get_mut(0..1) {
                first.make_ascii_uppercase();
            }
            format!("{s}.")
        }
    }
}
