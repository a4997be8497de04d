//! The pattern rules: tokens a server may echo unasked (JWTs, `sk-` keys,
//! bearer values, URL credentials, ...), each a regex, the capture group
//! its marker replaces and a last check on the match.

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

use super::names::{FIELD_WORDS, credential_param};
use super::url::percent_decode;

/// A last check on a rule's match (a token has a digit, a parameter is
/// named like a credential, ...).
pub(super) type Check = fn(&regex::Captures<'_>) -> bool;

pub(super) fn always(_: &regex::Captures<'_>) -> bool {
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
pub(super) struct Rule {
    name: &'static str,
    /// `pattern NAME`, the marker's label.
    pub(super) label: String,
    pub(super) regex: Regex,
    /// The capture group replaced by the marker.
    pub(super) group: usize,
    pub(super) check: Check,
}

pub(super) struct Rules {
    pub(super) list: Vec<Rule>,
    /// Which rules match at all, in one pass.
    pub(super) set: RegexSet,
    /// Some word every credential-named field holds (a first look only;
    /// `None` would mean every text is looked at in full).
    pub(super) field_words: Option<Regex>,
}

/// A left boundary that also accepts a JSON escape letter (`\n` then the
/// token), since a JSON text inside a string keeps its escapes.
const LEFT: &str = r"(?:^|[^A-Za-z0-9_]|\\[nrtbf])";

/// The pattern rules: name, regex, the group replaced, the last check.
// Long because it is one table of sixteen rules in the order they apply;
// split, the order (which decides which marker wins) would be scattered.
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

pub(super) fn rules() -> &'static Rules {
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
