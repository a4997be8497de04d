//! `fitness fixture-server NAME [--http ADDR]` (hidden): an in-tree MCP
//! server, good or bad, for the tests and the demo.

use std::net::SocketAddr;

use clap::builder::PossibleValuesParser;
use clap::builder::TypedValueParser as _;
use fitness_recorder::test_servers::{self, FixtureName};

fn fixture_names() -> impl clap::builder::TypedValueParser<Value = FixtureName> {
    PossibleValuesParser::new(FixtureName::ALL.iter().map(|(name, _)| *name))
        .try_map(|name| name.parse::<FixtureName>())
}

#[derive(Debug, clap::Args)]
pub struct FixtureArgs {
    #[arg(value_parser = fixture_names())]
    pub name: FixtureName,
    /// Serve streamable HTTP on this address (127.0.0.1 only) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// The folder a fixture that keeps data keeps it in (read-that-writes
    /// writes `insights.db` there on its first `list_insights`).
    #[arg(long, value_name = "DIR")]
    pub data: Option<std::path::PathBuf>,
}

/// Run a fixture until its input closes (stdio) or it is killed (HTTP).
pub fn run(args: FixtureArgs) -> anyhow::Result<()> {
    if let Some(fault) = args.name.fault() {
        return test_servers::run_fault(fault, args.http, args.data);
    }
    // The test that started an HTTP fixture reads this line to learn its
    // port.
    let bound = |local: SocketAddr| {
        let _ = crate::process::print(&format!("listening http://{local}/mcp\n"));
    };
    crate::process::runtime()?.block_on(test_servers::serve(args.name, args.http, &bound))
}
