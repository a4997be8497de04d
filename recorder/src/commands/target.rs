//! The server a command talks to: an http(s) URL, or `-- CMD ARGS...` for a
//! stdio child. Shared by `fitness run`, `ask`, `suite` and `demo`.

use clap::Args;

use crate::mcp::connect::Target;

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
    crate::commands::probe::parse_target(
        args.url.as_deref(),
        &args.headers,
        &args.env,
        &args.command,
    )
}
