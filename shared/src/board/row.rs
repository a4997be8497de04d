//! The shape of one board row ([`Row`]) and its parts: server, attempt,
//! result, probes, economics, cost, and the caveat on an imported score.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::integrity::SignatureState;
use crate::record::CostTier;
use crate::record::{Interval, RunRecord, TapeRef};

/// One published run, as compact as a board row allows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub server: RowServer,
    /// `None` renders as "generator not recorded".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    pub runner_model: String,
    /// `anonymous`, `free-key` or `owner-key`.
    pub credential: String,
    /// First 12 hex digits of the suite hash.
    pub suite: String,
    pub started_at: String,
    pub attempt: RowAttempt,
    pub result: RowResult,
    /// Calls, tokens and dollars per completed task, on a scored row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub economics: Option<RowEconomics>,
    pub probes: RowProbes,
    pub cost: RowCost,
    /// The record's signature, read against the site's key when the board
    /// was built.
    pub signature: SignatureState,
    /// Whether the suite was null-screened at generation (`None`: not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screened: Option<bool>,
    /// The standing-notes set this run carries, printed once in the methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standing: Option<RowStanding>,
    /// Extension batches this run consumed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extensions: u64,
    /// The run's tapes as its record names them (paths relative to the run
    /// directory, [`crate::site::tape`]), with their hashes; empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tapes: Vec<TapeRef>,
    /// The official conformance suite's result, its own column: never part
    /// of `probes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conformance: Option<RowConformance>,
}

/// The official conformance suite's counts, as its record stores them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowConformance {
    /// The package and version that ran.
    pub suite: String,
    pub passed: u64,
    pub failed: u64,
    /// Why the suite gave no result, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Per completed task, as the record's score states them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RowEconomics {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calls: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowServer {
    pub slug: String,
    /// The URL, or the command line for a stdio server
    /// ([`crate::record::ServerTarget::display`]).
    pub target: String,
    pub era: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// "run i of N" of one server, with the other N - 1 counted by outcome.
/// The runs themselves are listed on the server's history page
/// ([`crate::site::server_page`]), never on every row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowAttempt {
    pub index: u32,
    pub of: u32,
    /// The other runs of this server: outcome code -> runs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub others: BTreeMap<String, u32>,
}

/// The row's result slot: a score or the refusal that replaced it.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowResult {
    Scored {
        first_try: Interval,
        /// Set when the publication rule of this schema would not publish
        /// the pass the score rests on (an imported reference run).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        caveat: Option<ScoreCaveat>,
    },
    Refused {
        code: String,
        /// The gate that stopped the run (`None` for VOID).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gate: Option<String>,
        tier: Tier,
        reason: String,
        /// One line with the numbers the gate saw.
        teaser: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        k: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        n: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        threshold: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alpha: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        p_value: Option<f64>,
    },
}

/// A score whose construct pass this schema's publication rule
/// ([`crate::gates::published_verdict`]) reads otherwise. The score stays
/// as it was published; the board and the record say what the rule reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScoreCaveat {
    /// What the construct gate reads under the rule (`EXTEND`).
    pub reads: String,
    pub k: u64,
    pub n: u64,
    /// Wilson 95% lower bound of k of n.
    pub wilson_low: f64,
    /// The construct threshold the low bound is read against.
    pub threshold: f64,
    /// The power n trials achieve, against the planned power.
    pub achieved_power: f64,
    pub planned_power: f64,
    /// The record was imported: another implementation published the score.
    pub imported: bool,
}

impl ScoreCaveat {
    /// The short form a board row prints: what the rule reads, with the
    /// Wilson low and the threshold.
    pub fn summary(&self) -> String {
        format!(
            "Under {schema} the construct gate reads {reads}: {k} of {n}, Wilson 95% low {low:.1}%, below the {t:.0}% threshold.",
            schema = crate::record::RECORD_SCHEMA,
            reads = self.reads,
            k = self.k,
            n = self.n,
            low = self.wilson_low * 100.0,
            t = self.threshold * 100.0,
        )
    }

    /// The whole of it, for the record page: who published the pass, what
    /// the rule reads, and the power the trials reach.
    pub fn sentence(&self) -> String {
        let who = if self.imported {
            "The reference implementation published this pass."
        } else {
            "This run published a pass."
        };
        format!(
            "{who} {} {n} trials reach power {p:.2} of the {pp:.2} planned.",
            self.summary(),
            n = self.n,
            p = self.achieved_power,
            pp = self.planned_power,
        )
    }
}

/// The caveat on a scored record whose construct pass this schema's
/// publication rule does not publish, from the construct gate's stored
/// counts and the registration (defaults where it is silent).
pub fn score_caveat(record: &RunRecord) -> Option<ScoreCaveat> {
    record.score.as_ref()?;
    let gate = record.gates.record("construct")?;
    let v = gate.verdict.as_ref()?;
    let prereg = &record.preregistration;
    let detectable = prereg
        .detectable_rate
        .unwrap_or_else(|| crate::gates::default_detectable(v.threshold));
    let planned = prereg
        .planned_power
        .unwrap_or(crate::gates::DEFAULT_PLANNED_POWER);
    let read = crate::gates::published_verdict(v.k, v.n, v.threshold, v.alpha, detectable, planned)
        .ok()?;
    let reads = match read.outcome {
        crate::gates::GateOutcome::Pass => return None,
        crate::gates::GateOutcome::Extend => "EXTEND",
        crate::gates::GateOutcome::Fail => "FAIL",
    };
    Some(ScoreCaveat {
        reads: reads.to_owned(),
        k: v.k,
        n: v.n,
        wilson_low: read.wilson_low,
        threshold: v.threshold,
        achieved_power: read.achieved_power,
        planned_power: planned,
        imported: record.imported.is_some(),
    })
}

/// Probe columns: passes counted over applicable checks, unknowns apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowProbes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<String>,
    pub passed: u32,
    /// Pass + fail: the checks that applied.
    pub applicable: u32,
    pub unknown: u32,
    /// Failed probe ids: server faults, never refusals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
}

/// The cost slot: a total, a floor ("at least"), or none with why.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowCost {
    Total { usd: f64 },
    Floor { usd: f64, reasons: Vec<String> },
    None { why: String },
}

/// The label used when a record does not name its generator.
pub const GENERATOR_NOT_RECORDED: &str = "generator not recorded";

/// A row's reference to the standing-notes set it carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowStanding {
    pub set_id: String,
    /// How many standing notes this run carries.
    pub count: u64,
}

/// Where a row sits on the board: the tier that stopped it, or `scored`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Free,
    Cheap,
    Paid,
    Scored,
    /// A refusal whose stopping gate the record does not name (e.g. VOID).
    Unattributed,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Free => "free",
            Tier::Cheap => "cheap",
            Tier::Paid => "paid",
            Tier::Scored => "scored",
            Tier::Unattributed => "unattributed",
        }
    }
}

impl From<CostTier> for Tier {
    fn from(tier: CostTier) -> Self {
        match tier {
            CostTier::Free => Tier::Free,
            CostTier::Cheap => Tier::Cheap,
            CostTier::Paid => Tier::Paid,
        }
    }
}
