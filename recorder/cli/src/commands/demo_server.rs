//! `fitness demo-server NAME` (hidden; `fitness demo` starts them): a
//! bundled demo server on stdio.

use std::path::PathBuf;
use std::time::Duration;

use clap::builder::PossibleValuesParser;
use clap::builder::TypedValueParser as _;
use fitness_recorder::demo::{self, DEFAULT_ANSWER_FIRST, DemoName, DemoServerOptions};

fn demo_names() -> impl clap::builder::TypedValueParser<Value = DemoName> {
    PossibleValuesParser::new(DemoName::ALL.iter().map(|d| d.as_str()))
        .try_map(|name| name.parse::<DemoName>())
}

#[derive(Debug, clap::Args)]
pub struct DemoServerArgs {
    #[arg(value_parser = demo_names())]
    pub name: DemoName,
    /// `broken` only: answer this many `tools/call` requests, then never
    /// answer another.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_ANSWER_FIRST)]
    pub answer_first: u64,
    /// `broken` only: count calls in this file (one byte appended per call),
    /// so the cut-off spans every process started with the same file (a run
    /// that starts a fresh server per phase or per trial).
    #[arg(long, value_name = "FILE")]
    pub count_file: Option<PathBuf>,
    /// Answer every `tools/call` this many milliseconds late (a slow
    /// server; any demo).
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub delay_ms: u64,
}

/// Run a demo server on stdin/stdout until stdin closes.
pub fn run(args: DemoServerArgs) -> anyhow::Result<()> {
    crate::process::runtime()?.block_on(demo::serve(DemoServerOptions {
        name: args.name,
        answer_first: args.answer_first,
        count_file: args.count_file,
        delay: Duration::from_millis(args.delay_ms),
    }))
}
