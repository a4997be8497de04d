//! `fitness import RUNS.json --out DIR`: convert `fitness-report/1` records
//! (the reference implementation's `runs.json`) into `fitness-report/2`.
//!
//! Writes `DIR/<run-id>/record.json` per run and `DIR/standing-notes/<hex>.json`
//! per standing-notes set. With `--tapes TRACES` the run's `mcp.jsonl` and
//! `agent.jsonl` are copied beside its record and named in it with their
//! sha256 and size; with `--sign-key KEY` every record is signed.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context as _;
use fitness_shared::integrity;
use fitness_shared::record::RunRecord;
use fitness_shared::record::import::import_runs;
use serde_json::Value;

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// A fitness-report/1 runs.json (an array of records, or one record).
    pub runs: PathBuf,
    /// Output directory; gets one `<run-id>/record.json` per run.
    #[arg(long)]
    pub out: PathBuf,
    /// Directory holding `<run-id>/{mcp,agent}.jsonl` tapes to attach.
    #[arg(long)]
    pub tapes: Option<PathBuf>,
    /// Sign every record with this key file (from `fitness keygen`).
    #[arg(long)]
    pub sign_key: Option<PathBuf>,
}

pub fn run(args: ImportArgs) -> anyhow::Result<()> {
    let seed = args
        .sign_key
        .as_deref()
        .map(fitness_recorder::integrity::read_secret)
        .transpose()?;
    let text = std::fs::read_to_string(&args.runs)
        .with_context(|| format!("failed to read {}", args.runs.display()))?;
    let doc: Value = serde_json::from_str(&text)
        .with_context(|| format!("{} is not JSON", args.runs.display()))?;
    let set =
        import_runs(&doc).with_context(|| format!("failed to import {}", args.runs.display()))?;

    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("failed to create {}", args.out.display()))?;
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut with_tapes = 0usize;
    for record in &set.records {
        fitness_recorder::publish::check_segment(&record.run.id)?;
        let dir = args.out.join(&record.run.id);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
        let mut record = record.clone();
        if let Some(traces) = &args.tapes {
            record.tapes =
                fitness_recorder::publish::attach_tapes(&traces.join(&record.run.id), &dir)?;
            if !record.tapes.is_empty() {
                with_tapes += 1;
            }
        }
        record
            .validate()
            .with_context(|| format!("run {}", record.run.id))?;
        let mut value = serde_json::to_value(&record)?;
        if let Some(seed) = &seed {
            fitness_recorder::integrity::sign_value(&mut value, seed)?;
        }
        let path = dir.join(fitness_shared::site::RECORD_FILE);
        fitness_recorder::integrity::write_record(&path, &value)?;
        // Read back through the validating parser: what we wrote must load.
        let written = std::fs::read_to_string(&path)?;
        RunRecord::from_json(&written)
            .with_context(|| format!("{} does not read back", path.display()))?;
        *outcomes.entry(record.outcome.code()).or_default() += 1;
        crate::process::outln!("wrote {}  {}", path.display(), record.outcome.code());
    }
    if !set.standing_notes.is_empty() {
        let dir = args.out.join(fitness_shared::site::STANDING_NOTES_DIR);
        std::fs::create_dir_all(&dir)?;
        for (id, notes) in &set.standing_notes {
            let hex = id.trim_start_matches("sha256:");
            let path = dir.join(format!("{hex}.json"));
            fitness_recorder::integrity::write_record(&path, &serde_json::to_value(notes)?)?;
            crate::process::outln!(
                "wrote {}  {} standing notes of {}",
                path.display(),
                notes.notes.len(),
                notes.generator
            );
        }
    }
    let counts: Vec<String> = outcomes.iter().map(|(k, v)| format!("{v} {k}")).collect();
    crate::process::outln!(
        "imported {} records into {} ({}); tapes attached to {} runs; {}",
        set.records.len(),
        args.out.display(),
        counts.join(", "),
        with_tapes,
        match &seed {
            Some(seed) => format!(
                "signed by key {}",
                integrity::key_fingerprint(&fitness_recorder::integrity::public_bytes(seed)?)
            ),
            None => "unsigned".to_owned(),
        }
    );
    Ok(())
}
