//! What a tool or a tool's result says about itself, read from its text:
//! a result that reads as an error or as empty although it was not flagged,
//! a tool whose name says it returns secrets. The generators skip such
//! results and tools; admission rejects a candidate built on one.

use std::sync::LazyLock;

use regex::Regex;
use rmcp::model::Tool;

static ERROR_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)^\s*(?:error|exception|traceback|fatal|failed|failure|denied|forbidden|unauthori[sz]ed|invalid|not found|no such|cannot|could not|unable to)\b|\b(?:ENOENT|EACCES|EPERM|EISDIR|ENOTDIR|Permission denied|No such file or directory|Access denied|Traceback \(most recent call last\)|MCP error -?\d+|is not a valid|does not exist|outside (?:the )?allowed)\b",
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
pub fn reads_as_error(text: &str) -> bool {
    let head: String = text.chars().take(2_000).collect();
    ERROR_TEXT.is_match(&head)
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
