//! Credentials in URLs: userinfo and credential-like query parameters
//! ([`url_credentials`]), a URL's host, and the percent-encoding both need.

use base64::Engine as _;

use super::names::credential_param;
use super::secret::{Secret, Source, marker};

/// A URL's credentials: the secrets in it, and the URL (and pieces of it)
/// with each replaced by its marker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlCredentials {
    pub secrets: Vec<Secret>,
    /// The URL with its credentials replaced; `None` when it has none.
    pub redacted_url: Option<String>,
    /// Pieces (`scheme://user:pass@`, `name=value`), their replacements and
    /// the labels they remove, for where the URL appears reformatted.
    pub(super) rewrites: Vec<(String, String, Vec<String>)>,
}

impl UrlCredentials {
    /// The labels of the secrets in the URL, each once.
    pub(super) fn labels(&self) -> Vec<String> {
        let mut labels: Vec<String> = Vec::new();
        for s in &self.secrets {
            let label = s.source.label();
            if !labels.contains(&label) {
                labels.push(label);
            }
        }
        labels
    }
}

/// A URL split as written, nothing decoded.
struct UrlParts<'a> {
    scheme: &'a str,
    authority: &'a str,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

/// Split `url` into scheme, authority, path, query and fragment.
fn url_parts(url: &str) -> Option<UrlParts<'_>> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme.is_empty()
        || !scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let (before_fragment, fragment) = match tail.split_once('#') {
        Some((a, f)) => (a, Some(f)),
        None => (tail, None),
    };
    let (path, query) = match before_fragment.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (before_fragment, None),
    };
    Some(UrlParts {
        scheme,
        authority,
        path,
        query,
        fragment,
    })
}

/// The host of an `scheme://[userinfo@]host[:port]/...` URL, lowercase,
/// without userinfo, port, path or query. `None` when `url` has no host.
pub fn url_host(url: &str) -> Option<String> {
    let authority = url_parts(url)?.authority;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(rest) = host_port.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// The credentials in `url`: userinfo and credential-like query parameters.
pub fn url_credentials(url: &str) -> UrlCredentials {
    let Some(UrlParts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }) = url_parts(url)
    else {
        return UrlCredentials::default();
    };
    let mut out = UrlCredentials::default();
    let mut clean_authority = authority.to_owned();
    if let Some((userinfo, host)) = authority.rsplit_once('@') {
        let clean_userinfo = out.add_userinfo(scheme, userinfo);
        clean_authority = format!("{clean_userinfo}@{host}");
    }
    let clean_query = query.map(|q| out.add_query(q));
    if out.secrets.is_empty() {
        return out;
    }
    let mut clean = format!("{scheme}://{clean_authority}{path}");
    if let Some(q) = clean_query {
        clean.push('?');
        clean.push_str(&q);
    }
    if let Some(f) = fragment {
        clean.push('#');
        clean.push_str(f);
    }
    out.redacted_url = Some(clean);
    out
}

