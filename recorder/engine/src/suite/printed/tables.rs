//! Results printed as tables, read as the JSON rows they stand for: CSV,
//! TSV and Markdown pipe tables under a header line, tables ruled with
//! dashes under their header (psql, fixed-width reports), HTML `<table>`s,
//! and Python literals (`[{'name': 'orders'}]`).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

/// A result printed as a table with a header line (CSV, TSV, or a
/// Markdown pipe table, as many database servers print rows), read as the
/// JSON rows it stands for: one object per row keyed by the header, a
/// cell that is a number as a number. At most one title line ending in `:`
/// before it. `None` when the text is not such a table.
/// Lines of caption a Markdown table may have above it.
const TABLE_CAPTION_LINES: usize = 3;

pub fn tabular(text: &str) -> Option<Value> {
    if text.len() > 1_000_000 {
        return None;
    }
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let rule = |l: &str| {
        let l = l.trim();
        l.starts_with('|')
            && l.contains('-')
            && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '))
    };
    // A Markdown table under a short caption ("Rows 0–2 of 3 total."), a
    // footer after it: the table alone.
    if let Some(at) = (0..lines.len().saturating_sub(1).min(TABLE_CAPTION_LINES + 1))
        .find(|&i| lines[i].trim_start().starts_with('|') && rule(lines[i + 1]))
    {
        let end = lines[at..]
            .iter()
            .position(|l| !l.trim_start().starts_with('|'))
            .map_or(lines.len(), |n| at + n);
        lines = lines[at..end].to_vec();
    } else if lines.first().is_some_and(|l| l.trim_end().ends_with(':')) {
        lines.remove(0);
    }
    if lines.len() < 2 || lines.len() > 10_000 {
        return None;
    }
    let header = lines[0];
    let delimiter = [',', '\t', '|']
        .into_iter()
        .max_by_key(|d| header.matches(*d).count())?;
    let cells = |line: &str| -> Vec<String> {
        let line = line.trim();
        if delimiter == '|' {
            let inner = line.strip_prefix('|').unwrap_or(line);
            let inner = inner.strip_suffix('|').unwrap_or(inner);
            return inner.split('|').map(|c| c.trim().to_owned()).collect();
        }
        split_delimited(line, delimiter)
    };
    let names = cells(header);
    let unique: std::collections::BTreeSet<&String> = names.iter().collect();
    if names.len() < 2 || unique.len() != names.len() || names.iter().any(|n| !column_name_like(n))
    {
        return None;
    }
    let mut rows = Vec::new();
    for line in &lines[1..] {
        // A Markdown table's rule under its header.
        if delimiter == '|' && line.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ')) {
            continue;
        }
        let row = cells(line);
        if row.len() != names.len() {
            return None;
        }
        let object: serde_json::Map<String, Value> = names
            .iter()
            .zip(row)
            .map(|(n, c)| (n.clone(), cell_value(c)))
            .collect();
        rows.push(Value::Object(object));
    }
    (!rows.is_empty()).then_some(Value::Array(rows))
}

