//! The board index (`data/board.json`): one compact row per published run,
//! the groups the board shows, and the counts for its masthead and ledger.
//!
//! Everything here is computed once, from stored records, by
//! [`build_board`]; the viewer renders these fields and recomputes nothing.
//! Rules the board keeps:
//! - scored rows are grouped by runner model *and* generator, and rows of
//!   different groups are never compared;
//! - refusals are grouped by the cost tier of the gate that stopped them
//!   (free, cheap, paid), and a group says when it mixes generators;
//! - every run of a server is a numbered attempt that counts the others by
//!   outcome and links the server's history page, so the index stays
//!   linear in the number of runs;
//! - a scored group states whether any pair of its intervals is separated,
//!   from the stored intervals only ([`crate::stats::separated`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::integrity::{self, SignatureState};
use crate::record::{
    Cost, CostTier, GateDetail, Interval, Outcome, ProbeStatus, RunRecord, StandingNotesSet,
    TapeRef,
};
use crate::stats;

/// Schema id of `board.json`. Version 2: attempts are counted, not listed;
/// tape paths are the record's own; rows carry their signature state,
/// per-task economics and any caveat on an imported score; the board
/// carries its measured spend.
pub const BOARD_SCHEMA: &str = "fitness-board/2";

/// The label used when a record does not name its generator.
pub const GENERATOR_NOT_RECORDED: &str = "generator not recorded";

/// The whole board index.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Board {
    pub schema: String,
    /// When the board was published (ISO 8601), as given by the publisher.
    pub published_at: String,
    /// The publisher's ed25519 public key (base64), when records are signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publisher_key: Option<String>,
    pub counts: Counts,
    /// The model spend the records measured, summed once for the masthead.
    pub spend: Spend,
    pub groups: Vec<Group>,
    pub rows: Vec<Row>,
    /// The standing-notes sets the rows reference, each printed once in the
    /// board's methods section (filled by [`Board::attach_standing_notes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standing_notes: Vec<StandingNotes>,
    /// sha256 of the viewer build's page shell the site's pages were
    /// rendered into, when it has pages: a later publish over the site keeps
    /// the page of an unchanged run only under the same shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub viewer_shell: Option<String>,
}

/// One standing-notes set as the board prints it: once, with how many of the
/// board's runs carry it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StandingNotes {
    /// `sha256:<hex>`, as the records reference it.
    pub set_id: String,
    pub generator: String,
    pub notes: Vec<String>,
    /// How many of the board's rows carry this set.
    pub runs: u64,
}

impl StandingNotes {
    /// The anchor of this set in the methods section (`standing-<first 12 hex>`).
    pub fn anchor(set_id: &str) -> String {
        let hex = set_id.strip_prefix("sha256:").unwrap_or(set_id);
        let short: String = hex
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .take(12)
            .collect();
        format!("standing-{short}")
    }
}

/// A row's reference to the standing-notes set it carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowStanding {
    pub set_id: String,
    /// How many standing notes this run carries.
    pub count: u64,
}

/// A set some row references that the publisher could not supply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingStandingNotes {
    pub set_id: String,
    /// The first row referencing it.
    pub run: String,
}

impl std::fmt::Display for MissingStandingNotes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "run {} carries standing-notes set {}, which was not supplied",
            self.run, self.set_id
        )
    }
}

impl std::error::Error for MissingStandingNotes {}

impl Board {
    /// Put the standing-notes sets the rows reference into the board, in the
    /// order rows first reference them, each once. Sets no row references are
    /// left out; a referenced set missing from `sets` is an error.
    pub fn attach_standing_notes(
        &mut self,
        sets: &BTreeMap<String, StandingNotesSet>,
    ) -> Result<(), MissingStandingNotes> {
        let mut out: Vec<StandingNotes> = Vec::new();
        for row in &self.rows {
            let Some(standing) = &row.standing else {
                continue;
            };
            if let Some(known) = out.iter_mut().find(|s| s.set_id == standing.set_id) {
                known.runs += 1;
                continue;
            }
            let set = sets
                .get(&standing.set_id)
                .ok_or_else(|| MissingStandingNotes {
                    set_id: standing.set_id.clone(),
                    run: row.id.clone(),
                })?;
            out.push(StandingNotes {
                set_id: standing.set_id.clone(),
                generator: set.generator.clone(),
                notes: set.notes.clone(),
                runs: 1,
            });
        }
        self.standing_notes = out;
        Ok(())
    }
}

