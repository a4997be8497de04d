//! The `fitness-report/2` types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// The publisher's signature over the canonical record (see `integrity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<RecordSignature>,
}

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

/// The official conformance suite (`@modelcontextprotocol/conformance
/// server --url`), as it reported itself: each scenario's `checks.json` is
/// kept beside the tapes, verbatim, and hashed here, so the signature covers
/// them. Its counts are the suite's, never ours.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Conformance {
    /// The npm package and version that ran (`@modelcontextprotocol/conformance@0.1.16`).
    pub suite: String,
    /// The Node.js version it ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Checks with status `SUCCESS`, over every scenario.
    pub passed: u64,
    /// Checks with status `FAILURE`, over every scenario.
    pub failed: u64,
    /// Checks with any other status (`WARNING`, `SKIPPED`, `INFO`).
    #[serde(default)]
    pub other: u64,
    /// One entry per scenario the suite wrote, in the suite's order.
    #[serde(default)]
    pub scenarios: Vec<ConformanceScenario>,
    /// The suite's exit code (1 when any check failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Why the suite gave no result, when it did not (not installed, timed out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One conformance scenario: its counts and its `checks.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ConformanceScenario {
    /// The suite's scenario id (`server-initialize`, `dns-rebinding-protection`).
    pub scenario: String,
    pub passed: u64,
    pub failed: u64,
    #[serde(default)]
    pub other: u64,
    /// The scenario's `checks.json`, relative to the record's directory.
    pub path: String,
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
    pub bytes: u64,
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

/// The server as connected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ServerIdentity {
    pub target: ServerTarget,
    /// Short stable name used for grouping attempts (`huggingface-co`).
    pub slug: String,
    pub era: Era,
    /// The protocol revision the connection negotiated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub negotiated_version: Option<String>,
    pub transport: TransportShape,
    pub sessions: Sessions,
    pub credential_context: CredentialContext,
    /// `serverInfo` as the server sent it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_info: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capabilities: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The `server/discover` result (modern era).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discover: Option<Value>,
}

/// How the server was reached.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerTarget {
    Url { url: String },
    Command { argv: Vec<String> },
}

impl ServerTarget {
    /// The target as pages print it: the URL, or the command line with its
    /// program named by file name (`fitness demo-server good`, not the
    /// absolute path of the binary on the machine that ran it).
    pub fn display(&self) -> String {
        match self {
            ServerTarget::Url { url } => url.clone(),
            ServerTarget::Command { argv } => {
                let mut words = argv.iter();
                let program = words
                    .next()
                    .map(|p| p.rsplit(['/', '\\']).next().unwrap_or(p))
                    .unwrap_or_default();
                std::iter::once(program)
                    .chain(words.map(String::as_str))
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        }
    }
}

/// Protocol era: `initialize` (legacy) or `server/discover` (modern).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    Legacy,
    Modern,
}

/// The transport and the framing its responses used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TransportShape {
    Stdio,
    /// Streamable HTTP answering with SSE-framed responses.
    HttpSse,
    /// Streamable HTTP answering with plain JSON bodies.
    HttpJson,
}

/// Whether the server issued a session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Sessions {
    Sessionful,
    Sessionless,
}

/// The credentials the measurement was collected under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CredentialContext {
    Anonymous,
    FreeKey,
    OwnerKey,
}

/// The zero-token protocol probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probes {
    /// The negotiated revision, the spec-currency column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_currency: Option<String>,
    #[serde(default)]
    pub findings: Vec<Probe>,
}

impl Probes {
    /// (passed, failed, unknown): unknown is never counted as a pass.
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for p in &self.findings {
            match p.status {
                ProbeStatus::Pass => t.0 += 1,
                ProbeStatus::Fail => t.1 += 1,
                ProbeStatus::Unknown { .. } => t.2 += 1,
            }
        }
        t
    }
}

/// One probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Probe {
    /// e.g. `spec-currency`, `bogus-version-accepted`.
    pub id: String,
    pub status: ProbeStatus,
    /// One line a reader can take in.
    pub detail: String,
    /// corr_ids of the tape lines that show it (`probe::<id>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<String>,
    /// What the probe observed, as recorded (status codes, envelopes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Value>,
}

/// A probe result; unknown means not applicable or could not check.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum ProbeStatus {
    Pass,
    Fail,
    Unknown { reason: String },
}

