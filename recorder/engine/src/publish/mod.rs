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
pub mod incremental;
pub mod pages;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use fitness_shared::board::{Board, build_board};
use fitness_shared::integrity::signing;
use fitness_shared::record::import::import_runs;
use fitness_shared::record::{RunRecord, StandingNotesSet, TapeRef};
use fitness_shared::site;
use serde_json::Value;

use crate::serve::headers::{HeaderRules, content_security_policy};

/// What `fitness publish` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct PublishOptions {
    /// Directories holding runs, each run as `<run-id>/record.json` with its tapes.
    pub runs: Vec<PathBuf>,
    /// A `fitness-report/1` runs.json to import alongside.
    pub import: Option<PathBuf>,
    /// Tapes of the imported runs: `<dir>/<run-id>/{mcp,agent}.jsonl`.
    pub traces: Option<PathBuf>,
    /// The site directory to write. When it already holds a site the runs
    /// are merged into it: new ones added, changed ones replaced, every
    /// other run kept (see `replace`).
    pub out: PathBuf,
    /// Replace an existing site with these runs alone instead of merging.
    pub replace: bool,
    /// The viewer's release build (default: `dist/` in the current directory).
    pub viewer: Option<PathBuf>,
    /// Publish data only, without the viewer.
    pub no_viewer: bool,
    /// Sign every record with this key (from `fitness keygen`); its public key
    /// goes into board.json.
    pub sign_key: Option<PathBuf>,
    /// Timestamp stamped on the board (default: now).
    pub published_at: Option<String>,
}

/// What a publish wrote, for the summary line and for tests.
#[derive(Debug)]
pub struct Published {
    pub site: PathBuf,
    pub board: Board,
    pub tapes: usize,
    pub badges: usize,
    /// Set when the runs were merged into an existing site.
    pub merge: Option<incremental::Merge>,
    /// Runs recorded before the redaction policy existed (their records
    /// have no `redactions`): published as written, since their tapes
    /// cannot change without breaking their hashes.
    pub unredacted: Vec<String>,
}

/// One run ready to write: its record and where its tapes live now.
struct Source {
    record: RunRecord,
    /// Directory the record's tape paths are relative to.
    tape_dir: Option<PathBuf>,
}

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

/// Write one run's directory (`runs/<id>/`): its tapes copied and checked,
/// gzipped beside, and its record (signed with `seed`). Returns the record
/// as published and how many tapes were written.
fn write_run(
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
        // The official conformance suite's checks travel with the record.
        if let (Some(from), Some(c)) = (&source.tape_dir, &record.conformance) {
            crate::conformance::copy_files(c, from, &dir)?;
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
fn write_index(
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
fn write_badges(site: &Path, board: &Board) -> anyhow::Result<usize> {
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

/// `sha256-<base64>` of every inline `<script>` body in `html`, for the CSP.
pub fn inline_script_hashes(html: &str) -> Vec<String> {
    use base64::Engine as _;
    use sha2::Digest as _;
    let mut hashes = Vec::new();
    let mut rest = html;
    while let Some(open) = rest.find("<script") {
        let after = &rest[open..];
        let Some(tag_end) = after.find('>') else {
            break;
        };
        let tag = &after[..tag_end];
        let body_start = tag_end + 1;
        let Some(close) = after[body_start..].find("</script>") else {
            break;
        };
        let body = &after[body_start..body_start + close];
        if !tag.contains(" src=") && !body.trim().is_empty() {
            let digest = sha2::Sha256::digest(body.as_bytes());
            hashes.push(format!(
                "sha256-{}",
                base64::engine::general_purpose::STANDARD.encode(digest)
            ));
        }
        rest = &after[body_start + close..];
    }
    hashes
}

fn gzip_beside(path: &Path) -> anyhow::Result<()> {
    let bytes =
        std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&bytes)?;
    let gz = enc.finish()?;
    let mut name = path.as_os_str().to_owned();
    name.push(".gz");
    write_file(Path::new(&name), &gz)
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    for entry in
        std::fs::read_dir(from).with_context(|| format!("failed to read {}", from.display()))?
    {
        let entry = entry?;
        let src = entry.path();
        let dst = to.join(entry.file_name());
        let kind = entry.file_type()?;
        if kind.is_dir() {
            create_dir(&dst)?;
            copy_tree(&src, &dst)?;
        } else if kind.is_file() {
            std::fs::copy(&src, &dst)
                .with_context(|| format!("failed to copy {}", src.display()))?;
        }
    }
    Ok(())
}

fn create_dir(path: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(path).with_context(|| format!("failed to create {}", path.display()))
}

/// Write `bytes` to `path` as a new file: a file there is unlinked first,
/// so a page hard-linked from the site being replaced is never written
/// through (that would change the old site before the swap).
fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, bytes).with_context(|| format!("failed to write {}", path.display()))
}

/// A fresh staging directory beside `out`, on the same filesystem so the
/// final move is a rename.
fn staging_dir(out: &Path) -> anyhow::Result<PathBuf> {
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
fn replace_dir(staging: &Path, out: &Path) -> anyhow::Result<()> {
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
        let key = signing::public_key_b64(&seed);
        assert!(fitness_shared::integrity::decode_public_key(&key).is_ok());
    }
}
