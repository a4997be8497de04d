//! Parsing with validation: the rules serde alone cannot state.

use serde_json::Value;

use super::model::*;

/// Why a record was refused by the parser.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("record is not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    #[error("record does not match the fitness-report/2 shape: {0}")]
    Shape(#[source] serde_json::Error),
    #[error("unsupported record schema {found:?} (this reader reads {expected:?})")]
    Schema {
        found: String,
        expected: &'static str,
    },
    #[error("outcome {0} is a refusal but the record has a score key")]
    RefusalWithScore(&'static str),
    #[error("outcome SCORED but the record has no score")]
    ScoredWithoutScore,
    #[error("refusal {0} does not name the gate that refused it")]
    RefusalWithoutGate(&'static str),
    #[error("refused_at names gate {0:?}, which has no gate record")]
    UnknownRefusingGate(String),
    #[error("invalid count at {at}: {why}")]
    InvalidNumber { at: String, why: String },
    #[error("tape {path:?}: {why}")]
    InvalidTape { path: String, why: String },
    #[error("cost: {0}")]
    InvalidCost(String),
}

impl RunRecord {
    /// Parse and validate a `fitness-report/2` record. This is the reader's
    /// entry point: plain `serde_json::from_str` skips the validation.
    pub fn from_json(text: &str) -> Result<RunRecord, RecordError> {
        let value: Value = serde_json::from_str(text).map_err(RecordError::Json)?;
        Self::from_value(value)
    }

    /// As [`RunRecord::from_json`], from bytes (invalid UTF-8 is a JSON error).
    pub fn from_slice(bytes: &[u8]) -> Result<RunRecord, RecordError> {
        let value: Value = serde_json::from_slice(bytes).map_err(RecordError::Json)?;
        Self::from_value(value)
    }

    /// As [`RunRecord::from_json`], from a parsed value.
    pub fn from_value(value: Value) -> Result<RunRecord, RecordError> {
        let schema = value.get("schema").and_then(Value::as_str).unwrap_or("");
        if schema != crate::record::model::RECORD_SCHEMA {
            return Err(RecordError::Schema {
                found: schema.to_owned(),
                expected: crate::record::model::RECORD_SCHEMA,
            });
        }
        let has_score_key = value.get("score").is_some();
        let record: RunRecord = serde_json::from_value(value).map_err(RecordError::Shape)?;
        if record.outcome.is_refusal() && has_score_key {
            return Err(RecordError::RefusalWithScore(record.outcome.code()));
        }
        record.validate()?;
        Ok(record)
    }

    /// Check the invariants of a record built in memory.
    pub fn validate(&self) -> Result<(), RecordError> {
        if self.schema != crate::record::model::RECORD_SCHEMA {
            return Err(RecordError::Schema {
                found: self.schema.clone(),
                expected: crate::record::model::RECORD_SCHEMA,
            });
        }
        match (self.outcome, &self.score) {
            (Outcome::Scored, None) => return Err(RecordError::ScoredWithoutScore),
            (o, Some(_)) if o.is_refusal() => return Err(RecordError::RefusalWithScore(o.code())),
            _ => {}
        }
        // A VOID run stopped short of its registered size; no gate refused it.
        if self.outcome.is_refusal() && self.outcome != Outcome::Void {
            let Some(gate) = &self.gates.refused_at else {
                return Err(RecordError::RefusalWithoutGate(self.outcome.code()));
            };
            if self.gates.record(gate).is_none() {
                return Err(RecordError::UnknownRefusingGate(gate.clone()));
            }
        }
        for gate in &self.gates.records {
            if let Some(v) = &gate.verdict {
                let at = format!("gates.{}.verdict", gate.id);
                check_count(&at, v.k, v.n)?;
                check_unit(&at, "threshold", v.threshold)?;
                check_unit(&at, "alpha", v.alpha)?;
                check_unit(&at, "p_value", v.p_value)?;
            }
        }
        for batch in &self.extensions {
            let at = format!("extensions[{}]", batch.index);
            check_count(&at, batch.pooled_before.k, batch.pooled_before.n)?;
            check_count(&at, batch.pooled_after.k, batch.pooled_after.n)?;
            let grown = batch.pooled_after.n.checked_sub(batch.pooled_before.n);
            if grown != Some(batch.trials_added) {
                return Err(RecordError::InvalidNumber {
                    at,
                    why: format!(
                        "pooled n moved {} -> {} but trials_added is {}",
                        batch.pooled_before.n, batch.pooled_after.n, batch.trials_added
                    ),
                });
            }
        }
        if let Some(score) = &self.score {
            check_interval("score.first_try", &score.first_try)?;
            check_interval("score.eventual", &score.eventual)?;
            if let Some(c) = &score.consistency {
                check_interval("score.consistency.every_rep", &c.every_rep)?;
                // Stored once, from the per-task counts: a figure that
                // disagrees with them is not the record's own.
                if Consistency::of(&score.tasks).as_ref() != Some(c) {
                    return Err(RecordError::InvalidNumber {
                        at: "score.consistency".into(),
                        why: "does not follow from the per-task repetition counts".into(),
                    });
                }
            }
        }
        match &self.cost {
            Cost::Total { usd, .. } | Cost::Floor { usd, .. }
                if !(usd.is_finite() && *usd >= 0.0) =>
            {
                return Err(RecordError::InvalidCost(format!(
                    "{usd} is not a dollar figure"
                )));
            }
            Cost::Floor { reasons, .. } if reasons.is_empty() => {
                return Err(RecordError::InvalidCost(
                    "a floor must say why it is one".into(),
                ));
            }
            Cost::None { why } if why.trim().is_empty() => {
                return Err(RecordError::InvalidCost(
                    "no figure and no reason why".into(),
                ));
            }
            _ => {}
        }
        for tape in &self.tapes {
            check_tape(tape)?;
        }
        Ok(())
    }
}

fn check_count(at: &str, k: u64, n: u64) -> Result<(), RecordError> {
    if k > n {
        return Err(RecordError::InvalidNumber {
            at: at.to_owned(),
            why: format!("k = {k} exceeds n = {n}"),
        });
    }
    Ok(())
}

fn check_unit(at: &str, name: &str, x: f64) -> Result<(), RecordError> {
    if !(0.0..=1.0).contains(&x) {
        return Err(RecordError::InvalidNumber {
            at: at.to_owned(),
            why: format!("{name} = {x} is outside [0, 1]"),
        });
    }
    Ok(())
}

fn check_interval(at: &str, i: &Interval) -> Result<(), RecordError> {
    check_count(at, i.k, i.n)?;
    check_unit(at, "rate", i.rate)?;
    check_unit(at, "low", i.low)?;
    check_unit(at, "high", i.high)?;
    // Rounding in the writer may put the point a hair outside; more is an error.
    const SLACK: f64 = 1e-9;
    if i.low > i.rate + SLACK || i.rate > i.high + SLACK {
        return Err(RecordError::InvalidNumber {
            at: at.to_owned(),
            why: format!(
                "interval [{}, {}] does not contain {}",
                i.low, i.high, i.rate
            ),
        });
    }
    Ok(())
}

fn check_tape(tape: &TapeRef) -> Result<(), RecordError> {
    let bad = |why: &str| RecordError::InvalidTape {
        path: tape.path.clone(),
        why: why.to_owned(),
    };
    if tape.sha256.len() != 64
        || !tape
            .sha256
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(bad("sha256 is not 64 lowercase hex digits"));
    }
    if tape.path.is_empty()
        || tape.path.starts_with('/')
        || tape.path.contains('\\')
        || tape.path.contains(':')
        || tape
            .path
            .split('/')
            .any(|seg| seg == ".." || seg.is_empty())
    {
        return Err(bad(
            "path must be relative, '/'-separated, inside the record's directory",
        ));
    }
    Ok(())
}
