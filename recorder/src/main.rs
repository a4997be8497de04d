//! `fitness`: parse the command line, run it, map errors to exit codes.
//!
//! Exit codes: 0 success, 1 the command failed (printed as `error: …`),
//! 2 the command line was wrong (clap's own code).

use std::process::ExitCode;

use clap::Parser;
use fitness_recorder::cli::Cli;

fn main() -> ExitCode {
    let cli = Cli::parse();
    match fitness_recorder::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // Errors can quote a server or a URL: printed through the policy.
            eprintln!(
                "error: {}",
                fitness_recorder::secrets::redact(&format!("{err:#}"))
            );
            ExitCode::from(1)
        }
    }
}