/// Masthead and outcome-ledger numbers.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    pub runs: u64,
    pub scored: u64,
    /// Runs that published no score (every refusal, VOID included).
    pub refused: u64,
    /// Runs per outcome code (`SCORED`, `DEGENERATE`, ...).
    pub by_outcome: BTreeMap<String, u64>,
    /// Per tier (`free`, `cheap`, `paid`, `scored`): outcome code -> runs.
    pub by_tier: BTreeMap<String, BTreeMap<String, u64>>,
}

/// The model spend of every run on the board, from each record's cost: a
/// total only when every run's figure is a total.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// The sum of every dollar figure the runs carry (totals and floors).
    pub usd: f64,
    /// Runs whose figure is a total.
    pub total_runs: u64,
    /// Runs whose figure is a floor ("at least").
    pub floor_runs: u64,
    /// Runs that carry no figure.
    pub none_runs: u64,
    /// Why the sum is a floor: each reason a run gives, with how many runs
    /// give it, most common first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<SpendReason>,
}

impl Spend {
    /// Whether the sum is a total: nothing known is missing from any run's figure.
    pub fn is_total(&self) -> bool {
        self.floor_runs == 0 && self.none_runs == 0
    }
}

/// One reason some runs' figures are floors, or missing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpendReason {
    pub reason: String,
    pub runs: u64,
}

/// Sum the runs' costs into the board's spend.
pub fn spend(costs: &[&Cost]) -> Spend {
    let mut out = Spend::default();
    let mut reasons: Vec<SpendReason> = Vec::new();
    let mut note = |reason: String| match reasons.iter_mut().find(|r| r.reason == reason) {
        Some(r) => r.runs += 1,
        None => reasons.push(SpendReason { reason, runs: 1 }),
    };
    for cost in costs {
        match cost {
            Cost::Total { usd, .. } => {
                out.usd += usd;
                out.total_runs += 1;
            }
            Cost::Floor { usd, reasons, .. } => {
                out.usd += usd;
                out.floor_runs += 1;
                for r in reasons {
                    note(r.clone());
                }
            }
            Cost::None { why } => {
                out.none_runs += 1;
                note(format!("no dollar figure: {why}"));
            }
        }
    }
    // Most common first; ties keep first-seen order.
    reasons.sort_by_key(|r| std::cmp::Reverse(r.runs));
    out.reasons = reasons;
    out
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

/// One group of rows, shown together and read only against each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Stable id, e.g. `scored:claude-sonnet-5:fitness-report-generator/2`.
    pub id: String,
    pub tier: Tier,
    pub title: String,
    /// Runner model of a scored group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_model: Option<String>,
    /// Generator labels of the rows, in first-seen order.
    pub generators: Vec<String>,
    /// The sentence the group prints under its title.
    pub statement: String,
    /// Scored groups: `Some(true)` when no pair of intervals is separated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nothing_separates: Option<bool>,
    /// Row ids, oldest first.
    pub rows: Vec<String>,
}

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
            schema = crate::RECORD_SCHEMA,
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

/// Build the board from records. `published_at` and `publisher_key` are
/// stamped as given. Rows come out oldest first; the order of `records`
/// does not matter.
pub fn build_board(
    records: &[RunRecord],
    published_at: &str,
    publisher_key: Option<String>,
) -> Board {
    let mut ordered: Vec<&RunRecord> = records.iter().collect();
    ordered.sort_by(|a, b| {
        (a.run.started_at.as_str(), a.run.id.as_str())
            .cmp(&(b.run.started_at.as_str(), b.run.id.as_str()))
    });

    let mut rows: Vec<Row> = ordered
        .iter()
        .map(|r| row_for(r, publisher_key.as_deref()))
        .collect();
    let group_ids: Vec<String> = rows.iter().map(group_id).collect();

    // Attempts: every run of one server, numbered by start time, the others
    // counted by outcome (linear in the runs, however many reruns).
    let mut by_server: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, row) in rows.iter().enumerate() {
        by_server
            .entry(row.server.slug.as_str())
            .or_default()
            .push(i);
    }
    let mut attempts = vec![
        RowAttempt {
            index: 1,
            of: 1,
            others: BTreeMap::new()
        };
        rows.len()
    ];
    for members in by_server.values() {
        let of = members.len() as u32;
        let mut all: BTreeMap<String, u32> = BTreeMap::new();
        for &j in members {
            *all.entry(outcome_code(&rows[j]).to_owned()).or_default() += 1;
        }
        for (pos, &i) in members.iter().enumerate() {
            let mut others = all.clone();
            let own = outcome_code(&rows[i]);
            if let Some(n) = others.get_mut(own) {
                *n -= 1;
                if *n == 0 {
                    others.remove(own);
                }
            }
            attempts[i] = RowAttempt {
                index: pos as u32 + 1,
                of,
                others,
            };
        }
    }
    for (row, attempt) in rows.iter_mut().zip(attempts) {
        row.attempt = attempt;
    }

    let groups = build_groups(&rows, &group_ids);
    let counts = count(&rows);
    let costs: Vec<&Cost> = ordered.iter().map(|r| &r.cost).collect();
    Board {
        schema: BOARD_SCHEMA.to_owned(),
        published_at: published_at.to_owned(),
        publisher_key,
        counts,
        spend: spend(&costs),
        groups,
        rows,
        standing_notes: Vec::new(),
        viewer_shell: None,
    }
}

