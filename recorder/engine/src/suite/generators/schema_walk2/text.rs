//! Reading a tool result: the handles it names (values a later call can
//! take: names, paths, ids, revisions) and the facts it states (a value
//! with the label the result gives it).
//!
//! Both come from the JSON in a result when there is some, else from its
//! lines: `[TAG] name` listing entries, `Label: value` lines (a blank line
//! or a repeated label starts a new record), a line that is one absolute
//! path, and `label 12.5unit` phrases in prose.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

pub use super::lines::file_name_like;
use super::lines::line_handles;
pub use crate::suite::printed::labelled::{HEADING_LABEL, records};
use crate::suite::printed::labelled::{LABELLED, unquote};
pub use crate::suite::printed::{html_table, python_literal, ruled_table, structured, tabular};

/// The key of the handle that is the server's working folder (offered to
/// a parameter that takes a folder, never to one that takes a file).
pub const WORKING_FOLDER: &str = "working folder";

/// Another field of a record: `(label, value)`.
pub type Alias = (String, String);

/// A value a later call may take as an argument.
#[derive(Debug, Clone, PartialEq)]
pub struct Handle {
    pub value: String,
    /// The observation whose result named it; `None` for an operator seed.
    pub from: Option<usize>,
    /// The field, label or listing tag it was found under.
    pub key: String,
    /// Another field of the same record, `(label, value)`: a task can name
    /// the record by it without giving the handle away.
    pub alias: Option<(String, String)>,
    /// For a path joined from a listing: the handle of the listed path.
    pub parent: Option<usize>,
    /// What the tool that listed it lists (`list_languages` lists
    /// languages, `register_project` gives a project): a parameter of
    /// that name takes it.
    pub noun: Option<String>,
}

impl Handle {
    /// A value no call's result gave: the operator's own (a path on the
    /// command line, a seed call's argument) or what the server says of
    /// itself (a resource's name, its instructions' examples).
    pub fn unlinked(value: impl Into<String>, key: impl Into<String>) -> Handle {
        Handle {
            value: value.into(),
            from: None,
            key: key.into(),
            alias: None,
            parent: None,
            noun: None,
        }
    }

    /// Found as an entry of a listing (a `[FILE]`-style tag, or a `name`).
    pub fn key_is_entry(&self) -> bool {
        matches!(
            self.key.as_str(),
            "file" | "dir" | "directory" | "folder" | "name" | "entry"
        )
    }
}

/// A value a result states, with its label.
#[derive(Debug, Clone, PartialEq)]
pub struct Fact {
    /// The label as the result writes it (`humidity`, `entityType`,
    /// `Cache hit ratio`).
    pub label: String,
    /// The value as the result writes it.
    pub value: String,
    pub number: Option<f64>,
    /// The record it belongs to, named by another field of that record.
    pub subject: Option<(String, String)>,
}

/// Field names that name a record rather than describe it.
pub const NAMING_KEYS: &[&str] = &[
    "name",
    "title",
    "id",
    "key",
    "path",
    "uri",
    "url",
    "slug",
    "label",
    "entityName",
    "commit",
    "message",
    "subject",
    "filename",
];

pub fn is_naming(key: &str) -> bool {
    NAMING_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key))
}

/// Does this label of a [`records`] pair name its record?
fn names_record(label: &str) -> bool {
    is_naming(label) || label == HEADING_LABEL
}

static LISTING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\[([A-Z][A-Z ]{0,15})\]\s+(\S.{0,199})$")
        .expect("the listing pattern compiles")
});
/// Words a prose label does not end in (`grew to 4.2` labels nothing).
const PROSE_STOP: &[&str] = &[
    "to", "in", "at", "of", "by", "for", "with", "from", "on", "was", "were", "is", "are", "grew",
    "and", "or", "the", "a", "an", "than", "about", "over", "under", "after", "before",
];

static PROSE_NUMBER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b([a-z][a-z\-]*(?:\s+[a-z][a-z\-]*){0,2})\s+(?:of\s+|is\s+|=\s*)?(-?\d+(?:\.\d+)?)\s*(%|[a-z]{1,3}\b)?")
        .expect("the prose number pattern compiles")
});

/// The naming field of a record other than `except`.
fn alias_in(pairs: &[(String, String)], except: &str) -> Option<(String, String)> {
    let fits = |(l, v): &&(String, String)| l != except && (3..=80).contains(&v.chars().count());
    pairs
        .iter()
        .filter(fits)
        .find(|(l, _)| is_naming(l))
        .or_else(|| pairs.iter().filter(fits).find(|(l, _)| l == HEADING_LABEL))
        .or_else(|| {
            pairs
                .iter()
                .find(|(l, v)| l != except && (3..=80).contains(&v.chars().count()))
        })
        .cloned()
}

