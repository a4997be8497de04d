//! The command line surface of `fitness`.
//!
//! Each subcommand lands with the feature behind it; there are no placeholder
//! commands that do nothing.

use clap::{Parser, Subcommand};

const ABOUT: &str = "Fitness Report: can an agent get the job done with this MCP server?\n\n\
Records a run against an MCP server, gates the measurement for validity \
cheapest first, and publishes either a score with its Wilson 95% interval or \
the refusal that replaced it.";

#[derive(Debug, Parser)]
#[command(name = "fitness", version = fitness_shared::VERSION, about = ABOUT, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a published site locally, with the headers of its `_headers` file.
    Serve(crate::serve::ServeArgs),
    /// Read mcp-tape files: `fitness tape stats FILE... [--json]`.
    Tape(crate::commands::tape::TapeCommand),
    /// Connect to an MCP server, tape the wire and run the protocol probes:
    /// `fitness probe URL` or `fitness probe -- CMD ARGS...`.
    Probe(crate::commands::probe::ProbeArgs),
    /// Run an in-tree fixture server (tests and the demo).
    #[command(hide = true)]
    FixtureServer(crate::mcp::fixtures::FixtureArgs),
}
