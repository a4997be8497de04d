//! `fitness probe TARGET`: connect, tape the wire, run the protocol probes.
//!
//! Exit codes: 0 whenever the probes ran, whatever they found; 1 when the
//! server could not be reached (the message says why).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use serde_json::{Map, Value};

use crate::mcp::connect::{BEARER_ENV, HttpTarget, Target};
use crate::mcp::stdio::StdioTarget;
use crate::mcp::tap::Tap;
use crate::mcp::{raw, report};

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
    /// An HTTP header to send (auth goes here); repeatable.
    #[arg(long = "header", value_name = "K:V")]
    pub headers: Vec<String>,
    /// An environment variable for the stdio child; repeatable.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Call a tool after listing, with JSON object arguments; repeatable.
    #[arg(long = "call", value_name = "TOOL[=JSON]")]
    pub calls: Vec<String>,
    /// Trust the CA certificates in this PEM file for an https server, beside
    /// the system roots (or set FITNESS_CA_CERT).
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Seconds to wait for any one request.
    #[arg(long, default_value_t = 20)]
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
        raw::trust_ca_file(file)?;
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
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let outcome = runtime.block_on(crate::run::until_interrupted(report::probe(
        &target,
        tap.clone(),
        timeout,
        &calls,
    )));
    let Some(outcome) = outcome else {
        runtime.shutdown_timeout(Duration::from_secs(2));
        crate::run::exit_interrupted(&[&tap]);
    };
    // rmcp's connect errors drop the cause; ask reqwest for it.
    let cause = match (&outcome, &target) {
        (Err(_), Target::Http(h)) => runtime.block_on(raw::connection_error(&h.url, timeout)),
        _ => None,
    };
    // Children and HTTP tasks must not outlive the command.
    runtime.shutdown_timeout(Duration::from_secs(2));
    match outcome {
        Ok(report) => {
            tap.end("probed");
            // The report quotes the server: printed through the policy.
            if args.json {
                println!("{}", crate::secrets::pretty_json(&report)?);
            } else {
                print!("{}", crate::secrets::redact(&report.table()));
            }
            Ok(())
        }
        Err(e) => {
            tap.end("unreachable");
            let headline = match cause {
                Some(cause) if cause.to_lowercase().contains("certificate") => format!(
                    "the server could not be reached: TLS: {cause} (for a server whose CA is \
                     not a system root, pass --ca-cert FILE or set {}); no probes ran",
                    raw::CA_CERT_ENV
                ),
                Some(cause) => format!("the server could not be reached: {cause}; no probes ran"),
                None => "the server could not be reached; no probes ran".to_owned(),
            };
            Err(e.context(headline))
        }
    }
}

fn target(args: &ProbeArgs) -> anyhow::Result<Target> {
    parse_target(args.url.as_deref(), &args.headers, &args.env, &args.command)
}

/// TARGET parsing shared by the commands that connect to a server: an
/// http(s) URL with `--header K:V`, or `-- CMD ARGS...` with `--env K=V`.
/// Every secret of the target joins the redaction policy here, before any
/// tape can be created for it.
pub fn parse_target(
    url: Option<&str>,
    headers: &[String],
    env: &[String],
    command: &[String],
) -> anyhow::Result<Target> {
    let target = read_target(url, headers, env, command)?;
    crate::secrets::register_target(&target);
    Ok(target)
}

fn read_target(
    url: Option<&str>,
    headers: &[String],
    env: &[String],
    command: &[String],
) -> anyhow::Result<Target> {
    match (url, command.split_first()) {
        (Some(url), None) => {
            anyhow::ensure!(
                url.starts_with("http://") || url.starts_with("https://"),
                "TARGET must be an http(s) URL, or `-- CMD ARGS...` for a stdio server"
            );
            anyhow::ensure!(
                env.is_empty(),
                "--env is for stdio servers; use --header for HTTP"
            );
            // A malformed flag is named by position: its text may be a secret.
            let headers = headers
                .iter()
                .enumerate()
                .map(|(i, h)| {
                    h.split_once(':')
                        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                        .with_context(|| {
                            format!(
                                "--header number {} is not K:V (its text is not shown)",
                                i + 1
                            )
                        })
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(Target::Http(HttpTarget {
                url: url.to_owned(),
                headers,
                bearer: std::env::var(BEARER_ENV).ok().filter(|t| !t.is_empty()),
            }))
        }
        (None, Some((program, rest))) => {
            anyhow::ensure!(
                headers.is_empty(),
                "--header is for HTTP servers; use --env for stdio"
            );
            let env = env
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    e.split_once('=')
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .with_context(|| {
                            format!("--env number {} is not K=V (its text is not shown)", i + 1)
                        })
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(Target::Stdio(StdioTarget {
                program: program.clone(),
                args: rest.to_vec(),
                env,
            }))
        }
        (Some(_), Some(_)) => anyhow::bail!("give either a URL or `-- CMD ARGS...`, not both"),
        (None, None) => anyhow::bail!("no server: give an http(s) URL or `-- CMD ARGS...`"),
    }
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
