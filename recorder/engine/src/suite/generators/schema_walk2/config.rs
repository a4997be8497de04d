//! `schema-walk/2`'s registered parameters and its two prompts (both part
//! of the suite's generator config).

use std::time::Duration;

use serde_json::{Value, json};

use crate::suite::schema_args::Limits;

/// The walk's registered parameters (part of the suite's generator config).
#[derive(Debug, Clone)]
pub struct WalkConfig2 {
    pub samples_per_tool: usize,
    pub call_timeout: Duration,
    /// Calls a walk makes at most: this, or [`WalkConfig2::calls_per_tool`]
    /// for each callable tool where that is more.
    pub max_calls: usize,
    pub calls_per_tool: usize,
    pub max_rounds: usize,
    /// Facts taken from one observation at most.
    pub facts_per_call: usize,
    /// Caps on each generated argument set (its wall time is also cut to
    /// `call_timeout`).
    pub argument_limits: Limits,
    /// A walk that only reads checks the server's state with witnesses
    /// ([`super::witness`]) and passes over tasks about what it created.
    pub witness_state: bool,
}

impl Default for WalkConfig2 {
    fn default() -> Self {
        WalkConfig2 {
            samples_per_tool: 4,
            call_timeout: Duration::from_secs(5),
            max_calls: 400,
            calls_per_tool: 24,
            max_rounds: 5,
            facts_per_call: 6,
            argument_limits: Limits::default(),
            witness_state: true,
        }
    }
}

/// Calls the model of what the server holds may make after the walk
/// (each entry a listing names read, each reader tried once), beyond
/// whatever of the walk's budget is left: a walk that spent its calls on
/// guesses still reads what it found.
pub const MODEL_CALLS: usize = 80;

impl WalkConfig2 {
    /// The calls a walk over `tools` callable tools may make: at most
    /// three times [`WalkConfig2::max_calls`], whatever the surface.
    pub fn call_budget(&self, tools: usize) -> usize {
        self.max_calls
            .max(self.calls_per_tool.saturating_mul(tools))
            .min(self.max_calls.saturating_mul(3))
    }

    /// The argument caps in force: the time budget is at most a call's.
    pub fn limits(&self) -> Limits {
        self.argument_limits.within(self.call_timeout)
    }

    pub fn to_json(&self, max_per_tool: usize) -> Value {
        let mut v = json!({
            "samples_per_tool": self.samples_per_tool,
            "call_timeout_ms": self.call_timeout.as_millis() as u64,
            "max_calls": self.max_calls,
            "calls_per_tool": self.calls_per_tool,
            "max_rounds": self.max_rounds,
            "facts_per_call": self.facts_per_call,
            "max_per_tool": max_per_tool,
            "argument_limits": self.limits().to_json(),
            "prompt_templates": [LABELLED_PROMPT, QUOTE_PROMPT],
        });
        if self.witness_state {
            v["witness_state"] = json!(true);
        }
        v
    }
}

const LABELLED_PROMPT: &str = "Using the server's tools, find the {label} {subject}.";
const QUOTE_PROMPT: &str =
    "Using the server's tools, find what the server returns {subject} and quote it.";

/// The two prompts for a subject phrase (`of the record whose name is
/// `x``, `for location `Chicago``, or empty).
pub(super) fn labelled_prompt(label: &str, subject: &str) -> String {
    let subject = if subject.is_empty() {
        "the server reports"
    } else {
        subject
    };
    LABELLED_PROMPT
        .replace("{label}", label)
        .replace("{subject}", subject)
}

pub(super) fn quote_prompt(label: &str, subject: &str) -> String {
    let subject = subject
        .strip_prefix("of ")
        .map_or_else(|| subject.to_owned(), |rest| format!("for {rest}"));
    let subject = if label.is_empty() {
        subject
    } else {
        format!("as {label} {subject}")
    };
    QUOTE_PROMPT
        .replace("{subject}", subject.trim_end())
        .replace("  ", " ")
}
