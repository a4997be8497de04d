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

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use base64::Engine as _;
use regex::{Regex, RegexSet};
use serde_json::{Map, Value};

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

/// A literal to find and what replaces it.
#[derive(Debug, Clone)]
struct Needle {
    replacement: String,
    /// One label per secret the replacement removes (a URL holds several).
    labels: Vec<String>,
}

/// A value too short to replace everywhere: replaced after its name.
#[derive(Debug, Clone)]
struct Anchored {
    /// `NAME` then `=`, `:` or `":"`, then the value as a whole token.
    regex: Regex,
    name: String,
    value: String,
    label: String,
}

/// The policy: exact values plus the pattern rules. Immutable; build a new
/// one to add values.
#[derive(Debug, Clone)]
pub struct Redactor {
    needles: HashMap<String, Needle>,
    /// Every needle, longest first, as one alternation.
    needle_re: Option<Regex>,
    anchored: Vec<Anchored>,
}

impl Default for Redactor {
    fn default() -> Self {
        Redactor::new(&[])
    }
}

impl Redactor {
    /// The pattern rules plus `secrets`, and every URL in `urls` with its
    /// credentials (see [`url_credentials`]).
    pub fn new(secrets: &[Secret]) -> Redactor {
        Redactor::with_urls(secrets, &[])
    }

    pub fn with_urls(secrets: &[Secret], urls: &[String]) -> Redactor {
        let mut needles: HashMap<String, Needle> = HashMap::new();
        let mut anchored = Vec::new();
        let mut add = |text: String, labels: Vec<String>, replacement: String| {
            if text.is_empty() || text.contains(MARKER_PREFIX) {
                return;
            }
            // The first registration of a text names it.
            needles.entry(text).or_insert(Needle {
                replacement,
                labels,
            });
        };
        let mut all: Vec<Secret> = secrets.to_vec();
        for url in urls {
            let creds = url_credentials(url);
            if let Some(clean) = &creds.redacted_url {
                add(url.clone(), creds.labels(), clean.clone());
                for (raw, clean, labels) in &creds.rewrites {
                    add(raw.clone(), labels.clone(), clean.clone());
                }
            }
            all.extend(creds.secrets);
        }
        for secret in &all {
            let label = secret.source.label();
            let m = marker(&label);
            for form in forms(&secret.value) {
                if form.chars().count() >= MIN_EXACT_LEN {
                    add(form, vec![label.clone()], m.clone());
                } else if let Some(name) = secret.source.anchor()
                    && !form.trim().is_empty()
                    && let Ok(regex) = Regex::new(&format!(
                        r#"(?i)(?:^|[^A-Za-z0-9_]){}["']?\s*(?:=|:)\s*["']?({})(?:$|[^A-Za-z0-9_])"#,
                        regex::escape(name),
                        regex::escape(&form)
                    ))
                {
                    anchored.push(Anchored {
                        regex,
                        name: name.to_owned(),
                        value: form,
                        label: label.clone(),
                    });
                }
            }
            // `Bearer TOKEN`: the token alone is echoed too.
            if let Source::Header(_) = secret.source
                && let Some((_, token)) = secret.value.trim().split_once(' ')
                && token.trim().chars().count() >= MIN_EXACT_LEN
            {
                for form in forms(token.trim()) {
                    add(form, vec![label.clone()], m.clone());
                }
            }
        }
        let mut texts: Vec<&String> = needles.keys().collect();
        texts.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        let needle_re = (!texts.is_empty())
            .then(|| {
                let alternation: Vec<String> = texts.iter().map(|t| regex::escape(t)).collect();
                Regex::new(&alternation.join("|")).ok()
            })
            .flatten();
        Redactor {
            needles,
            needle_re,
            anchored,
        }
    }

    /// How many exact texts (values and their encoded forms) the policy holds.
    pub fn exact_count(&self) -> usize {
        self.needles.len() + self.anchored.len()
    }

