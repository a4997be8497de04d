//! What a tool or a tool's result says about itself, read from its text:
//! a result that reads as an error or as empty although it was not flagged,
//! a tool whose name says it returns secrets. The generators skip such
//! results and tools; admission rejects a candidate built on one.

use std::sync::LazyLock;

use regex::Regex;
use rmcp::model::Tool;

static ERROR_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:error|exception|traceback|fatal|failed|failure|denied|forbidden|unauthori[sz]ed|invalid|not found|no such|cannot|could not|unable to)\b|^\s*(?:[a-z]+\s+){1,2}error\s*:|\b(?:syntax error|no such (?:table|column)|ENOENT|EACCES|EPERM|EISDIR|ENOTDIR|Permission denied|No such file or directory|Access denied|Traceback \(most recent call last\)|MCP error -?\d+|is not a valid|does not exist|outside (?:the )?allowed)\b",
    )
    .expect("the error pattern compiles")
});

static EMPTY_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^\s*(?:no (?:matches|results|entries|items|files|records|data)\b|nothing (?:found|to show)|none found|0 results)")
        .expect("the empty pattern compiles")
});

/// Does a tool result say it found nothing?
pub fn reads_as_empty(text: &str) -> bool {
    EMPTY_TEXT.is_match(text)
}

/// Does a tool result read as an error although it was not flagged as one?
/// Its text begins as an error does, or it is a JSON object that says
/// only an error (`{"error": "no such table: users"}`, perhaps with a
/// message, code, details or status).
pub fn reads_as_error(text: &str) -> bool {
    let head: String = text.chars().take(2_000).collect();
    ERROR_TEXT.is_match(&head) || json_error(text)
}

fn json_error(text: &str) -> bool {
    let t = text.trim_start();
    if !t.starts_with('{') || t.len() > 1_000_000 {
        return false;
    }
    match serde_json::from_str::<serde_json::Value>(t) {
        // The error is all the object says (its fields are kept sorted, so
        // "first" cannot be read): one field, or `error` beside a message.
        Ok(serde_json::Value::Object(o)) => {
            let error = o
                .iter()
                .find(|(k, _)| matches!(k.to_lowercase().as_str(), "error" | "errors"))
                .map(|(_, v)| v);
            // Beside it, nothing but empty fields (`"found": false`,
            // `"docs": []`): the errors are all it says.
            let besides = o.iter().filter(|(k, v)| {
                !matches!(
                    k.to_lowercase().as_str(),
                    "error" | "errors" | "message" | "code" | "details" | "status"
                ) && !blank(v)
            });
            // A result that says it did not succeed (`"success": false`,
            // `"ok": false`) is an error whatever else it holds (an error
            // type, the query it was given).
            let failed = o.iter().any(|(k, v)| {
                let k = k.to_lowercase();
                (matches!(k.as_str(), "success" | "ok") && v == &serde_json::Value::Bool(false))
                    || (k == "status"
                        && v.as_str().is_some_and(|s| {
                            matches!(s.to_lowercase().as_str(), "error" | "failed" | "failure")
                        }))
            });
            failed || error.is_some_and(|v| !blank(v)) && besides.count() == 0
        }
        _ => false,
    }
}

/// A field that says nothing: null, `false`, `0`, an empty string, list or
/// object.
fn blank(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    match v {
        Value::Null | Value::Bool(false) => true,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Bool(true) => false,
    }
}

/// An answer's JSON without the errors it reports beside its data
/// (`{"errors": [...], "hits": [...]}` keeps `hits`): what went wrong
/// elsewhere is no fact about the data, and no value to call with.
pub fn without_in_band_errors(mut v: serde_json::Value) -> serde_json::Value {
    if let serde_json::Value::Object(o) = &mut v {
        o.retain(|k, _| !matches!(k.to_lowercase().as_str(), "error" | "errors" | "warnings"));
    }
    v
}

/// Name words of tools that may hand back the server's environment or
/// credentials: never called by the walk (the wire tape would carry them).
const SECRET_WORDS: &[&str] = &[
    "env",
    "environ",
    "environment",
    "secret",
    "secrets",
    "credential",
    "credentials",
    "password",
    "passwords",
    "token",
    "tokens",
    "apikey",
    "dotenv",
];

/// The word of a tool's name that says it may return secrets, if any.
pub fn exposes_secrets(tool: &Tool) -> Option<&'static str> {
    crate::access::words(&tool.name)
        .iter()
        .find_map(|w| SECRET_WORDS.iter().copied().find(|s| s == w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_a_server_did_not_flag_read_as_errors() {
        // mcp-server-sqlite answers a bad query with text, not isError.
        assert!(reads_as_error("Database error: no such table: products"));
        assert!(reads_as_error("Database error: near \".\": syntax error"));
        assert!(reads_as_error(
            "ENOENT: no such file or directory, open 'x'"
        ));
        assert!(!reads_as_error(
            "[{'customer': 'Ada Quill', 'status': 'shipped'}]"
        ));
        assert!(!reads_as_error("The error bars are 0.5 wide"));
        // @executeautomation/database-server answers with a JSON error.
        assert!(reads_as_error(
            "{\n  \"error\": \"SQL Error: SQLITE_ERROR: no such table: users\"\n}"
        ));
        assert!(!reads_as_error("{\"error\": null, \"rows\": [1]}"));
        // An object whose fields include an error among its data is data.
        assert!(!reads_as_error("{\"rows\": [1], \"error\": \"x\"}"));
        // mcp-server-motherduck says so itself: success false, an error
        // type beside its message.
        assert!(reads_as_error(
            "{\"success\": false, \"error\": \"Catalog Error: no database quiprata\", \"errorType\": \"CatalogException\"}"
        ));
        assert!(!reads_as_error("{\"success\": true, \"rows\": [[1]]}"));
        // @kazuph/mcp-taskmanager: a status that says it failed.
        assert!(reads_as_error(
            "{\"status\":\"error\",\"message\":\"Cannot add tasks to completed request\"}"
        ));
        assert!(!reads_as_error(
            "{\"status\":\"in_progress\",\"title\":\"Error budget review\"}"
        ));
    }

    #[test]
    fn errors_reported_in_band_beside_empty_fields_read_as_an_error() {
        // ast-mcp 0.7.2 answers a symbol it cannot find with `isError: false`.
        let not_found = r#"{"errors": [{"code": "not_found", "path": null, "detail": "dintorqui"}], "truncated": false, "found": false, "ambiguous": false}"#;
        assert!(reads_as_error(not_found));
        let bad_args = r#"{"errors": [{"code": "bad_args", "detail": "pass exactly one of path or symbols"}], "truncated": false, "docs": []}"#;
        assert!(reads_as_error(bad_args));
        // Errors beside data: the data is the answer, the errors no fact of it.
        let mixed = r#"{"errors": [{"code": "no_grammar", "detail": "could not load pack:toml"}], "total_matches": 15, "hits": [{"name": "predict"}]}"#;
        assert!(!reads_as_error(mixed));
        let kept = without_in_band_errors(serde_json::from_str(mixed).unwrap());
        assert_eq!(
            kept,
            serde_json::json!({"total_matches": 15, "hits": [{"name": "predict"}]})
        );
        // An empty errors list is no error.
        assert!(!reads_as_error(r#"{"errors": [], "rows": [{"id": 1}]}"#));
        assert!(!reads_as_error(r#"{"errors": [], "count": 0}"#));
    }
}