/// What was fixed and hashed before the first model call. Fields a record
/// from an older schema did not carry are absent, never invented.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PreRegistration {
    /// sha256 of the canonical pre-registration, when it was hashed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_tasks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
    /// Construct-gate rate threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub construct_threshold: Option<f64>,
    /// Null-baseline kill ratio (`t_null >= ratio * t_agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_kill_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_admission_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_tasks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detectable_rate: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub planned_power: Option<f64>,
    /// Tasks per extension batch.
    pub extension_size: u64,
    pub max_extensions: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// Whether the generation-time null screen was registered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_screen: Option<bool>,
    /// Whether the official conformance suite runs before the probes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential_context: Option<CredentialContext>,
    /// The extension protocol in the run's own words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension_protocol: Option<String>,
    /// Model API errors over attempts above which a gate is COMPROMISED.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_error_rate: Option<f64>,
    /// Turns one trial may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u64>,
    /// Tokens one trial may spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Candidates generated per driven task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overgen_factor: Option<f64>,
    /// Milliseconds one MCP request may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_timeout_ms: Option<u64>,
    /// Milliseconds one model call attempt may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_timeout_ms: Option<u64>,
    /// The spend cap in model calls, when one was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_model_calls: Option<u64>,
    /// The size cap of each tape, in bytes: a server that fills a tape
    /// past it ends the run VOID.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tape_bytes: Option<u64>,
}

/// The fates of generated candidates, counted apart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteLedger {
    /// Candidates put through admission.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<u64>,
    /// Admitted (trimmed surplus counts as admitted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub admitted: Option<u64>,
    /// Tasks in the driven suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u64>,
    /// Rejected by an admission rule, per rule.
    #[serde(default)]
    pub rejected_by_rule: Vec<RuleRejection>,
    /// Admitted but trimmed as surplus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trimmed_surplus: Option<u64>,
    /// Deleted by the generation-time null screen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_screened: Option<NullScreenCount>,
    /// Said when the generator did not serialise part of this ledger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limitation: Option<String>,
    /// What the driven suite asks of the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quality: Option<SuiteQuality>,
    /// The judge's synthesis calls (judge-synth): a failed call is our
    /// measurement's failure, never a candidate, and is counted here apart
    /// from every candidate's fate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge_calls: Option<JudgeCalls>,
}

/// The judge's synthesis calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct JudgeCalls {
    /// Calls made.
    pub made: u64,
    /// Of those, calls that failed (timeouts, API errors).
    pub failed: u64,
    /// The last failure's message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

/// What a suite asks of the server: which tools its tasks end at, how many
/// answers were read from a successful call, how many tasks take more than
/// one call, and the kinds of predicates that check them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SuiteQuality {
    /// Tasks in the suite.
    pub tasks: u64,
    /// Tools the server listed.
    pub tools_listed: u64,
    /// Tasks per tool their solution ends at (most first, then by name).
    pub per_tool: Vec<ToolTasks>,
    /// Tasks whose answer key was read from a successful call's result at
    /// generation.
    pub answered_from_calls: u64,
    /// Tasks whose solution takes more than one call.
    pub multi_call: u64,
    /// Predicates by kind (`substring`, `number_within`, ...).
    pub predicate_kinds: Vec<KindCount>,
}

impl SuiteQuality {
    /// `count` as a share of the suite's tasks (`None` for an empty suite).
    pub fn share(&self, count: u64) -> Option<f64> {
        (self.tasks > 0).then(|| count as f64 / self.tasks as f64)
    }

    /// Tools at least one task ends at.
    pub fn tools_covered(&self) -> u64 {
        self.per_tool.iter().filter(|t| t.tasks > 0).count() as u64
    }
}

/// Tasks ending at one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ToolTasks {
    pub tool: String,
    pub tasks: u64,
}

/// How many of something of one kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct KindCount {
    pub kind: String,
    pub count: u64,
}

/// Candidates one admission rule rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct RuleRejection {
    pub rule: String,
    pub count: u64,
    /// What the rule saw in the first candidate it rejected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<String>,
}

/// The generation-time null screen's counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct NullScreenCount {
    pub screened: u64,
    pub dropped: u64,
}

/// The gate pipeline as it ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Gates {
    /// Gate ids in the order they ran.
    pub order: Vec<String>,
    pub records: Vec<GateRecord>,
    /// The gate whose failure decided the outcome; `None` when scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused_at: Option<String>,
}

impl Gates {
    pub fn record(&self, id: &str) -> Option<&GateRecord> {
        self.records.iter().find(|r| r.id == id)
    }
}

/// One gate decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateRecord {
    /// `structural`, `answer_leak`, `suite_size`, `plan_power`, `null_baseline`,
    /// `construct`, `protocol_hygiene`, ...
    pub id: String,
    pub cost_tier: CostTier,
    pub ok: bool,
    /// Present on gates decided by a binomial test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<GateVerdict>,
    /// The machine reason string printed on the board (`below_min_rate`).
    pub reason: String,
    pub detail: GateDetail,
    /// The gate's detail exactly as an imported record carried it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_detail: Option<Value>,
}

