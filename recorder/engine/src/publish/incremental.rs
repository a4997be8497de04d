//! Publishing over a site that already exists: add and replace only what
//! changed, keep every earlier run, and swap the result in whole.
//!
//! A run is identified by its id and its content by the bytes of its
//! published `record.json` (canonical JSON holding every tape's sha256, and
//! its signature): an incoming run whose record would be written byte for
//! byte as the site has it is unchanged and not rewritten; one with the same
//! id and other bytes replaces it; a new id is added; every run the site
//! holds that the inputs do not name is kept (reruns have their own ids, so
//! none is ever replaced or hidden).
//!
//! The new site is assembled in a staging directory beside the old one: the
//! unchanged run directories are hard links into it (no copying, no
//! re-compressing), the changed ones are written fresh, the index (board,
//! badges, viewer, `_headers`) is rebuilt over every run. Only then is the
//! old site moved aside and the new one renamed into its place, so a
//! failure midway leaves the old site as it was. When no run was added or
//! replaced the board keeps its `published_at`, so publishing the same runs
//! twice changes nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use fitness_shared::board::Board;
use fitness_shared::integrity::{self, signing};
use fitness_shared::record::{RunRecord, StandingNotesSet};
use fitness_shared::site;

use super::options::{Merge, PublishOptions, Published};
use super::write::{Source, staging_dir, write_index, write_run};

/// Does `out` hold a site this publisher wrote?
pub fn is_site(out: &Path) -> bool {
    out.join(site::BOARD_JSON).is_file()
}

/// The site's runs: id -> its directory.
fn site_runs(site: &Path) -> anyhow::Result<BTreeMap<String, PathBuf>> {
    let mut out = BTreeMap::new();
    let dir = site.join(site::RUNS_DIR);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(out);
    };
    for entry in entries {
        let entry = entry?;
        if entry.file_type()?.is_dir() && entry.path().join(site::RECORD_FILE).is_file() {
            out.insert(
                entry.file_name().to_string_lossy().into_owned(),
                entry.path(),
            );
        }
    }
    Ok(out)
}

/// The bytes `write_run` would write for this record, when they can be
/// known without copying anything: `None` for an import whose tapes are
/// found and hashed only when they are attached.
fn predicted_record(source: &Source, seed: Option<&[u8; 32]>) -> anyhow::Result<Option<Vec<u8>>> {
    let mut record = source.record.clone();
    match (&source.tape_dir, record.tapes.is_empty()) {
        (Some(_), true) => return Ok(None),
        (None, _) => record.tapes.clear(),
        (Some(_), false) => {}
    }
    let mut value = serde_json::to_value(&record)?;
    if let Some(seed) = seed {
        crate::integrity::sign_value(&mut value, seed)?;
    }
    Ok(Some(integrity::record_file_bytes(&value)?))
}

/// Every file the record names is in `dir` at the size it says.
fn files_present(record: &RunRecord, dir: &Path) -> bool {
    crate::integrity::named_files(record)
        .iter()
        .all(|(path, _, bytes)| std::fs::metadata(dir.join(path)).is_ok_and(|m| m.len() == *bytes))
}

/// Hard-link the tree `from` at `to` (copy where links are refused).
fn link_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("failed to create {}", to.display()))?;
    for entry in
        std::fs::read_dir(from).with_context(|| format!("failed to read {}", from.display()))?
    {
        let entry = entry?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            link_tree(&src, &dst)?;
        } else if kind.is_file() && std::fs::hard_link(&src, &dst).is_err() {
            std::fs::copy(&src, &dst)
                .with_context(|| format!("failed to copy {}", src.display()))?;
        }
    }
    Ok(())
}

fn read_record(dir: &Path) -> anyhow::Result<(RunRecord, Vec<u8>)> {
    let path = dir.join(site::RECORD_FILE);
    let bytes =
        std::fs::read(&path).with_context(|| format!("failed to read {}", path.display()))?;
    let record = RunRecord::from_slice(&bytes).with_context(|| {
        format!(
            "{} in the existing site is not a valid record",
            path.display()
        )
    })?;
    Ok((record, bytes))
}

/// Merge `sources` into the site at `args.out`.
pub(super) fn publish(
    args: &PublishOptions,
    sources: Vec<Source>,
    mut standing: BTreeMap<String, StandingNotesSet>,
    seed: Option<&[u8; 32]>,
    viewer: Option<&Path>,
) -> anyhow::Result<Published> {
    let site = &args.out;
    let old_board: Board = serde_json::from_slice(
        &std::fs::read(site.join(site::BOARD_JSON)).context("failed to read the site's board")?,
    )
    .context("the site's data/board.json is not a board")?;
    let new_key = seed.map(signing::public_key_b64);
    if let Some(old) = &old_board.publisher_key
        && new_key.as_ref() != Some(old)
    {
        bail!(
            "the site's records are signed by the publisher key {old}: publish over it with the same --sign-key, or pass --replace to publish these runs alone"
        );
    }
    // The site's standing notes stay (the inputs' win where both have one).
    if let Ok(entries) = std::fs::read_dir(site.join(site::STANDING_NOTES_DIR)) {
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(hex) = path.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            let key = format!("sha256:{hex}");
            if standing.contains_key(&key) {
                continue;
            }
            let set: StandingNotesSet = serde_json::from_slice(&std::fs::read(&path)?)
                .with_context(|| format!("{} is not a standing-notes set", path.display()))?;
            standing.insert(key, set);
        }
    }

    let existing = site_runs(site)?;
    let staging = staging_dir(site)?;
    let result = assemble(
        &staging, &existing, sources, &standing, seed, viewer, args, &old_board,
    );
    match result {
        Ok((board, tapes, badges, merge)) => {
            swap(&staging, site)?;
            Ok(Published {
                site: site.clone(),
                board,
                tapes,
                badges,
                merge: Some(merge),
                unredacted: Vec::new(),
            })
        }
        Err(err) => {
            let _ = std::fs::remove_dir_all(&staging);
            Err(err)
        }
    }
}

