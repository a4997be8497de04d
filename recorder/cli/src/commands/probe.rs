//! `fitness probe TARGET`: connect, tape the wire, run the protocol probes.
//!
//! Exit codes: 0 whenever the probes ran, whatever they found; 1 when the
//! server could not be reached (the message says why).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde_json::{Map, Value};

use crate::commands::target::ConnectFlags;
use fitness_recorder::mcp::connect::Target;
use fitness_recorder::mcp::report;
use fitness_recorder::mcp::tap::Tap;

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  fitness probe http://127.0.0.1:3001/mcp --json\n  \
fitness probe --tape out/ -- npx mcp-server-everything\n\n\
An HTTP bearer token is read from FITNESS_MCP_BEARER_TOKEN; credentials are never taped."
)]
pub struct ProbeArgs {
    /// An http(s) URL; for a stdio server give `-- CMD ARGS...` instead.
    pub url: Option<String>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the wire tape to DIR/mcp.jsonl.
    #[arg(long, value_name = "DIR")]
    pub tape: Option<PathBuf>,
    #[command(flatten)]
    pub connect: ConnectFlags,
    /// Call a tool after listing, with JSON object arguments; repeatable.
    #[arg(long = "call", value_name = "TOOL[=JSON]")]
    pub calls: Vec<String>,
    /// Trust the CA certificates in this PEM file for an https server, beside
    /// the system roots (or set FITNESS_CA_CERT).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Seconds to wait for any one request.
    #[arg(long, default_value_t = fitness_recorder::mcp::connect::DEFAULT_REQUEST_TIMEOUT.as_secs())]
    pub timeout: u64,
    /// The stdio server's command line.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

pub fn run(args: ProbeArgs) -> anyhow::Result<()> {
    let target = target(&args)?;
    if let Some(file) = &args.ca_cert {
        anyhow::ensure!(
            matches!(target, Target::Http(_)),
            "--ca-cert is for https servers"
        );
        fitness_recorder::http::trust_ca_file(file)?;
    }
    let calls = args
        .calls
        .iter()
        .map(|c| parse_call(c))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let tap = match &args.tape {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("failed to create {}", dir.display()))?;
            Tap::create(
                &dir.join(fitness_shared::site::MCP_TAPE),
                "fitness probe",
                target.describe(),
            )?
        }
        None => Tap::disabled(),
    };
    let runtime = crate::process::runtime()?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let outcome = runtime.block_on(crate::process::until_interrupted(report::probe(
        &target,
        tap.clone(),
        timeout,
        &calls,
    )));
    let Some(outcome) = outcome else {
        runtime.shutdown_timeout(Duration::from_secs(2));
        return Err(crate::process::interrupted(&[&tap]));
    };
    // Children and HTTP tasks must not outlive the command.
    runtime.shutdown_timeout(Duration::from_secs(2));
    match outcome {
        Ok(report) => {
            tap.end("probed");
            // The report quotes the server: printed through the policy.
            if args.json {
                crate::process::print_line(&fitness_recorder::secrets::pretty_json(&report)?)?;
            } else {
                crate::process::print(&fitness_recorder::secrets::redact(&report.table()))?;
            }
            Ok(())
        }
        Err(e) => {
            tap.end("unreachable");
            // One sentence: what happened and what to do next.
            Err(e)
        }
    }
}

fn target(args: &ProbeArgs) -> anyhow::Result<Target> {
    args.connect.target(args.url.as_deref(), &args.command)
}

fn parse_call(spec: &str) -> anyhow::Result<(String, Map<String, Value>)> {
    match spec.split_once('=') {
        None => Ok((spec.to_owned(), Map::new())),
        Some((name, json)) => match serde_json::from_str::<Value>(json) {
            Ok(Value::Object(map)) => Ok((name.to_owned(), map)),
            _ => anyhow::bail!("--call {spec:?}: the arguments must be a JSON object"),
        },
    }
}
