//! JSON-RPC error objects (`{code, message, data}`) as text: one text for
//! every place that shows or records an error.

use serde_json::Value;

use crate::tape::js;

/// An error as text: its message with its code (`bad args (code -32602)`),
/// the message alone when there is no code, else the value as text. This is
/// the reference's `errorMessage`, so the stats' error messages agree with
/// the `trace_stats` blocks it stored; the timeline and the probes show the
/// same text.
pub fn error_text(err: &Value) -> String {
    match err {
        Value::Null => "error".to_owned(),
        Value::String(s) => s.clone(),
        Value::Object(map) => {
            let message = map
                .get("message")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty());
            match (message, map.get("code")) {
                (Some(m), Some(code)) if !code.is_null() => {
                    format!("{m} (code {})", js::to_js_string(code))
                }
                (Some(m), _) => m.to_owned(),
                (None, _) => js::json_stringify(err),
            }
        }
        other => js::to_js_string(other),
    }
}

/// What an error says to its caller in words: the message and the `data`,
/// without the code. The rewrite findings look for parameter names, numbers
/// and hint words in it, and the code is a number no caller acts on, so it is
/// left out here rather than read past there.
pub fn error_words(err: &Value) -> String {
    let mut text = err
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if let Some(data) = err.get("data").filter(|d| !d.is_null()) {
        text.push(' ');
        text.push_str(&data.to_string());
    }
    text
}
