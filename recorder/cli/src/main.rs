//! `fitness`: parse the command line, run it, map its end to an exit code.
//!
//! Exit codes, decided here and nowhere else: 0 success; 1 the command
//! failed (printed as `error: ...`) or did not complete its work (a VOID
//! run, an incomplete sweep); 2 the command line was wrong (clap's own
//! code); 130 interrupted by Ctrl-C or SIGTERM; `fitness compare`'s verdict
//! codes 3, 4 and 5. A command asks for a code other than 0 and 1 by
//! returning [`process::Exit`].
//!
//! This crate is the command line and nothing else: every subcommand's
//! flags and `run` (`commands/`), progress and printing (`process`). The
//! work is the engine's (`fitness-recorder`), which never sees clap.

mod ci;
mod cli;
mod commands;
mod process;

use std::process::ExitCode;

use clap::Parser;
use process::Exit;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    let Err(err) = cli::run(cli) else {
        return ExitCode::SUCCESS;
    };
    // Errors can quote a server or a URL: printed through the policy.
    let redact = |text: &str| fitness_recorder::secrets::redact(text);
    match err.downcast_ref::<Exit>() {
        Some(exit) => {
            if let Some(message) = &exit.message {
                eprintln!("{}", redact(message));
            }
            ExitCode::from(exit.code)
        }
        None => {
            eprintln!("error: {}", redact(&format!("{err:#}")));
            ExitCode::from(1)
        }
    }
}
