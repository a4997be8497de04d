//! The operator's places, watched on disk while a walk only reads: the
//! folder a stdio server works in, the folders and files on its command
//! line, and the absolute paths given to it with `--env`. A tool that reads
//! by its name can still write (a database server that creates a table on
//! its first call, a code index that leaves its cache in the project), and
//! what it writes there is named on the walk's line.
//!
//! Only each entry's kind, size and time of change are read, never its
//! content; hidden entries count, links are never followed. The
//! recorder's own output (its tapes, its suite file) is passed over, and
//! so are an interpreter's caches (`__pycache__`) and a SQLite reader's
//! shared-memory file (`-shm`) or an empty write-ahead log (`-wal`), which
//! a database opened only to read leaves behind.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Entries read in one snapshot at most, over every place.
const MAX_ENTRIES: usize = 20_000;
/// Levels of folders read below a place.
const MAX_DEPTH: usize = 8;

/// How a place's entries are named where a change is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// By the name relative to the place (the server's working folder).
    Relative,
    /// By the full path (a path on the command line).
    Full,
    /// Not named at all, only counted: the place was given with `--env`,
    /// whose values are kept off disk.
    Counted,
}

/// One place the operator gave the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    pub root: PathBuf,
    pub naming: Naming,
}

/// The places watched, and what the recorder writes itself (never a
/// change of the server's).
#[derive(Debug, Clone, Default)]
pub struct Watched {
    pub places: Vec<Place>,
    pub own: Vec<PathBuf>,
}

/// What one entry looked like.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    dir: bool,
    len: u64,
    modified: Option<SystemTime>,
}

/// The entries of every place at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    entries: BTreeMap<PathBuf, Seen>,
    /// Every entry was read (the cap was not reached): only then is an
    /// entry missing from one of two snapshots a change.
    whole: bool,
}

/// What changed between two snapshots, named as each place says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Entries written, made or removed, by name.
    pub named: Vec<String>,
    /// Entries changed under places not named (given with `--env`).
    pub counted: u64,
}

impl Changes {
    pub fn is_empty(&self) -> bool {
        self.named.is_empty() && self.counted == 0
    }
}

impl Watched {
    /// The entries of every place now.
    pub fn snapshot(&self) -> Snapshot {
        let mut entries = BTreeMap::new();
        for place in &self.places {
            self.walk(&place.root, 0, &mut entries);
        }
        Snapshot {
            whole: entries.len() < MAX_ENTRIES,
            entries,
        }
    }

    fn walk(&self, path: &Path, depth: usize, out: &mut BTreeMap<PathBuf, Seen>) {
        if out.len() >= MAX_ENTRIES || out.contains_key(path) || self.is_own(path) {
            return;
        }
        // `symlink_metadata` never follows a link.
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return;
        };
        let dir = meta.is_dir();
        if passed_over(path, dir, meta.len()) {
            return;
        }
        out.insert(
            path.to_path_buf(),
            Seen {
                dir,
                len: if dir { 0 } else { meta.len() },
                modified: if dir { None } else { meta.modified().ok() },
            },
        );
        if !dir || depth >= MAX_DEPTH {
            return;
        }
        let Ok(read) = std::fs::read_dir(path) else {
            return;
        };
        let mut children: Vec<PathBuf> = read.filter_map(Result::ok).map(|e| e.path()).collect();
        children.sort();
        for child in children {
            self.walk(&child, depth + 1, out);
        }
    }

    fn is_own(&self, path: &Path) -> bool {
        self.own.iter().any(|o| path.starts_with(o))
    }

    /// What changed from `before` to `after`, each entry named as its
    /// place says (the first place that holds it).
    pub fn changes(&self, before: &Snapshot, after: &Snapshot) -> Changes {
        let mut changes = Changes::default();
        // Over a place larger than the cap, an entry only one snapshot
        // holds may have fallen past it: only entries both hold count.
        let whole = before.whole && after.whole;
        let changed = after
            .entries
            .iter()
            .filter(|(p, now)| match before.entries.get(*p) {
                Some(then) => then != *now && !now.dir,
                None => whole && !now.dir,
            })
            .map(|(p, _)| p)
            .chain(
                before
                    .entries
                    .keys()
                    .filter(|p| whole && !after.entries.contains_key(*p)),
            );
        for path in changed {
            let Some(place) = self.places.iter().find(|pl| path.starts_with(&pl.root)) else {
                continue;
            };
            match place.naming {
                Naming::Counted => changes.counted += 1,
                Naming::Relative => changes.named.push(
                    path.strip_prefix(&place.root)
                        .unwrap_or(path)
                        .to_string_lossy()
                        .into_owned(),
                ),
                Naming::Full => changes.named.push(path.to_string_lossy().into_owned()),
            }
        }
        changes.named.sort();
        changes.named.dedup();
        changes
    }
}

