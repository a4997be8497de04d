//! `Label: value` records printed as text: a line a field, a blank line
//! or a repeated label between records, a Markdown heading naming the
//! record under it.

use std::sync::LazyLock;

use regex::Regex;

/// The label [`records`] gives a Markdown heading's text: it names its
/// record where no field of the record does.
pub const HEADING_LABEL: &str = "heading";

/// `Label: value`, the label in any script's letters (`파일: notes/a.md`),
/// after a list's bullet where there is one (`- concepts: Seed Saving`).
pub static LABELLED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[-*+•]\s+)?(\p{L}[\p{L}\p{N} _\-]{0,40}?)\s*:\s+(\S.{0,199})$")
        .expect("the label pattern compiles")
});
/// A Markdown heading (`## Drying and Storage`): its level and its text.
pub static HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s{0,3}(#{1,4})\s+(\S.{0,119}?)\s*#*\s*$").expect("the heading pattern compiles")
});
pub fn unquote(s: &str) -> String {
    s.trim()
        .trim_matches(|c| c == '\'' || c == '"' || c == '`')
        .trim()
        .to_owned()
}

/// `Label: value` records of a text: a blank line, or a label already seen
/// in the current record, starts the next record. A line of several
/// fields split by ` | ` (`Category: concepts | Tags: practice`) gives each.
/// A Markdown heading at the level of the text's first heading (or above)
/// starts a record it names, as its [`HEADING_LABEL`] (`## Seed Saving`
/// over the lines that describe it); a deeper one (`### Links`) names
/// nothing.
pub fn records(text: &str) -> Vec<Vec<(String, String)>> {
    let mut out: Vec<Vec<(String, String)>> = Vec::new();
    let mut current: Vec<(String, String)> = Vec::new();
    let mut top_level: Option<usize> = None;
    let mut titled = false;
    for line in text.lines() {
        if line.trim().is_empty() {
            // A titled record goes on past the blank line under its heading.
            let only_heading = titled && current.len() == 1;
            if !current.is_empty() && !only_heading {
                out.push(std::mem::take(&mut current));
                titled = false;
            }
            continue;
        }
        if let Some(c) = HEADING.captures(line) {
            let level = c[1].len();
            if top_level.is_none_or(|t| level <= t) {
                top_level = Some(level);
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
                current.push((HEADING_LABEL.to_owned(), unquote(&c[2])));
                titled = true;
            }
            continue;
        }
        // Fields split by ` | ` or ` · ` (`active: 12 · retired: 0`).
        let separator = if line.contains(" | ") { " | " } else { " · " };
        let parts: Vec<&str> = line.split(separator).collect();
        let fields: Vec<regex::Captures> =
            parts.iter().filter_map(|p| LABELLED.captures(p)).collect();
        let fields = if parts.len() > 1 && fields.len() == parts.len() {
            fields
        } else {
            LABELLED.captures(line).into_iter().collect()
        };
        for c in fields {
            let label = c[1].trim().to_owned();
            let value = unquote(&c[2]);
            if value.is_empty() {
                continue;
            }
            if current.iter().any(|(l, _)| *l == label) {
                out.push(std::mem::take(&mut current));
                titled = false;
            }
            current.push((label, value));
        }
        if out.len() >= 1_000 {
            break;
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}