/// A table printed with a rule of dashes under its header (`name` over
/// `------`, psql's `id | name` over `----+-----`, a fixed-width report's
/// columns over `---- ------`), as database servers print rows, read as
/// the JSON rows it stands for. The columns are where the rule's dashes
/// are; a caption above the header and a footer after a blank line
/// (`(4 rows)`) are not rows. One column is a table too: the rule says so.
pub fn ruled_table(text: &str) -> Option<Value> {
    if text.len() > 1_000_000 {
        return None;
    }
    let lines: Vec<&str> = text.lines().collect();
    let is_rule = |l: &str| {
        let t = l.trim();
        t.len() >= 3
            && t.contains("---")
            && t.chars()
                .all(|c| matches!(c, '-' | '+' | '|' | ' ' | '=' | ':'))
    };
    let at = lines.iter().position(|l| is_rule(l)).filter(|&i| i > 0)?;
    let header = lines[at - 1];
    let rule: Vec<char> = lines[at].chars().collect();
    // The column spans: runs of dashes in the rule.
    let mut spans = Vec::new();
    let mut start = None;
    for (i, c) in rule.iter().enumerate() {
        match (c == &'-' || c == &'=', start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                spans.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        spans.push((s, rule.len()));
    }
    if spans.is_empty() || spans.len() > 64 {
        return None;
    }
    // One rule under a delimited header (`booking_id, hut_id` over
    // `------------`): the cells are split by the delimiter.
    if spans.len() == 1
        && let Some(delimiter) = [',', '\t', '|']
            .into_iter()
            .find(|d| header.matches(*d).count() >= 1)
    {
        let names = split_delimited(header, delimiter);
        return rows_under(&names, &lines[at + 1..], |line| {
            let cells = split_delimited(line, delimiter);
            (cells.len() == names.len()).then_some(Some(cells))
        });
    }
    let cut = |line: &str, k: usize| -> String {
        let chars: Vec<char> = line.chars().collect();
        let (from, _) = spans[k];
        // A cell runs to where the next column starts (a value may be
        // wider than its rule).
        let to = spans.get(k + 1).map_or(chars.len(), |(next, _)| *next);
        chars
            .get(from.min(chars.len())..to.min(chars.len()))
            .map(|c| c.iter().collect::<String>())
            .unwrap_or_default()
            .trim()
            .trim_matches('|')
            .trim()
            .to_owned()
    };
    let names: Vec<String> = (0..spans.len()).map(|k| cut(header, k)).collect();
    rows_under(&names, &lines[at + 1..], |line| {
        Some((!is_rule(line)).then(|| (0..names.len()).map(|k| cut(line, k)).collect()))
    })
}

/// The rows under a table's header `names`, up to the first blank line:
/// `cells` splits a line into its cells, `Some(None)` passes a line over (a
/// rule), `None` says the lines are no table. Names that repeat or that
/// read as no column's are no table either.
fn rows_under(
    names: &[String],
    lines: &[&str],
    cells: impl Fn(&str) -> Option<Option<Vec<String>>>,
) -> Option<Value> {
    let unique: std::collections::BTreeSet<&String> = names.iter().collect();
    if unique.len() != names.len() || names.iter().any(|n| !column_name_like(n)) {
        return None;
    }
    let mut rows = Vec::new();
    for line in lines {
        if line.trim().is_empty() || rows.len() >= 10_000 {
            break;
        }
        let Some(cells) = cells(line)? else {
            continue;
        };
        rows.push(Value::Object(
            names
                .iter()
                .cloned()
                .zip(cells.into_iter().map(cell_value))
                .collect(),
        ));
    }
    (!rows.is_empty()).then_some(Value::Array(rows))
}

/// A table cell's value: a number where it is one, else its text.
pub(super) fn cell_value(c: String) -> Value {
    match c.parse::<i64>() {
        Ok(i) => Value::from(i),
        Err(_) => match c.parse::<f64>() {
            Ok(f) if f.is_finite() && !c.is_empty() => Value::from(f),
            _ => Value::String(c),
        },
    }
}

/// A table's column name: a few words of letters, digits, `_`, `-`,
/// `#` or brackets, never a sentence's end.
fn column_name_like(n: &str) -> bool {
    !n.is_empty()
        && n.chars().count() <= 40
        && n.split_whitespace().count() <= 3
        && n.chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '_' | ' ' | '-' | '(' | ')' | '#'))
}

/// One line of delimited text: a field in double quotes may hold the
/// delimiter, and `""` in it is one quote.
fn split_delimited(line: &str, delimiter: char) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' if cur.is_empty() || quoted => quoted = !quoted,
            c if c == delimiter && !quoted => out.push(std::mem::take(&mut cur).trim().to_owned()),
            c => cur.push(c),
        }
    }
    out.push(cur.trim().to_owned());
    out
}

