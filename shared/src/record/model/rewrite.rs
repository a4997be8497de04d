//! Rewrite findings, proposals and the links between a run and its rewrite.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::score::Interval;
use crate::tape::Plane;

/// What a finding is about.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// The agent called a tool that is not among the task's expected tools.
    WrongTool,
    /// A call failed on its arguments and a later call to the same tool in
    /// the same trial succeeded.
    CorrectedArgument,
    /// A parameter named like an entity (`user`, `id`, `item`...) whose
    /// description or type leaves open what value is meant.
    AmbiguousParameter,
    /// A mis-selected tool's description says nothing about when not to use it.
    MissingWhenNotToUse,
    /// A tool inferred destructive that declares no `destructiveHint`.
    UnannotatedDestructive,
    /// An error whose text names no parameter, no range and no hint.
    UnactionableError,
}

/// One tape line a finding rests on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct EvidenceLink {
    /// Which tape: `mcp` or `agent`.
    pub tape: Plane,
    /// The 1-based line number in that tape file.
    pub line: u64,
    /// The corr_id of the line, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corr_id: Option<String>,
}

/// Something the tapes show about one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    /// Stable within the record (`f1`, `f2`, ...).
    pub id: String,
    pub kind: FindingKind,
    pub tool: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// One sentence with the counts it rests on.
    pub summary: String,
    pub evidence: Vec<EvidenceLink>,
}

/// A change to one tool as the client sees it in `tools/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolChange {
    /// The whole new description, replacing the server's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A sentence appended to the (possibly replaced) description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub append_description: Option<String>,
    /// New descriptions of input parameters, by parameter name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub parameter_descriptions: std::collections::BTreeMap<String, String>,
    /// Annotation fields set (merged over the server's).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub annotations: serde_json::Map<String, Value>,
}

/// A proposed rewrite answering one or more findings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Proposal {
    /// Stable within the record (`p1`, `p2`, ...).
    pub id: String,
    pub tool: String,
    /// The findings this proposal answers.
    pub answers: Vec<String>,
    pub change: ToolChange,
    /// Why, in one or two sentences.
    pub rationale: String,
    /// `rules/1` (the deterministic rule set) or `judge:<provider/model>`.
    pub source: String,
    /// The evidence of the findings it answers.
    pub evidence: Vec<EvidenceLink>,
}

/// Which side of a rewrite check a record is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RewriteRole {
    Before,
    After,
}

/// The difference of the first-try intervals of the two runs of a rewrite
/// check, computed from the intervals stored in the records
/// (`fitness_shared::compare::delta`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RewriteDelta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Interval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Interval>,
    /// `after.rate - before.rate`, when both runs scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<f64>,
    /// The two intervals do not overlap (the only difference the board may call a change).
    pub separated: bool,
}

/// The link between the two runs of a rewrite check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RewriteLink {
    pub role: RewriteRole,
    /// The other run's id.
    pub other_run: String,
    /// The other run's directory, relative to this record's directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_dir: Option<String>,
    /// The proposals substituted in the after run (ids in the before record).
    pub proposals: Vec<String>,
    pub delta: RewriteDelta,
    /// In words: what changed, or why there is no difference to state.
    pub explain: String,
}
