//! This process's redaction policy ([`fitness_shared::redact`]): every
//! secret value the invocation was given, gathered where it is read, and the
//! one redactor every writer and printer goes through.
//!
//! The set only grows. The credential-named variables of the environment
//! and the credentials of any URL in it are read on first use; each room
//! that reads a credential hands it over as it reads it (a provider's key
//! through [`credential_env`], its base URL through [`url_env`], a target's
//! `--env` and `--header` values, URL credentials and credential-like
//! arguments through `mcp::target::register_secrets`). A tape created
//! afterwards, a record, a suite file and every line printed are redacted
//! with it.

use std::sync::{Arc, LazyLock, RwLock};

use fitness_shared::redact::{Hits, Redactor, Secret, Source};
use serde_json::Value;

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
    let mut urls = Vec::new();
    for (name, value) in std::env::vars() {
        // The operator's credentials, by their names: a server that knows
        // one of them must not publish it through us either.
        if secret_looking_env(&name)
            && value.trim().chars().count() >= fitness_shared::redact::MIN_EXACT_LEN
        {
            secrets.push(Secret::env(&name, &value));
        }
        // A URL's credentials, whatever the variable is called.
        if value.contains("://") {
            urls.push(value);
        }
    }
    let policy = Arc::new(Redactor::with_urls(&secrets, &urls));
    RwLock::new(Registry {
        secrets,
        urls,
        policy,
    })
});

/// Read the environment variable `name`, empty as absent.
pub fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Read the environment variable `name` as a credential: its value is
/// handed to the policy, whatever its length, before the caller uses it.
/// The room that reads a credential names it; the policy holds no list.
pub fn credential_env(name: &str) -> Option<String> {
    let value = env(name)?;
    register(vec![Secret::env(name, &value)], Vec::new());
    Some(value)
}

/// Read the environment variable `name` as a URL whose credentials
/// (userinfo, credential query parameters) are handed to the policy.
pub fn url_env(name: &str) -> Option<String> {
    let value = env(name)?;
    register(Vec::new(), vec![value.clone()]);
    Some(value)
}

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

/// Values of credential-like flags in a command line, and its URLs.
pub fn argument_secrets(args: &[String]) -> (Vec<Secret>, Vec<String>) {
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