/// Entries a reader leaves that are no change of the data: an
/// interpreter's byte-code caches, a SQLite reader's shared memory and an
/// empty write-ahead log.
fn passed_over(path: &Path, dir: bool, len: u64) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if dir {
        return name == "__pycache__";
    }
    name.ends_with(".pyc")
        || name.ends_with("-shm")
        || (name.ends_with("-wal") && len == 0)
        || name.ends_with("-journal") && len == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watched(root: &Path, naming: Naming) -> Watched {
        Watched {
            places: vec![Place {
                root: root.to_path_buf(),
                naming,
            }],
            own: vec![root.join("tapes")],
        }
    }

    #[test]
    fn a_file_written_in_a_watched_place_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "a").unwrap();
        std::fs::create_dir(dir.path().join(".cache")).unwrap();
        let w = watched(dir.path(), Naming::Relative);
        let before = w.snapshot();
        assert!(w.changes(&before, &w.snapshot()).is_empty());
        // A hidden folder's new file, a grown file, a removed one.
        std::fs::write(dir.path().join(".cache/index.pkl"), "x").unwrap();
        std::fs::write(dir.path().join("notes.md"), "ab").unwrap();
        let changes = w.changes(&before, &w.snapshot());
        assert_eq!(changes.named, [".cache/index.pkl", "notes.md"]);
        std::fs::remove_file(dir.path().join("notes.md")).unwrap();
        let gone = w.changes(&before, &w.snapshot());
        assert!(gone.named.contains(&"notes.md".to_owned()), "{gone:?}");
    }

    #[test]
    fn a_reader_s_traces_and_the_recorder_s_own_files_are_no_change() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shop.db"), "data").unwrap();
        std::fs::create_dir(dir.path().join("tapes")).unwrap();
        let w = watched(dir.path(), Naming::Full);
        let before = w.snapshot();
        std::fs::write(dir.path().join("shop.db-shm"), vec![0u8; 32_768]).unwrap();
        std::fs::write(dir.path().join("shop.db-wal"), "").unwrap();
        std::fs::write(dir.path().join("tapes/mcp.jsonl"), "{}").unwrap();
        std::fs::create_dir(dir.path().join("__pycache__")).unwrap();
        std::fs::write(dir.path().join("__pycache__/m.cpython-311.pyc"), "x").unwrap();
        assert!(w.changes(&before, &w.snapshot()).is_empty());
        // A write-ahead log that holds pages is a write.
        std::fs::write(dir.path().join("shop.db-wal"), "page").unwrap();
        let changes = w.changes(&before, &w.snapshot());
        let wal = dir
            .path()
            .join("shop.db-wal")
            .to_string_lossy()
            .into_owned();
        assert_eq!(changes.named, [wal]);
    }

    #[test]
    fn a_place_given_with_env_is_counted_never_named() {
        let dir = tempfile::tempdir().unwrap();
        let w = watched(dir.path(), Naming::Counted);
        let before = w.snapshot();
        std::fs::write(dir.path().join("edges.db"), "x").unwrap();
        let changes = w.changes(&before, &w.snapshot());
        assert!(changes.named.is_empty());
        assert_eq!(changes.counted, 1);
    }
}
