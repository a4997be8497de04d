//! The floors ARCHITECTURE.md draws, checked against the code's imports.
//!
//! ARCHITECTURE.md holds one fenced ```` ```floors ```` block per folder
//! whose rooms it orders: the block's first line is the folder (a crate's
//! `src`, or a module folder inside it), each later line one floor, the top
//! floor first, naming the rooms on it (a module: `name.rs` or `name/`). A
//! room may use the rooms on the floors below its own and nothing above or
//! beside it; the folder's own face (`lib.rs`, `main.rs`, `mod.rs`) stands
//! above every room and may use any of them, but no room may use the face.
//! Every module of a listed folder (but a `tests.rs` of unit tests) must be
//! on a floor, so the list cannot silently fall behind the code.
//!
//! Uses are read from the text: every `crate::` and `super::` path in code
//! that is not a test module (`#[cfg(test)]` ends a file's reading), with
//! `use` groups (`crate::{a, b::c}`) opened. Crate edges need no check here:
//! Cargo already refuses an import the dependency graph lacks.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

/// One folder's floors, as ARCHITECTURE.md lists them.
#[derive(Debug, Clone)]
pub struct Floors {
    /// The folder, relative to the workspace root (`recorder/engine/src`).
    pub folder: String,
    /// Room name to floor: 0 is the top floor.
    pub rooms: BTreeMap<String, usize>,
}

/// A use that breaks the floors.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    pub file: String,
    pub line: usize,
    pub text: String,
    pub why: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {} ({})",
            self.file, self.line, self.text, self.why
        )
    }
}

/// Every ```` ```floors ```` block of `markdown`.
pub fn parse(markdown: &str) -> anyhow::Result<Vec<Floors>> {
    let mut out = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "```floors" {
            continue;
        }
        let mut body = Vec::new();
        for line in lines.by_ref() {
            if line.trim() == "```" {
                break;
            }
            let line = line.split('#').next().unwrap_or("").trim();
            if !line.is_empty() {
                body.push(line.to_owned());
            }
        }
        let Some((folder, floors)) = body.split_first() else {
            bail!("an empty floors block");
        };
        let mut rooms = BTreeMap::new();
        for (floor, line) in floors.iter().enumerate() {
            for room in line.split_whitespace() {
                if rooms.insert(room.to_owned(), floor).is_some() {
                    bail!("{folder}: the room {room} is listed twice");
                }
            }
        }
        out.push(Floors {
            folder: folder.clone(),
            rooms,
        });
    }
    Ok(out)
}

/// The crate source folder (`.../src`) a folder belongs to, and the module
/// path of the folder inside it.
fn crate_root(folder: &str) -> anyhow::Result<(String, Vec<String>)> {
    let parts: Vec<&str> = folder.split('/').collect();
    let Some(src) = parts.iter().rposition(|p| *p == "src") else {
        bail!("{folder} is not inside a crate's src folder");
    };
    Ok((
        parts[..=src].join("/"),
        parts[src + 1..].iter().map(|s| (*s).to_owned()).collect(),
    ))
}

/// The module path of a source file under its crate's `src`.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if let Some(last) = parts.pop() {
        let stem = last.trim_end_matches(".rs");
        if !["mod", "lib", "main"].contains(&stem) {
            parts.push(stem.to_owned());
        }
    }
    parts
}

/// Every `.rs` file under `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            rust_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    Ok(())
}

/// The code of a file that is not a test module, a line at a time, with
/// comments removed.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("#[cfg(test)]") {
            break;
        }
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        out.push((i + 1, code.to_owned()));
    }
    out
}

/// The paths a line uses: each `crate::` or `super::` path, as its segments
/// (`crate` resolved to the empty root, `super` against `module`), with
/// `use` groups opened one level (`crate::{a, b::c}` gives `a` and `b::c`).
fn used_paths(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let (start, base) = match (rest.find("crate::"), rest.find("super::")) {
            (Some(c), Some(s)) if c < s => (c, "crate"),
            (Some(c), None) => (c, "crate"),
            (_, Some(s)) => (s, "super"),
            (None, None) => break,
        };
        let begin = at + start;
        // `$crate::` and `fitness_shared::...::crate` are not this crate's path.
        let preceded = begin > 0 && {
            let c = bytes[begin - 1];
            c.is_ascii_alphanumeric() || c == b'_' || c == b'$'
        };
        at = begin + base.len();
        if preceded {
            continue;
        }
        // Read `super::super::...` and the segments after the base.
        let mut segments: Vec<String> = Vec::new();
        let mut supers = 0;
        if base == "super" {
            supers = 1;
        }
        let mut cursor = at;
        loop {
            let tail = &code[cursor..];
            let Some(tail) = tail.strip_prefix("::") else {
                break;
            };
            cursor += 2;
            if tail.starts_with("super") && base == "super" && segments.is_empty() {
                supers += 1;
                cursor += "super".len();
                continue;
            }
            if let Some(group) = tail.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let item = item.trim();
                    if item.is_empty() || item == "self" {
                        continue;
                    }
                    let mut path = segments.clone();
                    path.extend(
                        item.split("::")
                            .map(|s| s.split_whitespace().next().unwrap_or("").to_owned())
                            .filter(|s| !s.is_empty() && s != "{"),
                    );
                    out.push(resolve(base, supers, path, module));
                }
                segments.clear();
                cursor = code.len();
                break;
            }
            let ident: String = tail
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if ident.is_empty() {
                break;
            }
            cursor += ident.len();
            segments.push(ident);
        }
        if !segments.is_empty() {
            out.push(resolve(base, supers, segments, module));
        }
        at = cursor.max(at);
    }
    out
}

