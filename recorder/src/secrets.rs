//! This process's redaction policy ([`fitness_shared::redact`]): every
//! secret value the invocation was given, gathered where it is read, and the
//! one redactor every writer and printer goes through.
//!
//! The set only grows: the provider keys, credential URLs and other
//! credential-named variables in the environment are read on first use,
//! and every target parsed from the
//! command line ([`register_target`], called by the one target parser) adds
//! its `--env` and `--header` values, its URL's credentials and the
//! credential-like arguments of its command. A tape created afterwards, a
//! record, a suite file and every line printed are redacted with it.

use std::sync::{Arc, LazyLock, RwLock};

use fitness_shared::redact::{Hits, Redactor, Secret, Source};
use serde_json::Value;

use crate::mcp::connect::Target;

/// Environment variables whose values are credentials the recorder uses.
pub const SECRET_ENV: &[&str] = &[
    crate::model::anthropic::KEY_ENV,
    crate::model::openai::KEY_ENV,
    crate::mcp::connect::BEARER_ENV,
];
/// Environment variables holding URLs that may carry credentials.
pub const URL_ENV: &[&str] = &[
    crate::model::anthropic::BASE_ENV,
    crate::model::openai::BASE_ENV,
];

struct Registry {
    secrets: Vec<Secret>,
    urls: Vec<String>,
    policy: Arc<Redactor>,
}

/// Whether an environment variable of this process holds a credential by
/// its name (`*KEY*`, `*TOKEN*`, `*SECRET*`, ...); names of files and
/// directories (`FITNESS_SIGNING_KEY`, `*_FILE`, `*_PATH`, `*_DIR`) do not.
pub fn secret_looking_env(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    let names_a_path =
        n == "FITNESS_SIGNING_KEY" || ["_FILE", "_PATH", "_DIR"].iter().any(|s| n.ends_with(s));
    !names_a_path
        && [
            "KEY",
            "TOKEN",
            "SECRET",
            "PASSWORD",
            "PASSWD",
            "CREDENTIAL",
            "AUTH",
            "COOKIE",
        ]
        .iter()
        .any(|m| n.contains(m))
}

static REGISTRY: LazyLock<RwLock<Registry>> = LazyLock::new(|| {
    let mut secrets = Vec::new();
    for name in SECRET_ENV {
        if let Some(value) = crate::model::http::env(name) {
            secrets.push(Secret::env(name, &value));
        }
    }
    // The operator's other credentials: a server that knows one of them
    // must not publish it through us either.
    for (name, value) in std::env::vars() {
        if secret_looking_env(&name)
            && !SECRET_ENV.contains(&name.as_str())
            && value.trim().chars().count() >= fitness_shared::redact::MIN_EXACT_LEN
        {
            secrets.push(Secret::env(&name, &value));
        }
    }
    let urls: Vec<String> = URL_ENV
        .iter()
        .filter_map(|name| crate::model::http::env(name))
        .collect();
    let policy = Arc::new(Redactor::with_urls(&secrets, &urls));
    RwLock::new(Registry {
        secrets,
        urls,
        policy,
    })
});

/// The policy as it stands now.
pub fn policy() -> Arc<Redactor> {
    REGISTRY
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .policy
        .clone()
}

/// Add secrets (and URLs whose credentials are secrets) to the policy.
pub fn register(secrets: Vec<Secret>, urls: Vec<String>) {
    if secrets.is_empty() && urls.is_empty() {
        return;
    }
    let mut reg = REGISTRY.write().unwrap_or_else(|p| p.into_inner());
    let before = (reg.secrets.len(), reg.urls.len());
    for s in secrets {
        if !s.value.is_empty() && !reg.secrets.contains(&s) {
            reg.secrets.push(s);
        }
    }
    for u in urls {
        if !reg.urls.contains(&u) {
            reg.urls.push(u);
        }
    }
    if (reg.secrets.len(), reg.urls.len()) != before {
        reg.policy = Arc::new(Redactor::with_urls(&reg.secrets, &reg.urls));
    }
}

