//! What a run was allowed to do to the server it measured, and what it
//! did: the mode, how a sandbox's state was restored, the calls the
//! harness withheld, and every write it made.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a run may do to the server: read-only unless the operator said
/// the target may be written to (`--sandbox`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum AccessMode {
    /// No call that may write is made by any part of the run.
    ReadOnly,
    /// The operator declared the target may be written to.
    Sandbox,
}

impl AccessMode {
    /// `read-only` or `sandbox`, as group ids and chips print it.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessMode::ReadOnly => "read-only",
            AccessMode::Sandbox => "sandbox",
        }
    }
}

/// The label of a record that predates the mode.
pub const ACCESS_NOT_RECORDED: &str = "access not recorded";

/// How a sandbox's state was put back before each trial.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreKind {
    /// Nothing restored it: trials that wrote are counted apart.
    None,
    /// The operator's `--reset` command, before generation, before every
    /// trial and after the run.
    Reset,
    /// `--sandbox-copy`: the server ran against a copy of each path,
    /// restored from a snapshot before every trial.
    Copy,
}

/// The tools of one kind of withheld call: how many calls, from which
/// tasks (their trial corr_ids).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BlockedTool {
    pub tool: String,
    pub calls: u64,
    /// The trials (corr_ids) that saw one, each once, in order.
    pub trials: Vec<String>,
}

/// One call that may write, made to the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WriteCall {
    pub tool: String,
    /// As taped: redacted like every line.
    pub arguments: Value,
    /// The phase or trial that made it (`generate`, `t3::construct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corr_id: Option<String>,
}

/// What the run was allowed to do, and what it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AccessLedger {
    pub mode: AccessMode,
    /// How a sandbox's state was restored (absent when read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<RestoreKind>,
    /// The operator's reset command, redacted, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_command: Option<String>,
    /// The paths a sandbox copied (the originals, never touched).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub copied_paths: Vec<String>,
    /// Tools that may write: never called in a read-only run.
    #[serde(default)]
    pub writers: Vec<String>,
    /// Tools that may write by their words, made as setup steps (a
    /// project registered) that generation showed change only the
    /// session: every file and listing it watched was as before. The run
    /// may call them; they are not among `writers`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup_steps: Vec<String>,
    /// Calls the harness withheld from the server (read-only), by tool.
    /// Never a server error: they did not reach it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<BlockedTool>,
    /// Every call that may write the run made, in order (at most
    /// [`WRITES_LISTED`]; `writes_total` counts them all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<WriteCall>,
    #[serde(default)]
    pub writes_total: u64,
    /// A sandbox with nothing to restore it: the trials that wrote, whose
    /// later trials' answer keys may be stale.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stale_trials: Vec<String>,
}

/// Writes listed on a record at most; the rest are counted.
pub const WRITES_LISTED: usize = 500;

impl AccessLedger {
    /// Calls the harness withheld, over every tool.
    pub fn blocked_calls(&self) -> u64 {
        self.blocked.iter().map(|b| b.calls).sum()
    }

    /// The mode in words, as the record page and the row print it:
    /// `read-only (3 calls blocked)`, `sandbox, restored from a copy`.
    pub fn text(&self) -> String {
        match self.mode {
            AccessMode::ReadOnly => match self.blocked_calls() {
                0 => "read-only".to_owned(),
                1 => "read-only (1 call blocked)".to_owned(),
                n => format!("read-only ({n} calls blocked)"),
            },
            AccessMode::Sandbox => {
                let restore = match self.restore {
                    Some(RestoreKind::Copy) => "restored from a copy before every trial",
                    Some(RestoreKind::Reset) => "reset before every trial",
                    Some(RestoreKind::None) | None => "never restored",
                };
                let writes = match self.writes_total {
                    1 => "1 write".to_owned(),
                    n => format!("{n} writes"),
                };
                format!("sandbox, {restore} ({writes})")
            }
        }
    }
}
