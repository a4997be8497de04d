//! The file operations a site is written with: directories, files, a
//! tree copied, and a precompressed `.gz` beside a file.

use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;

pub(super) fn gzip_beside(path: &Path) -> anyhow::Result<()> {
    let bytes =
        std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&bytes)?;
    let gz = enc.finish()?;
    let mut name = path.as_os_str().to_owned();
    name.push(".gz");
    write_file(Path::new(&name), &gz)
}

pub(super) fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
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

pub(super) fn create_dir(path: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(path).with_context(|| format!("failed to create {}", path.display()))
}

/// Write `bytes` to `path` as a new file: a file there is unlinked first,
/// so a page hard-linked from the site being replaced is never written
/// through (that would change the old site before the swap).
pub(super) fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let _ = std::fs::remove_file(path);
    std::fs::write(path, bytes).with_context(|| format!("failed to write {}", path.display()))
}
