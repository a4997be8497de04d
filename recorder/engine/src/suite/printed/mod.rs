//! What a result's text stands for, read as JSON: the text itself where it
//! is JSON, a Python literal, or a table printed with a header ([`tables`]:
//! CSV, TSV, Markdown, ruled, HTML). Generators, the composer and the act
//! step read results through here.

pub mod labelled;
mod tables;

use serde_json::Value;

pub use tables::{html_table, python_literal, ruled_table, tabular};

/// The JSON a result stands for: its first JSON value, a Python literal,
/// or a table with a header line.
pub fn structured(text: &str) -> Option<Value> {
    let value = crate::suite::predicate::first_json_value(text)
        .filter(|v| stands_for(v, text))
        .or_else(|| python_literal(text))
        .or_else(|| tabular(text))
        .or_else(|| ruled_table(text))
        .or_else(|| html_table(text))
        .or_else(|| labelled_table(text))?;
    // A tool result printed as the text of a tool result
    // (`{"content": [{"type": "text", "text": "[{...}]"}]}`, as a server
    // that returns its own result serialized sends it): what its text
    // stands for.
    let inner: Vec<&str> = value
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|c| c.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    if let [only] = inner.as_slice()
        && let Some(unwrapped) = crate::suite::predicate::first_json_value(only)
            .or_else(|| python_literal(only))
            .or_else(|| tabular(only))
    {
        return Some(unwrapped);
    }
    Some(value)
}

/// Does the first JSON value found in `text` stand for it? The whole text,
/// or a value that holds records or most of the text: never a checkbox's
/// `[ ]` or a footnote's `[3]` in prose (a task list `- [ ] **#7** Send
/// the card` had read as the empty list, and none of its ids were read).
fn stands_for(v: &Value, text: &str) -> bool {
    let whole = text.trim();
    if serde_json::from_str::<Value>(whole).is_ok() {
        return true;
    }
    match v {
        Value::Array(a) if a.is_empty() => false,
        Value::Object(o) if o.is_empty() => false,
        Value::Array(a) => {
            a.iter().any(|x| x.is_object() || x.is_array())
                || v.to_string().len() * 3 >= whole.len()
        }
        Value::Object(_) => true,
        _ => false,
    }
}

/// Rows printed as `label: value` blocks (`1. row` over `id: 1` and
/// `name: Hannah Pike`, a blank line between rows, a `Result: 5 rows`
/// under them): the records that share one set of two or more labels,
/// two or more of them, where every other record is a single line (a
/// heading or a footer).
pub fn labelled_table(text: &str) -> Option<Value> {
    let records = labelled::records(text);
    let mut sets: std::collections::BTreeMap<Vec<String>, usize> = Default::default();
    for r in &records {
        let mut labels: Vec<String> = r.iter().map(|(l, _)| l.clone()).collect();
        labels.sort_unstable();
        *sets.entry(labels).or_default() += 1;
    }
    let (labels, n) = sets.into_iter().max_by_key(|(_, n)| *n)?;
    if labels.len() < 2
        || n < 2
        || records.iter().any(|r| {
            r.len() > 1 && {
                let mut l: Vec<&str> = r.iter().map(|(l, _)| l.as_str()).collect();
                l.sort_unstable();
                l != labels
            }
        })
    {
        return None;
    }
    let rows = records
        .into_iter()
        .filter(|r| r.len() == labels.len())
        .map(|r| {
            Value::Object(
                r.into_iter()
                    .map(|(l, v)| (l, tables::cell_value(v)))
                    .collect(),
            )
        })
        .collect();
    Some(Value::Array(rows))
}
