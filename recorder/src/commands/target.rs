//! The server a command talks to: an http(s) URL, or `-- CMD ARGS...` for a
//! stdio child. Shared by `fitness run`, `ask`, `suite` and `demo`.

use anyhow::Context as _;
use clap::Args;

use crate::mcp::connect::{BEARER_ENV, HttpTarget, Target};
use crate::mcp::stdio::StdioTarget;

#[derive(Debug, Clone, Args)]
pub struct TargetArgs {
    /// An http(s) URL; for a stdio server give `-- CMD ARGS...` instead.
    #[arg(value_name = "URL")]
    pub url: Option<String>,
    /// An HTTP header to send (auth goes here); repeatable. Never taped.
    #[arg(long = "header", value_name = "K:V")]
    pub headers: Vec<String>,
    /// An environment variable for the stdio child; repeatable. Never taped.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// The stdio server's command line.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Read a target from its flags; a bearer token for HTTP comes from
/// `FITNESS_MCP_BEARER_TOKEN`.
pub fn parse_target(args: &TargetArgs) -> anyhow::Result<Target> {
    match (&args.url, args.command.split_first()) {
        (Some(url), None) => {
            anyhow::ensure!(
                url.starts_with("http://") || url.starts_with("https://"),
                "TARGET must be an http(s) URL, or `-- CMD ARGS...` for a stdio server"
            );
            anyhow::ensure!(
                args.env.is_empty(),
                "--env is for stdio servers; use --header for HTTP"
            );
            let headers = args
                .headers
                .iter()
                .map(|h| {
                    h.split_once(':')
                        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
                        .with_context(|| format!("--header {h:?} is not K:V"))
                })
                .collect::<anyhow::Result<_>>()?;
            Ok(Target::Http(HttpTarget {
                url: url.clone(),
                headers,
                bearer: std::env::var(BEARER_ENV).ok().filter(|t| !t.is_empty()),
            }))
        }
        (None, Some((program, rest))) => {
            anyhow::ensure!(
                args.headers.is_empty(),
                "--header is for HTTP servers; use --env for stdio"
            );
            let env = args
                .env
                .iter()
                .map(|e| {
                    e.split_once('=')
                        .map(|(k, v)| (k.to_owned(), v.to_owned()))
                        .with_context(|| format!("--env {e:?} is not K=V"))
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