impl UrlCredentials {
    /// The secrets of a URL's `user[:password]` (decoded and as written,
    /// and the `Authorization: Basic` value a client derives from them)
    /// and its rewrites; returns the userinfo with each part replaced by
    /// its marker.
    fn add_userinfo(&mut self, scheme: &str, userinfo: &str) -> String {
        let (user, password) = match userinfo.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (userinfo, None),
        };
        let mut clean_userinfo = String::new();
        // A part as decoded (what the server sees) and as written; `bare`:
        // replaced wherever it stands, not only in the userinfo.
        let mut part = |source: Source, raw: &str, clean: &mut String, bare: Option<Source>| {
            if let Some(bare) = bare {
                for value in [percent_decode(raw), raw.to_owned()] {
                    let secret = Secret {
                        source: bare.clone(),
                        value,
                    };
                    if !self.secrets.contains(&secret) {
                        self.secrets.push(secret);
                    }
                }
            }
            clean.push_str(&marker(&source.label()));
        };
        // A user name is a credential where it stands (the userinfo, the
        // Basic header below); elsewhere only one that could be a secret
        // (a token) is: `postgres` or `admin` stay readable in a command,
        // a path or a tool name.
        if !user.is_empty() {
            let token = token_shaped(&percent_decode(user)).then_some(Source::UrlUsernameToken);
            part(Source::UrlUsername, user, &mut clean_userinfo, token);
        }
        if let Some(p) = password {
            clean_userinfo.push(':');
            if !p.is_empty() {
                part(
                    Source::UrlPassword,
                    p,
                    &mut clean_userinfo,
                    Some(Source::UrlPassword),
                );
            }
        }
        // The `Authorization: Basic` header a client derives from it.
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            percent_decode(user),
            password.map(percent_decode).unwrap_or_default()
        ));
        self.secrets.push(Secret {
            source: if password.is_some() {
                Source::UrlPassword
            } else {
                Source::UrlUsername
            },
            value: basic,
        });
        let labels = self.labels();
        self.rewrites.push((
            format!("{scheme}://{userinfo}@"),
            format!("{scheme}://{clean_userinfo}@"),
            labels.clone(),
        ));
        self.rewrites
            .push((format!("{userinfo}@"), format!("{clean_userinfo}@"), labels));
        clean_userinfo
    }

    /// The secrets of a query's credential-like parameters and their
    /// rewrites; returns the query with each such value replaced by its
    /// marker.
    fn add_query(&mut self, query: &str) -> String {
        let mut pairs = Vec::new();
        for pair in query.split('&') {
            match pair.split_once('=') {
                Some((name, value))
                    if credential_param(&percent_decode(name)) && !value.is_empty() =>
                {
                    let decoded_name = percent_decode(name);
                    let source = Source::UrlQuery(decoded_name);
                    let m = marker(&source.label());
                    self.rewrites.push((
                        format!("{name}={value}"),
                        format!("{name}={m}"),
                        vec![source.label()],
                    ));
                    self.secrets.push(Secret {
                        source: source.clone(),
                        value: percent_decode(value),
                    });
                    if percent_decode(value) != value {
                        self.secrets.push(Secret {
                            source,
                            value: value.to_owned(),
                        });
                    }
                    pairs.push(format!("{name}={m}"));
                }
                _ => pairs.push(pair.to_owned()),
            }
        }
        pairs.join("&")
    }
}

/// Prefixes of well-known tokens (GitHub, GitLab, Slack, OpenAI-style
/// keys, AWS access keys, Google OAuth, JWTs, npm, Hugging Face).
const TOKEN_PREFIXES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxr-",
    "sk-",
    "sk_",
    "pk_",
    "rk_",
    "AKIA",
    "ASIA",
    "ya29.",
    "eyJ",
    "npm_",
    "hf_",
];

/// Could this user name be a secret: a known token prefix, 32 characters
/// or more, or 16 or more with digits or both cases at a token's entropy
/// (`ghp_…`, a random 32-character name, `canary-user-3b9aca06q7`)? A
/// word such as `postgres`, `admin`, `root` or `app` is not.
pub fn token_shaped(user: &str) -> bool {
    let n = user.chars().count();
    if n >= 12 && TOKEN_PREFIXES.iter().any(|p| user.starts_with(p)) {
        return true;
    }
    if n >= 32 {
        return true;
    }
    let digits = user.chars().any(|c| c.is_ascii_digit());
    let cases = user.chars().any(char::is_uppercase) && user.chars().any(char::is_lowercase);
    n >= 16 && (digits || cases) && entropy(user) >= 3.0
}

/// Shannon entropy of a text's characters, in bits per character.
fn entropy(s: &str) -> f64 {
    let mut counts: std::collections::BTreeMap<char, usize> = Default::default();
    for c in s.chars() {
        *counts.entry(c).or_default() += 1;
    }
    let n = s.chars().count() as f64;
    counts
        .values()
        .map(|&k| {
            let p = k as f64 / n;
            -p * p.log2()
        })
        .sum()
}

pub(super) fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                let v = hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0);
                out.push(u8::try_from(v).unwrap_or(b'?'));
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
