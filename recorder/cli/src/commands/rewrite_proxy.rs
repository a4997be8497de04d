//! `fitness rewrite-proxy --rewrites FILE -- CMD ARGS...` (hidden; `fitness
//! rewrite-check` starts it): the server with the proposals substituted.

use std::path::PathBuf;

use clap::Args;

use crate::process::Exit;

#[derive(Debug, Args)]
pub struct RewriteProxyArgs {
    /// The proposals to substitute (`{"proposals": [...]}`).
    #[arg(long, value_name = "FILE")]
    pub rewrites: PathBuf,
    /// The server command line.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// The proxy ends as its server did.
pub fn run(args: RewriteProxyArgs) -> anyhow::Result<()> {
    let end = fitness_recorder::rewrite::proxy::proxy(&args.rewrites, &args.command)?;
    if end.dropped > 0 {
        crate::process::errln!(
            "rewrite-proxy: dropped {} line(s) longer than {} bytes",
            end.dropped,
            fitness_recorder::mcp::frames::MAX_LINE
        );
    }
    match end.code {
        0 => Ok(()),
        code => Err(Exit::code(u8::try_from(code).unwrap_or(1)).into()),
    }
}
