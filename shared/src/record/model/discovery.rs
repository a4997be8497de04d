//! Discovery: what generation read and tried before it guessed (the
//! server's own description of itself, a catalogue asked of a query
//! language, broad values given to a search), and what the operator told
//! it (seed calls, context).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A call the operator knows succeeds (`--seed-calls`): a walk starts from
/// its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeedCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: serde_json::Map<String, serde_json::Value>,
}

/// What the operator told generation that no discovery can know: calls
/// that succeed, and words for the judge. Registered and hashed into the
/// suite.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OperatorHints {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seed_calls: Vec<SeedCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
}

impl OperatorHints {
    pub fn is_empty(&self) -> bool {
        self.seed_calls.is_empty() && self.context.is_none()
    }
}

/// One move of discovery: what was tried and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiscoveryMove {
    /// The move's name (`resources`, `catalogue`, `broad-search`,
    /// `seed-calls`, `prompts`, `instructions`, `file-uri`, `root-paths`,
    /// `follow-errors`).
    #[serde(rename = "move")]
    pub name: String,
    /// The tool it was made on, when it calls one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What was tried, in words.
    pub tried: String,
    /// What it found, in words.
    pub found: String,
    /// Whether it found anything a later call or the judge can use.
    pub worked: bool,
}

/// Discovery's ledger: every move in the order made, and where the
/// suite's tasks came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DiscoveryLedger {
    #[serde(default)]
    pub moves: Vec<DiscoveryMove>,
    /// Seed calls the operator gave.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seed_calls: u64,
    /// Tasks in the suite whose calls start from a seed call's result.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub seeded_tasks: u64,
    /// Tasks in the suite whose calls start from a discovery move's result
    /// (a catalogue, a broad search) or take a value only discovery found.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub discovered_tasks: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl DiscoveryLedger {
    /// Every move in one paragraph: `tried X: found Y` per move, joined, so
    /// a maintainer knows what was tried (and what to seed).
    pub fn sentence(&self) -> String {
        if self.moves.is_empty() && self.seed_calls > 0 {
            return format!(
                "No discovery move was made: this generator does not make the operator's {} seed call{}.",
                self.seed_calls,
                if self.seed_calls == 1 { "" } else { "s" }
            );
        }
        if self.moves.is_empty() {
            return "No discovery move applied: the server lists no resources or prompts, no tool takes a query language or a search, and the operator gave no seed calls.".to_owned();
        }
        let parts: Vec<String> = self
            .moves
            .iter()
            .map(|m| {
                let on = m
                    .tool
                    .as_deref()
                    .map(|t| format!(" on `{t}`"))
                    .unwrap_or_default();
                format!("{}{on}: {} — {}", m.name, m.tried, m.found)
            })
            .collect();
        format!("Discovery tried: {}.", parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_with_seed_calls_and_no_move_says_the_generator_did_not_make_them() {
        let ledger = DiscoveryLedger {
            seed_calls: 1,
            ..DiscoveryLedger::default()
        };
        assert_eq!(
            ledger.sentence(),
            "No discovery move was made: this generator does not make the operator's 1 seed call."
        );
    }

    #[test]
    fn the_sentence_names_every_move_with_its_outcome() {
        let ledger = DiscoveryLedger {
            moves: vec![
                DiscoveryMove {
                    name: "catalogue".into(),
                    tool: Some("query".into()),
                    tried: "information_schema, sqlite_master".into(),
                    found: "2 tables (books, loans) in the sqlite_master dialect".into(),
                    worked: true,
                },
                DiscoveryMove {
                    name: "resources".into(),
                    tool: None,
                    tried: "resources/list".into(),
                    found: "none listed".into(),
                    worked: false,
                },
            ],
            ..DiscoveryLedger::default()
        };
        let s = ledger.sentence();
        assert!(s.contains("catalogue on `query`: information_schema, sqlite_master — 2 tables"));
        assert!(s.contains("resources: resources/list — none listed"));
        assert!(
            DiscoveryLedger::default()
                .sentence()
                .starts_with("No discovery move")
        );
    }
}