/// Which budget a gate spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostTier {
    Free,
    Cheap,
    Paid,
}

/// Three-outcome binomial verdict on `k` of `n` against `threshold`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateVerdict {
    pub outcome: VerdictOutcome,
    pub k: u64,
    pub n: u64,
    pub threshold: f64,
    pub alpha: f64,
    pub p_value: f64,
}

/// The verdict of a gate test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VerdictOutcome {
    Pass,
    Fail,
    Extend,
    Indeterminate,
}

/// A k of n count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Count {
    pub k: u64,
    pub n: u64,
}

/// The numbers each gate saw, typed per gate. A reader that meets a gate kind
/// it does not know reads `unrecognised` and still has the record's `reason`.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GateDetail {
    ProtocolHygiene {
        /// Probe ids that failed.
        failed: Vec<String>,
    },
    Structural {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_requested: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_generated: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        admission_rate: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_admission_rate: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_generated: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    AnswerLeak {
        /// Leaks found in the driven suite.
        leaks: Vec<Value>,
        /// Leaks found and dropped at generation time.
        #[serde(default)]
        at_generation: Vec<Value>,
    },
    SuiteSize {
        n_tasks: u64,
        min_tasks: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_count: Option<u64>,
    },
    PlanPower {
        required_n: u64,
        actual_n: u64,
        threshold: f64,
        detectable_rate: f64,
        achieved_power: f64,
        /// What the gate saw, and the registrations that could publish.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    NullBaseline {
        /// One rate per null model.
        rates: Vec<NullRate>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        t_null: Option<f64>,
        /// The agent's rate the null was compared with.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        t_agent: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kill_threshold: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ratio: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        percentile: Option<u64>,
        /// `PROCEED`, `KILL` or `INDETERMINATE`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    Construct {
        n: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n_intended: Option<u64>,
        errors: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_error_rate: Option<f64>,
        compromised: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reps: Option<u64>,
        /// The published verdict after the Wilson / achieved-power rule.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        published: Option<PublishedVerdict>,
        /// Pooled counts across consumed extensions.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pooled: Option<Count>,
        #[serde(default)]
        extensions_consumed: u64,
        /// What the wire tape shows for the reference trials, read when the
        /// gate did not pass.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tape_reading: Option<TapeReading>,
    },
    /// The drive's own error check (divergence 1: errors gated apart).
    Drive {
        /// Completed trials.
        trials: u64,
        /// Trials the model API failed.
        errors: u64,
        max_error_rate: f64,
        compromised: bool,
    },
    /// The judge's synthesis calls (judge-synth): a judge that fails is our
    /// measurement failing, gated like the drive's errors, never read as
    /// the server's thin surface.
    Synthesis {
        /// Calls made.
        calls: u64,
        /// Of those, calls that failed.
        failures: u64,
        max_error_rate: f64,
        compromised: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        explain: Option<String>,
    },
    /// A gate kind this reader does not know.
    #[serde(other)]
    Unrecognised,
}

impl GateDetail {
    /// The gate's own sentence on what it saw, when it wrote one.
    pub fn explain(&self) -> Option<&str> {
        match self {
            GateDetail::Structural { explain, .. }
            | GateDetail::PlanPower { explain, .. }
            | GateDetail::NullBaseline { explain, .. }
            | GateDetail::Synthesis { explain, .. } => explain.as_deref(),
            _ => None,
        }
    }
}

/// The construct gate's reading of its own tape: what the reference agent's
/// trials put on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TapeReading {
    /// `tools/call` requests recorded for the reference trials.
    pub calls_recorded: u64,
    /// Of those, answered with a JSON-RPC error or an `isError` result.
    pub call_errors: u64,
    /// Requests that never got a response.
    pub no_response: u64,
}

/// One null model's pass rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NullRate {
    /// `no-tools`, `stubbed-empty`, `random-valid-args`.
    pub label: String,
    pub k: u64,
    pub n: u64,
    pub rate: f64,
}

/// The verdict as published (divergence 2: a raw PASS needs Wilson lower
/// bound >= threshold or achieved power).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PublishedVerdict {
    pub outcome: VerdictOutcome,
    pub raw_outcome: VerdictOutcome,
    pub downgraded: bool,
    pub wilson_low: f64,
    pub wilson_high: f64,
    pub required_n: u64,
    pub achieved_power: f64,
    pub reason: String,
}

