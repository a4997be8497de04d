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

    /// The checks split by what the server declared (its handshake's
    /// `capabilities`): a scenario for a capability it does not declare
    /// is not counted. Without the scenarios (an older record), the
    /// suite's own counts.
    pub fn split(&self, declared: &serde_json::Value) -> ConformanceSplit {
        if self.scenarios.is_empty() {
            return ConformanceSplit {
                passed: self.passed,
                failed: self.failed,
                ..ConformanceSplit::default()
            };
        }
        let mut split = ConformanceSplit::default();
        for sc in &self.scenarios {
            let applies = scenario_capability(&sc.scenario).is_none_or(|c| c.declared_in(declared));
            if applies {
                split.passed += sc.passed;
                split.failed += sc.failed;
            } else {
                split.not_counted += 1;
                split.not_counted_passed += sc.passed;
                split.not_counted_failed += sc.failed;
            }
        }
        split
    }

    /// Did the suite pass its own gate: every scored check passed, or
    /// every failure was in the baseline and no entry is stale (its exit
    /// code 0)?
    pub fn held(&self) -> bool {
        self.error.is_none() && self.exit_code == Some(0)
    }
}

/// What a scenario of the official suite exercises, read from its id:
/// `None` for the lifecycle and the transport (`server-initialize`,
/// `ping`, `dns-rebinding-protection`, `caching`, `sse-retry`), which every
/// server has; else the capability a server must declare for the scenario
/// to apply to it.
pub fn scenario_capability(id: &str) -> Option<Capability> {
    let id = id.to_ascii_lowercase();
    let starts = |p: &str| id.starts_with(p);
    if starts("tasks-") {
        Some(Capability::Tasks)
    } else if starts("resources-subscribe") || starts("resources-unsubscribe") {
        Some(Capability::ResourceSubscriptions)
    } else if starts("resources-") || id.contains("resource-not-found") {
        Some(Capability::Resources)
    } else if starts("prompts-") {
        Some(Capability::Prompts)
    } else if starts("completion") {
        Some(Capability::Completions)
    } else if starts("logging-") || id.contains("-with-logging") {
        Some(Capability::Logging)
    } else if starts("tools-")
        || starts("tools_")
        || starts("elicitation-")
        || starts("input-required-result")
    {
        // A tool that samples, elicits or answers input_required is still
        // a tool: a server without tools has none of them.
        Some(Capability::Tools)
    } else {
        None
    }
}

/// A capability a server declares in its handshake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capability {
    Tools,
    Resources,
    ResourceSubscriptions,
    Prompts,
    Completions,
    Logging,
    /// The `io.modelcontextprotocol/tasks` extension.
    Tasks,
}

impl Capability {
    /// Does a handshake's `capabilities` declare it?
    pub fn declared_in(self, capabilities: &serde_json::Value) -> bool {
        let has = |key: &str| capabilities.get(key).is_some_and(|v| !v.is_null());
        match self {
            Capability::Tools => has("tools"),
            Capability::Resources => has("resources"),
            Capability::ResourceSubscriptions => {
                capabilities
                    .pointer("/resources/subscribe")
                    .and_then(serde_json::Value::as_bool)
                    == Some(true)
            }
            Capability::Prompts => has("prompts"),
            Capability::Completions => has("completions"),
            Capability::Logging => has("logging"),
            Capability::Tasks => capabilities
                .get("extensions")
                .and_then(|e| e.get("io.modelcontextprotocol/tasks"))
                .is_some(),
        }
    }
}

/// The suite's checks, split by whether their scenario applies to what
/// the server declared: only those that apply count.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConformanceSplit {
    pub passed: u64,
    pub failed: u64,
    /// Scenarios for capabilities the server does not declare, and their
    /// checks' counts: kept on the record, never counted against it.
    pub not_counted: u64,
    pub not_counted_passed: u64,
    pub not_counted_failed: u64,
}

impl ConformanceSplit {
    /// The counts in words, as the board's column and a CI report print
    /// them.
    pub fn text(&self) -> String {
        let mut text = format!("{} passed, {} failed", self.passed, self.failed);
        if self.not_counted > 0 {
            text.push_str(&format!(
                "; not counted: {} scenario(s) for capabilities the server does not declare ({} passed, {} failed)",
                self.not_counted, self.not_counted_passed, self.not_counted_failed
            ));
        }
        text
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(id: &str, passed: u64, failed: u64) -> ConformanceScenario {
        ConformanceScenario {
            scenario: id.to_owned(),
            passed,
            failed,
            other: 0,
            path: format!("conformance/{id}/checks.json"),
            sha256: String::new(),
            bytes: 0,
            checks: Vec::new(),
        }
    }

    #[test]
    fn only_the_scenarios_for_what_a_server_declares_count() {
        let c = Conformance {
            suite: "@modelcontextprotocol/conformance@0.2.0".into(),
            node: None,
            passed: 12,
            failed: 9,
            other: 0,
            scenarios: vec![
                scenario("server-initialize", 3, 0),
                scenario("tools-call-simple-text", 2, 1),
                scenario("resources-read-text", 0, 3),
                scenario("resources-subscribe", 0, 2),
                scenario("prompts-get-simple", 1, 2),
                scenario("tasks-lifecycle", 0, 1),
                scenario("dns-rebinding-protection", 6, 0),
            ],
            exit_code: Some(1),
            error: None,
            requirements: Some("2026-07-28".into()),
            spec_version: None,
            output: None,
            not_scored: Vec::new(),
            baseline: None,
        };
        let tools_only = serde_json::json!({"tools": {}});
        let split = c.split(&tools_only);
        assert_eq!((split.passed, split.failed), (11, 1));
        assert_eq!(split.not_counted, 4);
        assert_eq!((split.not_counted_passed, split.not_counted_failed), (1, 8));
        assert!(
            split.text().contains("not counted: 4 scenario(s)"),
            "{}",
            split.text()
        );
        let everything = serde_json::json!({"tools": {}, "resources": {"subscribe": true},
            "prompts": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}});
        let all = c.split(&everything);
        assert_eq!((all.passed, all.failed, all.not_counted), (12, 9, 0));
        // Resources without subscriptions: the subscription scenario does
        // not apply.
        let resources = serde_json::json!({"tools": {}, "resources": {}});
        assert_eq!(c.split(&resources).not_counted, 3);
    }
}