/// The handles a result names.
pub fn harvest(text: &str, json: Option<&Value>, from: usize) -> Vec<Handle> {
    let mut out = Vec::new();
    let mut push = |value: String, key: &str, alias: Option<(String, String)>| {
        let n = value.chars().count();
        // A record's id may be one digit (`#7`); any other value of one
        // character names nothing.
        let shortest = if key == "id" { 1 } else { 2 };
        // A value named twice by one result (a line that is a file's name)
        // is one handle, under the first reading's key.
        let again = out.iter().any(|h: &Handle| h.value == value);
        if (shortest..=200).contains(&n) && !value.contains('\n') && out.len() < 500 && !again {
            out.push(Handle {
                value,
                from: Some(from),
                key: key.to_owned(),
                alias,
                parent: None,
                noun: None,
            });
        }
    };
    if let Some(v) = json {
        json_handles(v, "", &mut |value, key, alias| push(value, key, alias));
    }
    // A listing under a header, or of bullets (`Found keys:` over one
    // key a line): each a name of what the header names.
    if json.is_none()
        && let Some((key, names)) = super::lines::listed_names(text)
    {
        for n in names {
            push(n, &key, None);
        }
    }
    // A listing answered one bare name a line (`games\nplays`): each a
    // name.
    let names: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let one_name_a_line = json.is_none()
        && (2..=500).contains(&names.len())
        && names.iter().all(|l| {
            (2..=60).contains(&l.chars().count())
                && l.chars().all(|c| c.is_alphanumeric() || "_-.:".contains(c))
                && !l.ends_with(':')
                && l.chars().next().is_some_and(char::is_alphabetic)
        });
    // A listing of files one a line whose names hold spaces
    // (`/people/Ana Costa.md`): each line whole, a path where it names
    // folders.
    let spaced_files = json.is_none()
        && !one_name_a_line
        && names.len() >= 2
        && names.iter().all(|l| spaced_file(l) && !LISTING.is_match(l));
    // One record a line, its fields split by ` | ` and no header
    // (`hargreaves2019soil | Soil carbon under pasture | 2019`): the first
    // field of each is the record's key.
    let keyed: Vec<&str> = names
        .iter()
        .filter_map(|l| {
            KEYED_LINE
                .captures(l)
                .map(|c| c.get(1).map_or("", |m| m.as_str()))
        })
        .collect();
    if json.is_none() && keyed.len() >= 2 && keyed.len() * 2 >= names.len() {
        for k in &keyed {
            push((*k).to_owned(), "key", None);
        }
    }
    for line in text.lines() {
        if spaced_files && !line.trim().is_empty() {
            let t = line.trim();
            push(
                t.to_owned(),
                if t.contains('/') { "path" } else { "name" },
                None,
            );
            continue;
        }
        if one_name_a_line && !line.trim().is_empty() && !file_name_like(line.trim()) {
            push(line.trim().to_owned(), "name", None);
            continue;
        }
        if let Some(c) = LISTING.captures(line) {
            // The entry's name, before any column beside it (`[FILE] Ana
            // Costa.md      88 B`).
            let entry = c[2].split("  ").next().unwrap_or(&c[2]);
            push(unquote(entry), &c[1].trim().to_lowercase(), None);
        } else {
            let t = line.trim();
            if t.starts_with('/') && !t.contains(char::is_whitespace) {
                push(t.to_owned(), "path", None);
            } else if file_name_like(t) {
                // A line that is one file's name (`boardgames.db`).
                push(t.to_owned(), "name", None);
            }
        }
    }
    // (A file's name read whole is never cut at its spaces again.)
    if json.is_none() && !spaced_files {
        for (value, key, alias) in line_handles(text) {
            push(value, key, alias);
        }
    }
    for record in records(text) {
        for (label, value) in &record {
            if value.contains(' ') && !names_record(label) {
                // A list of names under a label (`entities: Greta Nilsson,
                // Lending Shelf`): each is a name.
                for item in name_list(value) {
                    push(item.to_owned(), label, None);
                }
                continue;
            }
            push(value.clone(), label, alias_in(&record, label));
        }
    }
    out
}

/// A line that is one file's name or path, spaces and all (`/people/Ana
/// Costa.md`): a name with an extension, a few words, no label and no
/// sentence.
fn spaced_file(line: &str) -> bool {
    line.chars().count() <= 200
        && line.split_whitespace().count() <= 8
        && !line.contains(": ")
        && !line.contains("://")
        && file_name_like(&line.replace(' ', "_"))
}

