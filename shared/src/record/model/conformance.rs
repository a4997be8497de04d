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
    /// The frozen requirement set run (`--requirements 2026-07-28`): the
    /// revision the probes negotiated, where the suite has a set for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requirements: Option<String>,
    /// The revision the scenarios were filtered by (`--spec-version`), for a
    /// revision with no frozen requirement set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_version: Option<String>,
    /// What the suite printed (its report, as it says it), kept verbatim
    /// beside the record and hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<super::tapes::FileRef>,
    /// Scenarios the requirement set runs but does not score, as the suite
    /// named them (`tasks-lifecycle (extension)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_scored: Vec<String>,
    /// The expected-failures baseline the suite was given, and its verdict.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<ConformanceBaseline>,
}

/// An expected-failures baseline (the suite's own YAML format) and what the
/// suite said of it: entries that failed as expected, stale entries (now
/// passing), and failures it does not list. The suite exits 0 exactly when
/// there is neither a stale entry nor an unexpected failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceBaseline {
    /// Lowercase hex sha256 of the baseline file's bytes.
    pub sha256: String,
    #[serde(default)]
    pub expected: Vec<String>,
    #[serde(default)]
    pub stale: Vec<String>,
    #[serde(default)]
    pub unexpected: Vec<String>,
}

impl ConformanceBaseline {
    /// The suite's verdict on the baseline in a few words.
    pub fn verdict_text(&self) -> String {
        match (self.unexpected.len(), self.stale.len()) {
            (0, 0) => format!("baseline held ({} expected failures)", self.expected.len()),
            (u, 0) => format!("{u} failures not in the baseline"),
            (0, st) => format!("{st} stale baseline entries"),
            (u, st) => format!("{u} failures not in the baseline, {st} stale entries"),
        }
    }
}

impl Conformance {
    /// What ran: the frozen requirement set, or the revision filter.
    pub fn set_text(&self) -> Option<String> {
        match (&self.requirements, &self.spec_version) {
            (Some(r), _) => Some(format!("requirements {r}")),
            (None, Some(v)) => Some(format!("spec {v}")),
            (None, None) => None,
        }
    }

    /// Did the suite pass its own gate: every scored check passed, or
    /// every failure was in the baseline and no entry is stale (its exit
    /// code 0)?
    pub fn held(&self) -> bool {
        self.error.is_none() && self.exit_code == Some(0)
    }
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
    /// Per check id (ids repeat within a scenario): its statuses counted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<ConformanceCheck>,
}

/// One check id of a scenario, its statuses counted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceCheck {
    pub id: String,
    pub passed: u64,
    pub failed: u64,
    #[serde(default)]
    pub other: u64,
}
