//! `fitness publish`: turn run directories (and imported `fitness-report/1`
//! runs) into a static site anyone can host.
//!
//! Layout written under `--out SITE` (the paths are [`fitness_shared::site`]'s):
//! - `index.html`, `runs/<id>/index.html`, `servers/<slug>/index.html`: the
//!   board, every record page and every server's history, pre-rendered from
//!   the viewer's components ([`pages`]) so they paint before any wasm and
//!   read with JavaScript off;
//! - `data/board.json`: one compact row per run ([`fitness_shared::board`]),
//!   which the wasm hydrates the board from;
//! - `runs/<id>/record.json` (canonical JSON, signed when a key is given) and
//!   the run's tapes, each with a precompressed `.gz` beside it;
//! - `standing-notes/<hex>.json`: notes published once, not per run;
//! - `badges/<server-slug>.svg` for the server's newest run;
//! - the viewer's release build, and `_headers` for static hosts (the same
//!   rules `fitness serve` applies).
//!
//! The site is assembled in a staging directory beside `SITE` and moved into
//! place only when complete, so a failed publish never leaves half a site.
//! Nothing is read through a symlink that leads out of its run directory (or
//! the imported traces' run directory): such a publish fails and names it.

pub mod badge;
mod files;
pub mod incremental;
pub mod options;
pub mod pages;
mod write;

pub use options::{Merge, PublishOptions, Published};
pub use pages::inline_script_hashes;
use write::{Source, replace_dir, staging_dir, write_index, write_run};
pub use write::{attach_tapes, check_segment};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use fitness_shared::board::Board;
use fitness_shared::record::import::import_runs;
use fitness_shared::record::{RunRecord, StandingNotesSet};
use fitness_shared::site;
use serde_json::Value;

pub fn publish(args: &PublishOptions) -> anyhow::Result<Published> {
    if args.runs.is_empty() && args.import.is_none() {
        bail!("nothing to publish: name at least one runs directory or --import runs.json");
    }
    let seed = args
        .sign_key
        .as_deref()
        .map(crate::integrity::read_secret)
        .transpose()?;
    let viewer = viewer_dir(args)?;

    let (sources, standing) = sources(args)?;
    let unredacted = sources
        .iter()
        .map(|s| &s.record)
        .filter(|r| r.redactions.is_none() && r.imported.is_none())
        .map(|r| r.run.id.clone())
        .collect();

    if !args.replace && incremental::is_site(&args.out) {
        let mut published =
            incremental::publish(args, sources, standing, seed.as_ref(), viewer.as_deref())?;
        published.unredacted = unredacted;
        return Ok(published);
    }
    let staging = staging_dir(&args.out)?;
    let result = write_site(
        &staging,
        sources,
        &standing,
        seed.as_ref(),
        viewer.as_deref(),
        args,
    );
    match result {
        Ok((board, tapes, badges)) => {
            replace_dir(&staging, &args.out)?;
            Ok(Published {
                site: args.out.clone(),
                board,
                tapes,
                badges,
                merge: None,
                unredacted,
            })
        }
        Err(err) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(err)
        }
    }
}

