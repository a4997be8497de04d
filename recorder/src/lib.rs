//! The recorder: everything the `fitness` binary does, behind a thin `main`.

pub mod cli;
pub mod commands;
pub mod conformance;
pub mod demo;
pub mod integrity;
pub mod mcp;
pub mod model;
pub mod pipeline;
pub mod process;
pub mod publish;
pub mod rewrite;
pub mod secrets;
pub mod serve;
pub mod suite;
pub mod sweep;

/// Run one parsed command line.
pub fn run(cli: cli::Cli) -> anyhow::Result<()> {
    let Some(command) = cli.command else {
        // No subcommand: show what there is rather than failing.
        let help = <cli::Cli as clap::CommandFactory>::command().render_help();
        return process::print_line(&help.to_string());
    };
    match command {
        cli::Command::Run(args) => commands::run::run(args),
        cli::Command::Sweep(args) => sweep::run(args),
        cli::Command::Compare(args) => commands::compare::run(args),
        cli::Command::Demo(args) => commands::demo::run(args),
        cli::Command::Publish(args) => publish::run(args),
        cli::Command::Serve(args) => serve::run(args),
        cli::Command::Tape(cmd) => commands::tape::run(cmd),
        cli::Command::Import(args) => commands::import::run(args),
        cli::Command::Keygen(args) => commands::keygen::run(args),
        cli::Command::Sign(args) => commands::sign::run(args),
        cli::Command::Verify(args) => commands::verify::run(args),
        cli::Command::Probe(args) => commands::probe::run(args),
        cli::Command::Ask(args) => commands::ask::run(args),
        cli::Command::Suite(args) => commands::suite::run(args),
        cli::Command::RewriteCheck(args) => commands::rewrite_check::run(args),
        cli::Command::RewriteProxy(args) => rewrite::proxy::run(args),
        cli::Command::FixtureServer(args) => mcp::fixtures::run(args),
        cli::Command::DemoServer(args) => demo::run(args),
    }
}
