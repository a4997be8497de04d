//! Run records, schema `fitness-report/2`: the one file a run leaves behind
//! besides its two tapes.
//!
//! A record carries either a score or the refusal that replaced it. A refusal
//! has no `score` key at all: [`RunRecord::from_json`] rejects a refusal that
//! carries one, and a scored record that carries none. The format is a promise
//! to readers: unknown fields are ignored (an old reader tolerates a newer
//! writer), every enum that has variants with data is explicitly tagged, and a
//! change of meaning bumps the schema id.
//!
//! On disk a record is stored in its canonical form (RFC 8785, see
//! [`crate::integrity`]) with one trailing newline, so the file's bytes are
//! exactly what its signature covers; any JSON reader still reads it.
//!
//! `v1` holds the `fitness-report/1` shape written by the reference
//! implementation and `import` converts it.

mod model;
mod validate;

pub mod import;
pub mod v1;

pub use model::*;
pub use validate::RecordError;

/// `$id` of the committed JSON Schema.
pub const SCHEMA_ID: &str = "https://fitness-report.invalid/schema/fitness-report-2.schema.json";

/// The JSON Schema of [`RunRecord`], generated from the types. The committed
/// copy lives at `shared/schema/fitness-report-2.schema.json` and a test keeps
/// the two equal.
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(RunRecord);
    schema.insert("$id".to_owned(), SCHEMA_ID.into());
    schema.insert(
        "title".to_owned(),
        format!("{} run record", RECORD_SCHEMA).into(),
    );
    schema.to_value()
}
