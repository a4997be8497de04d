//! The salient token of a response: the word or number that shows the
//! server was asked, and the predicate that checks it.

use serde_json::Value;

use crate::suite::predicate::{contains_token, first_json_value, numbers_in};
use crate::suite::task::Predicate;

/// Words too common to show that the server was asked: never answer keys.
pub const STOPWORDS: &[&str] = &[
    "about",
    "above",
    "access",
    "after",
    "again",
    "against",
    "also",
    "although",
    "always",
    "among",
    "another",
    "any",
    "anything",
    "array",
    "available",
    "back",
    "based",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "call",
    "called",
    "cannot",
    "content",
    "could",
    "count",
    "created",
    "current",
    "data",
    "default",
    "demo",
    "does",
    "done",
    "down",
    "during",
    "each",
    "either",
    "else",
    "empty",
    "error",
    "every",
    "example",
    "false",
    "field",
    "file",
    "first",
    "following",
    "found",
    "from",
    "given",
    "good",
    "have",
    "having",
    "hello",
    "here",
    "here's",
    "http",
    "https",
    "image",
    "information",
    "into",
    "item",
    "items",
    "json",
    "just",
    "last",
    "less",
    "like",
    "link",
    "links",
    "list",
    "made",
    "make",
    "many",
    "message",
    "more",
    "most",
    "much",
    "must",
    "name",
    "need",
    "never",
    "next",
    "none",
    "null",
    "number",
    "object",
    "only",
    "other",
    "over",
    "page",
    "please",
    "provided",
    "ready",
    "really",
    "request",
    "requested",
    "resource",
    "resources",
    "response",
    "result",
    "results",
    "return",
    "returned",
    "returning",
    "returns",
    "same",
    "second",
    "see",
    "server",
    "should",
    "show",
    "since",
    "some",
    "something",
    "still",
    "string",
    "success",
    "successful",
    "successfully",
    "such",
    "sure",
    "take",
    "text",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "thing",
    "this",
    "those",
    "through",
    "time",
    "tool",
    "tools",
    "total",
    "true",
    "type",
    "under",
    "undefined",
    "until",
    "used",
    "using",
    "value",
    "values",
    "very",
    "want",
    "well",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "will",
    "with",
    "within",
    "without",
    "would",
    "your",
    "yours",
];

/// Clock readings and dates: they change between generation and the drive.
pub static VOLATILE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}(?::\d{2})?(?:\s*[AP]M)?\b",
    )
    .expect("the clock pattern compiles")
});

/// The answer a response yields: (key, predicate). Clock readings and dates
/// are ignored. Words are scored: +4 when inside a JSON string value of the
/// response, +2 for 8+ characters (+1 for 6+), +1 when letters and digits
/// mix; the best wins, the first on a tie. A number (the last one) is
/// preferred to a word scoring below 2.
pub fn salient(text: &str, prompt: &str, forbidden: &str) -> Option<(String, Predicate)> {
    let allowed = |tok: &str| !contains_token(prompt, tok) && !contains_token(forbidden, tok);
    let stable = VOLATILE.replace_all(text, " ");
    let best = best_word(text, &stable, &allowed);
    let word = |tok: String| {
        Some((
            tok.clone(),
            Predicate::Substring {
                value: tok,
                case_insensitive: true,
            },
        ))
    };
    if let Some((score, tok)) = &best
        && *score >= 2
    {
        return word(tok.clone());
    }
    if let Some(number) = last_number(&stable, &allowed) {
        return Some(number);
    }
    best.and_then(|(_, tok)| word(tok))
}

/// The best-scoring word of the response (clock readings blanked out in
/// `stable`) that may be an answer, with its score; the first on a tie.
fn best_word(text: &str, stable: &str, allowed: &dyn Fn(&str) -> bool) -> Option<(i32, String)> {
    let mut leaves = Vec::new();
    if let Some(v) = first_json_value(text) {
        string_leaves(&v, &mut leaves);
    }
    let mut best: Option<(i32, String)> = None;
    for raw in stable.split(|c: char| !(c.is_alphanumeric() || "-_.@/:'".contains(c))) {
        let tok = raw.trim_matches(|c: char| !c.is_alphanumeric());
        if !answer_word(tok, text) || !allowed(tok) {
            continue;
        }
        let score = word_score(tok, &leaves);
        if best.as_ref().is_none_or(|(b, _)| score > *b) {
            best = Some((score, tok.to_owned()));
        }
    }
    best
}

/// May this word be an answer: 4 to 40 characters with a letter, not a
/// common word, not a JSON key of the response, not secret-looking?
fn answer_word(tok: &str, text: &str) -> bool {
    let n = tok.chars().count();
    if !(4..=40).contains(&n) || !tok.chars().any(char::is_alphabetic) {
        return false;
    }
    if STOPWORDS.contains(&tok.to_lowercase().as_str()) {
        return false;
    }
    if text.contains(&format!("\"{tok}\":")) || text.contains(&format!("\"{tok}\" :")) {
        return false; // a JSON key: structure, not content
    }
    let secret_looking = n >= 20
        && tok.chars().any(|c| c.is_ascii_digit())
        && tok.chars().any(char::is_uppercase)
        && tok.chars().any(char::is_lowercase);
    !secret_looking
}

/// A word's score as an answer (see [`salient`]).
fn word_score(tok: &str, leaves: &[String]) -> i32 {
    let n = tok.chars().count();
    let mut score = 0;
    if leaves.iter().any(|l| l.contains(tok)) {
        score += 4;
    }
    score += if n >= 8 {
        2
    } else if n >= 6 {
        1
    } else {
        0
    };
    if tok.chars().any(|c| c.is_ascii_digit()) {
        score += 1;
    }
    score
}

/// The last number of the response that may be an answer (not 0 or 1),
/// with its check.
fn last_number(stable: &str, allowed: &dyn Fn(&str) -> bool) -> Option<(String, Predicate)> {
    for v in numbers_in(stable).into_iter().rev() {
        if v == 0.0 || v == 1.0 {
            continue;
        }
        let repr = if v.fract() == 0.0 && v.abs() < 1e15 {
            format!("{}", v as i64)
        } else {
            format!("{v}")
        };
        if !allowed(&repr) {
            continue;
        }
        return Some((repr, Predicate::number_near(v)));
    }
    None
}

fn string_leaves(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| string_leaves(x, out)),
        Value::Object(o) => o.values().for_each(|x| string_leaves(x, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salient_prefers_new_words_then_the_last_new_number() {
        let prompt =
            "Use the `get-sum` tool with arguments {\"a\":3,\"b\":9} and report the result.";
        let (key, check) =
            salient("The sum of 3 and 9 is 12.", prompt, "Returns the sum").expect("a number");
        assert_eq!(key, "12");
        assert!(check.check("It is 12"));
        assert!(!check.check("It is 13"));
        let (key, _) = salient(
            "{\"entityType\": \"kenlu\", \"name\": \"tavimor\"}",
            "Use the `search_nodes` tool with arguments {\"query\":\"tavimor\"} and report the result.",
            "",
        )
        .expect("a word");
        assert_eq!(key, "kenlu");
        assert!(
            salient(
                "Echo: hello",
                "Use the `echo` tool with arguments {\"message\":\"hello\"} and report the result.",
                "Echoes back the input"
            )
            .is_none()
        );
    }
}
