//! The official conformance suite, as it reported itself.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The official conformance suite (`@modelcontextprotocol/conformance
/// server --url`), as it reported itself: each scenario's `checks.json` is
/// kept beside the tapes, verbatim, and hashed here, so the signature covers
/// them. Its counts are the suite's, never ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Conformance {
    /// The npm package and version that ran (`@modelcontextprotocol/conformance@0.1.16`).
    pub suite: String,
    /// The Node.js version it ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Checks with status `SUCCESS`, over every scenario.
    pub passed: u64,
    /// Checks with status `FAILURE`, over every scenario.
    pub failed: u64,
    /// Checks with any other status (`WARNING`, `SKIPPED`, `INFO`).
    #[serde(default)]
    pub other: u64,
    /// One entry per scenario the suite wrote, in the suite's order.
    #[serde(default)]
    pub scenarios: Vec<ConformanceScenario>,
    /// The suite's exit code (1 when any check failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Why the suite gave no result, when it did not (not installed, timed out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One conformance scenario: its counts and its `checks.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceScenario {
    /// The suite's scenario id (`server-initialize`, `dns-rebinding-protection`).
    pub scenario: String,
    pub passed: u64,
    pub failed: u64,
    #[serde(default)]
    pub other: u64,
    /// The scenario's `checks.json`, relative to the record's directory.
    pub path: String,
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
    pub bytes: u64,
}
