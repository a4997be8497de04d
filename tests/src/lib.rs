//! Helpers shared by the end-to-end tests: locating the workspace, serving a
//! directory on 127.0.0.1, and driving headless Chromium through chromedriver
//! with guaranteed clean-up.

pub mod browser;
pub mod serve;

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
