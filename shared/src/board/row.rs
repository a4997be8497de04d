//! The shape of one board row ([`Row`]) and its parts: server, attempt,
//! result, probes, economics, cost, and the caveat on an imported score.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::integrity::SignatureState;
use crate::record::{AccessMode, CostTier};
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
    /// What the run was allowed to do to the server, in words
    /// ([`crate::record::AccessLedger::text`]); `None`: not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<String>,
    /// The mode alone (`read-only`, `sandbox`), part of the group key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access_mode: Option<crate::record::AccessMode>,
    /// First 12 hex digits of the suite hash.
    pub suite: String,
    pub started_at: String,
    pub attempt: RowAttempt,
    pub result: RowResult,
    /// Calls, tokens and dollars per completed task, on a scored row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub economics: Option<RowEconomics>,
    /// What the tool list costs the runner per turn (measured between the
    /// null arms), when the arms ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_list: Option<crate::record::ToolListCost>,
    pub probes: RowProbes,
    pub cost: RowCost,
    /// The record's signature, read against the site's key when the board
    /// was built.
    pub signature: SignatureState,
    /// Whether the suite was null-screened at generation (`None`: not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screened: Option<bool>,
    /// Admitted candidates the screen could not answer for (its call
    /// failed): kept, unscreened.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unscreened: u64,
    /// A registered screen that did not run (the suite was already refused).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub screen_skipped: bool,
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
    /// Questions and changes in the run's suite, when it holds changes
    /// (act tasks): such a run sits in its own scored group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<RowKinds>,
    /// What the operator told generation (seed calls, context), when they
    /// told it anything: such a suite is not discovered alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeded: Option<RowSeeded>,
}

/// The operator's part in a suite: seed calls given, tasks that start from
/// them, tasks discovery found, and whether the judge was given context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowSeeded {
    pub seed_calls: u64,
    pub seeded_tasks: u64,
    pub discovered_tasks: u64,
    /// Of the suite's tasks (`None`: not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks: Option<u64>,
    pub context: bool,
}

impl RowSeeded {
    /// From the record's pre-registration (the hints as registered) and the
    /// suite's discovery ledger; `None` when the operator gave nothing.
    pub fn of(record: &crate::record::RunRecord) -> Option<RowSeeded> {
        let hints = record.preregistration.operator_hints.as_ref();
        let ledger = record.suite.discovery.as_ref();
        let seed_calls = hints
            .map(|h| h.seed_calls.len() as u64)
            .unwrap_or_default()
            .max(ledger.map_or(0, |l| l.seed_calls));
        let context = hints.is_some_and(|h| h.context.is_some());
        (seed_calls > 0 || context).then(|| RowSeeded {
            seed_calls,
            seeded_tasks: ledger.map_or(0, |l| l.seeded_tasks),
            discovered_tasks: ledger.map_or(0, |l| l.discovered_tasks),
            tasks: record.suite.tasks,
            context,
        })
    }

    /// `seeded by the operator: 2 calls, 5 of 12 tasks start from them;
    /// context given to the judge`.
    pub fn text(&self) -> String {
        let mut parts = Vec::new();
        if self.seed_calls > 0 {
            let calls = match self.seed_calls {
                1 => "1 call".to_owned(),
                n => format!("{n} calls"),
            };
            let of = self.tasks.map(|t| format!(" of {t}")).unwrap_or_default();
            let verb = if self.seeded_tasks == 1 {
                "starts"
            } else {
                "start"
            };
            parts.push(format!(
                "{calls}, {}{of} tasks {verb} from them",
                self.seeded_tasks
            ));
        }
        if self.context {
            parts.push("context given to the judge".to_owned());
        }
        format!("seeded by the operator: {}", parts.join("; "))
    }
}

/// The kinds of task a run's suite holds, and first-try success per kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RowKinds {
    pub ask: u64,
    pub act: u64,
    /// First-try success per kind, from the record's score.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_kind: Vec<crate::record::KindScore>,
}

impl RowKinds {
    /// From the record: the suite's act tasks (its ledger) beside its
    /// questions; `None` for a suite of questions alone.
    pub fn of(record: &crate::record::RunRecord) -> Option<RowKinds> {
        let act = record.suite.act.as_ref().map_or(0, |a| a.tasks);
        (act > 0).then(|| {
            let total = record.suite.tasks.unwrap_or(act).max(act);
            RowKinds {
                ask: total - act,
                act,
                per_kind: record
                    .score
                    .as_ref()
                    .map(|s| s.per_kind.clone())
                    .unwrap_or_default(),
            }
        })
    }

    /// `12 ask, 3 act`.
    pub fn text(&self) -> String {
        format!("{} ask, {} act", self.ask, self.act)
    }