/// One consumed extension batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExtensionBatch {
    /// 1-based.
    pub index: u32,
    /// The gate that bought it.
    pub gate: String,
    pub tasks_added: u64,
    /// Tasks times reps: a second number, never folded into the first.
    pub trials_added: u64,
    pub pooled_before: Count,
    pub pooled_after: Count,
    pub verdict_before: VerdictOutcome,
    pub verdict_after: VerdictOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_suite_hash: Option<String>,
    #[serde(default)]
    pub task_ids: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<u64>,
    /// Candidates dropped inside the batch, per reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<BatchDrops>,
    /// True when the batch came up short of the registered size.
    #[serde(default)]
    pub short: bool,
}

/// Drops inside one extension batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BatchDrops {
    pub null_screen: u64,
    pub answer_leak: u64,
    pub admission: u64,
    pub duplicate: u64,
}

/// What the run resolved to, as published; the gates refuse in these terms.
/// Everything but `Scored` is a refusal and carries no score field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    /// Every gate passed; the drive's score is published.
    Scored,
    /// Suite below the minimum size or admission rate below its floor.
    InsufficientSurface,
    /// The measurement cannot see the server: the null baseline killed or
    /// could not decide, or the null screen emptied the suite.
    Degenerate,
    /// A gate resolved to FAIL (including unresolved after the last batch).
    GateFailed,
    /// A gate resolved neither way and the pre-registration bought no batch.
    ExtendExhausted,
    /// Errors exceeded the error-rate limit; the measurement did not complete.
    Compromised,
    /// The run did not complete its registered size.
    Void,
}

impl Outcome {
    pub const ALL: [Outcome; 7] = [
        Outcome::Scored,
        Outcome::InsufficientSurface,
        Outcome::Degenerate,
        Outcome::GateFailed,
        Outcome::ExtendExhausted,
        Outcome::Compromised,
        Outcome::Void,
    ];

    pub fn is_refusal(self) -> bool {
        self != Outcome::Scored
    }

    /// The code as written in the JSON.
    pub fn code(self) -> &'static str {
        match self {
            Outcome::Scored => "SCORED",
            Outcome::InsufficientSurface => "INSUFFICIENT_SURFACE",
            Outcome::Degenerate => "DEGENERATE",
            Outcome::GateFailed => "GATE_FAILED",
            Outcome::ExtendExhausted => "EXTEND_EXHAUSTED",
            Outcome::Compromised => "COMPROMISED",
            Outcome::Void => "VOID",
        }
    }
}

/// A rate with its Wilson 95% interval: the one interval type, computed by
/// [`crate::stats::wilson`] and stored as is.
pub use crate::stats::Interval;

/// The score of a `SCORED` run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Score {
    pub runner_model: String,
    /// First-try success with its Wilson 95% interval: the published number.
    pub first_try: Interval,
    pub eventual: Interval,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_calls_per_completed_task: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_tokens_per_completed_task: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_cost_per_completed_task_usd: Option<f64>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
    #[serde(default)]
    pub tools: Vec<ToolScore>,
    #[serde(default)]
    pub tasks: Vec<TaskResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ambiguous_parameters: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_drift: Option<Value>,
}

/// Per-tool results of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolScore {
    pub tool: String,
    pub calls: u64,
    pub errors: u64,
    /// Failure attribution: class -> count.
    #[serde(default)]
    pub failure_classes: serde_json::Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p95_ms: Option<u64>,
    #[serde(default)]
    pub declared_destructive: bool,
}

/// One task of the drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TaskResult {
    pub task_id: String,
    pub first_try_success: bool,
    pub success: bool,
    pub tool_calls: u64,
    #[serde(default)]
    pub mrtr_rounds: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    #[serde(default)]
    pub destructive_without_confirmation: u64,
}

/// The run's dollar figure: a total only when nothing known is missing.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Cost {
    Total {
        usd: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runner_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judge_usd: Option<f64>,
    },
    /// Printed "at least $x", with every reason it is a floor.
    Floor {
        usd: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        runner_usd: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        judge_usd: Option<f64>,
        reasons: Vec<String>,
    },
    /// Nothing supports a figure.
    None { why: String },
}

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

/// Which plane a tape records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TapePlane {
    Mcp,
    Agent,
}

/// A tape the record vouches for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TapeRef {
    pub plane: TapePlane,
    /// Relative to the directory holding the record, `/`-separated.
    pub path: String,
    /// Lowercase hex sha256 of the file's bytes.
    pub sha256: String,
    pub bytes: u64,
}

/// Published tape URLs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TraceLinks {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer: Option<String>,
}

/// Where an imported record came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ImportProvenance {
    /// The source schema, `fitness-report/1`.
    pub from_schema: String,
    /// sha256 of the canonical JSON of the source record.
    pub source_sha256: String,
    /// Source fields with no typed home here, kept verbatim (e.g. judge usage).
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub kept: serde_json::Map<String, Value>,
}

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
    pub tape: TapePlane,
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
/// (`fitness_shared::rewrite::delta`).
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