/// An HTML `<table>` (as servers that render rows for a browser send
/// them), read as the JSON rows it stands for: one object per row keyed
/// by the header's cells, a number as a number. `None` when the text has
/// no such table.
pub fn html_table(text: &str) -> Option<Value> {
    static ROW: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?is)<tr[^>]*>(.*?)</tr>").expect("the table row pattern compiles")
    });
    static CELL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?is)<t([hd])[^>]*>(.*?)</t[hd]>").expect("the cell pattern compiles")
    });
    static TAG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)<[^>]*>").expect("the tag pattern compiles"));
    if text.len() > 1_000_000 || !text.to_ascii_lowercase().contains("<table") {
        return None;
    }
    let cell_text = |html: &str| {
        let plain = TAG.replace_all(html, "");
        plain
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&nbsp;", " ")
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut header: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    for r in ROW.captures_iter(text).take(10_000) {
        let cells: Vec<(bool, String)> = CELL
            .captures_iter(&r[1])
            .map(|c| (c[1].eq_ignore_ascii_case("h"), cell_text(&c[2])))
            .collect();
        if cells.is_empty() {
            continue;
        }
        match &header {
            None if cells.iter().all(|(th, _)| *th) => {
                header = Some(cells.into_iter().map(|(_, t)| t).collect());
            }
            None => return None,
            Some(names) if names.len() == cells.len() => {
                let object: serde_json::Map<String, Value> = names
                    .iter()
                    .zip(cells)
                    .map(|(n, (_, c))| (n.clone(), cell_value(c)))
                    .collect();
                rows.push(Value::Object(object));
            }
            Some(_) => {}
        }
    }
    (!rows.is_empty()).then_some(Value::Array(rows))
}

/// A result written as a Python literal (`[{'name': 'orders'}]`, as
/// servers that print a Python value send it), read as the JSON it
/// stands for: single-quoted strings, `None`, `True` and `False`. `None`
/// when the text is not one list or dict.
pub fn python_literal(text: &str) -> Option<Value> {
    // A value wrapped in its type (`Decimal('25.50')`) is that value.
    static WRAPPED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"\b[A-Za-z_][\w.]*\(\s*('[^'\\]*'|"[^"\\]*"|-?[0-9][0-9.eE+-]*)\s*\)"#)
            .expect("the wrapped value pattern compiles")
    });
    let t = text.trim();
    if !(t.starts_with('[') || t.starts_with('{') || t.starts_with('(')) || t.len() > 1_000_000 {
        return None;
    }
    // A date or a time (`datetime.date(1979, 6, 1)`) is its ISO text.
    static DATED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\b(?:datetime\.)?(date|datetime)\(\s*(\d{1,4})\s*,\s*(\d{1,2})\s*,\s*(\d{1,2})((?:\s*,\s*\d+){0,4})\s*(?:,\s*tzinfo=[^)]*\)?)?\s*\)")
            .expect("the date pattern compiles")
    });
    let dated = DATED.replace_all(t, |c: &regex::Captures| {
        let (y, m, d) = (&c[2], &c[3], &c[4]);
        let date = format!("{y:0>4}-{m:0>2}-{d:0>2}");
        let time: Vec<&str> = c[5]
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .collect();
        if &c[1] == "date" {
            format!("'{date}'")
        } else {
            let part = |i: usize| time.get(i).copied().unwrap_or("0");
            format!("'{date}T{:0>2}:{:0>2}:{:0>2}'", part(0), part(1), part(2))
        }
    });
    let unwrapped = WRAPPED.replace_all(dated.as_ref(), "$1");
    let t = unwrapped.as_ref();
    let mut out = String::with_capacity(t.len());
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let mut s = String::new();
                let mut closed = false;
                while let Some(d) = chars.next() {
                    match d {
                        '\\' => match chars.next()? {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            other => s.push(other),
                        },
                        d if d == c => {
                            closed = true;
                            break;
                        }
                        d => s.push(d),
                    }
                }
                if !closed {
                    return None;
                }
                out.push_str(&Value::String(s).to_string());
            }
            c if c.is_alphabetic() => {
                let mut word = String::from(c);
                while let Some(&d) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' {
                        word.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push_str(match word.as_str() {
                    "None" => "null",
                    "True" => "true",
                    "False" => "false",
                    _ => return None,
                });
            }
            // A tuple is a list; a tuple's trailing comma (`('orders',)`)
            // is dropped.
            '(' => out.push('['),
            ')' => out.push(']'),
            ',' if chars
                .clone()
                .find(|d| !d.is_whitespace())
                .is_some_and(|d| matches!(d, ')' | ']' | '}')) => {}
            c => out.push(c),
        }
    }
    serde_json::from_str(&out).ok()
}