/// Register everything secret about a target: `--env` and `--header`
/// values, the bearer token, URL credentials, and in a command line the
/// values of credential-like flags (`--api-key X`, `--token=X`) and the
/// credentials of any URL argument.
pub fn register_target(target: &Target) {
    let mut secrets = Vec::new();
    let mut urls = Vec::new();
    match target {
        Target::Http(h) => {
            urls.push(h.url.clone());
            for (k, v) in &h.headers {
                secrets.push(Secret::header(k, v));
            }
            if let Some(token) = &h.bearer {
                secrets.push(Secret::env(crate::mcp::connect::BEARER_ENV, token));
            }
        }
        Target::Stdio(s) => {
            for (k, v) in &s.env {
                secrets.push(Secret::env(k, v));
            }
            let (args, found_urls) = argument_secrets(&s.args);
            secrets.extend(args);
            urls.extend(found_urls);
        }
    }
    register(secrets, urls);
}

/// Values of credential-like flags in a command line, and its URLs.
fn argument_secrets(args: &[String]) -> (Vec<Secret>, Vec<String>) {
    let mut secrets = Vec::new();
    let mut urls = Vec::new();
    let mut pending: Option<&str> = None;
    for arg in args {
        if let Some(flag) = pending.take()
            && !arg.starts_with('-')
        {
            secrets.push(Secret {
                source: Source::Argument(flag.to_owned()),
                value: arg.clone(),
            });
            continue;
        }
        if arg.contains("://") {
            urls.push(arg.clone());
        }
        if let Some(flag) = arg.strip_prefix('-') {
            let flag = flag.trim_start_matches('-');
            match flag.split_once('=') {
                Some((name, value)) if fitness_shared::redact::credential_name(name) => {
                    secrets.push(Secret {
                        source: Source::Argument(name.to_owned()),
                        value: value.to_owned(),
                    });
                }
                Some(_) => {}
                None if fitness_shared::redact::credential_name(flag) => pending = Some(flag),
                None => {}
            }
        }
    }
    (secrets, urls)
}

/// `text` redacted, for printing.
pub fn redact(text: &str) -> String {
    policy().redact_str(text, &mut Hits::default()).into_owned()
}

/// Redact every string of a JSON value about to be written; what was
/// replaced is added to `hits`.
pub fn redact_value(value: &mut Value, hits: &mut Hits) {
    policy().redact_value(value, hits);
}

/// A JSON value as pretty text, every string redacted.
pub fn pretty_json<T: serde::Serialize>(item: &T) -> anyhow::Result<String> {
    let mut value = serde_json::to_value(item)?;
    redact_value(&mut value, &mut Hits::default());
    Ok(serde_json::to_string_pretty(&value)?)
}

/// Print a line on stdout, redacted, in a function that returns an
/// `anyhow::Result` ([`crate::process::print_line`]: a closed pipe ends the
/// output, not the command).
#[macro_export]
macro_rules! outln {
    () => {
        $crate::process::print_line("")?
    };
    ($($arg:tt)*) => {
        $crate::process::print_line(&$crate::secrets::redact(&format!($($arg)*)))?
    };
}

/// Print a line on stderr, redacted.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {
        eprintln!("{}", $crate::secrets::redact(&format!($($arg)*)))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_flags_and_urls_in_a_command_line_are_secrets() {
        let args: Vec<String> = [
            "-y",
            "@scope/server",
            "--api-key",
            "k-123456789",
            "--token=t-abcdefgh",
            "--verbose",
            "--port",
            "8080",
            "https://u:p@example.com/mcp",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let (secrets, urls) = argument_secrets(&args);
        let values: Vec<&str> = secrets.iter().map(|s| s.value.as_str()).collect();
        assert_eq!(values, ["k-123456789", "t-abcdefgh"]);
        assert_eq!(urls, ["https://u:p@example.com/mcp"]);
    }
}
