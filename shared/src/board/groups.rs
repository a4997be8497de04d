//! The board's groups ([`Group`]): which rows are read together (scored
//! by runner model, generator and credential context, refusals by gate
//! tier), in what order, and the sentence each prints.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::row::{GENERATOR_NOT_RECORDED, Tier, group_title};
use super::row::{Row, RowResult};
use crate::record::{Interval, Outcome};
use crate::stats;

/// One group of rows, shown together and read only against each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    /// Stable id, e.g.
    /// `scored:claude-sonnet-5:judge-synth/1:anonymous:read-only`.
    pub id: String,
    pub tier: Tier,
    pub title: String,
    /// Runner model of a scored group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_model: Option<String>,
    /// Credential context of a scored group (`anonymous`, `free-key`,
    /// `owner-key`): scores collected under different credentials are
    /// labelled, never read against each other.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<String>,
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

pub(super) fn outcome_code(row: &Row) -> &str {
    match &row.result {
        RowResult::Scored { .. } => Outcome::Scored.code(),
        RowResult::Refused { code, .. } => code,
    }
}

pub(super) fn row_tier(row: &Row) -> Tier {
    match &row.result {
        RowResult::Scored { .. } => Tier::Scored,
        RowResult::Refused { tier, .. } => *tier,
    }
}

fn generator_label(row: &Row) -> &str {
    row.generator.as_deref().unwrap_or(GENERATOR_NOT_RECORDED)
}

pub(super) fn group_id(row: &Row) -> String {
    match row_tier(row) {
        // A record that predates the access mode keeps the three-part key.
        Tier::Scored => {
            let key = format!(
                "scored:{}:{}:{}",
                row.runner_model,
                generator_label(row),
                row.credential
            );
            let key = match row.access_mode {
                Some(mode) => format!("{key}:{}", mode.as_str()),
                None => key,
            };
            // Changes are not the same measurement as questions.
            if row.kinds.is_some() {
                format!("{key}{}", super::row::WITH_ACT)
            } else {
                key
            }
        }
        // A compromised run is grouped by the stage whose calls failed.
        Tier::Compromised => match &row.result {
            RowResult::Refused {
                gate: Some(gate), ..
            } => format!("refused:compromised:{gate}"),
            _ => "refused:compromised".to_owned(),
        },
        tier => format!("refused:{}", tier.as_str()),
    }
}

/// The groups of `rows` (`group_ids[i]` is row `i`'s), in board order.
pub(super) fn build_groups(rows: &[Row], group_ids: &[String]) -> Vec<Group> {
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
            first.credential.clone(),
        )
    });
    order
        .into_iter()
        .map(|id| {
            let idx = &members[&id];
            group(id, rows, idx)
        })
        .collect()
}

/// The group `id` of the rows at `idx` (oldest first, none empty).
fn group(id: String, rows: &[Row], idx: &[usize]) -> Group {
    let first = &rows[idx[0]];
    let tier = row_tier(first);
    let mut generators: Vec<String> = Vec::new();
    for &i in idx {
        let label = generator_label(&rows[i]).to_owned();
        if !generators.contains(&label) {
            generators.push(label);
        }
    }
    let title = group_title(&id);
    let (statement, nothing_separates, runner_model, credential) = if tier == Tier::Scored {
        let (statement, separated_pairs) = scored_statement_of(rows, idx, &generators);
        (
            statement,
            Some(separated_pairs == 0),
            Some(first.runner_model.clone()),
            Some(first.credential.clone()),
        )
    } else {
        (refused_statement(idx.len(), &generators), None, None, None)
    };
    Group {
        id,
        tier,
        title,
        runner_model,
        credential,
        generators,
        statement,
        nothing_separates,
        rows: idx.iter().map(|&i| rows[i].id.clone()).collect(),
    }
}

/// A scored group's statement, and how many pairs of its intervals are
/// separated.
fn scored_statement_of(rows: &[Row], idx: &[usize], generators: &[String]) -> (String, usize) {
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
    (statement, separated_pairs)
}

/// A refusal group's statement: its runs, and whether it mixes generators.
fn refused_statement(runs: usize, generators: &[String]) -> String {
    let runs_text = match runs {
        1 => "1 run".to_owned(),
        n => format!("{n} runs"),
    };
    match generators {
        [] => format!("{runs_text}."),
        [one] if runs == 1 => format!("1 run, built by {one}."),
        [one] => format!("{runs_text}, all built by {one}."),
        many => format!(
            "{runs_text}. This group mixes {} generators ({}); rows are only read against rows of the same generator.",
            many.len(),
            many.join(", ")
        ),
    }
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

pub(super) fn scored_statement(rows: usize, separated_pairs: usize) -> String {
    match (rows, separated_pairs) {
        (0 | 1, _) => "One scored run in this group; there is nothing to read it against.".to_owned(),
        (_, 0) => format!(
            "Nothing separates these {rows} runs: every pair of 95% intervals overlaps, so no row ranks above another."
        ),
        (_, 1) => "One pair of intervals is separated: one lies entirely above the other. No other pair is.".to_owned(),
        (_, pairs) => format!("{pairs} pairs of intervals are separated: in each, one lies entirely above the other."),
    }
}