/// The items of a value that is a list of names (`Greta Nilsson, Lending
/// Shelf`): two or more, split by `, ` or `; `, each a few words and no
/// sentence. Empty when the value is prose.
fn name_list(value: &str) -> Vec<&str> {
    let items: Vec<&str> = value.split([',', ';']).map(str::trim).collect();
    let named = items.len() >= 2
        && items.iter().all(|i| {
            (2..=60).contains(&i.chars().count())
                && i.split_whitespace().count() <= 5
                && !i.ends_with('.')
                && i.chars().next().is_some_and(char::is_alphanumeric)
        });
    if named { items } else { Vec::new() }
}

/// A line that is a record whose first field, an identifier, is followed
/// by ` | ` and more fields.
static KEYED_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*[-*]?\s*([A-Za-z][\w.:/-]{1,60})\s+\|\s+\S")
        .expect("the keyed line pattern compiles")
});

fn json_handles(v: &Value, key: &str, push: &mut dyn FnMut(String, &str, Option<Alias>)) {
    match v {
        Value::String(s) if !key.is_empty() => push(s.clone(), key, None),
        // A bare list of names (`["orders", "customers"]`): each a name.
        Value::Array(a) if key.is_empty() && a.iter().all(Value::is_string) => {
            a.iter()
                .filter_map(Value::as_str)
                .for_each(|s| push(s.to_owned(), "name", None));
        }
        Value::Array(a) => a.iter().for_each(|x| json_handles(x, key, push)),
        Value::Object(o) => {
            // A map keyed by the things it lists (a file name to its size,
            // a path to its details): each key is a name a call may take.
            for k in o.keys() {
                if file_name_like(k) {
                    push(k.clone(), "name", None);
                }
            }
            let pairs: Vec<(String, String)> = o
                .iter()
                .filter_map(|(k, x)| x.as_str().map(|s| (k.clone(), s.to_owned())))
                .collect();
            for (k, x) in o {
                match x {
                    Value::String(s) => push(s.clone(), k, alias_in(&pairs, k)),
                    other => json_handles(other, k, push),
                }
            }
        }
        _ => {}
    }
}