fn outcome_code(row: &Row) -> &str {
    match &row.result {
        RowResult::Scored { .. } => Outcome::Scored.code(),
        RowResult::Refused { code, .. } => code,
    }
}

fn row_tier(row: &Row) -> Tier {
    match &row.result {
        RowResult::Scored { .. } => Tier::Scored,
        RowResult::Refused { tier, .. } => *tier,
    }
}

fn generator_label(row: &Row) -> &str {
    row.generator.as_deref().unwrap_or(GENERATOR_NOT_RECORDED)
}

fn group_id(row: &Row) -> String {
    match row_tier(row) {
        Tier::Scored => format!("scored:{}:{}", row.runner_model, generator_label(row)),
        tier => format!("refused:{}", tier.as_str()),
    }
}

fn build_groups(rows: &[Row], group_ids: &[String]) -> Vec<Group> {
    let mut order: Vec<String> = Vec::new();
    let mut members: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, id) in group_ids.iter().enumerate() {
        if !members.contains_key(id) {
            order.push(id.clone());
        }
        members.entry(id.clone()).or_default().push(i);
    }
    // Scored groups first (by runner model, then generator), then refusal
    // tiers in cost order: free, cheap, paid, unattributed.
    order.sort_by_key(|id| {
        let first = &rows[members[id][0]];
        let tier = row_tier(first);
        (
            tier != Tier::Scored,
            tier,
            first.runner_model.clone(),
            generator_label(first).to_owned(),
        )
    });
    order
        .into_iter()
        .map(|id| {
            let idx = &members[&id];
            let first = &rows[idx[0]];
            let tier = row_tier(first);
            let mut generators: Vec<String> = Vec::new();
            for &i in idx {
                let label = generator_label(&rows[i]).to_owned();
                if !generators.contains(&label) {
                    generators.push(label);
                }
            }
            let (title, statement, nothing_separates, runner_model) = if tier == Tier::Scored {
                let intervals: Vec<&Interval> = idx
                    .iter()
                    .filter_map(|&i| match &rows[i].result {
                        RowResult::Scored { first_try, .. } => Some(first_try),
                        RowResult::Refused { .. } => None,
                    })
                    .collect();
                let separated_pairs = separated_pairs(&intervals);
                let mut statement = scored_statement(intervals.len(), separated_pairs);
                if crate::generators::dictates_calls(&generators[0]) {
                    statement.push(' ');
                    statement.push_str(crate::generators::RELAY_SENTENCE);
                }
                (
                    format!("Scored with runner {} · {}", first.runner_model, generators[0]),
                    statement,
                    Some(separated_pairs == 0),
                    Some(first.runner_model.clone()),
                )
            } else {
                let title = match tier {
                    Tier::Free => "Refused at a free gate",
                    Tier::Cheap => "Refused at the cheap gate (null baselines)",
                    Tier::Paid => "Refused at the paid gate (construct)",
                    Tier::Unattributed | Tier::Scored => "Ended before any gate decided",
                };
                let runs = match idx.len() {
                    1 => "1 run".to_owned(),
                    n => format!("{n} runs"),
                };
                let statement = if generators.len() > 1 {
                    format!(
                        "{runs}. This group mixes {} generators ({}); rows are only read against rows of the same generator.",
                        generators.len(),
                        generators.join(", ")
                    )
                } else if idx.len() == 1 {
                    format!("1 run, built by {}.", generators[0])
                } else {
                    format!("{runs}, all built by {}.", generators[0])
                };
                (title.to_owned(), statement, None, None)
            };
            Group {
                id,
                tier,
                title,
                runner_model,
                generators,
                statement,
                nothing_separates,
                rows: idx.iter().map(|&i| rows[i].id.clone()).collect(),
            }
        })
        .collect()
}

