//! The board's unit tests: standing notes, attempts, caveats, spend and
//! the group statements.

use super::from_record::strip_code_prefix;
use super::groups::{outcome_code, scored_statement};
use super::*;
use crate::record::import::anchor_import;
use std::collections::BTreeMap;

use crate::record::{Cost, GateDetail, RunRecord};

#[test]
fn code_prefixes_are_stripped_from_explanations() {
    assert_eq!(
        strip_code_prefix("REJECT (too_few_generated): 2 admitted cases is below the minimum 8."),
        "2 admitted cases is below the minimum 8."
    );
    assert_eq!(strip_code_prefix("plain text"), "plain text");
    assert_eq!(
        strip_code_prefix("KILL (noise_exceeds_signal): a null model"),
        "a null model"
    );
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
    // (every server run 30 to 90 times) cost what 10 copies cost per row.
    let per_row = |copies: usize| {
        let b = build_board(&reruns(copies), "2026-11-30T00:00:00Z", None);
        serde_json::to_vec(&b).unwrap().len() as f64 / b.rows.len() as f64
    };
    // A row names at most NAMED_ATTEMPTS others: past that, more reruns
    // cost nothing more per row.
    let (ten, thirty) = (per_row(10), per_row(30));
    assert!(thirty < ten * 1.05, "{ten:.0} -> {thirty:.0} bytes per row");
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

#[test]
fn a_run_that_asks_for_changes_sits_in_its_own_group_and_says_how_many() {
    let set = anchor_import();
    let scored = set
        .records
        .iter()
        .find(|r| r.score.as_ref().is_some_and(|s| s.tasks.len() >= 3))
        .expect("the anchor has scored runs");
    let mut questions = scored.clone();
    questions.run.id = "questions".into();
    let mut changes = scored.clone();
    changes.run.id = "changes".into();
    let score = changes.score.as_mut().expect("scored");
    let n = score.tasks.len() as u64;
    // The last two tasks are changes: one made first try, one not.
    for (i, t) in score.tasks.iter_mut().rev().take(2).enumerate() {
        t.kind = Some("act".into());
        t.first_try_success = i == 0;
    }
    score.per_kind = crate::record::KindScore::of(&score.tasks);
    changes.suite.tasks = Some(n);
    changes.suite.act = Some(crate::record::ActLedger {
        restore: Some("copy".into()),
        tried: 3,
        admitted: 2,
        tasks: 2,
        judge_proposed: 0,
        judge_admitted: 0,
        notes: Vec::new(),
    });
    let board = build_board(&[questions, changes], "2026-11-30T00:00:00Z", None);
    let row = |id: &str| board.rows.iter().find(|r| r.id == id).expect("row");
    assert_eq!(row("questions").kinds, None);
    let kinds = row("changes").kinds.clone().expect("kinds");
    assert_eq!(kinds.text(), format!("{} ask, 2 act", n - 2));
    let act = kinds
        .per_kind
        .iter()
        .find(|k| k.kind == "act")
        .expect("act scored apart");
    assert_eq!((act.first_try.k, act.first_try.n), (1, 2));
    assert!(kinds.per_kind_lines()[1].starts_with("act: first try 50.0% (95% CI"));
    let group = |id: &str| {
        board
            .groups
            .iter()
            .find(|g| g.rows.iter().any(|r| r == id))
            .expect("grouped")
    };
    assert_ne!(group("questions").id, group("changes").id);
    assert!(
        group("changes").title.ends_with("· questions and changes"),
        "{}",
        group("changes").title
    );
    assert!(group("changes").title.starts_with("Scored with runner "));
}

#[test]
fn a_compromised_run_is_grouped_by_the_stage_whose_calls_failed_at_each_stage() {
    let set = anchor_import();
    let refused = set
        .records
        .iter()
        .find(|r| r.score.is_none() && r.gates.refused_at.is_some())
        .expect("the anchor has refused runs");
    for (gate, stage) in [
        ("synthesis", "the judge's synthesis of the suite"),
        ("screen", "the null screen"),
        ("null_baseline", "the null baselines"),
        ("construct", "the construct gate"),
        ("drive", "the drive"),
    ] {
        let mut r = refused.clone();
        r.outcome = crate::record::Outcome::Compromised;
        r.gates.refused_at = Some(gate.to_owned());
        let mut g = r.gates.records[0].clone();
        g.id = gate.to_owned();
        g.ok = false;
        r.gates.records.push(g);
        let board = build_board(&[r], "2026-11-30T00:00:00Z", None);
        let group = &board.groups[0];
        assert_eq!(group.id, format!("refused:compromised:{gate}"));
        assert_eq!(group.tier, Tier::Compromised);
        assert_eq!(
            group.title,
            format!(
                "Compromised: too many calls failed in {stage}, so the measurement did not complete"
            )
        );
    }
}

#[test]
fn a_suite_the_operator_seeded_says_so_on_its_row_and_a_discovered_one_does_not() {
    let set = anchor_import();
    let scored = set
        .records
        .iter()
        .find(|r| r.score.is_some())
        .expect("the anchor has scored runs");
    let mut found = scored.clone();
    found.run.id = "found".into();
    let mut seeded = scored.clone();
    seeded.run.id = "seeded".into();
    seeded.preregistration.operator_hints = Some(crate::record::OperatorHints {
        seed_calls: vec![crate::record::SeedCall {
            tool: "convert_to_markdown".into(),
            arguments: serde_json::json!({"uri": "file:///srv/docs/memo.html"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        }],
        context: Some("a folder of memos".into()),
    });
    seeded.suite.tasks = Some(9);
    seeded.suite.discovery = Some(crate::record::DiscoveryLedger {
        moves: Vec::new(),
        seed_calls: 1,
        seeded_tasks: 4,
        discovered_tasks: 2,
    });
    let mut context_only = scored.clone();
    context_only.run.id = "context".into();
    context_only.preregistration.operator_hints = Some(crate::record::OperatorHints {
        seed_calls: Vec::new(),
        context: Some("a library".into()),
    });
    let board = build_board(&[found, seeded, context_only], "2026-11-30T00:00:00Z", None);
    let row = |id: &str| board.rows.iter().find(|r| r.id == id).expect("row");
    assert_eq!(row("found").seeded, None);
    assert_eq!(
        row("seeded").seeded.as_ref().expect("seeded").text(),
        "seeded by the operator: 1 call, 4 of 9 tasks start from them; context given to the judge"
    );
    assert_eq!(
        row("context").seeded.as_ref().expect("context").text(),
        "seeded by the operator: context given to the judge"
    );
}