/// The part of a text the server states itself: all of it, except the
/// files' own lines of a unified diff (from its first `diff --git` or
/// `@@ -` hunk line on). A diff's lines are the text of files: a `let
/// waited: Vec<u64> = agent` in a diffed source file is not a fact
/// labelled "let waited" (mcp-server-git's `git_show` over a real
/// repository gave such tasks).
fn stated(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with("diff --git ") || line.starts_with("@@ -") {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// The facts a result states.
pub fn facts(text: &str, json: Option<&Value>) -> Vec<Fact> {
    let mut out = Vec::new();
    if let Some(v) = json {
        json_facts(v, "", None, &mut out);
    }
    let text = stated(text);
    if out.is_empty() {
        for record in records(text) {
            for (label, value) in &record {
                if label == HEADING_LABEL {
                    continue;
                }
                let subject = alias_in(&record, label).filter(|(l, _)| names_record(l));
                out.push(Fact {
                    label: label.clone(),
                    value: value.clone(),
                    number: value.parse::<f64>().ok().filter(|f| f.is_finite()),
                    subject,
                });
            }
        }
        for line in text.lines() {
            // In a labelled line, the prose is its value.
            let prose = LABELLED
                .captures(line)
                .and_then(|c| c.get(2))
                .map_or(line, |m| m.as_str());
            // Prose facts come from short phrases only (`latency 150ms`),
            // never from a paragraph.
            if prose.chars().count() > 80 {
                continue;
            }
            for c in PROSE_NUMBER.captures_iter(prose) {
                // The label and the number are whole words: not `txt 32` from
                // `launch.txt 32 B`, not `code is 7` from `7Q-ALPHA-19`.
                if !starts_a_word(prose, c.get(1).map_or(0, |m| m.start()))
                    || !ends_a_word(prose, c.get(0).map_or(0, |m| m.end()))
                {
                    continue;
                }
                let label = c[1].trim().to_owned();
                let last = label.rsplit(' ').next().unwrap_or("").to_lowercase();
                if PROSE_STOP.contains(&last.as_str()) {
                    continue;
                }
                let Ok(number) = c[2].parse::<f64>() else {
                    continue;
                };
                if !number.is_finite() {
                    continue;
                }
                out.push(Fact {
                    label,
                    value: c[2].to_owned(),
                    number: Some(number),
                    subject: None,
                });
            }
        }
    }
    out.truncate(2_000);
    out
}

fn short(x: &Value) -> Option<&str> {
    x.as_str().filter(|s| (2..=80).contains(&s.chars().count()))
}

fn json_facts(v: &Value, key: &str, subject: Option<(String, String)>, out: &mut Vec<Fact>) {
    json_facts_in(v, key, subject, false, out);
}

/// [`json_facts`]; `in_list`: `v` is one of several records of a list,
/// so a fact of it must name its record (else which record's is asked
/// for?): by its name, else by another of its fields.
fn json_facts_in(
    v: &Value,
    key: &str,
    subject: Option<(String, String)>,
    in_list: bool,
    out: &mut Vec<Fact>,
) {
    if out.len() >= 2_000 {
        return;
    }
    match v {
        Value::String(s) if !key.is_empty() => out.push(Fact {
            label: key.to_owned(),
            value: s.clone(),
            number: None,
            subject,
        }),
        Value::Number(n) if !key.is_empty() => {
            if let Some(f) = n.as_f64().filter(|f| f.is_finite()) {
                out.push(Fact {
                    label: key.to_owned(),
                    value: n.to_string(),
                    number: Some(f),
                    subject,
                });
            }
        }
        Value::Array(a) => {
            let several = a.len() > 1;
            a.iter()
                .for_each(|x| json_facts_in(x, key, subject.clone(), several, out));
        }
        Value::Object(o) => {
            let naming: Option<(String, String)> = o.iter().find_map(|(k, x)| {
                short(x)
                    .filter(|_| is_naming(k))
                    .map(|s| (k.clone(), s.to_owned()))
            });
            // A name is asked for by another field of its record: the
            // name of the record whose type is `falcon`.
            let describing: Option<(String, String)> = o.iter().find_map(|(k, x)| {
                short(x)
                    .filter(|_| !is_naming(k))
                    .map(|s| (k.clone(), s.to_owned()))
            });
            for (k, x) in o {
                let own = if is_naming(k) {
                    describing.clone().filter(|(dk, _)| dk != k)
                } else {
                    naming
                        .clone()
                        .filter(|(nk, _)| nk != k)
                        .or_else(|| subject.clone())
                        .or_else(|| {
                            // One of several records with no name: named
                            // by another of its fields.
                            in_list
                                .then(|| {
                                    o.iter().find_map(|(ok, ox)| {
                                        short(ox)
                                            .filter(|_| ok != k)
                                            .map(|s| (ok.clone(), s.to_owned()))
                                    })
                                })
                                .flatten()
                        })
                };
                if in_list && own.is_none() && !matches!(x, Value::Array(_) | Value::Object(_)) {
                    continue;
                }
                json_facts(x, k, own, out);
            }
        }
        _ => {}
    }
}

/// Does the word at byte `at` of `text` start there (not after a `.`, `/`,
/// `_`, `-` or a letter of the same token)?
fn starts_a_word(text: &str, at: usize) -> bool {
    text[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || ".-_/\\@".contains(c)))
}

/// Does a word end at byte `at` of `text` (nothing of the same token
/// follows: a letter, a digit, `-`, `_`, `/`, or a `.` before more of it)?
fn ends_a_word(text: &str, at: usize) -> bool {
    let mut rest = text[at..].chars();
    match rest.next() {
        None => true,
        Some(c) if c.is_alphanumeric() || "-_/@".contains(c) => false,
        Some('.') => rest.next().is_none_or(|c| !c.is_alphanumeric()),
        Some(_) => true,
    }
}

/// A label in plain words: `entityType` and `entity_type` read
/// "entity type".
pub fn label_words(label: &str) -> String {
    let mut out = String::new();
    let mut prev_lower = false;
    for c in label.chars() {
        if c == '_' || c == '-' {
            out.push(' ');
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower {
            out.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        out.extend(c.to_lowercase());
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_result_printed_inside_a_result_reads_as_what_it_holds() {
        let wrapped = r#"{"content": [{"type": "text", "text": "[{\"file\": \"src/main.py\", \"line_num\": 3}]"}], "isError": false}"#;
        assert_eq!(
            structured(wrapped),
            Some(serde_json::json!([{"file": "src/main.py", "line_num": 3}]))
        );
        // A result whose text is prose stays as it is.
        let prose = r#"{"content": [{"type": "text", "text": "No matches found"}]}"#;
        assert_eq!(
            structured(prose),
            crate::suite::predicate::first_json_value(prose)
        );
    }

    #[test]
    fn a_listing_of_file_names_with_spaces_gives_each_line_whole() {
        let listing =
            "/meetings/2026-03-02 kickoff.md\n/people/Ana Costa.md\n/projects/Ring Road.md\n";
        let values: Vec<(String, String)> = harvest(listing, None, 0)
            .into_iter()
            .map(|h| (h.key, h.value))
            .collect();
        for path in [
            "/meetings/2026-03-02 kickoff.md",
            "/people/Ana Costa.md",
            "/projects/Ring Road.md",
        ] {
            assert!(
                values.contains(&("path".to_owned(), path.to_owned())),
                "{path} in {values:?}"
            );
        }
        assert!(
            !values
                .iter()
                .any(|(_, v)| v == "Costa.md" || v == "kickoff.md"),
            "never a name cut at its space: {values:?}"
        );
        // A tagged listing keeps its tags apart, and a column beside a
        // name is no part of it.
        let tagged =
            "[FILE] Ana Costa.md                 88 B\n[FILE] Chen Wu.md    75 B\n[DIR] archive";
        let values: Vec<(String, String)> = harvest(tagged, None, 0)
            .into_iter()
            .map(|h| (h.key, h.value))
            .collect();
        assert!(
            values.contains(&("file".to_owned(), "Ana Costa.md".to_owned()))
                && values.contains(&("file".to_owned(), "Chen Wu.md".to_owned()))
                && values.contains(&("dir".to_owned(), "archive".to_owned())),
            "{values:?}"
        );
        assert!(
            !values
                .iter()
                .any(|(_, v)| v.contains("[FILE]") || v.contains("88 B")),
            "{values:?}"
        );
        // A store's keys one a line, each `namespace:id`, split over text
        // blocks (`bike:101`, `shop:name`, `frames`).
        let keys: Vec<String> = harvest("bike:102\nshop:name\nframes\nbike:101", None, 0)
            .into_iter()
            .map(|h| h.value)
            .collect();
        for k in ["bike:102", "shop:name", "frames", "bike:101"] {
            assert!(keys.contains(&k.to_owned()), "{k} in {keys:?}");
        }
        // Prose that ends in a file's name is no listing.
        let prose =
            "The minutes are in the shared folder, see notes.md\nAsk Ana for the rest of it.txt";
        assert!(
            !harvest(prose, None, 0)
                .iter()
                .any(|h| h.value.starts_with("The minutes")),
            "a sentence is no file name"
        );
    }

    #[test]
    fn a_markdown_page_in_any_language_names_its_record_and_lists() {
        // Labels in Hangul, fields split by ` | `, bulleted lists of names,
        // a section heading below the page's own.
        let page = "## Harbour Ferry\n분류: routes | 태그: coastal\n파일: routes/harbour-ferry.md\n\n\
                    ### 연결\n- stops: North Pier, Salt Market, Old Mill\n- 연결도: 4\n";
        let values: Vec<String> = harvest(page, None, 0)
            .into_iter()
            .map(|h| h.value)
            .collect();
        for want in [
            "Harbour Ferry",
            "routes/harbour-ferry.md",
            "coastal",
            "North Pier",
            "Old Mill",
        ] {
            assert!(values.iter().any(|v| v == want), "{want} not in {values:?}");
        }
        assert!(
            !values.iter().any(|v| v == "연결"),
            "a section heading names nothing: {values:?}"
        );
        let f = facts(page, None);
        let category = f
            .iter()
            .find(|f| f.label == "분류")
            .expect("the labelled field is a fact");
        assert_eq!(category.value, "routes");
        assert_eq!(
            category.subject,
            Some((HEADING_LABEL.to_owned(), "Harbour Ferry".to_owned())),
            "the page's heading is its record's subject"
        );
        assert!(!f.iter().any(|f| f.label == HEADING_LABEL));
        // A naming field still names the record before a heading does.
        let named = "# Results\n\nname: ledger-7\nowner: Ines\n";
        let owner = facts(named, None)
            .into_iter()
            .find(|f| f.label == "owner")
            .expect("owner");
        assert_eq!(
            owner.subject,
            Some(("name".to_owned(), "ledger-7".to_owned()))
        );
        // Prose under a label is no list of names.
        assert!(name_list("the ferry stops here, then turns back to the pier.").is_empty());
    }

    fn handles_of(text: &str) -> Vec<(String, String, Option<Alias>)> {
        let json = structured(text);
        harvest(text, json.as_ref(), 0)
            .into_iter()
            .map(|h| (h.value, h.key, h.alias))
            .collect()
    }

    #[test]
    fn a_list_item_s_id_a_log_line_s_revision_tags_and_links_are_handles() {
        let tasks = "## Inbox\n- [ ] **#7** Send the card to Oma\n- [x] #12 Book the ferry `#family`\n\
                     3. ENG-12: Fix the login page\n1. Buy milk and eggs\n";
        let h = handles_of(tasks);
        let id = |v: &str| h.iter().find(|(x, k, _)| x == v && k == "id");
        assert_eq!(
            id("7").and_then(|(_, _, a)| a.clone()),
            Some(("title".to_owned(), "Send the card to Oma".to_owned()))
        );
        assert!(id("12").is_some() && id("ENG-12").is_some(), "{h:?}");
        assert!(id("1").is_none(), "a numbered list's place is no id: {h:?}");
        assert!(
            h.iter().any(|(v, k, _)| v == "family" && k == "tag"),
            "{h:?}"
        );
        // A checkbox is no JSON answer.
        assert_eq!(structured(tasks), None);

        let log = "bb2c358 2026-04-22 Maren Holt Fix the pump schedule\n4f1e0aa Add the rota\n\
                   d9e88fe5458400e2d8dba046f125735a6da3ffa5 Tove Ahlgren Wed Jan 7 10:20:00 2026 +0000 Tests for parsing\n";
        let h = handles_of(log);
        let subject = |sha: &str| {
            h.iter()
                .find(|(v, k, _)| v == sha && k == "commit")
                .and_then(|(_, _, a)| a.clone())
                .map(|(_, s)| s)
        };
        assert_eq!(
            subject("bb2c358").as_deref(),
            Some("Maren Holt Fix the pump schedule")
        );
        assert_eq!(
            subject("d9e88fe5458400e2d8dba046f125735a6da3ffa5").as_deref(),
            Some("Tests for parsing"),
            "the author and the date before the subject are no part of it"
        );
        // A word of hex letters alone is no revision.
        assert!(
            !handles_of("deadbeef cafe\n")
                .iter()
                .any(|(_, k, _)| k == "commit")
        );

        let links = "See [[broadcast/fcc-compliance]] and [[Pump log|the log]], \
                     [the memo](docs/memo.md) and [site](https://example.com/x).";
        let h = handles_of(links);
        for want in ["broadcast/fcc-compliance", "Pump log", "docs/memo.md"] {
            assert!(h.iter().any(|(v, _, _)| v == want), "{want} not in {h:?}");
        }
        assert!(!h.iter().any(|(v, _, _)| v.contains("example.com")));
    }

    #[test]
    fn a_tree_listing_s_files_are_joined_under_their_folders() {
        let tree = "docs/ (2 folders)\n  broadcast/ (3 files)\n    fcc-compliance.md\n    rota.md\n\
                    notes/\n├── daily/\n│   └── 2026-04-22.md\n└── ideas.md\n";
        let paths: Vec<String> = handles_of(tree)
            .into_iter()
            .filter(|(_, k, _)| k == "path")
            .map(|(v, _, _)| v)
            .collect();
        for want in [
            "docs/broadcast/fcc-compliance.md",
            "docs/broadcast/rota.md",
            "notes/daily/2026-04-22.md",
            "notes/ideas.md",
        ] {
            assert!(paths.iter().any(|p| p == want), "{want} not in {paths:?}");
        }
    }

    #[test]
    fn a_table_ruled_under_its_header_reads_as_its_rows() {
        let one = "Query executed successfully. 4 rows returned.\n\nname\n------\nbookings\nguests\nhuts\nmeals";
        let rows = structured(one).expect("rows");
        assert_eq!(rows.as_array().map(Vec::len), Some(4));
        assert_eq!(rows[0]["name"], "bookings");
        let psql = " hut_id |     name      | altitude_m\n--------+---------------+------------\n      1 | Cabane Rossa  |       2891\n      2 | Refuge du Lac |       2210\n(2 rows)\n";
        let rows = structured(psql).expect("rows");
        assert_eq!(rows[1]["name"], "Refuge du Lac");
        assert_eq!(rows[0]["altitude_m"], 2891);
        let fixed = "guest_id  full_name      nights\n--------  -------------  ------\n3         Maren Holt     2\n\n1 row\n";
        let rows = structured(fixed).expect("rows");
        assert_eq!(rows[0]["full_name"], "Maren Holt");
        assert_eq!(rows.as_array().map(Vec::len), Some(1));
        assert_eq!(ruled_table("just prose\nno rule here"), None);
        let delimited = "Query executed successfully. 2 rows returned.\n\nguest_id, full_name, phone\n---------------------------\n1, Lea Zimmermann, +41 77 498 67 86\n2, Jan Novak, NULL";
        let rows = structured(delimited).expect("rows");
        assert_eq!(rows[0]["full_name"], "Lea Zimmermann");
        assert_eq!(rows[1]["guest_id"], 2);
    }

    #[test]
    fn an_html_table_reads_as_its_rows() {
        let html = "<p>2 rows</p><table><thead><tr><th>name</th><th>role</th><th>age</th></tr></thead>\
                    <tbody><tr><td>Dr. Aoife Brennan</td><td>director</td><td>51</td></tr>\
                    <tr><td>Tom &amp; Kit</td><td><b>observer</b></td><td>33</td></tr></tbody></table>";
        let rows = structured(html).expect("rows");
        assert_eq!(rows[0]["name"], "Dr. Aoife Brennan");
        assert_eq!(rows[1]["name"], "Tom & Kit");
        assert_eq!(rows[1]["role"], "observer");
        assert_eq!(rows[0]["age"], 51);
        assert_eq!(html_table("<p>no table</p>"), None);
    }

    #[test]
    fn a_diffs_file_lines_state_no_facts() {
        let shown = "commit 2be2eb39\nAuthor: Mira Holt <mira@example.org>\n\n    Add the notes\n\n\
                     diff --git a/x.rs b/x.rs\nindex 1013..2044 100644\n--- a/x.rs\n+++ b/x.rs\n\
                     @@ -1,2 +1,2 @@\n     let waited: Vec<u64> = agent;\n-    seed: 3\n+    seed: 4\n";
        let labels: Vec<String> = facts(shown, None).into_iter().map(|f| f.label).collect();
        assert!(labels.contains(&"Author".to_owned()), "{labels:?}");
        assert!(
            !labels
                .iter()
                .any(|l| l == "let waited" || l == "seed" || l == "index"),
            "{labels:?}"
        );
        let plain = "seed: 3\nlet waited: 4\n";
        assert_eq!(facts(plain, None).len(), 2, "no diff, every line read");
    }

    #[test]
    fn a_fact_of_one_of_several_records_names_its_record() {
        let v = json!([
            {"id": 1, "customer": "Ada Quill", "item": "lamp"},
            {"id": 2, "customer": "Bo Lind", "item": "desk"}
        ]);
        let f = facts(&v.to_string(), Some(&v));
        let item = f.iter().find(|f| f.label == "item").expect("an item");
        assert_eq!(
            item.subject,
            Some(("customer".to_owned(), "Ada Quill".to_owned()))
        );
        let customer = f
            .iter()
            .find(|f| f.label == "customer")
            .expect("a customer");
        assert_eq!(
            customer.subject,
            Some(("item".to_owned(), "lamp".to_owned()))
        );
        assert!(f.iter().all(|f| f.subject.is_some()), "{f:?}");
    }

    #[test]
    fn a_python_literal_reads_as_its_json() {
        assert_eq!(
            python_literal("[{'name': 'orders', 'n': 4, 'x': None, 'ok': True, 's': \"it's\"}]"),
            Some(
                serde_json::json!([{"name": "orders", "n": 4, "x": null, "ok": true, "s": "it's"}])
            )
        );
        assert_eq!(python_literal("Database error: no such table"), None);
        // A date or a time in its type is its ISO text.
        assert_eq!(
            python_literal("[(datetime.date(1979, 6, 1), datetime(2020, 1, 1, 9, 30))]"),
            Some(serde_json::json!([["1979-06-01", "2020-01-01T09:30:00"]]))
        );
    }

    #[test]
    fn a_table_printed_as_text_reads_as_its_rows() {
        // mysql-mcp-server prints its catalogue and rows as CSV.
        let csv =
            "TABLE_NAME,COLUMN_NAME,DATA_TYPE\nbeers,beer_id,int\nbeers,\"name, full\",varchar\n";
        assert_eq!(
            tabular(csv),
            Some(serde_json::json!([
                {"TABLE_NAME": "beers", "COLUMN_NAME": "beer_id", "DATA_TYPE": "int"},
                {"TABLE_NAME": "beers", "COLUMN_NAME": "name, full", "DATA_TYPE": "varchar"}
            ]))
        );
        let md = "Results:\n| id | title | pages |\n|----|-------|------:|\n| 1 | Kindred | 264 |\n| 2 | Dune | 412 |";
        assert_eq!(
            tabular(md),
            Some(serde_json::json!([
                {"id": 1, "title": "Kindred", "pages": 264},
                {"id": 2, "title": "Dune", "pages": 412}
            ]))
        );
        // A caption that is a sentence above it, a footer below.
        let captioned = "Rows 0–1 of 2 total.\n\n| id | title |\n| --- | --- |\n| 1 | Kindred |\n| 2 | Dune |\n\nShowing all rows.";
        assert_eq!(
            tabular(captioned),
            Some(serde_json::json!([{"id": 1, "title": "Kindred"}, {"id": 2, "title": "Dune"}]))
        );
        let tsv = "name\tsize\nnotes.md\t12.5";
        assert_eq!(
            tabular(tsv),
            Some(serde_json::json!([{"name": "notes.md", "size": 12.5}]))
        );
        // Prose, a ragged table, a lone header: no table.
        assert_eq!(
            tabular("The tide is high, the wind is low.\nIt rained, then cleared."),
            None
        );
        assert_eq!(tabular("a,b\n1,2,3"), None);
        assert_eq!(tabular("a,b"), None);
    }

    #[test]
    fn a_map_keyed_by_file_names_names_the_files() {
        let json = serde_json::json!({"garden_centre_stock.xlsx": 5250, "household_budget_2024.xlsx": 6093});
        let values: Vec<String> = harvest("", Some(&json), 0)
            .into_iter()
            .map(|h| h.value)
            .collect();
        assert_eq!(
            values,
            ["garden_centre_stock.xlsx", "household_budget_2024.xlsx"]
        );
        assert!(file_name_like("data/notes.md"));
        // sqlite-mcp-server's list_databases answers one name a line.
        let lines: Vec<String> = harvest("boardgames.db\nledger.sqlite\n", None, 0)
            .into_iter()
            .map(|h| h.value)
            .collect();
        assert_eq!(lines, ["boardgames.db", "ledger.sqlite"]);
        // Its list_tables answers one table a line.
        let tables: Vec<String> = harvest("games\nplays\n", None, 0)
            .into_iter()
            .map(|h| h.value)
            .collect();
        assert_eq!(tables, ["games", "plays"]);
        // jabref-mcp lists one entry a line, its key first.
        let keys: Vec<String> = harvest(
            "Found 2 entries:\nhargreaves2019soil | Soil carbon under pasture | 2019\nokafor2021tide | Tidal mixing | 2021\n",
            None,
            0,
        )
        .into_iter()
        .filter(|h| h.key == "key")
        .map(|h| h.value)
        .collect();
        assert_eq!(keys, ["hargreaves2019soil", "okafor2021tide"]);
        // One word alone is no listing (an answer such as `ok`).
        assert!(harvest("ok", None, 0).is_empty());
        assert!(!file_name_like("3.14"));
        assert!(!file_name_like("Dr. Who"));
    }
    use serde_json::json;

    #[test]
    fn listings_labels_and_paths_are_handles() {
        let text = "[FILE] notes.md\n[DIR] docs\n/tmp/root\nCommit: 'a1b2c3d4e5'\nMessage: Add the greeting\n";
        let h = harvest(text, None, 3);
        let values: Vec<&str> = h.iter().map(|h| h.value.as_str()).collect();
        assert!(
            values.contains(&"notes.md") && values.contains(&"docs"),
            "{values:?}"
        );
        assert!(values.contains(&"/tmp/root"));
        let commit = h
            .iter()
            .find(|h| h.value == "a1b2c3d4e5")
            .expect("the commit");
        assert_eq!(commit.key, "Commit");
        assert_eq!(
            commit.alias,
            Some(("Message".to_owned(), "Add the greeting".to_owned()))
        );
        assert!(h.iter().all(|h| h.from == Some(3)));
    }

    #[test]
    fn json_facts_carry_their_label_and_record() {
        let v = json!({"entities": [{"name": "kestrel", "entityType": "falcon", "observations": ["nests on cliffs"]}]});
        let f = facts(&v.to_string(), Some(&v));
        let t = f
            .iter()
            .find(|f| f.label == "entityType")
            .expect("the type");
        assert_eq!(t.value, "falcon");
        assert_eq!(t.subject, Some(("name".to_owned(), "kestrel".to_owned())));
        let n = facts("{\"humidity\": 82}", Some(&json!({"humidity": 82})));
        assert_eq!(n[0].number, Some(82.0));
    }

    #[test]
    fn prose_numbers_take_the_words_before_them() {
        let f = facts("Debug: Cache hit ratio 0.95, latency 150ms", None);
        assert_eq!(f[0].label, "Debug");
        let labels: Vec<(&str, Option<f64>)> =
            f.iter().map(|f| (f.label.as_str(), f.number)).collect();
        assert!(
            labels.contains(&("Cache hit ratio", Some(0.95))),
            "{labels:?}"
        );
        assert!(labels.contains(&("latency", Some(150.0))), "{labels:?}");
    }

    #[test]
    fn prose_numbers_are_whole_words() {
        let code = facts("The launch code is 7Q-ALPHA-19.", None);
        assert!(code.iter().all(|f| f.number.is_none()), "{code:?}");
        let sizes = facts("[FILE] launch.txt      32 B\nTotal: 2 files, 121 B", None);
        assert!(sizes.iter().all(|f| f.label != "txt"), "{sizes:?}");
        let kept = facts("took 150ms. size 32 B, ratio 0.5.", None);
        let labels: Vec<&str> = kept.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["took", "size", "ratio"], "{kept:?}");
    }

    #[test]
    fn labels_read_as_words() {
        assert_eq!(label_words("entityType"), "entity type");
        assert_eq!(label_words("time_difference"), "time difference");
        assert_eq!(label_words("Cache hit ratio"), "cache hit ratio");
    }
}
