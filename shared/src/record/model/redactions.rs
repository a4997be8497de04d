//! What was redacted from the tapes before publishing.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Counts of what was redacted (`fitness-redact/1`, see [`crate::redact`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Redactions {
    /// The policy that was applied, e.g. `fitness-redact/1`.
    pub policy: String,
    /// Replacements in all, over every file of the run.
    pub total: u64,
    /// Replacements by marker label (`env API_KEY`, `url password`,
    /// `pattern jwt`), in label order.
    #[serde(default)]
    pub by_source: Vec<RedactionCount>,
}

/// Replacements under one marker label.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RedactionCount {
    pub source: String,
    pub count: u64,
}

impl Redactions {
    /// The counts of `hits` under the current policy.
    pub fn from_hits(hits: &crate::redact::Hits) -> Redactions {
        Redactions {
            policy: crate::redact::POLICY.to_owned(),
            total: hits.total(),
            by_source: hits
                .iter()
                .map(|(source, count)| RedactionCount {
                    source: source.to_owned(),
                    count,
                })
                .collect(),
        }
    }
}
