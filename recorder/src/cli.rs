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
    /// Publish run directories (and imported v1 runs) as a static site.
    Publish(crate::publish::PublishArgs),
    /// Serve a published site locally, with the headers of its `_headers` file.
    Serve(crate::serve::ServeArgs),
    /// Read mcp-tape files: `fitness tape stats FILE... [--json]`.
    Tape(crate::commands::tape::TapeCommand),
    /// Convert fitness-report/1 records (a runs.json) into fitness-report/2.
    Import(crate::commands::import::ImportArgs),
    /// Make a publisher signing key (ed25519), written with mode 0600.
    Keygen(crate::commands::keygen::KeygenArgs),
    /// Sign a record in place after checking the tapes it names.
    Sign(crate::commands::sign::SignArgs),
    /// Check a record's signature and the sha256 and size of every tape it names.
    Verify(crate::commands::verify::VerifyArgs),
    /// Connect to an MCP server, tape the wire and run the protocol probes:
    /// `fitness probe URL` or `fitness probe -- CMD ARGS...`.
    Probe(crate::commands::probe::ProbeArgs),
    /// Run an in-tree fixture server (tests and the demo).
    #[command(hide = true)]
    FixtureServer(crate::mcp::fixtures::FixtureArgs),
    /// Run a bundled demo server on stdio (`fitness demo` starts them).
    #[command(hide = true)]
    DemoServer(crate::demo::DemoServerArgs),
}
