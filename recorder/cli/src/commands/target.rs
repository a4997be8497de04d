//! The server a command talks to: an http(s) URL, or `-- CMD ARGS...` for a
//! stdio child. The one target parser: `fitness run` reads all its flags
//! ([`TargetArgs`], [`parse_target`]); `probe`, `ask` and `suite` give the
//! URL and command with their [`ConnectFlags`], `rewrite-check` its env and
//! command ([`parse`]).

use clap::Args;

use anyhow::Context as _;

use fitness_recorder::mcp::connect::{HttpTarget, Target};
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::mcp::target::BEARER_ENV;

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
    /// Use the token `fitness login URL` stored for this URL (refreshed when
    /// it is about to expire).
    #[arg(long)]
    pub login: bool,
    /// The stdio server's command line.
    #[arg(last = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// The `--header` and `--env` flags of `probe`, `ask` and `suite`
/// (`fitness run` has them in [`TargetArgs`], beside their `-env` forms).
#[derive(Debug, Clone, Args)]
pub struct ConnectFlags {
    /// An HTTP header to send (auth goes here); repeatable.
    #[arg(long = "header", value_name = "K:V")]
    pub headers: Vec<String>,
    /// An environment variable for the stdio child; repeatable.
    #[arg(long = "env", value_name = "K=V")]
    pub env: Vec<String>,
    /// Use the token `fitness login URL` stored for this URL (refreshed when
    /// it is about to expire).
    #[arg(long)]
    pub login: bool,
}

/// What a command may do to the server: read-only unless `--sandbox`
/// (`fitness run` and `fitness suite`).
#[derive(Debug, Clone, Default, Args)]
pub struct SandboxFlags {
    /// The target may be written to (a server started for the measurement).
    /// Without it no call that may write is made: the walk, the judge's
    /// solution calls and every trial leave such tools alone, and a model's
    /// call to one gets a tool error saying the harness blocked it.
    #[arg(long)]
    pub sandbox: bool,
    /// With --sandbox: a shell command that restores the server's state, run
    /// before generation, before every trial and after the run (its output
    /// on the wire tape). Generation then writes nothing.
    #[arg(long, value_name = "CMD")]
    pub reset: Option<String>,
    /// With --sandbox: a path on the stdio server's command line or in its
    /// environment, exactly as given there; the server runs over a copy of
    /// it, put back before every trial that follows a write, and the
    /// original is never touched. Repeatable.
    #[arg(long = "sandbox-copy", value_name = "PATH")]
    pub sandbox_copy: Vec<std::path::PathBuf>,
}

/// What the operator tells generation that no discovery can know
/// (`fitness run` and `fitness suite`); registered and hashed into the
/// suite.
#[derive(Debug, Clone, Default, Args)]
pub struct HintFlags {
    /// A file of calls you know succeed, one JSON object a line:
    /// `{"tool": "convert_to_markdown", "arguments": {"uri": "file:///srv/docs/memo.html"}}`.
    /// The walk makes them first and starts from their results; the tasks
    /// that come from them are counted apart ("seeded by the operator").
    #[arg(long, value_name = "FILE")]
    pub seed_calls: Option<std::path::PathBuf>,
    /// Words for the judge about what the server holds ("a library
    /// database: books, members and loans").
    #[arg(long, value_name = "TEXT")]
    pub context: Option<String>,
}

impl HintFlags {
    pub fn hints(&self) -> anyhow::Result<fitness_shared::record::OperatorHints> {
        Ok(fitness_shared::record::OperatorHints {
            seed_calls: match &self.seed_calls {
                Some(path) => fitness_recorder::suite::options::read_seed_calls(path)?,
                None => Vec::new(),
            },
            context: fitness_recorder::suite::options::checked_context(self.context.as_deref())?,
        })
    }
}

impl SandboxFlags {
    pub fn settings(&self) -> fitness_recorder::pipeline::SandboxSettings {
        fitness_recorder::pipeline::SandboxSettings {
            enabled: self.sandbox,
            reset: self.reset.clone(),
            copies: self.sandbox_copy.clone(),
        }
    }
}

impl ConnectFlags {
    /// The server at `url`, or the stdio `command`, with these flags ([`parse`]).
    pub fn target(&self, url: Option<&str>, command: &[String]) -> anyhow::Result<Target> {
        with_login(parse(url, &self.headers, &self.env, command)?, self.login)
    }
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
    with_login(
        parse(args.url.as_deref(), &headers, &env, &args.command)?,
        args.login,
    )
}

/// What the run's credential is, as detail for the record (never its
/// value): a login's granted scopes, a bearer token, header names.
pub fn credential_used(
    args: &TargetArgs,
    target: &Target,
) -> Option<fitness_shared::record::CredentialUsed> {
    credential_of(target, args.login)
}

/// [`credential_used`] for a target and whether `--login` was given.
pub fn credential_of(
    target: &Target,
    login: bool,
) -> Option<fitness_shared::record::CredentialUsed> {
    use fitness_shared::record::{CredentialKind, CredentialUsed};
    let Target::Http(h) = target else {
        return None;
    };
    let headers: Vec<String> = h.headers.iter().map(|(k, _)| k.clone()).collect();
    let (kind, scopes) = if login {
        let scopes = fitness_recorder::auth::FileCredentialStore::for_url(&h.url)
            .map(|s| s.granted_scopes())
            .unwrap_or_default();
        (CredentialKind::Oauth, scopes)
    } else if h.bearer.is_some() {
        (CredentialKind::Bearer, Vec::new())
    } else if !headers.is_empty() {
        (CredentialKind::Header, Vec::new())
    } else {
        return None;
    };
    Some(CredentialUsed {
        kind,
        headers,
        scopes,
    })
}

/// With `--login`: the HTTP target carries the stored token as its bearer
/// (refreshed first when it is about to expire). Called before any runtime
/// is running.
fn with_login(mut target: Target, login: bool) -> anyhow::Result<Target> {
    if !login {
        return Ok(target);
    }
    let Target::Http(h) = &mut target else {
        anyhow::bail!(
            "--login is for HTTP servers: a stdio server takes its credentials with --env"
        );
    };
    anyhow::ensure!(
        h.bearer.is_none()
            && !h
                .headers
                .iter()
                .any(|(k, _)| k.eq_ignore_ascii_case("authorization")),
        "--login and an Authorization header (or {BEARER_ENV}) both give a credential: give one"
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let token = runtime.block_on(fitness_recorder::auth::stored_token(&h.url))?;
    h.bearer = Some(token);
    h.login = true;
    Ok(target)
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

/// TARGET parsing shared by the commands that connect to a server: an
/// http(s) URL with `--header K:V`, or `-- CMD ARGS...` with `--env K=V`.
/// Every secret of the target joins the redaction policy here, before any
/// tape can be created for it.
pub fn parse(
    url: Option<&str>,
    headers: &[String],
    env: &[String],
    command: &[String],
) -> anyhow::Result<Target> {
    let target = read_target(url, headers, env, command)?;
    target.register_secrets();
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
                login: false,
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