/// Pairs `(a, b)` where one interval lies entirely above the other.
fn separated_pairs(intervals: &[&Interval]) -> usize {
    intervals
        .iter()
        .enumerate()
        .map(|(i, a)| {
            intervals[i + 1..]
                .iter()
                .filter(|b| stats::separated(a, b))
                .count()
        })
        .sum()
}

fn scored_statement(rows: usize, separated_pairs: usize) -> String {
    match (rows, separated_pairs) {
        (0 | 1, _) => "One scored run in this group; there is nothing to read it against.".to_owned(),
        (_, 0) => format!(
            "Nothing separates these {rows} runs: every pair of 95% intervals overlaps, so no row ranks above another."
        ),
        (_, 1) => "One pair of intervals is separated: one lies entirely above the other. No other pair is.".to_owned(),
        (_, pairs) => format!("{pairs} pairs of intervals are separated: in each, one lies entirely above the other."),
    }
}

fn count(rows: &[Row]) -> Counts {
    let mut counts = Counts {
        runs: rows.len() as u64,
        ..Counts::default()
    };
    for row in rows {
        let code = outcome_code(row).to_owned();
        if matches!(row.result, RowResult::Scored { .. }) {
            counts.scored += 1;
        } else {
            counts.refused += 1;
        }
        *counts.by_outcome.entry(code.clone()).or_default() += 1;
        *counts
            .by_tier
            .entry(row_tier(row).as_str().to_owned())
            .or_default()
            .entry(code)
            .or_default() += 1;
    }
    counts
}

/// The compact row for one record, its signature read against `site_key`
/// (base64). Attempt numbering is filled in by [`build_board`], which sees
/// every run of the server.
pub fn row_for(record: &RunRecord, site_key: Option<&str>) -> Row {
    let (passed, failed_n, unknown) = record.probes.tally();
    let failed = record
        .probes
        .findings
        .iter()
        .filter(|p| p.status == ProbeStatus::Fail)
        .map(|p| p.id.clone())
        .collect();
    let signature = match serde_json::to_value(record) {
        Ok(value) => integrity::signature_state(&value, site_key),
        Err(e) => SignatureState::Invalid {
            why: format!("the record does not serialise: {e}"),
        },
    };
    let economics = record.score.as_ref().and_then(|s| {
        let e = RowEconomics {
            calls: s.mean_calls_per_completed_task,
            tokens: s.mean_tokens_per_completed_task,
            usd: s.mean_cost_per_completed_task_usd,
        };
        (e.calls.is_some() || e.tokens.is_some() || e.usd.is_some()).then_some(e)
    });
    Row {
        id: record.run.id.clone(),
        server: RowServer {
            slug: record.server.slug.clone(),
            target: record.server.target.display(),
            era: match record.server.era {
                crate::record::Era::Legacy => "legacy".to_owned(),
                crate::record::Era::Modern => "modern".to_owned(),
            },
            version: record.server.negotiated_version.clone(),
        },
        generator: record.run.generator.clone(),
        runner_model: record.run.runner_model.clone(),
        credential: credential_label(record).to_owned(),
        suite: record.run.suite_hash.chars().take(12).collect(),
        started_at: record.run.started_at.clone(),
        attempt: RowAttempt {
            index: 1,
            of: 1,
            others: BTreeMap::new(),
        },
        result: result_for(record),
        economics,
        probes: RowProbes {
            spec: record
                .probes
                .spec_currency
                .clone()
                .or_else(|| record.server.negotiated_version.clone()),
            passed: passed as u32,
            applicable: (passed + failed_n) as u32,
            unknown: unknown as u32,
            failed,
        },
        cost: match &record.cost {
            Cost::Total { usd, .. } => RowCost::Total { usd: *usd },
            Cost::Floor { usd, reasons, .. } => RowCost::Floor {
                usd: *usd,
                reasons: reasons.clone(),
            },
            Cost::None { why } => RowCost::None { why: why.clone() },
        },
        signature,
        screened: record.preregistration.null_screen,
        standing: record.notes.standing.as_ref().map(|s| RowStanding {
            set_id: s.set_id.clone(),
            count: s.count,
        }),
        extensions: record.extensions.len() as u64,
        tapes: record.tapes.clone(),
        conformance: record.conformance.as_ref().map(|c| RowConformance {
            suite: c.suite.clone(),
            passed: c.passed,
            failed: c.failed,
            error: c.error.clone(),
        }),
    }
}

