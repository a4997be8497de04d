//! Synthetic runs for the publish benchmarks: the anchor's 33 real records,
//! cloned under new ids and servers, with what really varies between runs
//! (suite hash, start time) varied, so clones compress no better than real
//! rows would. With `tapes`, each clone carries its source run's real anchor
//! tapes (hard-linked, so the runs directory costs no disk).

use std::path::Path;

use fitness_shared::record::import::{ImportSet, import_runs};

/// The anchor's records with their standing-notes sets, and the directory
/// of their traces.
pub fn anchor() -> anyhow::Result<(ImportSet, std::path::PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/anchor-board");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("runs.json"))?)?;
    Ok((import_runs(&doc)?, dir.join("traces")))
}

/// Write runs `range` (their indices) as `<dir>/<id>/record.json`, and the
/// standing-notes sets they carry as `<dir>/standing-notes/<hex>.json`, as
/// a runs directory holds them.
pub fn write_runs(
    dir: &Path,
    range: std::ops::Range<usize>,
    set: &ImportSet,
    traces: Option<&Path>,
) -> anyhow::Result<()> {
    let records = &set.records;
    let notes = dir.join(fitness_shared::site::STANDING_NOTES_DIR);
    std::fs::create_dir_all(&notes)?;
    for (id, notes_set) in &set.standing_notes {
        let hex = id.trim_start_matches("sha256:");
        let bytes =
            fitness_shared::integrity::record_file_bytes(&serde_json::to_value(notes_set)?)?;
        std::fs::write(notes.join(format!("{hex}.json")), bytes)?;
    }
    for i in range {
        let source = &records[i % records.len()];
        let mut record = source.clone();
        record.run.id = format!("{}-{i:05}", record.run.id);
        record.server.slug = format!("{}-{}", record.server.slug, i % 700);
        record.tapes.clear();
        record.run.suite_hash =
            fitness_shared::integrity::sha256_hex(format!("suite-{i}").as_bytes());
        record.run.started_at = format!(
            "2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + i % 12,
            1 + i % 28,
            i % 24,
            (i * 7) % 60,
            (i * 13) % 60,
            (i * 37) % 1000
        );
        let run_dir = dir.join(&record.run.id);
        std::fs::create_dir_all(&run_dir)?;
        if let Some(from) = traces
            .map(|t| t.join(&source.run.id))
            .filter(|d| d.is_dir())
        {
            for (plane, name) in [
                (fitness_shared::tape::Plane::Mcp, "mcp.jsonl"),
                (fitness_shared::tape::Plane::Agent, "agent.jsonl"),
            ] {
                let src = from.join(name);
                if !src.is_file() {
                    continue;
                }
                std::fs::hard_link(&src, run_dir.join(name))
                    .or_else(|_| std::fs::copy(&src, run_dir.join(name)).map(|_| ()))?;
                let bytes = std::fs::read(&src)?;
                record.tapes.push(fitness_shared::record::TapeRef {
                    plane,
                    path: name.to_owned(),
                    sha256: fitness_shared::integrity::sha256_hex(&bytes),
                    bytes: bytes.len() as u64,
                });
            }
        }
        let bytes = fitness_shared::integrity::record_file_bytes(&serde_json::to_value(&record)?)?;
        std::fs::write(run_dir.join("record.json"), bytes)?;
    }
    Ok(())
}
