//! What a secret is, where it came from, the marker that replaces it, and what was replaced.

use std::collections::BTreeMap;

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
    /// The user part of a URL's userinfo, where it stands as a credential
    /// (the userinfo, the Basic header a client derives from it).
    UrlUsername,
    /// The same user name wherever else it stands, when it is
    /// token-shaped ([`crate::redact::token_shaped`]).
    UrlUsernameToken,
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
            Source::UrlUsernameToken => "url username token".to_owned(),
            Source::UrlPassword => "url password".to_owned(),
            Source::UrlQuery(name) => format!("url query {}", clean_name(name)),
            Source::Argument(name) => format!("arg {}", clean_name(name)),
        }
    }

    /// The name a short value must follow to be replaced.
    pub(super) fn anchor(&self) -> Option<&str> {
        match self {
            Source::Env(name)
            | Source::Header(name)
            | Source::UrlQuery(name)
            | Source::Argument(name) => Some(name),
            Source::UrlUsername | Source::UrlUsernameToken | Source::UrlPassword => None,
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
