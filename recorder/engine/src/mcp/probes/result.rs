//! One probe's result, as `fitness probe --json` prints it and the record keeps it, and the corr_id of its frames.

use fitness_shared::record::ProbeStatus;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

/// One probe's result, as `fitness probe --json` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeResult {
    pub id: &'static str,
    /// Printed as `"status": "pass"` (and `"reason"` when unknown); the
    /// record tags the same status `result`.
    #[serde(flatten, serialize_with = "status_fields")]
    pub status: ProbeStatus,
    pub detail: String,
    /// corr_ids of the tape frames that show the fact.
    pub evidence: Vec<String>,
}

impl ProbeResult {
    fn new(id: &'static str, status: ProbeStatus, detail: impl Into<String>) -> Self {
        ProbeResult {
            id,
            status,
            detail: detail.into(),
            evidence: vec![corr_id(id)],
        }
    }
    pub fn pass(id: &'static str, detail: impl Into<String>) -> Self {
        Self::new(id, ProbeStatus::Pass, detail)
    }
    pub fn fail(id: &'static str, detail: impl Into<String>) -> Self {
        Self::new(id, ProbeStatus::Fail, detail)
    }
    pub fn unknown(id: &'static str, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Self::new(
            id,
            ProbeStatus::Unknown {
                reason: reason.clone(),
            },
            reason,
        )
    }
    pub(super) fn with_evidence(mut self, evidence: Vec<String>) -> Self {
        self.evidence = evidence;
        self
    }
    /// `pass`, `fail` or `unknown`.
    pub fn status(&self) -> &'static str {
        self.status.word()
    }
}

/// A probe's status as `fitness probe --json` prints it.
fn status_fields<S: Serializer>(status: &ProbeStatus, s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(None)?;
    map.serialize_entry("status", status.word())?;
    if let ProbeStatus::Unknown { reason } = status {
        map.serialize_entry("reason", reason)?;
    }
    map.end()
}

/// The corr_id of a probe's frames (R-TAPE-5).
pub fn corr_id(probe: &str) -> String {
    format!("probe::{probe}")
}
