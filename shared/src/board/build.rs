//! [`build_board`]: records to rows oldest first, every server's runs
//! numbered as attempts, then the groups, counts and spend.

use std::collections::BTreeMap;

use super::from_record::row_for;
use super::groups::{build_groups, group_id, outcome_code, row_tier};
use super::index::{BOARD_SCHEMA, Board, Counts, spend};
use super::row::{AttemptRef, NAMED_ATTEMPTS, Row, RowAttempt, RowResult};
use crate::record::{Cost, RunRecord};

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
    let groups = build_groups(&rows, &group_ids);
    number_attempts(&mut rows, &group_ids);
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

/// Attempts: every run of one server, numbered by start time, the others
/// counted by outcome and the nearest [`NAMED_ATTEMPTS`] named with their
/// outcome and group (linear in the runs, however many reruns).
fn number_attempts(rows: &mut [Row], group_ids: &[String]) {
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
            others: BTreeMap::new(),
            named: Vec::new(),
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
            // The nearest by attempt number, earlier first on a tie.
            let mut near: Vec<(usize, usize)> = members
                .iter()
                .enumerate()
                .filter(|(other, _)| *other != pos)
                .map(|(other, &j)| (other.abs_diff(pos), j))
                .collect();
            near.sort();
            near.truncate(NAMED_ATTEMPTS);
            let mut named: Vec<AttemptRef> = near
                .into_iter()
                .map(|(_, j)| AttemptRef {
                    id: rows[j].id.clone(),
                    index: members.iter().position(|&m| m == j).unwrap_or(0) as u32 + 1,
                    outcome: outcome_code(&rows[j]).to_owned(),
                    group: group_ids[j].clone(),
                })
                .collect();
            named.sort_by_key(|a| a.index);
            attempts[i] = RowAttempt {
                index: pos as u32 + 1,
                of,
                others,
                named,
            };
        }
    }
    for (row, attempt) in rows.iter_mut().zip(attempts) {
        row.attempt = attempt;
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
