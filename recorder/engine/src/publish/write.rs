//! Writing a site's files: each run's directory (record, tapes, their
//! `.gz`), the board index and pages, the badges, and the staging
//! directory a site is assembled in before it is swapped into place; no
//! file is read through a symlink that leads out of its run directory.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use fitness_shared::board::{Board, build_board};
use fitness_shared::integrity::signing;
use fitness_shared::record::{RunRecord, StandingNotesSet, TapeRef};
use fitness_shared::site;

use super::files::{copy_tree, create_dir, gzip_beside, write_file};
use super::options::PublishOptions;
use super::{badge, pages};
use crate::serve::headers::{HeaderRules, content_security_policy};

/// One run ready to write: its record and where its tapes live now.
pub(super) struct Source {
    pub(super) record: RunRecord,
    /// Directory the record's tape paths are relative to.
    pub(super) tape_dir: Option<PathBuf>,
}

/// Write one run's directory (`runs/<id>/`): its tapes copied and checked,
/// gzipped beside, and its record (signed with `seed`). Returns the record
/// as published and how many tapes were written.
pub(super) fn write_run(
    site: &Path,
    source: Source,
    seed: Option<&[u8; 32]>,
) -> anyhow::Result<(RunRecord, usize)> {
    let mut tapes = 0usize;
    {
        let mut record = source.record;
        check_segment(&record.run.id)?;
        let dir = site.join(site::RUNS_DIR).join(&record.run.id);
        create_dir(&dir)?;
        // Tapes: copy the ones the record names (or, for imports, the ones
        // found beside it), then hash what was written.
        match (&source.tape_dir, record.tapes.is_empty()) {
            (Some(from), true) => record.tapes = attach_tapes(from, &dir)?,
            (Some(from), false) => {
                let run_dir = std::fs::canonicalize(from)
                    .with_context(|| format!("failed to resolve {}", from.display()))?;
                for tape in &record.tapes {
                    let src = crate::serve::resolve_within(&run_dir, &from.join(&tape.path))?;
                    let dst = dir.join(&tape.path);
                    if let Some(parent) = dst.parent() {
                        create_dir(parent)?;
                    }
                    std::fs::copy(&src, &dst)
                        .with_context(|| format!("failed to copy tape {}", src.display()))?;
                }
            }
            (None, _) => record.tapes.clear(),
        }
        // The official conformance suite's checks travel with the record,
        // and so does the list of the candidates admission rejected.
        if let (Some(from), Some(c)) = (&source.tape_dir, &record.conformance) {
            crate::conformance::copy_files(c, from, &dir)?;
        }
        if let Some(file) = &record.suite.candidates_file {
            // Only ever the one name: a record cannot place a file elsewhere.
            if file.path != site::CANDIDATES_FILE {
                bail!(
                    "run {}: the candidate list must be {}, not {:?}",
                    record.run.id,
                    site::CANDIDATES_FILE,
                    file.path
                );
            }
            let copied = source.tape_dir.as_ref().and_then(|from| {
                let run_dir = std::fs::canonicalize(from).ok()?;
                let src = crate::serve::resolve_within(&run_dir, &from.join(&file.path)).ok()?;
                std::fs::copy(&src, dir.join(&file.path)).ok()
            });
            let fits = copied.is_some()
                && crate::integrity::hash_file(&dir.join(&file.path))
                    .is_ok_and(|(sha, bytes)| sha == file.sha256 && bytes == file.bytes);
            if !fits {
                bail!(
                    "run {}: the candidate list {} is missing or does not match its record",
                    record.run.id,
                    file.path
                );
            }
            gzip_beside(&dir.join(&file.path))?;
        }
        for tape in &record.tapes {
            let path = dir.join(&tape.path);
            let (sha, bytes) = crate::integrity::hash_file(&path)?;
            if sha != tape.sha256 || bytes != tape.bytes {
                bail!(
                    "tape {} does not match its record (sha256 {sha}, {bytes} bytes; the record says {}, {} bytes)",
                    path.display(),
                    tape.sha256,
                    tape.bytes
                );
            }
            gzip_beside(&path)?;
            tapes += 1;
        }
        record
            .validate()
            .with_context(|| format!("run {}", record.run.id))?;
        let mut value = serde_json::to_value(&record)?;
        if let Some(seed) = seed {
            crate::integrity::sign_value(&mut value, seed)?;
            // The board reads the signature the site publishes.
            record.signature = serde_json::from_value(value["signature"].clone())?;
        }
        crate::integrity::write_record(&dir.join(site::RECORD_FILE), &value)?;
        Ok((record, tapes))
    }
}