    /// `text` with every secret and pattern match replaced by its marker.
    pub fn redact_str<'a>(&self, text: &'a str, hits: &mut Hits) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        if let Some(re) = &self.needle_re
            && re.is_match(&out)
        {
            let replaced = re
                .replace_all(&out, |c: &regex::Captures<'_>| {
                    let found = c.get(0).map_or("", |m| m.as_str());
                    match self.needles.get(found) {
                        Some(n) => {
                            for label in &n.labels {
                                hits.add(label);
                            }
                            n.replacement.clone()
                        }
                        None => found.to_owned(),
                    }
                })
                .into_owned();
            out = Cow::Owned(replaced);
        }
        for a in &self.anchored {
            if let Some(new) = replace_groups(&a.regex, &out, 1, always, &a.label, hits) {
                out = Cow::Owned(new);
            }
        }
        let rules = rules();
        for index in rules.set.matches(&out).iter() {
            if let Some(rule) = rules.list.get(index)
                && let Some(new) =
                    replace_groups(&rule.regex, &out, rule.group, rule.check, &rule.label, hits)
            {
                out = Cow::Owned(new);
            }
        }
        out
    }

    /// Redact every string (keys too) in `value`; true when anything changed.
    pub fn redact_value(&self, value: &mut Value, hits: &mut Hits) -> bool {
        match value {
            Value::String(s) => {
                if let Some(new) = self.redact_embedded_json(s, hits) {
                    *s = new;
                    true
                } else if let Cow::Owned(new) = self.redact_str(s, hits) {
                    *s = new;
                    true
                } else {
                    false
                }
            }
            Value::Array(items) => {
                let mut changed = false;
                for item in items {
                    changed |= self.redact_value(item, hits);
                }
                changed
            }
            Value::Object(map) => self.redact_object(map, hits),
            Value::Null | Value::Bool(_) | Value::Number(_) => false,
        }
    }

    /// A string that is itself a JSON object or array (a tool result's
    /// text, usually) is redacted as JSON, so its credential-named fields
    /// are found too; `None` when it is not JSON or nothing changed. It is
    /// written back compact, or pretty when it was written over lines.
    fn redact_embedded_json(&self, s: &str, hits: &mut Hits) -> Option<String> {
        let t = s.trim_start();
        if !(t.starts_with('{') || t.starts_with('[')) {
            return None;
        }
        let mut inner: Value = serde_json::from_str(s).ok()?;
        let mut found = Hits::default();
        if !self.redact_value(&mut inner, &mut found) {
            return None;
        }
        let text = if s.contains('\n') {
            serde_json::to_string_pretty(&inner)
        } else {
            serde_json::to_string(&inner)
        }
        .ok()?;
        hits.merge(&found);
        Some(text)
    }

    fn redact_object(&self, map: &mut Map<String, Value>, hits: &mut Hits) -> bool {
        let mut changed = false;
        let mut renamed = false;
        for (key, value) in map.iter_mut() {
            if let Value::String(s) = value
                && !s.is_empty()
                && !s.starts_with(MARKER_PREFIX)
            {
                if let Some(a) = self
                    .anchored
                    .iter()
                    .find(|a| a.name.eq_ignore_ascii_case(key) && s.contains(a.value.as_str()))
                {
                    hits.add(&a.label);
                    *s = marker(&a.label);
                    changed = true;
                    continue;
                }
                if credential_field(key) {
                    // An operator's value keeps the marker naming its
                    // source; anything else in the field goes whole.
                    let mut found = Hits::default();
                    let redacted = self.redact_str(s, &mut found);
                    if found
                        .iter()
                        .any(|(label, _)| !label.starts_with("pattern "))
                    {
                        *s = redacted.into_owned();
                        hits.merge(&found);
                    } else {
                        let label = "pattern credential-field";
                        hits.add(label);
                        *s = marker(label);
                    }
                    changed = true;
                    continue;
                }
            }
            changed |= self.redact_value(value, hits);
            renamed |= matches!(self.redact_str(key, &mut Hits::default()), Cow::Owned(_));
        }
        if renamed {
            let old = std::mem::take(map);
            for (key, value) in old {
                let key = self.redact_str(&key, hits).into_owned();
                map.insert(key, value);
            }
            changed = true;
        }
        changed
    }

    /// A JSON text with every string redacted, re-serialised only when
    /// something changed (so an untouched frame keeps its exact bytes); text
    /// that is not JSON is redacted as text.
    pub fn redact_json_text<'a>(&self, text: &'a str, hits: &mut Hits) -> Cow<'a, str> {
        if !self.might_change_json(text) {
            return Cow::Borrowed(text);
        }
        match serde_json::from_str::<Value>(text) {
            Ok(mut value) => {
                let mut found = Hits::default();
                if !self.redact_value(&mut value, &mut found) {
                    return Cow::Borrowed(text);
                }
                match serde_json::to_string(&value) {
                    Ok(json) => {
                        hits.merge(&found);
                        Cow::Owned(json)
                    }
                    Err(_) => self.redact_str(text, hits),
                }
            }
            Err(_) => self.redact_str(text, hits),
        }
    }

    /// A cheap, sound first look at a JSON text: `false` only when no
    /// string in it can change, so the text need not be parsed.
    ///
    /// Without `\u` and `\/` escapes a decoded string differs from its text
    /// only where `\"`, `\\` or a control escape (`\n`, ...) stands, and
    /// no rule's token, no value (its escaped form is a needle too) and no
    /// rule boundary (`LEFT` accepts an escape letter) is broken by one. The
    /// rules whose context can hold an escape (`authorization: "..."`,
    /// `bearer\t...`, `"key":"..."` assignments, credential fields, a short
    /// value after its name) all need a word of [`FIELD_WORDS`] or the
    /// value itself in the text, which is looked for as is.
    fn might_change_json(&self, text: &str) -> bool {
        if text.contains("\\u") || text.contains("\\/") {
            return true;
        }
        if let Some(re) = &self.needle_re
            && re.is_match(text)
        {
            return true;
        }
        if self
            .anchored
            .iter()
            .any(|a| text.contains(a.value.as_str()))
        {
            return true;
        }
        let rules = rules();
        rules.set.is_match(text)
            || rules
                .field_words
                .as_ref()
                .is_none_or(|re| re.is_match(text))
    }

    /// Whether `text` holds anything this policy would replace.
    pub fn finds(&self, text: &str) -> bool {
        matches!(self.redact_str(text, &mut Hits::default()), Cow::Owned(_))
    }
}

