//! What `fitness publish` is asked to do and what it did.

use std::path::PathBuf;

use fitness_shared::board::Board;

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
    pub merge: Option<Merge>,
    /// Runs recorded before the redaction policy existed (their records
    /// have no `redactions`): published as written, since their tapes
    /// cannot change without breaking their hashes.
    pub unredacted: Vec<String>,
}

/// What an incremental publish did, run by run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merge {
    pub added: usize,
    pub replaced: usize,
    /// Incoming runs the site already held byte for byte.
    pub unchanged: usize,
    /// Runs the site held that the inputs did not name.
    pub kept: usize,
}
