//! The zero-token protocol probes (SPEC §3, R-PROBE).
//!
//! Each probe states one protocol fact as `pass`, `fail` or `unknown` (not
//! applicable, or could not be checked), with a one-line detail and the
//! corr_ids of the frames that show it. Unknown is never counted as pass, and
//! a failed probe is a finding about the server, never a refusal to measure.

mod checks;
mod conn;

use serde::Serialize;

pub use checks::run_all;
pub use conn::ProbeContext;

/// The outcome of one probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    /// Not applicable, or the probe could not establish the fact.
    Unknown {
        reason: String,
    },
}

/// One probe's result, as `fitness probe --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult {
    pub id: &'static str,
    #[serde(flatten)]
    pub outcome: Outcome,
    pub detail: String,
    /// corr_ids of the tape frames that show the fact.
    pub evidence: Vec<String>,
}

impl ProbeResult {
    fn new(id: &'static str, outcome: Outcome, detail: impl Into<String>) -> Self {
        ProbeResult {
            id,
            outcome,
            detail: detail.into(),
            evidence: vec![corr_id(id)],
        }
    }
    pub fn pass(id: &'static str, detail: impl Into<String>) -> Self {
        Self::new(id, Outcome::Pass, detail)
    }
    pub fn fail(id: &'static str, detail: impl Into<String>) -> Self {
        Self::new(id, Outcome::Fail, detail)
    }
    pub fn unknown(id: &'static str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Self::new(
            id,
            Outcome::Unknown {
                reason: reason.clone(),
            },
            reason,
        )
    }
    fn with_evidence(mut self, evidence: Vec<String>) -> Self {
        self.evidence = evidence;
        self
    }
    /// `pass`, `fail` or `unknown`.
    pub fn status(&self) -> &'static str {
        match self.outcome {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Unknown { .. } => "unknown",
        }
    }
}

/// The corr_id of a probe's frames (R-TAPE-5).
pub fn corr_id(probe: &str) -> String {
    format!("probe::{probe}")
}
