//! The command line surface of `fitness`: every subcommand, and the one
//! dispatch from a parsed command line to its `run`.
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
#[expect(
    clippy::large_enum_variant,
    reason = "parsed once per process; boxing the run's flags buys nothing"
)]
pub enum Command {
    /// Measure a server: probes, suite, pre-registration, gates in cost order,
    /// the drive, and a signed record with a score or the refusal that replaced it.
    Run(crate::commands::run::RunArgs),
    /// Measure every target of a roster (target x runner x rerun), -j N at a
    /// time, resumable, shardable: `fitness sweep ROSTER.toml [-j N] [--shard I/N]`.
    Sweep(crate::commands::sweep::SweepArgs),
    /// Read two runs of a server against each other for CI: comparable or
    /// not, the outcome change, and a verdict with exit codes a workflow
    /// gates on (paired when both runs drove one suite).
    ///
    /// The reading is paired whenever both runs scored on the same suite (one
    /// suite hash: a rerun with `fitness run --suite BEFORE_DIR/suite.json`,
    /// or a rewrite-check): trial k of task t before is read against trial k
    /// of task t after, over the tasks both runs drove. It prints the 2x2
    /// table of those pairs, the tasks that flipped each way, McNemar's p
    /// (mid-p and exact) and Newcombe's paired interval of the drop at the
    /// after run's registered alpha; a regression is an interval that lies
    /// entirely above 0. Runs of different suites are read as independent
    /// samples: their two stored first-try intervals, a regression only
    /// where they do not overlap.
    ///
    /// Runs of different servers, runner models, generators or credential
    /// contexts are never read against each other (exit 3). `--plan BEFORE`
    /// compares nothing: it sizes a paired rerun of BEFORE's suite.
    Compare(crate::commands::compare::CompareArgs),
    /// Run the bundled demo servers with the offline sim runner, publish the
    /// board and serve it at http://127.0.0.1:8080 (no key, no network).
    Demo(crate::commands::demo::DemoArgs),
    /// Publish run directories (and imported v1 runs) as a static site.
    Publish(crate::commands::publish::PublishArgs),
    /// Serve a published site locally, with the headers of its `_headers` file.
    Serve(crate::commands::serve::ServeArgs),
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
    /// Log in to an MCP server that needs authorization (OAuth 2.1, PKCE)
    /// and keep its token for --login: `fitness login URL`.
    Login(crate::commands::login::LoginArgs),
    /// Connect to an MCP server, tape the wire and run the protocol probes:
    /// `fitness probe URL` or `fitness probe -- CMD ARGS...`.
    Probe(crate::commands::probe::ProbeArgs),
    /// Run one agent task against a server with a runner, tape both planes,
    /// print the answer, the calls and the cost:
    /// `fitness ask URL --runner M PROMPT` or `fitness ask --runner M PROMPT -- CMD ARGS...`.
    Ask(crate::commands::ask::AskArgs),
    /// Generate a task suite against a server, print its ledger and write it:
    /// `fitness suite TARGET --generator schema-walk/1 --out FILE`.
    Suite(crate::commands::suite::SuiteArgs),
    /// Re-run a run's suite with its proposed tool descriptions substituted
    /// and link both records with the delta of their intervals:
    /// `fitness rewrite-check RUN_DIR --out DIR [--runner P/M]`.
    RewriteCheck(crate::commands::rewrite_check::RewriteCheckArgs),
    /// A stdio server with the proposals substituted into tools/list
    /// (`fitness rewrite-check` starts it).
    #[command(hide = true)]
    RewriteProxy(crate::commands::rewrite_proxy::RewriteProxyArgs),
    /// The plain client the conformance suite's client scenarios drive.
    #[command(hide = true)]
    ConformanceClient(crate::commands::conformance_client::ConformanceClientArgs),
    /// Run an in-tree fixture server (tests and the demo).
    #[command(hide = true)]
    FixtureServer(crate::commands::fixture_server::FixtureArgs),
    /// Run a bundled demo server on stdio (`fitness demo` starts them).
    #[command(hide = true)]
    DemoServer(crate::commands::demo_server::DemoServerArgs),
}

/// Run one parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<()> {
    use crate::commands::{
        ask, compare, conformance_client, demo, demo_server, fixture_server, import, keygen, login,
        probe, publish, rewrite_check, rewrite_proxy, run, serve, sign, suite, sweep, tape, verify,
    };
    let Some(command) = cli.command else {
        // No subcommand: show what there is rather than failing.
        let help = <Cli as clap::CommandFactory>::command().render_help();
        return crate::process::print_line(&help.to_string());
    };
    match command {
        Command::Run(args) => run::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Compare(args) => compare::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Publish(args) => publish::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Tape(cmd) => tape::run(cmd),
        Command::Import(args) => import::run(args),
        Command::Keygen(args) => keygen::run(args),
        Command::Sign(args) => sign::run(args),
        Command::Verify(args) => verify::run(args),
        Command::Login(args) => login::run(args),
        Command::Probe(args) => probe::run(args),
        Command::Ask(args) => ask::run(args),
        Command::Suite(args) => suite::run(args),
        Command::RewriteCheck(args) => rewrite_check::run(args),
        Command::RewriteProxy(args) => rewrite_proxy::run(args),
        Command::ConformanceClient(args) => conformance_client::run(args),
        Command::FixtureServer(args) => fixture_server::run(args),
        Command::DemoServer(args) => demo_server::run(args),
    }
}
