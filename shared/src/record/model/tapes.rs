//! The tapes a record points at, and where an imported record came from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::tape::Plane;

/// A tape the record vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TapeRef {
    pub plane: Plane,
    /// Relative to the directory holding the record, `/`-separated.
    pub path: String,
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
    pub bytes: u64,
}

/// A file beside the record that the record vouches for (other than a
/// tape): its path, relative to the record's directory, and its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FileRef {
    pub path: String,
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
    pub bytes: u64,
}

/// Published tape URLs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TraceLinks {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer: Option<String>,
}

/// Where an imported record came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportProvenance {
    /// The source schema, `fitness-report/1`.
    pub from_schema: String,
    /// sha256 of the canonical JSON of the source record.
    pub source_sha256: String,
    /// Source fields with no typed home here, kept verbatim (e.g. judge usage).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub kept: serde_json::Map<String, Value>,
}