/// An absolute module path from a base (`crate` or `super` repeated) and the
/// segments after it.
fn resolve(base: &str, supers: usize, segments: Vec<String>, module: &[String]) -> Vec<String> {
    if base == "crate" {
        return segments;
    }
    // A face (`x/mod.rs`) and a file (`x.rs`) are both the module `x`:
    // `super` is the module above it.
    let depth = module.len().saturating_sub(supers);
    let mut path: Vec<String> = module[..depth].to_vec();
    path.extend(segments);
    path
}

/// Check every folder's floors under the workspace root `root`.
pub fn check(root: &Path, floors: &[Floors]) -> anyhow::Result<Vec<Violation>> {
    let mut violations = BTreeSet::new();
    for block in floors {
        let (src, folder_module) = crate_root(&block.folder)?;
        let folder = root.join(&block.folder);
        // Every module of the folder is on a floor.
        for entry in std::fs::read_dir(&folder)
            .with_context(|| format!("reading the listed folder {}", folder.display()))?
        {
            let path = entry?.path();
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            let room = if path.is_dir() {
                name.into_owned()
            } else if let Some(stem) = name.strip_suffix(".rs") {
                // A folder's face, and a file of unit tests (`mod tests;`).
                if ["mod", "lib", "main", "tests"].contains(&stem) {
                    continue;
                }
                stem.to_owned()
            } else {
                continue;
            };
            if !block.rooms.contains_key(&room) {
                violations.insert(Violation {
                    file: block.folder.clone(),
                    line: 0,
                    text: room.clone(),
                    why: "a module of this folder is on no floor of ARCHITECTURE.md".into(),
                });
            }
        }
        for room in block.rooms.keys() {
            let exists = folder.join(format!("{room}.rs")).is_file() || folder.join(room).is_dir();
            if !exists {
                violations.insert(Violation {
                    file: block.folder.clone(),
                    line: 0,
                    text: room.clone(),
                    why: "ARCHITECTURE.md lists a room this folder does not have".into(),
                });
            }
        }
        let mut files = Vec::new();
        rust_files(&folder, &mut files)?;
        for file in files {
            let relative = file.strip_prefix(root.join(&src))?.to_path_buf();
            let module = module_of(&relative);
            let Some(source_room) = room_of(&module, &folder_module) else {
                continue;
            };
            let text = std::fs::read_to_string(&file)?;
            let shown = file.strip_prefix(root)?.display().to_string();
            for (line, code) in code_lines(&text) {
                for used in used_paths(&code, &module) {
                    let Some(target) = target_of(&used, &folder_module, &block.rooms) else {
                        continue;
                    };
                    if let Some(why) = judge(&source_room, &target, &block.rooms) {
                        violations.insert(Violation {
                            file: shown.clone(),
                            line,
                            text: format!("{}::{}", "crate", used.join("::")),
                            why,
                        });
                    }
                }
            }
        }
    }
    Ok(violations.into_iter().collect())
}

/// Where a file stands in a folder: its room, or `None` for the folder's
/// face (or a file outside the folder).
fn room_of(module: &[String], folder: &[String]) -> Option<Option<String>> {
    let rest = module.strip_prefix(folder)?;
    Some(rest.first().cloned())
}

/// What a used path reaches in a folder: `Some(Some(room))`, `Some(None)`
/// for the folder's face (an item defined or re-exported there), `None`
/// when the path leaves the folder.
fn target_of(
    used: &[String],
    folder: &[String],
    rooms: &BTreeMap<String, usize>,
) -> Option<Option<String>> {
    let rest = used.strip_prefix(folder)?;
    match rest.first() {
        Some(first) if rooms.contains_key(first) => Some(Some(first.clone())),
        Some(_) => Some(None),
        // The folder itself (`use super::{self}`): its face.
        None => Some(None),
    }
}

/// Why a use from `source` to `target` breaks the floors, if it does.
fn judge(
    source: &Option<String>,
    target: &Option<String>,
    rooms: &BTreeMap<String, usize>,
) -> Option<String> {
    match (source, target) {
        // The face may use any room; a room may use itself.
        (None, _) => None,
        (Some(s), Some(t)) if s == t => None,
        (Some(s), None) => Some(format!(
            "the room {s} uses its folder's face, which stands above every room"
        )),
        (Some(s), Some(t)) => {
            // A room on no floor is reported once, by the folder check.
            let (Some(&fs), Some(&ft)) = (rooms.get(s), rooms.get(t)) else {
                return None;
            };
            if ft > fs {
                None
            } else if ft == fs {
                Some(format!("{s} and {t} stand on one floor"))
            } else {
                Some(format!("{s} uses {t}, a floor above it"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(s: &str) -> Vec<String> {
        s.split("::").map(str::to_owned).collect()
    }

    #[test]
    fn paths_are_read_from_uses_groups_and_inline_paths() {
        let module = m("suite::generators::walk");
        let got = used_paths("use crate::{mcp::connect::Session, model};", &module);
        assert_eq!(got, vec![m("mcp::connect::Session"), m("model")]);
        let got = used_paths("let x = super::super::task::Task::new();", &module);
        assert_eq!(got, vec![m("suite::task::Task::new")]);
        assert!(used_paths("$crate::process::print_line(x)", &module).is_empty());
    }
}
