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
    /// (passed, failed, unknown): unknown is never counted as a pass.
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for p in &self.findings {
            match p.status {
                ProbeStatus::Pass => t.0 += 1,
                ProbeStatus::Fail => t.1 += 1,
                ProbeStatus::Unknown { .. } => t.2 += 1,
            }
        }
        t
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
