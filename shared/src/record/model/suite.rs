//! The task suite: how it was made, judged and screened.

use schemars::JsonSchema;

use super::tapes::FileRef;
use serde::{Deserialize, Serialize};

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
    /// The candidates admission rejected, each with its prompt, tools and
    /// rule: a file beside the record (`candidates.json`), hashed here so
    /// the signature covers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates_file: Option<FileRef>,
    /// Why a registered screen did not run: the suite could no longer reach
    /// its floor (or our own judge had already failed), so no model was
    /// paid to screen it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screen_skipped: Option<String>,
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
    /// What generation read and tried before it guessed, and where the
    /// tasks came from (the operator's seeds, discovery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<super::discovery::DiscoveryLedger>,
    /// Changes asked of the server in a sandbox (act tasks): what was
    /// tried and admitted, or why none was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act: Option<ActLedger>,
}

/// Act tasks at generation: changes made in the sandbox, each checked by
/// a read the agent also has, the state put back after each.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ActLedger {
    /// How the state was put back between changes (`copy`, `reset`);
    /// absent when no change could be tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore: Option<String>,
    /// Changes tried (one per writer given arguments).
    pub tried: u64,
    /// Of those, admitted.
    pub admitted: u64,
    /// Act tasks in the suite.
    pub tasks: u64,
    /// Changes the judge proposed (judge-walk/1: arguments and the read
    /// that shows them), and of those, admitted.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub judge_proposed: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub judge_admitted: u64,
    /// Why no change was tried, and writers not tried, in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl ActLedger {
    /// The ledger in one sentence, as `fitness suite` and the record page
    /// say it.
    pub fn sentence(&self) -> String {
        let mut s = match &self.restore {
            None => "Act tasks: none.".to_owned(),
            Some(restore) => format!(
                "Act tasks: {} change(s) tried in the sandbox (state put back by {restore} after each), {} admitted, {} in the suite.",
                self.tried, self.admitted, self.tasks
            ),
        };
        if self.judge_proposed > 0 {
            s.push_str(&format!(
                " The judge proposed {} of the changes and the reads that show them; {} admitted.",
                self.judge_proposed, self.judge_admitted
            ));
        }
        for note in &self.notes {
            s.push(' ');
            s.push_str(note.trim_end_matches('.'));
            s.push('.');
        }
        s
    }
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
    /// Tasks per shape (`lookup`, `multi_step`, `aggregate`,
    /// `comparison`, `set`, `change`), in that order; empty on suites
    /// made before shapes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_shape: Vec<KindCount>,
    /// Tasks worded from a template that echoes a key ("find the ... of
    /// the item where ...", "exactly as the server gives it"); absent on
    /// suites made before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template_worded: Option<u64>,
}

impl SuiteQuality {
    /// `count` as a share of the suite's tasks (`None` for an empty suite).
    pub fn share(&self, count: u64) -> Option<f64> {
        (self.tasks > 0).then(|| count as f64 / self.tasks as f64)
    }

    /// Tasks whose shape needs two calls or a computation over several
    /// records, and tasks that count, total, rank or compare.
    pub fn composed_and_computed(&self) -> (u64, u64) {
        let count = |f: fn(super::shape::TaskShape) -> bool| {
            self.per_shape
                .iter()
                .filter(|k| super::shape::TaskShape::parse(&k.kind).is_some_and(f))
                .map(|k| k.count)
                .sum()
        };
        (
            count(super::shape::TaskShape::composed),
            count(super::shape::TaskShape::computes),
        )
    }

    /// `count` as a whole percentage of the suite's tasks (`-` for an
    /// empty suite).
    pub fn percent(&self, count: u64) -> String {
        self.share(count)
            .map_or("-".to_owned(), |s| format!("{:.0}%", s * 100.0))
    }

