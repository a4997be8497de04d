//! Helpers shared by the end-to-end tests: locating the workspace, serving a
//! directory on 127.0.0.1, publishing sites with the product's own
//! `fitness publish`, and driving headless Chromium through chromedriver
//! with guaranteed clean-up.

pub mod browser;
pub mod floors;
pub mod serve;
pub mod site;
pub mod tapes;

use std::path::PathBuf;

/// The workspace root (the directory holding the top-level `Cargo.toml`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ lives inside the workspace")
        .to_path_buf()
}

/// The viewer's built site (`trunk build --release` output). `FITNESS_DIST`
/// overrides the default `<workspace>/dist`. Fails, rather than skipping, when
/// the build is missing: a browser test that silently passes proves nothing.
pub fn viewer_dist() -> anyhow::Result<PathBuf> {
    let dist = std::env::var_os("FITNESS_DIST")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("dist"));
    anyhow::ensure!(
        dist.join("index.html").is_file(),
        "no viewer build at {} (run `trunk build --release` first, as scripts/test does)",
        dist.display()
    );
    Ok(dist)
}

/// The `fitness` binary: `FITNESS_BIN`, or the one cargo built beside this
/// test (`cargo nextest run --workspace` and `scripts/test` build it).
/// Fails, rather than skipping, when it is missing.
pub fn fitness_bin() -> anyhow::Result<PathBuf> {
    if let Some(bin) = std::env::var_os("FITNESS_BIN") {
        return Ok(PathBuf::from(bin));
    }
    let exe = std::env::current_exe()?;
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .ok_or_else(|| anyhow::anyhow!("no target directory above {}", exe.display()))?;
    let bin = dir.join("fitness");
    anyhow::ensure!(
        bin.is_file(),
        "no fitness binary at {} (run `cargo build -p fitness` first, or set FITNESS_BIN)",
        bin.display()
    );
    Ok(bin)
}

/// Copy the directory tree `from` into `to` (created if missing).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), target)?;
        }
    }
    Ok(())
}

/// The anchor board's 33 records and their standing-notes sets, imported
/// from the `fitness-report/1` fixture.
pub fn anchor_import() -> anyhow::Result<fitness_shared::record::import::ImportSet> {
    use anyhow::Context;
    let runs = workspace_root().join("fixtures/anchor-board/runs.json");
    let doc: serde_json::Value = serde_json::from_slice(
        &std::fs::read(&runs).with_context(|| format!("reading {}", runs.display()))?,
    )?;
    Ok(fitness_shared::record::import::import_runs(&doc)?)
}