fn credential_label(record: &RunRecord) -> &'static str {
    match record.server.credential_context {
        crate::record::CredentialContext::Anonymous => "anonymous",
        crate::record::CredentialContext::FreeKey => "free-key",
        crate::record::CredentialContext::OwnerKey => "owner-key",
    }
}

fn result_for(record: &RunRecord) -> RowResult {
    if let (Outcome::Scored, Some(score)) = (record.outcome, &record.score) {
        return RowResult::Scored {
            first_try: score.first_try,
            caveat: score_caveat(record),
        };
    }
    let gate = record
        .gates
        .refused_at
        .as_deref()
        .and_then(|id| record.gates.record(id))
        .or_else(|| record.gates.records.iter().find(|g| !g.ok));
    let Some(gate) = gate else {
        return RowResult::Refused {
            code: record.outcome.code().to_owned(),
            gate: None,
            tier: Tier::Unattributed,
            reason: record
                .notes
                .score
                .first()
                .cloned()
                .unwrap_or_else(|| "no gate named".to_owned()),
            teaser: "The run ended before it completed its registered size.".to_owned(),
            k: None,
            n: None,
            threshold: None,
            alpha: None,
            p_value: None,
        };
    };
    let verdict = gate.verdict.as_ref();
    RowResult::Refused {
        code: record.outcome.code().to_owned(),
        gate: Some(gate.id.clone()),
        tier: gate.cost_tier.into(),
        reason: gate.reason.clone(),
        teaser: teaser(gate),
        k: verdict.map(|v| v.k),
        n: verdict.map(|v| v.n),
        threshold: verdict.map(|v| v.threshold),
        alpha: verdict.map(|v| v.alpha),
        p_value: verdict.map(|v| v.p_value),
    }
}

/// One line with the numbers the stopping gate saw.
fn teaser(gate: &crate::record::GateRecord) -> String {
    // The plan-power sentence names flags; its row line is the numbers below.
    if !matches!(gate.detail, GateDetail::PlanPower { .. })
        && let Some(e) = gate.detail.explain()
    {
        return strip_code_prefix(e);
    }
    match (&gate.detail, &gate.verdict) {
        (
            GateDetail::SuiteSize {
                n_tasks, min_tasks, ..
            },
            _,
        ) => {
            format!("{n_tasks} tasks against a minimum of {min_tasks}.")
        }
        (
            GateDetail::PlanPower {
                required_n,
                actual_n,
                achieved_power,
                ..
            },
            _,
        ) => format!(
            "{actual_n} registered trials could never publish a pass (needs {required_n}; achieved power {achieved_power:.3})."
        ),
        (
            GateDetail::Construct {
                errors,
                n,
                compromised: true,
                ..
            },
            _,
        ) => {
            format!("{errors} errored calls against {n} completed: over the 5% error bound.")
        }
        (_, Some(v)) => format!(
            "{k} of {n} reached the answer key through the server; threshold {t:.2}, alpha {a}, {p}.",
            k = v.k,
            n = v.n,
            t = v.threshold,
            a = v.alpha,
            p = p_text(v.p_value)
        ),
        _ => gate.reason.replace('_', " "),
    }
}

/// A p-value as printed on the board: three decimals, or `p < 0.001`.
pub fn p_text(p: f64) -> String {
    if p < 0.001 {
        "p < 0.001".to_owned()
    } else {
        format!("p = {p:.3}")
    }
}

