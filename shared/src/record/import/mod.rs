//! Import of `fitness-report/1` records into `fitness-report/2`.
//!
//! Everything the board and the record page show survives: outcome, every
//! gate with its numbers and reason (plus its original detail verbatim),
//! probes, intervals, cost (total or floor, with reasons), generator and
//! runner, extension ledger, notes, trace links and trace statistics. Nothing
//! is guessed: a field the source did not carry stays absent.

mod cost;
mod gates;
mod plan;
mod read;
mod score;
mod server;
mod set;

use std::collections::BTreeMap;

use serde_json::Value;

use super::model::*;
use super::v1::*;
use crate::integrity;
use cost::convert_cost;
use gates::{convert_extensions, convert_gates};
use plan::{convert_prereg, convert_suite};
pub use read::ImportError;
use read::field;
use score::convert_score;
use server::{convert_probe, convert_server};
use set::{attempts, generator_label, standing_notes};

/// The result of importing a set of v1 records.
#[derive(Debug, Clone)]
pub struct ImportSet {
    /// In source order.
    pub records: Vec<RunRecord>,
    /// Standing-notes sets by set id (`sha256:<hex>`).
    pub standing_notes: BTreeMap<String, StandingNotesSet>,
}

/// The anchor board's real records, imported (for the crate's unit tests).
#[cfg(test)]
pub(crate) fn anchor_import() -> ImportSet {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/anchor-board/runs.json"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("anchor runs.json"))
            .expect("anchor runs.json is JSON");
    import_runs(&doc).expect("anchor imports")
}

/// Import a `runs.json` document: an array of v1 records (or one record).
///
/// Standing notes and attempts are properties of the set, so the set is
/// imported together: a note is standing when every run of the same generator
/// carries it and there are at least two such runs; attempts are numbered per
/// server slug, oldest first.
pub fn import_runs(doc: &Value) -> Result<ImportSet, ImportError> {
    let items: Vec<&Value> = match doc {
        Value::Array(items) => items.iter().collect(),
        Value::Object(_) => vec![doc],
        _ => return Err(ImportError::NotRecords),
    };
    let mut parsed = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let found = item.get("schema").and_then(Value::as_str).unwrap_or("");
        if found != crate::record::model::RECORD_SCHEMA_V1 {
            return Err(ImportError::Schema {
                index,
                found: found.to_owned(),
            });
        }
        let record: RecordV1 = serde_json::from_value((*item).clone())
            .map_err(|source| ImportError::Shape { index, source })?;
        parsed.push(record);
    }
    let standing = standing_notes(&parsed)?;
    let attempts = attempts(&parsed);
    let mut records = Vec::with_capacity(parsed.len());
    for (i, (source, value)) in parsed.iter().zip(items).enumerate() {
        let set = standing.by_generator.get(generator_label(source));
        let record = convert(source, value, set, attempts[i].clone())?;
        records.push(record);
    }
    Ok(ImportSet {
        records,
        standing_notes: standing.sets,
    })
}

fn convert(
    r: &RecordV1,
    source: &Value,
    standing: Option<&(String, Vec<String>)>,
    attempt: Option<Attempt>,
) -> Result<RunRecord, ImportError> {
    let id = r.run.id.as_str();
    let outcome = parse_outcome(&r.outcome)
        .ok_or_else(|| field(id, format!("unknown outcome {:?}", r.outcome)))?;
    let source_sha256 =
        integrity::record_hash(source).map_err(|source| ImportError::Integrity {
            run: id.to_owned(),
            source,
        })?;
    let gates = convert_gates(r)?;
    let extensions = convert_extensions(r)?;
    let (own, standing_ref) = split_notes(r, standing);
    let mut kept = serde_json::Map::new();
    if let Some(usage) = source.pointer("/run/judgeUsage") {
        kept.insert("judgeUsage".to_owned(), usage.clone());
    }
    let record = RunRecord {
        schema: crate::record::model::RECORD_SCHEMA.to_owned(),
        run: convert_run(r, attempt),
        server: convert_server(r)?,
        probes: Probes {
            unreachable: None,
            spec_currency: r.probes.spec_currency.clone(),
            findings: r.probes.findings.iter().map(convert_probe).collect(),
        },
        access: None,
        // A /1 record kept no per-arm first-turn counts.
        tool_list: None,
        preregistration: convert_prereg(r),
        suite: convert_suite(r),
        gates,
        extensions,
        outcome,
        score: r.score.as_ref().map(convert_score),
        cost: convert_cost(r),
        notes: Notes {
            standing: standing_ref,
            own,
            score: r.score_notes.clone(),
        },
        tapes: Vec::new(),
        trace_links: r.trace_links.as_ref().map(|t| TraceLinks {
            mcp: t.mcp.clone(),
            agent: t.agent.clone(),
            viewer: t.viewer.clone(),
        }),
        trace_stats: r.trace_stats.clone(),
        imported: Some(ImportProvenance {
            from_schema: crate::record::model::RECORD_SCHEMA_V1.to_owned(),
            source_sha256,
            kept,
        }),
        findings: Vec::new(),
        proposals: Vec::new(),
        rewrite: None,
        redactions: None,
        conformance: None,
        input_requests: None,
        traces: None,
        signature: None,
    };
    record.validate().map_err(|source| ImportError::Invalid {
        run: id.to_owned(),
        source,
    })?;
    Ok(record)
}

/// A run's own notes (those not in its generator's standing set) and the
/// reference to that set, with how many of its notes the run carried.
fn split_notes(
    r: &RecordV1,
    standing: Option<&(String, Vec<String>)>,
) -> (Vec<String>, Option<StandingNotesRef>) {
    match standing {
        Some((set_id, notes)) => {
            let own: Vec<String> = r
                .methods
                .iter()
                .filter(|n| !notes.contains(n))
                .cloned()
                .collect();
            let count = (r.methods.len() - own.len()) as u64;
            (
                own,
                Some(StandingNotesRef {
                    set_id: set_id.clone(),
                    count,
                }),
            )
        }
        None => (r.methods.clone(), None),
    }
}

fn convert_run(r: &RecordV1, attempt: Option<Attempt>) -> RunIdentity {
    RunIdentity {
        id: r.run.id.clone(),
        started_at: r.run.started_at.clone(),
        harness: Producer {
            name: "fitness-report (TypeScript reference)".to_owned(),
            version: r
                .run
                .harness_version
                .clone()
                .unwrap_or_else(|| "unrecorded".to_owned()),
        },
        suite_hash: r.run.suite_hash.clone(),
        runner_model: r.run.runner_model.clone(),
        runner_reported: None,
        judge_model: r.run.judge_model.clone(),
        generator: r.run.generator_version.clone().filter(|g| !g.is_empty()),
        attempt,
        task_budget: r.run.task_budget,
        rate_waits: None,
    }
}

fn parse_outcome(s: &str) -> Option<Outcome> {
    Outcome::ALL.into_iter().find(|o| o.code() == s)
}
