//! The [`Redactor`]: the exact values an operator gave (and their encoded
//! forms) plus the pattern rules, applied to text and to JSON string by
//! string.

use std::borrow::Cow;
use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Value};

#[cfg(doc)]
use super::names::FIELD_WORDS;
use super::names::credential_field;
use super::rules::{Check, always, rules};
use super::secret::{Hits, MARKER_PREFIX, MIN_EXACT_LEN, Secret, Source, marker};
use super::url::{percent_encode, url_credentials};

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
        if !(t.starts_with("{") || t.starts_with("[")) {
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
