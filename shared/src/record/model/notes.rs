//! Notes on a run and the standing notes it carries.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Method notes: the standing set this run carries by reference, and its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Notes {
    /// The standing-notes set (published once) this run also carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standing: Option<StandingNotesRef>,
    /// The notes that belong to this run alone, verbatim.
    #[serde(default)]
    pub own: Vec<String>,
    /// Notes about the score (or why there is none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub score: Vec<String>,
}

/// A reference to a published standing-notes set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StandingNotesRef {
    /// `sha256:<hex>` of the canonical JSON of the [`StandingNotesSet`].
    pub set_id: String,
    /// How many standing notes this run carries.
    pub count: u64,
}

/// A standing-notes set, published once (`standing-notes/<hex>.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StandingNotesSet {
    /// The generator whose runs all carry these notes, or "generator not recorded".
    pub generator: String,
    pub notes: Vec<String>,
}