    /// First-try success per kind in words, one line each
    /// (`act: first try 66.7% (95% CI ...), 2 of 3`).
    pub fn per_kind_lines(&self) -> Vec<String> {
        self.per_kind
            .iter()
            .map(|k| format!("{}: first try {}", k.kind, k.first_try.text()))
            .collect()
    }
}

impl Row {
    /// Which suite this is, screened or unscreened, in words: a passed
    /// baseline on a screened row is other evidence than on an unscreened
    /// one.
    pub fn screen_text(&self) -> String {
        match (self.screened, self.screen_skipped, self.unscreened) {
            (Some(true), true, _) => "screen registered, not run".to_owned(),
            (Some(true), false, 0) => "null-screened suite".to_owned(),
            (Some(true), false, 1) => "null-screened suite, 1 candidate unscreened".to_owned(),
            (Some(true), false, n) => format!("null-screened suite, {n} candidates unscreened"),
            (Some(false), _, _) => "unscreened suite".to_owned(),
            (None, _, _) => "screen not recorded".to_owned(),
        }
    }
}

/// The official conformance suite's counts, as its record stores them:
/// only the scenarios for what the server declared count
/// ([`crate::record::Conformance::split`]); the rest are counted apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowConformance {
    /// The package and version that ran.
    pub suite: String,
    pub passed: u64,
    pub failed: u64,
    /// Scenarios for capabilities the server does not declare, and their
    /// checks (boards before `fitness-board/4` counted every scenario).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_counted: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_counted_passed: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub not_counted_failed: u64,
    /// Why the suite gave no result, when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What ran: `requirements 2026-07-28` (a frozen set) or `spec
    /// 2025-06-18` (filtered by revision); absent on older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<String>,
    /// The suite's verdict on the maintainers' baseline, when one was
    /// given: `held`, or what broke it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

impl RowConformance {
    /// The column's text: the counts that apply, what was run, and what
    /// was left out.
    pub fn text(&self) -> String {
        if let Some(why) = &self.error {
            return format!("no result ({why})");
        }
        let split = crate::record::ConformanceSplit {
            passed: self.passed,
            failed: self.failed,
            not_counted: self.not_counted,
            not_counted_passed: self.not_counted_passed,
            not_counted_failed: self.not_counted_failed,
        };
        let mut text = format!("{} passed, {} failed", self.passed, self.failed);
        if let Some(set) = &self.set {
            text.push_str(&format!(" ({set})"));
        }
        let all = split.text();
        if let Some((_, left_out)) = all.split_once("; ") {
            text.push_str("; ");
            text.push_str(left_out);
        }
        if let Some(baseline) = &self.baseline {
            text.push_str(&format!("; {baseline}"));
        }
        text
    }
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

/// "run i of N" of one server, counted on the board as published: the
/// other N - 1 counted by outcome, and the nearest of them named
/// ([`NAMED_ATTEMPTS`] at most, so the index stays linear in the runs); the
/// rest are on the server's history page ([`crate::site::server_page`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowAttempt {
    pub index: u32,
    pub of: u32,
    /// The other runs of this server: outcome code -> runs.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub others: BTreeMap<String, u32>,
    /// The nearest other runs by attempt number, named (boards before
    /// `fitness-board/3` only counted them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub named: Vec<AttemptRef>,
}

/// The most other attempts a row names; the rest are counted and linked.
pub const NAMED_ATTEMPTS: usize = 4;

/// Another run of the same server, named on a row: which attempt it is,
/// how it ended, and the board group it sits in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptRef {
    pub id: String,
    pub index: u32,
    /// Its outcome code (`SCORED`, `GATE_FAILED`, ...).
    pub outcome: String,
    /// The id of the board group it sits in (its title is
    /// [`group_title`] of it).
    pub group: String,
}

impl RowAttempt {
    /// The attempt in words, counted on the board as published, in three
    /// parts so a page can link each named run: the lead (`Run 2 of 3 of
    /// this server; the others: `), each named other with its run id (`run
    /// 1 (GATE_FAILED, in Refused at the paid gate (construct))`), and the tail (`; 1
    /// more on the server's history.`). The board row and the record page
    /// print the same words.
    pub fn words(&self) -> AttemptWords {
        if self.of <= 1 {
            return AttemptWords {
                lead: "The only run of this server.".to_owned(),
                named: Vec::new(),
                tail: String::new(),
            };
        }
        let lead = format!("Run {} of {} of this server", self.index, self.of);
        if self.named.is_empty() {
            return AttemptWords {
                lead: format!(
                    "{lead}; the other {}: {}.",
                    self.of - 1,
                    outcome_counts(&self.others)
                ),
                named: Vec::new(),
                tail: String::new(),
            };
        }
        let rest = (self.of as usize).saturating_sub(1 + self.named.len());
        AttemptWords {
            lead: format!("{lead}; the others: "),
            named: self
                .named
                .iter()
                .map(|a| {
                    (
                        a.id.clone(),
                        format!(
                            "run {} ({}, in {})",
                            a.index,
                            a.outcome,
                            group_title(&a.group)
                        ),
                    )
                })
                .collect(),
            tail: if rest > 0 {
                format!("; {rest} more on the server's history.")
            } else {
                ".".to_owned()
            },
        }
    }
}

