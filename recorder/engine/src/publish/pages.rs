//! The pre-rendered pages of a published site: the board, every run's
//! record page and every server's history page, each a directory with an
//! `index.html` ([`fitness_shared::site`]), rendered by the viewer's own
//! components (`fitness_viewer::render`) into the viewer build's
//! `index.html`. The wasm in that build hydrates them; with JavaScript off
//! they read as they are.
//!
//! The rendering lives in the viewer (views are the viewer's) and the files
//! here: the recorder calls the viewer's pure rendering functions and does
//! the I/O, so the arrows stay recorder -> viewer -> shared and the shared
//! core never sees a view.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;

use anyhow::Context as _;
use fitness_shared::board::Board;
use fitness_shared::record::RunRecord;
use fitness_shared::site::{self, Page};
use fitness_viewer::render;

/// Write a `.gz` beside each of the viewer's own files in the site (its
/// wasm, JavaScript and stylesheet), so `fitness serve` sends them
/// compressed without compressing them on every request.
pub fn precompress_viewer(site: &Path, viewer: &Path) -> anyhow::Result<()> {
    for entry in
        std::fs::read_dir(viewer).with_context(|| format!("failed to read {}", viewer.display()))?
    {
        let name = entry?.file_name();
        let path = site.join(&name);
        let wanted = path
            .extension()
            .is_some_and(|e| e == "wasm" || e == "js" || e == "css");
        if wanted && path.is_file() {
            super::files::gzip_beside(&path)?;
        }
    }
    Ok(())
}

/// The viewer build's shell for pre-rendered pages: its `index.html` and
/// the stylesheet that names ([`render::Shell`]).
pub fn shell(viewer: &Path, index_html: &str) -> anyhow::Result<render::Shell> {
    let rebuild =
        "the viewer build cannot hold pre-rendered pages (rebuild it: `trunk build --release`)";
    let assets = render::Assets::find(index_html).context(rebuild)?;
    let path = viewer.join(assets.stylesheet.trim_start_matches("./"));
    let css = std::fs::read_to_string(&path)
        .with_context(|| format!("failed to read {}", path.display()))?;
    render::Shell::new(index_html, &css).context(rebuild)
}

/// What [`write_pages`] wrote.
#[derive(Debug, Default)]
pub struct Pages {
    /// Pages written (board, records, servers).
    pub pages: usize,
    /// Bytes of the board page.
    pub board_bytes: usize,
    /// `sha256-…` of every inline script the pages carry, for the CSP.
    pub script_hashes: Vec<String>,
}

/// Write every page of the site into `site`, from the viewer build's
/// shell, the board and the records it was built from.
pub fn write_pages(
    site: &Path,
    shell: &render::Shell,
    board: &Board,
    records: &[RunRecord],
    keep: &dyn Fn(&str) -> bool,
) -> anyhow::Result<Pages> {
    let board = Arc::new(board.clone());
    let mut out = Pages::default();
    let mut hashes = BTreeSet::new();
    let mut write = |page: &Page, body: String| -> anyhow::Result<usize> {
        let html = shell.document(page, &body).context(
            "the viewer build cannot hold pre-rendered pages (rebuild it: `trunk build --release`)",
        )?;
        let dir = page
            .dir()
            .with_context(|| format!("{page:?} cannot be a directory of the site"))?;
        let dir = site.join(dir);
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("failed to create {}", dir.display()))?;
        let path = dir.join(site::PAGE_FILE);
        super::files::write_file(&path, html.as_bytes())?;
        // Served precompressed, as the tapes and board.json are.
        super::files::gzip_beside(&path)?;
        hashes.extend(inline_script_hashes(&html));
        out.pages += 1;
        Ok(html.len())
    };

    out.board_bytes = write(&Page::Board, render::board_page(Arc::clone(&board)))?;

    let rows: BTreeMap<&str, &fitness_shared::board::Row> =
        board.rows.iter().map(|r| (r.id.as_str(), r)).collect();
    let site_key = board.publisher_key.is_some();
    let (mut kept_hashes, mut kept_pages) = (BTreeSet::new(), 0);
    for record in records {
        let id = &record.run.id;
        // A kept page (hard-linked from the old site, with its `.gz`) is
        // read for its inline scripts only, never rendered again.
        let kept = site::run_dir(id).map(|d| site.join(d).join(site::PAGE_FILE));
        if keep(id)
            && let Some(path) = kept.filter(|p| p.is_file())
        {
            let html = std::fs::read_to_string(&path)
                .with_context(|| format!("failed to read {}", path.display()))?;
            kept_hashes.extend(inline_script_hashes(&html));
            kept_pages += 1;
            continue;
        }
        let row = rows
            .get(id.as_str())
            .with_context(|| format!("run {id} is not on the board"))?;
        // The candidate list the record names, as this publish wrote it.
        let candidates = record.suite.candidates_file.as_ref().and_then(|f| {
            let path = site.join(site::run_dir(id)?).join(&f.path);
            let bytes = std::fs::read(path).ok()?;
            serde_json::from_slice(&bytes).ok().map(Arc::new)
        });
        let body = render::record_page(
            Arc::new(record.clone()),
            Arc::new((*row).clone()),
            site_key,
            candidates,
        );
        write(&Page::Record(id.clone()), body)?;
    }

    let slugs: BTreeSet<&str> = board.rows.iter().map(|r| r.server.slug.as_str()).collect();
    for slug in slugs {
        let body = render::server_page(Arc::clone(&board), slug);
        write(&Page::Server(slug.to_owned()), body)?;
    }
    hashes.append(&mut kept_hashes);
    out.pages += kept_pages;
    out.script_hashes = hashes.into_iter().collect();
    Ok(out)
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
