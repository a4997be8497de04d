//! One run record and who made it: the record, its identity, the producer, the attempt.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::conformance::Conformance;
use super::gates::{ExtensionBatch, Gates};
use super::input::InputRequests;
use super::notes::Notes;
use super::outcome::Outcome;
use super::prereg::PreRegistration;
use super::probes::Probes;
use super::redactions::Redactions;
use super::rewrite::{Finding, Proposal, RewriteLink};
use super::score::{Cost, Score};
use super::server::ServerIdentity;
use super::suite::SuiteLedger;
use super::tapes::{ImportProvenance, TapeRef, TraceLinks};
use crate::integrity::RecordSignature;

/// One run: identity, probes, pre-registration, suite, gates, outcome, and
/// the score only when the outcome is `SCORED`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunRecord {
    /// Always `fitness-report/2` ([`crate::RECORD_SCHEMA`]).
    pub schema: String,
    pub run: RunIdentity,
    pub server: ServerIdentity,
    pub probes: Probes,
    /// What the run was allowed to do to the server, and every write and
    /// withheld call. Absent on records that predate the mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<super::access::AccessLedger>,
    /// What was fixed before the first model call.
    pub preregistration: PreRegistration,
    pub suite: SuiteLedger,
    pub gates: Gates,
    /// One entry per consumed extension batch, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<ExtensionBatch>,
    pub outcome: Outcome,
    /// Present exactly when `outcome` is `SCORED`; on a refusal the key does
    /// not exist in the JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<Score>,
    pub cost: Cost,
    /// What the server's tool list costs the runner per turn, measured
    /// between the null arms. Absent when the null arms did not run, and on
    /// records made before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_list: Option<super::tool_list::ToolListCost>,
    pub notes: Notes,
    /// The run's tapes, hashed; paths are relative to the record's directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tapes: Vec<TapeRef>,
    /// Where the tapes were published, when they were published by URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_links: Option<TraceLinks>,
    /// `mcp-tape.stats/1` blocks as recorded (kept verbatim; the tape module
    /// owns their typed form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_stats: Option<Value>,
    /// Set on records converted from an older schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<ImportProvenance>,
    /// What the tapes show about the server's tool descriptions and errors
    /// (wrong-tool selections, corrected arguments, ambiguous parameters,
    /// unannotated destructive tools, errors with nothing to act on), each
    /// with the tape lines it rests on. Present for every outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// A rewritten description or schema change per finding, with the
    /// findings it answers and their evidence.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub proposals: Vec<Proposal>,
    /// The link to the other run of a rewrite check (before or after the
    /// proposals were substituted), with the delta of the two stored intervals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rewrite: Option<RewriteLink>,
    /// What the redaction policy replaced in this run's tapes, suite and
    /// record before they were written, by source, never the values. Absent
    /// on records written before the policy existed and on imports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redactions: Option<Redactions>,
    /// The official MCP conformance suite's result (`fitness run
    /// --conformance`), run beside our probes and never counted among them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<Conformance>,
    /// The requests for input (sampling, elicitation) the server made
    /// during the run, and how they were answered; absent when it made
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Each trial's trace id (W3C, 32 hex digits), by corr_id: every call
    /// of the trial carried it in its `traceparent`, so a maintainer finds
    /// the trial in their own server's traces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces: Option<std::collections::BTreeMap<String, String>>,
    /// The publisher's signature over the canonical record (see `integrity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<RecordSignature>,
}

/// Whether a model name a provider reported names anything: llama.cpp
/// reports `-`, which is no name.
pub fn names_a_model(reported: &str) -> bool {
    reported.chars().any(char::is_alphanumeric)
}

impl RunIdentity {
    /// The runner as the record page prints it: the registered model, and
    /// the name the provider reported where it is a name and differs.
    pub fn runner_text(&self) -> String {
        match self.runner_reported.as_deref().filter(|r| names_a_model(r)) {
            Some(r) if r != self.runner_model => {
                format!("{} (the provider reported {r})", self.runner_model)
            }
            _ => self.runner_model.clone(),
        }
    }
}

/// Who ran what, when, with which models.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunIdentity {
    pub id: String,
    /// ISO 8601 start of the run.
    pub started_at: String,
    pub harness: Producer,
    /// sha256 of the canonical suite (generator config + seed + tasks).
    pub suite_hash: String,
    /// The runner as registered (`openai/gpt-4o`).
    pub runner_model: String,
    /// The model name the provider reported in its replies, when it differs
    /// from the registered one (a dated version, or a local server's
    /// placeholder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_reported: Option<String>,
    pub judge_model: String,
    /// The task generator id, e.g. `schema-walk/1`. `None` reads "generator
    /// not recorded", never a guessed version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// Which attempt at this server this run is, naming the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<Attempt>,
    /// Advisory per-task token budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_budget: Option<u64>,
    /// Model-call attempts of any stage (generation, screen, null arms,
    /// construct, drive, proposals) that waited on the run's shared rate
    /// budget (another call had been refused for rate), when any did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_waits: Option<RateWaits>,
}

/// Attempts held back by a refusal for rate, and how long in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RateWaits {
    pub attempts: u64,
    pub waited_ms: u64,
}

impl RateWaits {
    /// One sentence for the record page.
    pub fn text(&self) -> String {
        let (n, s) = (self.attempts, self.waited_ms as f64 / 1000.0);
        format!(
            "The model API refused calls for rate: {n} attempt{} waited {s:.1} s in all on the run's shared rate budget before being sent.",
            if n == 1 { "" } else { "s" }
        )
    }
}

impl RunIdentity {
    /// The generator chip text.
    pub fn generator_label(&self) -> &str {
        self.generator
            .as_deref()
            .unwrap_or("generator not recorded")
    }
}

/// The program that wrote the record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Producer {
    pub name: String,
    pub version: String,
}

/// "Run i of N" for one server, naming the other attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Attempt {
    /// 1-based, oldest first.
    pub index: u32,
    pub of: u32,
    /// Run ids of the other attempts at the same server.
    #[serde(default)]
    pub others: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::RateWaits;

    #[test]
    fn rate_waits_read_as_one_sentence_with_seconds() {
        let one = RateWaits {
            attempts: 1,
            waited_ms: 1_250,
        };
        assert_eq!(
            one.text(),
            "The model API refused calls for rate: 1 attempt waited 1.2 s in all on the run's shared rate budget before being sent."
        );
        let many = RateWaits {
            attempts: 3,
            waited_ms: 2_960,
        };
        assert!(many.text().contains("3 attempts waited 3.0 s"));
    }
}
