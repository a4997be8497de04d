//! Published sites for the browser tests and the benchmarks, written by the
//! product's own `fitness publish` (called as a library), so a test opens
//! exactly the pages, files and headers a reader would get.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use fitness_recorder::publish::{PublishOptions, Published, publish};
use fitness_shared::record::{RunRecord, StandingNotesSet};

use crate::{viewer_dist, workspace_root};

/// A published site in a temporary directory (removed when dropped).
pub struct Site {
    _dir: tempfile::TempDir,
    /// The site's root directory.
    pub root: PathBuf,
    /// The publisher key the site was signed with, if any.
    pub key: Option<PathBuf>,
    pub published: Published,
}

impl Site {
    /// A second key, made beside the site's, for "signed by someone else".
    pub fn other_key(&self) -> anyhow::Result<PathBuf> {
        let path = self.root.with_file_name("other.key");
        if !path.exists() {
            fitness_recorder::integrity::generate(&path)?;
        }
        Ok(path)
    }
}

/// The anchor's runs directory in the repository.
pub fn anchor_dir() -> PathBuf {
    workspace_root().join("fixtures/anchor-board")
}

/// What to publish and how.
pub struct Publish<'a> {
    /// Runs as records (written into a runs directory first, with their
    /// tapes from the anchor's traces where it has them), with the
    /// standing-notes sets they reference.
    pub records: Option<(&'a [RunRecord], &'a BTreeMap<String, StandingNotesSet>)>,
    /// Import the anchor's `runs.json`, with its tapes.
    pub anchor: bool,
    /// Sign with a fresh publisher key (the site's key, in board.json).
    pub sign: bool,
    /// Sign the records with a run key of their own before publishing (as
    /// `fitness run --key` does); kept when the site has no key.
    pub records_signed: bool,
}

impl Default for Publish<'_> {
    fn default() -> Self {
        Publish {
            records: None,
            anchor: true,
            sign: true,
            records_signed: false,
        }
    }
}

/// Publish into a fresh temporary directory with the viewer build.
pub fn publish_site(what: Publish<'_>) -> anyhow::Result<Site> {
    let dir = tempfile::tempdir()?;
    let root = dir.path().join("site");
    let key = if what.sign {
        let key = dir.path().join("publisher.key");
        fitness_recorder::integrity::generate(&key)?;
        Some(key)
    } else {
        None
    };
    let mut runs = Vec::new();
    if let Some((records, standing)) = what.records {
        let runs_dir = dir.path().join("runs");
        let run_key = if what.records_signed {
            let path = dir.path().join("run.key");
            fitness_recorder::integrity::generate(&path)?;
            Some(fitness_recorder::integrity::read_secret(&path)?)
        } else {
            None
        };
        write_runs(&runs_dir, records, standing, run_key.as_ref())?;
        runs.push(runs_dir);
    }
    let anchor = anchor_dir();
    let published = publish(&PublishOptions {
        runs,
        import: what.anchor.then(|| anchor.join("runs.json")),
        traces: what.anchor.then(|| anchor.join("traces")),
        out: root.clone(),
        viewer: Some(viewer_dist()?),
        no_viewer: false,
        sign_key: key.clone(),
        published_at: Some("2026-11-30T00:00:00.000Z".to_owned()),
        replace: true,
    })
    .context("fitness publish")?;
    Ok(Site {
        _dir: dir,
        root,
        key,
        published,
    })
}

/// `dir/<id>/record.json` for each record, with the anchor's tapes beside
/// it when the anchor has tapes for that id (named in the record with
/// their hashes), optionally signed with `seed`; and the standing-notes sets
/// in `dir/standing-notes/`.
pub fn write_runs(
    dir: &Path,
    records: &[RunRecord],
    standing: &BTreeMap<String, StandingNotesSet>,
    seed: Option<&[u8; 32]>,
) -> anyhow::Result<()> {
    use fitness_shared::integrity;
    let notes = dir.join(fitness_shared::site::STANDING_NOTES_DIR);
    std::fs::create_dir_all(&notes)?;
    for (id, set) in standing {
        let hex = id.trim_start_matches("sha256:");
        std::fs::write(notes.join(format!("{hex}.json")), serde_json::to_vec(set)?)?;
    }
    let traces = anchor_dir().join("traces");
    for record in records {
        let mut record = record.clone();
        record.tapes.clear();
        record.signature = None;
        let run = dir.join(&record.run.id);
        std::fs::create_dir_all(&run)?;
        let from = traces.join(&record.run.id);
        if from.is_dir() {
            for (plane, name) in fitness_shared::site::TAPE_FILES {
                let bytes = std::fs::read(from.join(name))?;
                std::fs::write(run.join(name), &bytes)?;
                record.tapes.push(fitness_shared::record::TapeRef {
                    plane,
                    path: name.to_owned(),
                    sha256: integrity::sha256_hex(&bytes),
                    bytes: bytes.len() as u64,
                });
            }
        }
        let mut value = serde_json::to_value(&record)?;
        if let Some(seed) = seed {
            integrity::signing::sign_record(&mut value, seed)?;
        }
        std::fs::write(
            run.join(fitness_shared::site::RECORD_FILE),
            integrity::record_file_bytes(&value)?,
        )?;
    }
    Ok(())
}

/// The anchor's 33 records cloned `copies` times with new ids, suite
/// hashes and start times, keeping their servers (so every server is rerun
/// many times), as a board of `33 * copies` runs would be.
pub fn cloned_anchor(copies: usize) -> anyhow::Result<Vec<RunRecord>> {
    let set = crate::anchor_import()?;
    let mut out = Vec::with_capacity(set.records.len() * copies);
    for copy in 0..copies {
        for record in &set.records {
            let mut r = record.clone();
            if copy > 0 {
                r.run.id = format!("{}-c{copy}", r.run.id);
                r.run.suite_hash = fitness_shared::integrity::sha256_hex(
                    format!("{}{copy}", r.run.suite_hash).as_bytes(),
                );
                r.run.started_at = shifted(&r.run.started_at, copy);
            }
            out.push(r);
        }
    }
    Ok(out)
}

/// `2026-08-20T03:20:57.056Z` moved `days` days later, staying a valid
/// timestamp (the day of the month wraps within 28).
pub fn shifted(at: &str, days: usize) -> String {
    let day: usize = at.get(8..10).and_then(|d| d.parse().ok()).unwrap_or(1);
    let month: usize = at.get(5..7).and_then(|m| m.parse().ok()).unwrap_or(1);
    let total = (day - 1) + days;
    let (month, day) = (((month - 1 + total / 28) % 12) + 1, total % 28 + 1);
    format!("{}{month:02}-{day:02}{}", &at[..5], &at[10..])
}
