//! The zero-token protocol probes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The zero-token protocol probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probes {
    /// The negotiated revision, the spec-currency column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_currency: Option<String>,
    #[serde(default)]
    pub findings: Vec<Probe>,
    /// Why the probes could not run: the server could not be reached (a
    /// run refused on its registration still connects and probes first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unreachable: Option<String>,
}

impl Probes {
    /// (passed, failed, unknown) over the hygiene checks: unknown is never
    /// counted as a pass, and spec currency is its own column
    /// ([`Probes::spec_current`]), never one of them.
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for p in self.findings.iter().filter(|p| !p.is_spec_currency()) {
            match p.status {
                ProbeStatus::Pass => t.0 += 1,
                ProbeStatus::Fail => t.1 += 1,
                ProbeStatus::Unknown { .. } => t.2 += 1,
            }
        }
        t
    }
}

impl Probes {
    /// Is the negotiated revision the current one: the spec-currency
    /// probe's verdict (`None` when it did not decide or did not run).
    pub fn spec_current(&self) -> Option<bool> {
        self.findings
            .iter()
            .find(|p| p.is_spec_currency())
            .and_then(|p| match p.status {
                ProbeStatus::Pass => Some(true),
                ProbeStatus::Fail => Some(false),
                ProbeStatus::Unknown { .. } => None,
            })
    }
}

impl Probe {
    /// The spec-currency probe (`spec_currency`; `spec-currency` in
    /// imported records).
    pub fn is_spec_currency(&self) -> bool {
        matches!(self.id.as_str(), "spec_currency" | "spec-currency")
    }
}

/// One probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probe {
    /// e.g. `spec-currency`, `bogus-version-accepted`.
    pub id: String,
    pub status: ProbeStatus,
    /// One line a reader can take in.
    pub detail: String,
    /// corr_ids of the tape lines that show it (`probe::<id>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// What the probe observed, as recorded (status codes, envelopes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Value>,
}

/// A probe result; unknown means not applicable or could not check.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ProbeStatus {
    Pass,
    Fail,
    Unknown { reason: String },
}

impl ProbeStatus {
    /// `pass`, `fail` or `unknown`.
    pub fn word(&self) -> &'static str {
        match self {
            ProbeStatus::Pass => "pass",
            ProbeStatus::Fail => "fail",
            ProbeStatus::Unknown { .. } => "unknown",
        }
    }
}