    /// What the suite asks, in one line: its shapes, how many tasks take
    /// two calls or a computation over several records, how many count,
    /// total, rank or compare, and how many are worded from a template.
    /// `None` where no task carries a shape.
    pub fn mix_text(&self) -> Option<String> {
        if self.per_shape.is_empty() {
            return None;
        }
        let pct = |count: u64| self.percent(count);
        let shapes: Vec<String> = self
            .per_shape
            .iter()
            .map(|k| format!("{} {}", k.kind, k.count))
            .collect();
        let (composed, computed) = self.composed_and_computed();
        Some(format!(
            "shapes: {}; two calls or a computation over several records {} ({}); count, total, rank or compare {} ({}); worded from a template {}",
            shapes.join(", "),
            composed,
            pct(composed),
            computed,
            pct(computed),
            self.template_worded
                .map_or("-".to_owned(), |n| format!("{n} ({})", pct(n))),
        ))
    }

    /// Where the suite falls short of `aim`, one phrase each; empty when it
    /// meets it (or has no shapes to read).
    pub fn misses(&self, aim: &super::shape::AimedMix) -> Vec<String> {
        if self.per_shape.is_empty() {
            return Vec::new();
        }
        let (composed, computed) = self.composed_and_computed();
        let share = |n: u64| self.share(n).unwrap_or(0.0);
        let mut misses = Vec::new();
        if share(composed) < aim.composed_at_least {
            misses.push(format!(
                "two calls or a computation {} under {:.0}%",
                self.percent(composed),
                aim.composed_at_least * 100.0
            ));
        }
        if share(computed) < aim.computed_at_least {
            misses.push(format!(
                "count, total, rank or compare {} under {:.0}%",
                self.percent(computed),
                aim.computed_at_least * 100.0
            ));
        }
        if let Some(t) = self.template_worded
            && share(t) > aim.templated_at_most
        {
            misses.push(format!(
                "worded from a template {} over {:.0}%",
                self.percent(t),
                aim.templated_at_most * 100.0
            ));
        }
        misses
    }

    /// The mix the generator aimed at and whether the suite met it, in one
    /// line.
    pub fn against_text(&self, aim: &super::shape::AimedMix) -> String {
        let misses = self.misses(aim);
        if misses.is_empty() {
            format!("aimed at {}: met", aim.words())
        } else {
            format!("aimed at {}: missed ({})", aim.words(), misses.join("; "))
        }
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
    /// Admitted candidates put to the screen.
    pub screened: u64,
    /// Of those, deleted: the runner answered them with no tools.
    pub dropped: u64,
    /// Of those, screen calls that failed: their candidates were kept
    /// unscreened, and the failures are gated as our measurement's
    /// (`screen`: over the error limit, COMPROMISED).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub errors: u64,
}

impl NullScreenCount {
    /// Candidates the screen was asked about and did not answer for.
    pub fn unscreened(&self) -> u64 {
        self.errors
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The schema of a candidate list ([`CandidateList`]).
pub const CANDIDATES_SCHEMA: &str = "fitness-candidates/1";

/// What a generator proposed and admission did with it, as a person reads
/// it: every rejected candidate with the rule that rejected it (and, in a
/// suite report, every admitted task). The record keeps the rejected list
/// beside it (`candidates.json`); `fitness suite` writes the same format.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CandidateList {
    /// [`CANDIDATES_SCHEMA`].
    pub schema: String,
    pub generator: String,
    /// Rejected by admission, in the order generated (the suite's first,
    /// then each extension batch's).
    pub rejected: Vec<ListedCandidate>,
    /// Deleted by the generation-time null screen (rule `null_screen`),
    /// each with the reply that answered it: the screen's ledger, a fate
    /// counted apart from admission's. Absent in lists made before it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub screened_out: Vec<ListedCandidate>,
}

/// One candidate as a list shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ListedCandidate {
    pub id: String,
    /// Its prompt, when it parsed as a task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// The tools its solution calls (its expected tools when it has none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The admission rule that rejected it (`null_screen` for a candidate
    /// the screen deleted).
    pub rule: String,
    /// What the rule saw.
    pub detail: String,
}
