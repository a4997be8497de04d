//! `fitness publish RUNS_DIR... --out SITE`: run directories (and imported
//! `fitness-report/1` runs) as a static site.

use std::path::PathBuf;

use fitness_recorder::publish::{PublishOptions, publish};

#[derive(Debug, Clone, clap::Args)]
pub struct PublishArgs {
    /// Directories holding runs, each run as `<run-id>/record.json` with its tapes.
    pub runs: Vec<PathBuf>,
    /// A `fitness-report/1` runs.json to import alongside.
    #[arg(long)]
    pub import: Option<PathBuf>,
    /// Tapes of the imported runs: `<dir>/<run-id>/{mcp,agent}.jsonl`.
    #[arg(long, requires = "import")]
    pub traces: Option<PathBuf>,
    /// The site directory to write. When it already holds a site the runs
    /// are merged into it: new ones added, changed ones replaced, every
    /// other run kept (see --replace).
    #[arg(long)]
    pub out: PathBuf,
    /// Replace an existing site with these runs alone instead of merging.
    #[arg(long)]
    pub replace: bool,
    /// The viewer's release build (default: `dist/` in the current directory).
    #[arg(long, conflicts_with = "no_viewer")]
    pub viewer: Option<PathBuf>,
    /// Publish data only, without the viewer.
    #[arg(long)]
    pub no_viewer: bool,
    /// Sign every record with this key (from `fitness keygen`); its public key
    /// goes into board.json.
    #[arg(long)]
    pub sign_key: Option<PathBuf>,
    /// Timestamp stamped on the board (default: now).
    #[arg(long)]
    pub published_at: Option<String>,
}

impl PublishArgs {
    pub fn options(self) -> PublishOptions {
        PublishOptions {
            runs: self.runs,
            import: self.import,
            traces: self.traces,
            out: self.out,
            replace: self.replace,
            viewer: self.viewer,
            no_viewer: self.no_viewer,
            sign_key: self.sign_key,
            published_at: self.published_at,
        }
    }
}

pub fn run(args: PublishArgs) -> anyhow::Result<()> {
    let published = publish(&args.options())?;
    for id in &published.unredacted {
        crate::process::errln!(
            "note: run {id} was recorded before redaction (its record has no `redactions`): its files are published as written; re-run it to publish a redacted copy"
        );
    }
    let counts = &published.board.counts;
    crate::process::outln!(
        "published {} runs ({} scored, {} refused) with {} tapes and {} badges to {}",
        counts.runs,
        counts.scored,
        counts.refused,
        published.tapes,
        published.badges,
        published.site.display()
    );
    if let Some(m) = &published.merge {
        crate::process::outln!(
            "merged into the existing site: {} added, {} replaced, {} unchanged, {} kept",
            m.added,
            m.replaced,
            m.unchanged,
            m.kept
        );
    }
    Ok(())
}