/// What happened to a COMPROMISED run, by the gate that counted the
/// failed calls: the stage whose calls failed, never that gate's verdict.
pub fn compromised_title(gate: &str) -> String {
    let stage = match gate {
        "synthesis" => "the judge's synthesis of the suite".to_owned(),
        "screen" => "the null screen".to_owned(),
        "extension_synthesis" => "the judge's synthesis of an extension batch".to_owned(),
        "extension_screen" => "the null screen of an extension batch".to_owned(),
        "null_baseline" => "the null baselines".to_owned(),
        "construct" => "the construct gate".to_owned(),
        "drive" => "the drive".to_owned(),
        other => format!("the stage `{other}`"),
    };
    format!("Compromised: too many calls failed in {stage}, so the measurement did not complete")
}

/// The end of a scored group's id whose runs ask for changes too.
pub const WITH_ACT: &str = ":with-act";

/// A group's title, read from its id alone (so a row can name another
/// run's group by id, and every page prints the same title).
pub fn group_title(id: &str) -> String {
    if let Some(rest) = id.strip_prefix("scored:") {
        // A group of runs whose suites ask for changes too: the same key
        // and `:with-act`.
        if let Some(core) = rest.strip_suffix(WITH_ACT) {
            return format!(
                "{} · questions and changes",
                group_title(&format!("scored:{core}"))
            );
        }
        // `scored:<runner>:<generator>:<credential>[:<access>]` (no access
        // for a record that predates it); a runner id may hold a colon
        // (`ollama/llama3:8b`), the others never.
        let modes = [AccessMode::ReadOnly, AccessMode::Sandbox].map(AccessMode::as_str);
        let (rest, access) = match rest.rsplit_once(':') {
            Some((head, last)) if modes.contains(&last) => (head, last),
            _ => (rest, crate::record::ACCESS_NOT_RECORDED),
        };
        let mut parts = rest.rsplitn(3, ':');
        let credential = parts.next().unwrap_or_default();
        let generator = parts.next().unwrap_or_default();
        let runner = parts.next().unwrap_or_default();
        return format!("Scored with runner {runner} · {generator} · {credential} · {access}");
    }
    if let Some(gate) = id.strip_prefix("refused:compromised:") {
        return compromised_title(gate);
    }
    match id {
        "refused:free" => "Refused at a free gate",
        "refused:cheap" => "Refused by a null model: no server in the loop",
        "refused:paid" => "Refused at the paid gate (construct)",
        _ => "Ended before any gate decided",
    }
    .to_owned()
}

/// [`RowAttempt::words`]: the lead, each named run (its id and label, the
/// labels separated by `; `), and the tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptWords {
    pub lead: String,
    pub named: Vec<(String, String)>,
    pub tail: String,
}

impl AttemptWords {
    /// The whole sentence, as plain text.
    pub fn text(&self) -> String {
        let named: Vec<&str> = self.named.iter().map(|(_, label)| label.as_str()).collect();
        format!("{}{}{}", self.lead, named.join("; "), self.tail)
    }
}

/// Counts by outcome in words: `1 SCORED, 2 GATE_FAILED`.
pub fn outcome_counts(counts: &BTreeMap<String, u32>) -> String {
    counts
        .iter()
        .map(|(code, n)| format!("{n} {code}"))
        .collect::<Vec<_>>()
        .join(", ")
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
    /// The spec-currency column: is that revision the current one (never
    /// counted among the checks below)?
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_current: Option<bool>,
    pub passed: u32,
    /// Pass + fail: the checks that applied.
    pub applicable: u32,
    pub unknown: u32,
    /// Failed probe ids: server faults, never refusals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed: Vec<String>,
    /// The probes could not run: the server was not reached.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unreachable: bool,
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
    /// A run whose measurement did not complete: too many of the calls of
    /// one stage failed (COMPROMISED). Not a verdict of that stage's gate.
    Compromised,
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
            Tier::Compromised => "compromised",
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

#[cfg(test)]
mod title_tests {
    use super::group_title;

    #[test]
    fn a_group_title_names_each_key_and_says_when_access_was_not_recorded() {
        assert_eq!(
            group_title("scored:ollama/llama3:8b:schema-walk/2:owner-key:read-only"),
            "Scored with runner ollama/llama3:8b · schema-walk/2 · owner-key · read-only"
        );
        assert_eq!(
            group_title("scored:sim/diligent:schema-walk/1:anonymous"),
            "Scored with runner sim/diligent · schema-walk/1 · anonymous · access not recorded"
        );
    }
}
