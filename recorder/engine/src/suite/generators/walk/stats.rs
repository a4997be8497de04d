//! What a walk counts ([`WalkStats`]) and proposes ([`WalkOutcome`]), and a
//! tool dropped because no argument set fits its schema within the caps.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;
use serde_json::{Value, json};

use crate::suite::schema_args::Unsatisfiable;
use crate::suite::task::{Candidate, Origin, Task};
use fitness_shared::record::{DiscoveryLedger, DiscoveryMove};

/// What the walk did, counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WalkStats {
    pub callable_tools: Vec<String>,
    /// Tools not called, with why.
    pub not_called: Vec<Value>,
    /// Tools dropped because no argument set valid under their input
    /// schema fits the argument caps (or exists), with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unsatisfiable: Vec<Value>,
    pub calls: u64,
    pub timeouts: u64,
    pub call_failures: u64,
    pub error_results: u64,
    pub empty_results: u64,
    pub sensitive_results: u64,
    /// Calls not made because an argument was a statement that changes
    /// data ([`crate::access::writes_by_arguments`]).
    #[serde(skip_serializing_if = "is_zero")]
    pub writing_arguments: u64,
    pub no_salient_answer: u64,
    pub unstable: u64,
    pub rounds: u64,
    /// Calls to tools not declared read-only (non-destructive writers): the
    /// tasks may rely on state these calls created (server-memory's do).
    pub state_writes: u64,
    /// Calls that checked the server's state (the read-only walk's
    /// witnesses, asked again after each tool's first call).
    #[serde(skip_serializing_if = "is_zero")]
    pub state_checks: u64,
    /// Tools after whose first call the state changed, in a walk that only
    /// reads: a tool whose name reads but writes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed_state: Vec<String>,
    /// Files written in the operator's places ([`crate::watch`]) by a walk
    /// that only reads, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files_written: Vec<String>,
    /// Files written under places given with `--env`: counted, never named.
    #[serde(skip_serializing_if = "is_zero")]
    pub files_written_unnamed: u64,
    /// Tasks passed over because their calls or answer name state the
    /// walk created.
    #[serde(skip_serializing_if = "is_zero")]
    pub created_state: u64,
    /// Discovery's moves, in the order made: what each tried and found.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub discovery: Vec<DiscoveryMove>,
    /// Seed calls the operator gave.
    #[serde(skip_serializing_if = "is_zero")]
    pub seed_calls: u64,
}

impl WalkStats {
    /// Discovery's ledger for a suite: the moves, and where the suite's
    /// tasks came from.
    pub fn discovery_ledger(&self, tasks: &[Task]) -> DiscoveryLedger {
        let count = |o: Origin| tasks.iter().filter(|t| t.origin == Some(o)).count() as u64;
        DiscoveryLedger {
            moves: self.discovery.clone(),
            seed_calls: self.seed_calls,
            seeded_tasks: count(Origin::Seeded),
            discovered_tasks: count(Origin::Discovered),
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What was drawn for a tool; when no argument set valid under its schema
/// fits the caps, `None`, and the tool is dropped (`dead`) and counted.
pub fn drop_unsatisfiable<T>(
    drawn: Result<T, Unsatisfiable>,
    tool: &str,
    stats: &mut WalkStats,
    dead: &mut HashSet<String>,
) -> Option<T> {
    match drawn {
        Ok(args) => Some(args),
        Err(why) => {
            stats
                .unsatisfiable
                .push(json!({"tool": tool, "why": format!(
                    "no argument set valid under its input schema within the caps: {why}"
                )}));
            dead.insert(tool.to_owned());
            None
        }
    }
}

/// Candidates, the responses their answers came from, and the counts.
pub struct WalkOutcome {
    pub candidates: Vec<Candidate>,
    /// Candidate id → the response text.
    pub observed: BTreeMap<String, String>,
    pub stats: WalkStats,
    /// The model of what the server holds the composer asked over, as the
    /// suite's config holds it ([`crate::suite::holdings::Holdings::summary`]).
    pub holdings: Option<Value>,
}