/// Replace capture group `group` of every match of `re` in `text` (when
/// `check` accepts it) by `marker`; `None` when nothing was replaced.
fn replace_groups(
    re: &Regex,
    text: &str,
    group: usize,
    check: Check,
    label: &str,
    hits: &mut Hits,
) -> Option<String> {
    let replacement = marker(label);
    let mut out = String::new();
    let mut last = 0;
    for caps in re.captures_iter(text) {
        let Some(m) = caps.get(group) else { continue };
        if !check(&caps) || m.as_str().starts_with(MARKER_PREFIX) {
            continue;
        }
        out.push_str(&text[last..m.start()]);
        out.push_str(&replacement);
        last = m.end();
        hits.add(label);
    }
    if out.is_empty() && last == 0 {
        return None;
    }
    out.push_str(&text[last..]);
    Some(out)
}

/// The forms a value may take in what is written: as given, JSON-escaped
/// (inside a JSON text held in a string), and percent-encoded (in a URL).
fn forms(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    if let Ok(json) = serde_json::to_string(value) {
        let inner = json[1..json.len() - 1].to_owned();
        if inner != value {
            out.push(inner);
        }
    }
    // Some JSON writers escape `/` as well.
    if value.contains('/')
        && let Some(inner) = out.last().cloned()
    {
        out.push(inner.replace('/', "\\/"));
    }
    let encoded = percent_encode(value);
    if encoded != value {
        out.push(encoded);
    }
    out
}

