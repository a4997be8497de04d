//! The one redaction policy (`fitness-redact/1`, R-TAPE-7, R-SAFE): what is
//! scrubbed from every byte the recorder writes or prints, and the marker
//! that replaces it.
//!
//! Two kinds of rule:
//! - **Exact values the operator gave** ([`Secret`]): every `--env` and
//!   `--header` value, the provider keys the model clients read, URL
//!   userinfo and credential-like query parameters. Each is replaced by a
//!   marker naming its source (`[redacted:env API_KEY]`), never the value.
//!   A value of at least [`MIN_EXACT_LEN`] characters is replaced wherever it
//!   occurs; a shorter one only where it follows its own name (`NAME=value`,
//!   `"NAME": "value"`), because replacing every `1` or `dev` would destroy
//!   the tape without protecting anything.
//! - **Patterns** for tokens a server may echo unasked: bearer and
//!   `Authorization` values, JWTs, `sk-` keys, GitHub, Google, Slack, GitLab,
//!   Hugging Face, npm and Stripe tokens, AWS access key ids, private key
//!   blocks, URL userinfo and credential query parameters, `*_KEY=...`
//!   and `*session-id: ...` assignments, and JSON string fields named like
//!   credentials (`api_key`, `password`, `access_token`, `mcp-session-id`,
//!   ...), also inside a string that is itself JSON (a tool result). Their
//!   marker names the rule (`[redacted:pattern jwt]`).
//!
//! Unlike the reference implementation's rule set, no rule replaces a
//! whole JSON value that is not a string (its `next_token` schema and
//! `output_tokens_details` blocks were wiped), and a mention of an
//! environment variable (`process.env.X`, `.env`) is not a secret.
//!
//! JSON is redacted string by string after decoding, so an escape (`\n`,
//! `\u0073k-`) cannot hide a token, and the result is always valid JSON;
//! a line that is not JSON is redacted as text. Numbers are never touched.
//! [`Hits`] counts what was replaced, by marker label, without the values.
//!
//! The crate does no I/O: the recorder hands the policy every value it
//! reads from its flags and environment, then every line before it is
//! written.

mod names;
mod redactor;
mod rules;
mod url;

use std::collections::BTreeMap;

pub use names::credential_name;
pub use redactor::Redactor;
pub use rules::{defined_rule_names, rule_names};
pub use url::{UrlCredentials, url_credentials, url_host};

/// The policy id recorded with the counts.
pub const POLICY: &str = "fitness-redact/1";
/// Exact values at least this long are replaced wherever they occur.
pub const MIN_EXACT_LEN: usize = 8;
/// What every marker starts with.
pub const MARKER_PREFIX: &str = "[redacted:";

/// Where an exact secret came from: it names the marker.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Source {
    /// `--env NAME=...`, or a provider key read from the environment.
    Env(String),
    /// `--header NAME: ...`.
    Header(String),
    /// The user part of a URL's userinfo.
    UrlUsername,
    /// The password part of a URL's userinfo.
    UrlPassword,
    /// A credential-like query parameter of a URL, by name.
    UrlQuery(String),
    /// The value of a credential-like flag in a server's command line
    /// (`--api-key VALUE`), by flag name.
    Argument(String),
}

impl Source {
    /// The marker's label: `env API_KEY`, `url password`, ...
    pub fn label(&self) -> String {
        match self {
            Source::Env(name) => format!("env {}", clean_name(name)),
            Source::Header(name) => format!("header {}", clean_name(name)),
            Source::UrlUsername => "url username".to_owned(),
            Source::UrlPassword => "url password".to_owned(),
            Source::UrlQuery(name) => format!("url query {}", clean_name(name)),
            Source::Argument(name) => format!("arg {}", clean_name(name)),
        }
    }

    /// The name a short value must follow to be replaced.
    fn anchor(&self) -> Option<&str> {
        match self {
            Source::Env(name)
            | Source::Header(name)
            | Source::UrlQuery(name)
            | Source::Argument(name) => Some(name),
            Source::UrlUsername | Source::UrlPassword => None,
        }
    }
}

/// A name as it may appear in a marker: no brackets, quotes or spaces, at
/// most 64 characters.
fn clean_name(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .take(64)
        .collect();
    if cleaned.is_empty() {
        "unnamed".to_owned()
    } else {
        cleaned
    }
}

/// `[redacted:LABEL]`.
pub fn marker(label: &str) -> String {
    format!("{MARKER_PREFIX}{label}]")
}

/// One exact value the operator gave, with its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Secret {
    pub source: Source,
    pub value: String,
}

impl Secret {
    pub fn env(name: &str, value: &str) -> Secret {
        Secret {
            source: Source::Env(name.to_owned()),
            value: value.to_owned(),
        }
    }

    pub fn header(name: &str, value: &str) -> Secret {
        Secret {
            source: Source::Header(name.to_owned()),
            value: value.to_owned(),
        }
    }
}

/// What was replaced, by marker label (`env API_KEY`, `pattern jwt`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hits(BTreeMap<String, u64>);

impl Hits {
    pub fn add(&mut self, label: &str) {
        let count = self.0.entry(label.to_owned()).or_default();
        *count = count.saturating_add(1);
    }

    pub fn merge(&mut self, other: &Hits) {
        for (label, n) in &other.0 {
            let count = self.0.entry(label.clone()).or_default();
            *count = count.saturating_add(*n);
        }
    }

    pub fn total(&self) -> u64 {
        self.0.values().fold(0u64, |a, b| a.saturating_add(*b))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(label, count)`, labels in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> {
        self.0.iter().map(|(k, v)| (k.as_str(), *v))
    }
}