/// `"REJECT (too_few_generated): 2 admitted ..."` -> `"2 admitted ..."`.
fn strip_code_prefix(text: &str) -> String {
    match text.split_once("): ") {
        Some((head, rest)) if head.matches(' ').count() == 1 && head.contains(" (") => {
            rest.to_owned()
        }
        _ => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_prefixes_are_stripped_from_explanations() {
        assert_eq!(
            strip_code_prefix(
                "REJECT (too_few_generated): 2 admitted cases is below the minimum 8."
            ),
            "2 admitted cases is below the minimum 8."
        );
        assert_eq!(strip_code_prefix("plain text"), "plain text");
        assert_eq!(
            strip_code_prefix("KILL (noise_exceeds_signal): a null model"),
            "a null model"
        );
    }

    fn anchor_import() -> crate::record::import::ImportSet {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../fixtures/anchor-board/runs.json"
        );
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).expect("anchor runs.json"))
                .expect("anchor runs.json is JSON");
        crate::record::import::import_runs(&doc).expect("anchor imports")
    }

    #[test]
    fn standing_notes_are_attached_once_with_their_run_counts() {
        let set = anchor_import();
        let mut board = build_board(&set.records, "2026-11-30T00:00:00Z", None);
        board
            .attach_standing_notes(&set.standing_notes)
            .expect("every referenced set is supplied");
        let referencing: Vec<&Row> = board.rows.iter().filter(|r| r.standing.is_some()).collect();
        assert!(
            !referencing.is_empty(),
            "the anchor's imports carry standing notes"
        );
        // Each set appears once, and its run count is the rows that carry it.
        let mut ids: Vec<&str> = board
            .standing_notes
            .iter()
            .map(|s| s.set_id.as_str())
            .collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), board.standing_notes.len());
        for notes in &board.standing_notes {
            let carrying = referencing
                .iter()
                .filter(|r| {
                    r.standing
                        .as_ref()
                        .is_some_and(|s| s.set_id == notes.set_id)
                })
                .count() as u64;
            assert_eq!(notes.runs, carrying, "{}", notes.set_id);
            assert_eq!(notes.notes, set.standing_notes[&notes.set_id].notes);
        }
        assert_eq!(
            board.standing_notes.iter().map(|s| s.runs).sum::<u64>(),
            referencing.len() as u64
        );
        // It survives the JSON round trip the viewer reads.
        let back: Board = serde_json::from_slice(&serde_json::to_vec(&board).unwrap()).unwrap();
        assert_eq!(back, board);
    }

    #[test]
    fn a_referenced_set_that_is_missing_is_an_error() {
        let set = anchor_import();
        let mut board = build_board(&set.records, "2026-11-30T00:00:00Z", None);
        let err = board
            .attach_standing_notes(&BTreeMap::new())
            .expect_err("sets are referenced but none supplied");
        assert!(err.to_string().contains("was not supplied"), "{err}");
    }

    /// The anchor's 33 records cloned `copies` times under new ids and
    /// start times, keeping their servers: every server rerun many times.
    fn reruns(copies: usize) -> Vec<RunRecord> {
        let set = anchor_import();
        let mut out = Vec::new();
        for copy in 0..copies {
            for r in &set.records {
                let mut r = r.clone();
                r.run.id = format!("{}-c{copy}", r.run.id);
                r.run.started_at = format!("{}{copy:04}", r.run.started_at);
                out.push(r);
            }
        }
        out
    }

    #[test]
    fn other_attempts_are_counted_and_the_index_stays_linear() {
        let board = build_board(&reruns(1), "2026-11-30T00:00:00Z", None);
        for row in &board.rows {
            let same: Vec<&Row> = board
                .rows
                .iter()
                .filter(|r| r.server.slug == row.server.slug)
                .collect();
            assert_eq!(row.attempt.of as usize, same.len(), "{}", row.id);
            let mut others: BTreeMap<String, u32> = BTreeMap::new();
            for r in same.iter().filter(|r| r.id != row.id) {
                *others.entry(outcome_code(r).to_owned()).or_default() += 1;
            }
            assert_eq!(row.attempt.others, others, "{}", row.id);
        }
        // Bytes per row do not grow with the reruns of a server: 30 copies
        // (every server run 30 to 90 times) cost what one copy costs per row.
        let per_row = |copies: usize| {
            let b = build_board(&reruns(copies), "2026-11-30T00:00:00Z", None);
            serde_json::to_vec(&b).unwrap().len() as f64 / b.rows.len() as f64
        };
        let (one, thirty) = (per_row(1), per_row(30));
        assert!(thirty < one * 1.05, "{one:.0} -> {thirty:.0} bytes per row");
    }

    #[test]
    fn an_imported_pass_our_rule_reads_as_extend_says_so() {
        let set = anchor_import();
        let board = build_board(&set.records, "2026-11-30T00:00:00Z", None);
        let mut scored = 0;
        for (row, record) in board.rows.iter().filter_map(|row| {
            let record = set.records.iter().find(|r| r.run.id == row.id)?;
            Some((row, record))
        }) {
            let RowResult::Scored { first_try, caveat } = &row.result else {
                continue;
            };
            scored += 1;
            // The number stays the reference's.
            assert_eq!(Some(first_try), record.score.as_ref().map(|s| &s.first_try));
            let caveat = caveat.as_ref().expect("every anchor pass is underpowered");
            assert_eq!(caveat.reads, "EXTEND", "{}", row.id);
            assert!(caveat.imported);
            assert!(caveat.wilson_low < caveat.threshold, "{caveat:?}");
            // The reference stored the same reading beside its pass (its
            // Wilson bound uses z = 1.96, ours the exact quantile).
            let Some(GateDetail::Construct {
                published: Some(p), ..
            }) = record.gates.record("construct").map(|g| &g.detail)
            else {
                panic!("{}: no published block", row.id);
            };
            assert!(
                (p.wilson_low - caveat.wilson_low).abs() < 1e-4,
                "{} {p:?} {caveat:?}",
                row.id
            );
            assert!(
                (p.achieved_power - caveat.achieved_power).abs() < 1e-9,
                "{}",
                row.id
            );
            let sentence = caveat.sentence();
            assert!(
                sentence.contains("reads EXTEND") && sentence.contains("threshold"),
                "{sentence}"
            );
        }
        assert_eq!(scored, 7);
    }

    #[test]
    fn the_spend_is_a_floor_when_any_run_is_and_sums_every_figure() {
        let set = anchor_import();
        let board = build_board(&set.records, "2026-11-30T00:00:00Z", None);
        let spend = &board.spend;
        assert_eq!(spend.total_runs + spend.floor_runs + spend.none_runs, 33);
        let sum: f64 = set
            .records
            .iter()
            .map(|r| match &r.cost {
                Cost::Total { usd, .. } | Cost::Floor { usd, .. } => *usd,
                Cost::None { .. } => 0.0,
            })
            .sum();
        assert!((spend.usd - sum).abs() < 1e-9);
        assert!(!spend.is_total());
        let floors = set
            .records
            .iter()
            .filter(|r| matches!(r.cost, Cost::Floor { .. }))
            .count() as u64;
        assert_eq!(spend.floor_runs, floors);
        assert!(spend.reasons.windows(2).all(|w| w[0].runs >= w[1].runs));
        let only_totals = spend_of(&[Cost::Total {
            usd: 1.5,
            runner_usd: None,
            judge_usd: None,
        }]);
        assert!(only_totals.is_total() && only_totals.reasons.is_empty());
    }

    fn spend_of(costs: &[Cost]) -> Spend {
        spend(&costs.iter().collect::<Vec<_>>())
    }

    #[test]
    fn a_scored_group_built_by_a_call_dictating_generator_says_it_measures_relay() {
        let set = anchor_import();
        let scored = set
            .records
            .iter()
            .find(|r| r.score.is_some())
            .expect("the anchor has scored runs");
        let mut records = Vec::new();
        for (i, generator) in ["schema-walk/1", "schema-walk/2"].into_iter().enumerate() {
            let mut r = scored.clone();
            r.run.id = format!("relay-{i}");
            r.run.generator = Some(generator.to_owned());
            records.push(r);
        }
        let board = build_board(&records, "2026-11-30T00:00:00Z", None);
        let group_of = |generator: &str| {
            board
                .groups
                .iter()
                .find(|g| g.tier == Tier::Scored && g.generators == [generator])
                .unwrap_or_else(|| panic!("no scored group of {generator}: {:?}", board.groups))
        };
        assert!(
            group_of("schema-walk/1")
                .statement
                .ends_with(crate::generators::RELAY_SENTENCE)
        );
        assert!(
            !group_of("schema-walk/2")
                .statement
                .contains(crate::generators::RELAY_SENTENCE)
        );
    }

    #[test]
    fn separation_statement_follows_the_pairs() {
        assert!(scored_statement(3, 0).starts_with("Nothing separates these 3 runs"));
        assert!(scored_statement(1, 0).starts_with("One scored run"));
        assert!(scored_statement(3, 2).starts_with("2 pairs"));
    }
}
