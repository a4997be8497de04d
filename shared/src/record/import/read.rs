//! Reading a `fitness-report/1` record's loose fields, and why an import
//! fails.

use serde_json::Value;

use super::super::model::VerdictOutcome;
use super::super::v1::RecordV1;
use crate::integrity::IntegrityError;

/// Why a v1 record could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("input is not a JSON array of records or a single record")]
    NotRecords,
    #[error("record {index}: not a fitness-report/1 record: {source}")]
    Shape {
        index: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("record {index}: schema is {found:?}, expected \"fitness-report/1\"")]
    Schema { index: usize, found: String },
    #[error("run {run}: {what}")]
    Field { run: String, what: String },
    #[error("run {run}: {source}")]
    Integrity {
        run: String,
        #[source]
        source: IntegrityError,
    },
    #[error("run {run}: imported record fails validation: {source}")]
    Invalid {
        run: String,
        #[source]
        source: super::super::validate::RecordError,
    },
}

pub(super) fn field(run: &str, what: impl Into<String>) -> ImportError {
    ImportError::Field {
        run: run.to_owned(),
        what: what.into(),
    }
}

pub(super) fn parse_verdict(s: &str) -> Option<VerdictOutcome> {
    Some(match s {
        "PASS" => VerdictOutcome::Pass,
        "FAIL" => VerdictOutcome::Fail,
        "EXTEND" => VerdictOutcome::Extend,
        "INDETERMINATE" => VerdictOutcome::Indeterminate,
        _ => return None,
    })
}

pub(super) fn gate_detail<'a>(r: &'a RecordV1, gate: &str) -> Option<&'a Value> {
    r.gates
        .records
        .iter()
        .find(|g| g.gate == gate)
        .map(|g| &g.detail)
}

pub(super) fn f(v: Option<&Value>, key: &str) -> Option<f64> {
    v?.get(key)?.as_f64()
}

pub(super) fn u(v: Option<&Value>, key: &str) -> Option<u64> {
    v?.get(key)?.as_u64()
}

pub(super) fn s(v: Option<&Value>, key: &str) -> Option<String> {
    Some(v?.get(key)?.as_str()?.to_owned())
}
