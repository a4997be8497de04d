//! Fingerprint the sources the viewer's views are made of (its own and the
//! shared crate's), as `FITNESS_VIEW_BUILD`. The pre-rendering step (the
//! `fitness` binary) stamps it on every page, the wasm compares it with its
//! own before hydrating: a page rendered by another build of the views is
//! rendered afresh instead of hydrated against a tree that differs.

use std::hash::Hasher as _;
use std::path::Path;

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            visit(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

fn main() {
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&manifest);
    let mut files = Vec::new();
    for dir in [root.join("src"), root.join("../shared/src")] {
        println!("cargo:rerun-if-changed={}", dir.display());
        visit(&dir, &mut files);
    }
    files.sort();
    // SipHash with fixed keys: the same sources give the same value on
    // every build with this toolchain, native and wasm alike.
    let mut hasher = std::hash::DefaultHasher::new();
    for file in &files {
        if let (Ok(rel), Ok(bytes)) = (file.strip_prefix(root), std::fs::read(file)) {
            hasher.write(rel.to_string_lossy().as_bytes());
            hasher.write(&bytes);
        }
    }
    println!(
        "cargo:rustc-env=FITNESS_VIEW_BUILD={:016x}",
        hasher.finish()
    );
}
