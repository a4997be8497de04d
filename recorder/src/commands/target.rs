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
    /// An HTTP header whose value is read from this process's environment
    /// variable VAR (so the value is on no command line); repeatable.
    #[arg(long = "header-env", value_name = "K=VAR")]
    pub header_env: Vec<String>,
    /// A variable for the stdio child whose value is read from this
    /// process's environment variable VAR; repeatable.
    #[arg(long = "env-from", value_name = "K=VAR")]
    pub env_from: Vec<String>,
    /// The stdio server's command line.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// Read a target from its flags; a bearer token for HTTP comes from
/// `FITNESS_MCP_BEARER_TOKEN`.
pub fn parse_target(args: &TargetArgs) -> anyhow::Result<Target> {
    let mut headers = args.headers.clone();
    for spec in &args.header_env {
        let (name, value) = from_env("--header-env", spec)?;
        headers.push(format!("{name}:{value}"));
    }
    let mut env = args.env.clone();
    for spec in &args.env_from {
        let (name, value) = from_env("--env-from", spec)?;
        env.push(format!("{name}={value}"));
    }
    crate::commands::probe::parse_target(args.url.as_deref(), &headers, &env, &args.command)
}

/// `K=VAR` -> `(K, value of $VAR)`; an unset or empty VAR is an error
/// that names the variable, never a value.
fn from_env(flag: &str, spec: &str) -> anyhow::Result<(String, String)> {
    let (name, var) = spec
        .split_once('=')
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| anyhow::anyhow!("{flag} {spec:?} is not K=VAR"))?;
    let value = std::env::var(var)
        .ok()
        .filter(|v| !v.is_empty())
        .ok_or_else(|| {
            anyhow::anyhow!("{flag} {name}={var}: the environment variable {var} is not set")
        })?;
    Ok((name.to_owned(), value))
}