/// One run of this publish, merged into the site: a run whose record and
/// files are as they would be written is linked from the old site as it is;
/// any other is written anew, with how many tapes it wrote.
fn merge_one(
    staging: &Path,
    existing: Option<&PathBuf>,
    source: Source,
    seed: Option<&[u8; 32]>,
    merge: &mut Merge,
) -> anyhow::Result<(RunRecord, Option<usize>)> {
    let runs = staging.join(site::RUNS_DIR);
    let id = source.record.run.id.clone();
    let old = existing
        .map(|dir| read_record(dir).map(|r| (dir, r)))
        .transpose()?;
    if let Some((dir, (record, bytes))) = &old
        && predicted_record(&source, seed)?.as_deref() == Some(bytes.as_slice())
        && files_present(record, dir)
    {
        link_tree(dir, &runs.join(&id))?;
        merge.unchanged += 1;
        return Ok((record.clone(), None));
    }
    let (record, written) = write_run(staging, source, seed)?;
    match old {
        None => merge.added += 1,
        Some((_, (_, bytes))) => {
            let now = std::fs::read(runs.join(&id).join(site::RECORD_FILE))?;
            if now == bytes {
                merge.unchanged += 1;
            } else {
                merge.replaced += 1;
            }
        }
    }
    Ok((record, Some(written)))
}

#[expect(
    clippy::too_many_arguments,
    reason = "one call site, each argument a distinct input"
)]
fn assemble(
    staging: &Path,
    existing: &BTreeMap<String, PathBuf>,
    sources: Vec<Source>,
    standing: &BTreeMap<String, StandingNotesSet>,
    seed: Option<&[u8; 32]>,
    viewer: Option<&Path>,
    args: &PublishOptions,
    old_board: &Board,
) -> anyhow::Result<(Board, usize, usize, Merge)> {
    let mut merge = Merge::default();
    let mut records = Vec::with_capacity(existing.len() + sources.len());
    let mut named = BTreeSet::new();
    // Runs written anew (added or replaced): their pages are rendered.
    let mut fresh = BTreeSet::new();
    let mut tapes = 0;
    let runs = staging.join(site::RUNS_DIR);
    for source in sources {
        let id = source.record.run.id.clone();
        super::write::check_segment(&id)?;
        named.insert(id.clone());
        let (record, written) = merge_one(staging, existing.get(&id), source, seed, &mut merge)?;
        if let Some(written) = written {
            fresh.insert(id);
            tapes += written;
        }
        records.push(record);
    }
    for (id, dir) in existing {
        if named.contains(id) {
            continue;
        }
        let (record, _) = read_record(dir)?;
        link_tree(dir, &runs.join(id))?;
        records.push(record);
        merge.kept += 1;
    }
    // Nothing new: the board keeps its date, so the site is unchanged.
    let mut args = args.clone();
    if args.published_at.is_none() && merge.added == 0 && merge.replaced == 0 {
        args.published_at = Some(old_board.published_at.clone());
    }
    std::fs::create_dir_all(&runs)
        .with_context(|| format!("failed to create {}", runs.display()))?;
    let unchanged: BTreeSet<String> = records
        .iter()
        .map(|r| r.run.id.clone())
        .filter(|id| !fresh.contains(id))
        .collect();
    let (board, badges) = write_index(
        staging,
        &records,
        standing,
        seed,
        viewer,
        &args,
        Some((old_board, &unchanged)),
    )?;
    Ok((board, tapes, badges, merge))
}

/// Move the old site aside, the new one into its place, then drop the old.
/// If the second move fails the old site goes back.
fn swap(staging: &Path, site: &Path) -> anyhow::Result<()> {
    let mut aside = site.as_os_str().to_owned();
    aside.push(format!(".replaced-{}", std::process::id()));
    let aside = PathBuf::from(aside);
    std::fs::rename(site, &aside)
        .with_context(|| format!("failed to move the old site {} aside", site.display()))?;
    if let Err(e) = std::fs::rename(staging, site) {
        let _ = std::fs::rename(&aside, site);
        let _ = std::fs::remove_dir_all(staging);
        return Err(e).with_context(|| format!("failed to move the site into {}", site.display()));
    }
    let _ = std::fs::remove_dir_all(&aside);
    Ok(())
}