fn percent_encode(s: &str) -> String {
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

fn percent_decode(s: &str) -> String {
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

/// Whether a query parameter or command-line flag named `name` (`api_key`,
/// `token`, `client-secret`, ...) carries a credential.
pub fn credential_name(name: &str) -> bool {
    credential_param(name)
}

/// Query parameter names whose values are credentials.
fn credential_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    matches!(
        n.as_str(),
        "key"
            | "api_key"
            | "apikey"
            | "token"
            | "access_token"
            | "auth"
            | "auth_token"
            | "authorization"
            | "password"
            | "passwd"
            | "pwd"
            | "secret"
            | "client_secret"
            | "sig"
            | "signature"
            | "x_amz_signature"
            | "x_amz_credential"
            | "x_amz_security_token"
            | "session"
            | "sessionid"
            | "session_id"
            | "code"
    ) || n.ends_with("_token")
        || n.ends_with("_key")
        || n.ends_with("_secret")
        || n.ends_with("_password")
}

/// What the text around every name [`credential_field`] accepts looks like
/// (`...token":`, `...token\":` inside a JSON text in a string), and the
/// context of the `authorization`, `bearer` and `credential-assignment`
/// rules, escapes allowed: a first look that must never miss one.
const FIELD_WORDS: &str = r#"(?i)(?:key|token|bearer|authorization|cookie|passwd|password|secret|session[_-]?id|credentials?)["']?\\?["']?(?:\s|\\[nrtbf])*[:=]|bearer(?:\s|\\[nrtbf])"#;

/// JSON field names whose string values are credentials.
fn credential_field(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    matches!(
        n.as_str(),
        "api_key"
            | "apikey"
            | "x_api_key"
            | "token"
            | "access_token"
            | "refresh_token"
            | "id_token"
            | "auth_token"
            | "bearer"
            | "authorization"
            | "proxy_authorization"
            | "cookie"
            | "set_cookie"
            | "password"
            | "passwd"
            | "secret"
            | "client_secret"
            | "private_key"
            | "mcp_session_id"
            | "session_token"
            | "x_amz_security_token"
    ) || n.ends_with("_api_key")
        || n.ends_with("_apikey")
        || n.ends_with("_secret")
        || n.ends_with("_password")
        || n.ends_with("_access_token")
        || n.ends_with("_auth_token")
}

/// A URL's credentials: the secrets in it, and the URL (and pieces of it)
/// with each replaced by its marker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlCredentials {
    pub secrets: Vec<Secret>,
    /// The URL with its credentials replaced; `None` when it has none.
    pub redacted_url: Option<String>,
    /// Pieces (`scheme://user:pass@`, `name=value`), their replacements and
    /// the labels they remove, for where the URL appears reformatted.
    rewrites: Vec<(String, String, Vec<String>)>,
}

