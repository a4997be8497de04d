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
//! - every run of a server is a numbered attempt that names the others;
//! - a scored group states whether any pair of its intervals is separated,
//!   from the stored intervals only ([`crate::stats::separated`]).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::record::{
    CostTier, GateDetail, Interval, Outcome, ProbeStatus, RunRecord, ServerTarget,
    StandingNotesSet, TapeRef,
};
use crate::stats;

/// Schema id of `board.json`.
pub const BOARD_SCHEMA: &str = "fitness-board/1";

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
    pub groups: Vec<Group>,
    pub rows: Vec<Row>,
    /// The standing-notes sets the rows reference, each printed once in the
    /// board's methods section (filled by [`Board::attach_standing_notes`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub standing_notes: Vec<StandingNotes>,
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
    pub probes: RowProbes,
    pub cost: RowCost,
    /// Whether the suite was null-screened at generation (`None`: not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screened: Option<bool>,
    /// The standing-notes set this run carries, printed once in the methods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standing: Option<RowStanding>,
    /// Extension batches this run consumed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub extensions: u64,
    /// Site-relative path of the full record.
    pub record: String,
    /// The run's tapes, site-relative, with their hashes (empty: none published).
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

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowServer {
    pub slug: String,
    /// The URL, or the command line for a stdio server.
    pub target: String,
    pub era: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

/// "run i of N", naming the other attempts and the group each sits in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowAttempt {
    pub index: u32,
    pub of: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others: Vec<OtherAttempt>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OtherAttempt {
    pub id: String,
    pub index: u32,
    /// The id of the group that row sits in.
    pub group: String,
    /// Outcome code of that run.
    pub outcome: String,
}

/// The row's result slot: a score or the refusal that replaced it.
// `Deserialize` is in `crate::tagged` (one pass, no buffering).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RowResult {
    Scored {
        first_try: Interval,
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

    let mut rows: Vec<Row> = ordered.iter().map(|r| row_for(r)).collect();
    let group_ids: Vec<String> = rows.iter().map(group_id).collect();

    // Attempts: every run of one server, numbered by start time.
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
            others: Vec::new()
        };
        rows.len()
    ];
    for members in by_server.values() {
        let of = members.len() as u32;
        for (pos, &i) in members.iter().enumerate() {
            let others = members
                .iter()
                .enumerate()
                .filter(|(_, j)| **j != i)
                .map(|(other_pos, &j)| OtherAttempt {
                    id: rows[j].id.clone(),
                    index: other_pos as u32 + 1,
                    group: group_ids[j].clone(),
                    outcome: outcome_code(&rows[j]).to_owned(),
                })
                .collect();
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
    Board {
        schema: BOARD_SCHEMA.to_owned(),
        published_at: published_at.to_owned(),
        publisher_key,
        counts,
        groups,
        rows,
        standing_notes: Vec::new(),
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
                        RowResult::Scored { first_try } => Some(first_try),
                        RowResult::Refused { .. } => None,
                    })
                    .collect();
                let separated_pairs = separated_pairs(&intervals);
                let statement = scored_statement(intervals.len(), separated_pairs);
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

/// The compact row for one record. Attempt numbering is filled in by
/// [`build_board`], which sees every run of the server.
pub fn row_for(record: &RunRecord) -> Row {
    let (passed, failed_n, unknown) = record.probes.tally();
    let failed = record
        .probes
        .findings
        .iter()
        .filter(|p| p.status == ProbeStatus::Fail)
        .map(|p| p.id.clone())
        .collect();
    let target = match &record.server.target {
        ServerTarget::Url { url } => url.clone(),
        ServerTarget::Command { argv } => argv.join(" "),
    };
    let tapes = record
        .tapes
        .iter()
        .map(|t| TapeRef {
            plane: t.plane,
            path: format!("runs/{}/{}", record.run.id, t.path),
            sha256: t.sha256.clone(),
            bytes: t.bytes,
        })
        .collect();
    Row {
        id: record.run.id.clone(),
        server: RowServer {
            slug: record.server.slug.clone(),
            target,
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
            others: Vec::new(),
        },
        result: result_for(record),
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
            crate::record::Cost::Total { usd, .. } => RowCost::Total { usd: *usd },
            crate::record::Cost::Floor { usd, reasons, .. } => RowCost::Floor {
                usd: *usd,
                reasons: reasons.clone(),
            },
            crate::record::Cost::None { why } => RowCost::None { why: why.clone() },
        },
        screened: record.preregistration.null_screen,
        standing: record.notes.standing.as_ref().map(|s| RowStanding {
            set_id: s.set_id.clone(),
            count: s.count,
        }),
        extensions: record.extensions.len() as u64,
        record: format!("runs/{}/record.json", record.run.id),
        tapes,
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

    #[test]
    fn separation_statement_follows_the_pairs() {
        assert!(scored_statement(3, 0).starts_with("Nothing separates these 3 runs"));
        assert!(scored_statement(1, 0).starts_with("One scored run"));
        assert!(scored_statement(3, 2).starts_with("2 pairs"));
    }
}