/// Every run to publish, read from the runs directories and the import,
/// with the standing notes they carry. Two runs with one id are refused.
fn sources(
    args: &PublishOptions,
) -> anyhow::Result<(Vec<Source>, BTreeMap<String, StandingNotesSet>)> {
    let mut sources: Vec<Source> = Vec::new();
    let mut standing: BTreeMap<String, StandingNotesSet> = BTreeMap::new();
    for dir in &args.runs {
        sources.extend(read_runs_dir(dir, &mut standing)?);
    }
    if let Some(path) = &args.import {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("failed to read {}", path.display()))?;
        let doc: Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        let set =
            import_runs(&doc).with_context(|| format!("failed to import {}", path.display()))?;
        standing.extend(set.standing_notes);
        for record in set.records {
            let tape_dir = args
                .traces
                .as_ref()
                .map(|t| t.join(&record.run.id))
                .filter(|d| d.is_dir());
            sources.push(Source { record, tape_dir });
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for source in &sources {
        if !seen.insert(source.record.run.id.clone()) {
            bail!(
                "run id {} appears twice; every published run needs its own id",
                source.record.run.id
            );
        }
    }
    Ok((sources, standing))
}

fn viewer_dir(args: &PublishOptions) -> anyhow::Result<Option<PathBuf>> {
    if args.no_viewer {
        return Ok(None);
    }
    let dir = args.viewer.clone().unwrap_or_else(|| PathBuf::from("dist"));
    if !dir.join("index.html").is_file() {
        bail!(
            "no viewer build at {} (run `trunk build --release`, pass --viewer DIR, or publish data only with --no-viewer)",
            dir.display()
        );
    }
    Ok(Some(dir))
}

/// Runs in `dir`: every `<id>/record.json`, validated. Standing-notes sets in
/// `dir/standing-notes/` come along.
fn read_runs_dir(
    dir: &Path,
    standing: &mut BTreeMap<String, StandingNotesSet>,
) -> anyhow::Result<Vec<Source>> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("failed to read runs directory {}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let record_path = path.join(site::RECORD_FILE);
        if record_path.is_file() {
            let run_dir = std::fs::canonicalize(&path)
                .with_context(|| format!("failed to resolve {}", path.display()))?;
            crate::serve::resolve_within(&run_dir, &record_path)?;
            let text = std::fs::read_to_string(&record_path)
                .with_context(|| format!("failed to read {}", record_path.display()))?;
            let record = RunRecord::from_json(&text).with_context(|| {
                format!(
                    "{} is not a valid fitness-report/2 record",
                    record_path.display()
                )
            })?;
            out.push(Source {
                record,
                tape_dir: Some(path),
            });
        } else if path
            .file_name()
            .is_some_and(|n| n == site::STANDING_NOTES_DIR)
        {
            let notes_dir = std::fs::canonicalize(&path)
                .with_context(|| format!("failed to resolve {}", path.display()))?;
            for entry in std::fs::read_dir(&path)?.filter_map(|e| e.ok()) {
                let p = entry.path();
                let Some(hex) = p.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                crate::serve::resolve_within(&notes_dir, &p)?;
                let text = std::fs::read_to_string(&p)
                    .with_context(|| format!("failed to read {}", p.display()))?;
                let set: StandingNotesSet = serde_json::from_str(&text)
                    .with_context(|| format!("{} is not a standing-notes set", p.display()))?;
                standing.insert(format!("sha256:{hex}"), set);
            }
        }
    }
    if out.is_empty() {
        bail!(
            "no runs in {} (expected <run-id>/record.json)",
            dir.display()
        );
    }
    Ok(out)
}

fn write_site(
    site: &Path,
    sources: Vec<Source>,
    standing: &BTreeMap<String, StandingNotesSet>,
    seed: Option<&[u8; 32]>,
    viewer: Option<&Path>,
    args: &PublishOptions,
) -> anyhow::Result<(Board, usize, usize)> {
    let mut records = Vec::with_capacity(sources.len());
    let mut tapes = 0usize;
    for source in sources {
        let (record, written) = write_run(site, source, seed)?;
        tapes += written;
        records.push(record);
    }
    let (board, badges) = write_index(site, &records, standing, seed, viewer, args, None)?;
    Ok((board, tapes, badges))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_scripts_are_hashed_and_external_ones_skipped() {
        let html = r#"<script src="/a.js"></script><script type="module">boot()</script>"#;
        let hashes = inline_script_hashes(html);
        assert_eq!(hashes.len(), 1);
        // printf 'boot()' | openssl dgst -sha256 -binary | base64
        assert_eq!(
            hashes[0],
            "sha256-MeZS89WlF0u+o0hCvHTBt4q1WHU+U+sJKgbdRUc36mY="
        );
    }

    #[test]
    fn verify_key_check_uses_integrity() {
        // The board's key is the same base64 key `fitness verify --key` takes.
        let seed = [7u8; 32];
        let key = fitness_shared::integrity::signing::public_key_b64(&seed);
        assert!(fitness_shared::integrity::decode_public_key(&key).is_ok());
    }
}