/// Everything but the run directories: standing notes, `data/board.json`
/// over `records`, badges, the viewer and `_headers`.
pub(super) fn write_index(
    site: &Path,
    records: &[RunRecord],
    standing: &BTreeMap<String, StandingNotesSet>,
    seed: Option<&[u8; 32]>,
    viewer: Option<&Path>,
    args: &PublishOptions,
    kept: Option<(&Board, &BTreeSet<String>)>,
) -> anyhow::Result<(Board, usize)> {
    if !standing.is_empty() {
        let dir = site.join(site::STANDING_NOTES_DIR);
        create_dir(&dir)?;
        for (id, set) in standing {
            let hex = id.trim_start_matches("sha256:");
            crate::integrity::write_record(
                &dir.join(format!("{hex}.json")),
                &serde_json::to_value(set)?,
            )?;
        }
    }

    let published_at = args.published_at.clone().unwrap_or_else(crate::clock::now);
    let publisher_key = seed.map(signing::public_key_b64);
    let mut board = build_board(records, &published_at, publisher_key);
    // The methods section prints each standing-notes set once, from the board.
    board
        .attach_standing_notes(standing)
        .context("standing notes (publish the runs directory's standing-notes/ with it)")?;
    let shell = match viewer {
        Some(viewer) => {
            let path = viewer.join(site::PAGE_FILE);
            let index_html = std::fs::read_to_string(&path)
                .with_context(|| format!("failed to read {}", path.display()))?;
            Some(pages::shell(viewer, &index_html)?)
        }
        None => None,
    };
    // What every page is made from, so a kept page is one this shell made.
    board.viewer_shell = shell
        .as_ref()
        .map(fitness_viewer::render::Shell::fingerprint);
    let board_json = site.join(site::BOARD_JSON);
    if let Some(parent) = board_json.parent() {
        create_dir(parent)?;
    }
    let board_bytes = serde_json::to_vec(&board)?;
    write_file(&board_json, &board_bytes)?;
    gzip_beside(&board_json)?;

    let badges = write_badges(site, &board)?;

    let mut script_hashes = Vec::new();
    if let (Some(viewer), Some(shell)) = (viewer, &shell) {
        copy_tree(viewer, site)?;
        // A run's page stands as the old site has it when the run, its row,
        // the site's key and the shell are all unchanged.
        let row = |b: &Board, id: &str| b.rows.iter().find(|r| r.id == id).cloned();
        let keep = |id: &str| {
            kept.is_some_and(|(old, unchanged)| {
                unchanged.contains(id)
                    && old.viewer_shell == board.viewer_shell
                    && old.publisher_key == board.publisher_key
                    && row(old, id) == row(&board, id)
            })
        };
        script_hashes = pages::write_pages(site, shell, &board, records, &keep)?.script_hashes;
        pages::precompress_viewer(site, viewer)?;
    }
    let rules = HeaderRules::for_site(&content_security_policy(&script_hashes));
    write_file(&site.join("_headers"), rules.render().as_bytes())?;
    Ok((board, badges))
}

/// A run id becomes a directory name: it must be one plain path segment.
pub fn check_segment(id: &str) -> anyhow::Result<()> {
    if !fitness_shared::site::is_segment(id) {
        bail!("run id {id:?} cannot be used as a directory name");
    }
    Ok(())
}

/// Copy `<traces>/{mcp,agent}.jsonl` beside the record, returning their refs.
pub fn attach_tapes(from: &Path, dir: &Path) -> anyhow::Result<Vec<TapeRef>> {
    let mut refs = Vec::new();
    for (plane, name) in fitness_shared::site::TAPE_FILES {
        let src = from.join(name);
        if !src.is_file() {
            continue;
        }
        let run_dir = std::fs::canonicalize(from)
            .with_context(|| format!("failed to resolve {}", from.display()))?;
        let src = crate::serve::resolve_within(&run_dir, &src)?;
        let dst = dir.join(name);
        std::fs::copy(&src, &dst)
            .with_context(|| format!("failed to copy {} to {}", src.display(), dst.display()))?;
        let (sha256, bytes) = crate::integrity::hash_file(&dst)
            .with_context(|| format!("failed to hash {}", dst.display()))?;
        refs.push(TapeRef {
            plane,
            path: name.to_owned(),
            sha256,
            bytes,
        });
    }
    Ok(refs)
}

/// One badge per server, for its newest run.
pub(super) fn write_badges(site: &Path, board: &Board) -> anyhow::Result<usize> {
    let dir = site.join(site::BADGES_DIR);
    create_dir(&dir)?;
    let mut newest: BTreeMap<&str, &fitness_shared::board::Row> = BTreeMap::new();
    for row in &board.rows {
        // Rows are oldest first, so the last one seen per server wins.
        newest.insert(row.server.slug.as_str(), row);
    }
    for (slug, row) in &newest {
        check_segment(slug)?;
        let (message, colour) = badge::badge_message(row);
        write_file(
            &site.join(site::badge(slug).context("a server slug cannot name a badge")?),
            badge::badge_svg("fitness", &message, colour).as_bytes(),
        )?;
    }
    Ok(newest.len())
}

/// A fresh staging directory beside `out`, on the same filesystem so the
/// final move is a rename.
pub(super) fn staging_dir(out: &Path) -> anyhow::Result<PathBuf> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    create_dir(&parent)?;
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "site".into());
    let staging = parent.join(format!(".{name}.publishing-{}", std::process::id()));
    if staging.exists() {
        std::fs::remove_dir_all(&staging)?;
    }
    create_dir(&staging)?;
    Ok(staging)
}

/// Move the finished site into place. An existing site is replaced only when
/// it looks like one of ours (it has `data/board.json`) or is empty.
pub(super) fn replace_dir(staging: &Path, out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        let ours = out.join(site::BOARD_JSON).is_file();
        let empty = std::fs::read_dir(out)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !ours && !empty {
            let _ = std::fs::remove_dir_all(staging);
            bail!(
                "{} exists and is not a published site; refusing to replace it (choose another --out)",
                out.display()
            );
        }
        std::fs::remove_dir_all(out)
            .with_context(|| format!("failed to remove the old site {}", out.display()))?;
    }
    std::fs::rename(staging, out)
        .with_context(|| format!("failed to move the site into {}", out.display()))
}