impl UrlCredentials {
    /// The labels of the secrets in the URL, each once.
    fn labels(&self) -> Vec<String> {
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
        let (user, password) = match userinfo.split_once(':') {
            Some((u, p)) => (u, Some(p)),
            None => (userinfo, None),
        };
        let mut clean_userinfo = String::new();
        // A part as decoded (what the server sees) and as written.
        let mut part = |source: Source, raw: &str, clean: &mut String| {
            for value in [percent_decode(raw), raw.to_owned()] {
                let secret = Secret {
                    source: source.clone(),
                    value,
                };
                if !out.secrets.contains(&secret) {
                    out.secrets.push(secret);
                }
            }
            clean.push_str(&marker(&source.label()));
        };
        if !user.is_empty() {
            part(Source::UrlUsername, user, &mut clean_userinfo);
        }
        if let Some(p) = password {
            clean_userinfo.push(':');
            if !p.is_empty() {
                part(Source::UrlPassword, p, &mut clean_userinfo);
            }
        }
        // The `Authorization: Basic` header a client derives from it.
        let basic = base64::engine::general_purpose::STANDARD.encode(format!(
            "{}:{}",
            percent_decode(user),
            password.map(percent_decode).unwrap_or_default()
        ));
        out.secrets.push(Secret {
            source: if password.is_some() {
                Source::UrlPassword
            } else {
                Source::UrlUsername
            },
            value: basic,
        });
        let labels = out.labels();
        out.rewrites.push((
            format!("{scheme}://{userinfo}@"),
            format!("{scheme}://{clean_userinfo}@"),
            labels.clone(),
        ));
        out.rewrites
            .push((format!("{userinfo}@"), format!("{clean_userinfo}@"), labels));
        clean_authority = format!("{clean_userinfo}@{host}");
    }
    let mut clean_query = None;
    if let Some(q) = query {
        let mut pairs = Vec::new();
        for pair in q.split('&') {
            match pair.split_once('=') {
                Some((name, value))
                    if credential_param(&percent_decode(name)) && !value.is_empty() =>
                {
                    let decoded_name = percent_decode(name);
                    let source = Source::UrlQuery(decoded_name);
                    let m = marker(&source.label());
                    out.rewrites.push((
                        format!("{name}={value}"),
                        format!("{name}={m}"),
                        vec![source.label()],
                    ));
                    out.secrets.push(Secret {
                        source: source.clone(),
                        value: percent_decode(value),
                    });
                    if percent_decode(value) != value {
                        out.secrets.push(Secret {
                            source,
                            value: value.to_owned(),
                        });
                    }
                    pairs.push(format!("{name}={m}"));
                }
                _ => pairs.push(pair.to_owned()),
            }
        }
        clean_query = Some(pairs.join("&"));
    }
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

/// A last check on a rule's match (a token has a digit, a parameter is
/// named like a credential, ...).
type Check = fn(&regex::Captures<'_>) -> bool;

fn always(_: &regex::Captures<'_>) -> bool {
    true
}

/// Random tokens have digits; words do not.
fn group_has_digit(caps: &regex::Captures<'_>) -> bool {
    caps.get(1)
        .is_some_and(|m| m.as_str().bytes().any(|b| b.is_ascii_digit()))
}

fn names_credential_param(caps: &regex::Captures<'_>) -> bool {
    caps.get(1)
        .is_some_and(|m| credential_param(&percent_decode(m.as_str())))
}

/// One pattern rule.
struct Rule {
    name: &'static str,
    /// `pattern NAME`, the marker's label.
    label: String,
    regex: Regex,
    /// The capture group replaced by the marker.
    group: usize,
    check: Check,
}

struct Rules {
    list: Vec<Rule>,
    /// Which rules match at all, in one pass.
    set: RegexSet,
    /// Some word every credential-named field holds (a first look only;
    /// `None` would mean every text is looked at in full).
    field_words: Option<Regex>,
}

/// A left boundary that also accepts a JSON escape letter (`\n` then the
/// token), since a JSON text inside a string keeps its escapes.
const LEFT: &str = r"(?:^|[^A-Za-z0-9_]|\\[nrtbf])";

/// The pattern rules: name, regex, the group replaced, the last check.
fn rule_specs() -> Vec<(&'static str, String, usize, Check)> {
    vec![
        (
            "private-key",
            r"(?s)(-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|$))".to_owned(),
            1,
            always,
        ),
        (
            "jwt",
            format!(r"{LEFT}(eyJ[A-Za-z0-9_-]{{8,}}\.eyJ[A-Za-z0-9_-]{{8,}}\.[A-Za-z0-9_-]*)"),
            1,
            always,
        ),
        (
            "authorization",
            r#"(?i)(?:^|[^A-Za-z0-9_-])(?:proxy-)?authorization["']?\s*[:=]\s*["']?(?:(?:basic|bearer|token|digest|negotiate|apikey)\s+)?([^\s"',;\[\]\\]{8,})"#.to_owned(),
            1,
            always,
        ),
        (
            "bearer",
            format!(r"(?i){LEFT}bearer\s+([A-Za-z0-9._~+/-]{{16,}}=*)"),
            1,
            group_has_digit,
        ),
        (
            "sk-key",
            format!(r"{LEFT}(sk-[A-Za-z0-9_-]{{20,}})"),
            1,
            group_has_digit,
        ),
        (
            "stripe-key",
            format!(r"{LEFT}((?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{{16,}})"),
            1,
            always,
        ),
        (
            "github-token",
            format!(r"{LEFT}(gh[pousr]_[A-Za-z0-9]{{36,255}}|github_pat_[A-Za-z0-9_]{{22,255}})"),
            1,
            always,
        ),
        (
            "gitlab-token",
            format!(r"{LEFT}(glpat-[A-Za-z0-9_-]{{20,}})"),
            1,
            always,
        ),
        (
            "google-api-key",
            format!(r"{LEFT}(AIza[0-9A-Za-z_-]{{35}})"),
            1,
            always,
        ),
        (
            "slack-token",
            format!(r"{LEFT}(xox[abposr]-[0-9A-Za-z-]{{10,}})"),
            1,
            always,
        ),
        (
            "huggingface-token",
            format!(r"{LEFT}(hf_[A-Za-z0-9]{{30,}})"),
            1,
            group_has_digit,
        ),
        (
            "npm-token",
            format!(r"{LEFT}(npm_[A-Za-z0-9]{{36}})"),
            1,
            always,
        ),
        (
            "aws-access-key-id",
            format!(r"{LEFT}((?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{{16}})(?:$|[^A-Za-z0-9])"),
            1,
            always,
        ),
        (
            "url-userinfo",
            r#"(?i)[a-z][a-z0-9+.-]*://([^\s/?#@"'<>\[\]\\]+)@"#.to_owned(),
            1,
            always,
        ),
        (
            "url-credential",
            r#"[?&;]([A-Za-z0-9_.%-]+)=([^&#\s"'<>\[\]\\]+)"#.to_owned(),
            2,
            names_credential_param,
        ),
        (
            "credential-assignment",
            r#"(?i)(?:^|[^A-Za-z0-9_])[A-Za-z0-9_.-]*(?:api[_-]?key|secret|token|password|passwd|credentials?|private[_-]?key|access[_-]?key|session[_-]?id)["']?\s*(?:=|:)\s*["']?([^\s"'&,;<>\[\]\\]{8,})"#.to_owned(),
            1,
            group_has_digit,
        ),
    ]
}

fn rules() -> &'static Rules {
    static RULES: LazyLock<Rules> = LazyLock::new(|| {
        // The patterns are constants; a unit test checks every one compiles.
        let list: Vec<Rule> = rule_specs()
            .into_iter()
            .filter_map(|(name, pattern, group, check)| {
                Regex::new(&pattern).ok().map(|regex| Rule {
                    name,
                    label: format!("pattern {name}"),
                    regex,
                    group,
                    check,
                })
            })
            .collect();
        let set = RegexSet::new(list.iter().map(|r| r.regex.as_str()))
            .unwrap_or_else(|_| RegexSet::empty());
        let field_words = Regex::new(FIELD_WORDS).ok();
        Rules {
            list,
            set,
            field_words,
        }
    });
    &RULES
}

/// The names of the pattern rules that compiled, in the order they apply.
pub fn rule_names() -> Vec<&'static str> {
    rules().list.iter().map(|r| r.name).collect()
}

/// The names of every pattern rule the policy defines.
pub fn defined_rule_names() -> Vec<&'static str> {
    rule_specs().into_iter().map(|(name, ..)| name).collect()
}
