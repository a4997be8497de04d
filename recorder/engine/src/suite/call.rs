//! Calling a tool for generation: the call under its timeout, what the
//! result gave (text, an error, nothing, a failure, a timeout), and the
//! text an agent would read from it. Every generator, the composer and the
//! act step call through here.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::mcp::connect::Session;
pub enum Called {
    Text(String),
    /// The server said the call failed (`isError`, or a task that did not
    /// complete), with what it said.
    Error(String),
    Empty,
    Failed,
    TimedOut,
}

pub async fn call(
    session: &Session,
    tool: &str,
    args: &Map<String, Value>,
    timeout: Duration,
) -> Called {
    match tokio::time::timeout(timeout, session.call_tool(tool, args.clone())).await {
        Err(_) => Called::TimedOut,
        Ok(Err(_)) => Called::Failed,
        Ok(Ok(result)) => {
            let v = serde_json::to_value(&result).unwrap_or(Value::Null);
            let incomplete = v
                .get("resultType")
                .and_then(Value::as_str)
                .is_some_and(|t| t != "complete");
            let text = result_text(&v);
            if v.get("isError").and_then(Value::as_bool) == Some(true) || incomplete {
                // A structured error says what its text may not (the
                // choices it would take): it follows the text, on a line
                // of its own.
                let structured = v
                    .get("structuredContent")
                    .filter(|s| !s.is_null())
                    .map(Value::to_string)
                    .filter(|s| s.len() <= 4_000 && !text.contains(s.as_str()));
                return Called::Error(match structured {
                    Some(s) => format!("{text}\n{s}"),
                    None => text,
                });
            }
            if is_empty(&text) {
                Called::Empty
            } else {
                Called::Text(text)
            }
        }
    }
}

/// The text an agent reads from a tool result: text blocks, embedded
/// resource text, resource links; the structured content when there is no
/// text at all.
pub fn result_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(t) = block.get("text").and_then(Value::as_str) {
            parts.push(t.to_owned());
        }
        if let Some(t) = block
            .get("resource")
            .and_then(|r| r.get("text"))
            .and_then(Value::as_str)
        {
            parts.push(t.to_owned());
        }
        if block.get("type").and_then(Value::as_str) == Some("resource_link") {
            for key in ["name", "uri", "description"] {
                if let Some(t) = block.get(key).and_then(Value::as_str) {
                    parts.push(t.to_owned());
                }
            }
        }
    }
    if parts.is_empty()
        && let Some(s) = result.get("structuredContent")
        && !s.is_null()
    {
        parts.push(s.to_string());
    }
    parts.join("\n")
}

pub fn is_empty(text: &str) -> bool {
    let t = text.trim();
    if t.is_empty() {
        return true;
    }
    match serde_json::from_str::<Value>(t) {
        Ok(v) => !has_leaf(&v),
        Err(_) => false,
    }
}

fn has_leaf(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::String(s) => !s.trim().is_empty(),
        Value::Bool(_) | Value::Number(_) => true,
        Value::Array(a) => a.iter().any(has_leaf),
        Value::Object(o) => o.values().any(has_leaf),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_json_results_are_empty() {
        assert!(is_empty("{\"entities\": [], \"relations\": []}"));
        assert!(is_empty("  "));
        assert!(!is_empty("{\"entities\": [{\"name\": \"x\"}]}"));
    }
}
