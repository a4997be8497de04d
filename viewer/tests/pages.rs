//! The board and the record page as `fitness publish` renders them, read
//! against the rules they claim: credential contexts never share a scored
//! group, the suite-size floor printed is the floor applied, reruns are
//! named, the zero-policy sentence only where the record leaves the
//! question open, short extension batches shown, and the null-baseline,
//! registration and answer-leak views in words. Wherever the row and the
//! record page state one fact, they state it in the same words.

#![cfg(feature = "ssr")]

#[path = "../../shared/tests/record_common/mod.rs"]
mod record_common;

use std::sync::Arc;

use fitness_shared::board::{Board, Row, RowResult, build_board};
use fitness_shared::record::*;
use fitness_viewer::render;
use record_common::{gate, refusal_record, scored_record};

fn board(records: &[RunRecord]) -> Board {
    build_board(records, "2026-12-02T00:00:00.000Z", None)
}

fn row<'b>(board: &'b Board, id: &str) -> &'b Row {
    board
        .rows
        .iter()
        .find(|r| r.id == id)
        .expect("the run's row")
}

/// The record page's HTML, as publish renders it beside its row.
fn page(record: &RunRecord, board: &Board) -> String {
    page_with(record, board, None)
}

fn page_with(record: &RunRecord, board: &Board, candidates: Option<CandidateList>) -> String {
    let row = row(board, &record.run.id).clone();
    render::record_page(
        Arc::new(record.clone()),
        Arc::new(row),
        false,
        candidates.map(Arc::new),
    )
}

/// The board page's HTML.
fn board_page(board: Board) -> String {
    render::board_page(Arc::new(board))
}

/// Text with tags removed and entities read, whitespace folded: a block
/// (a paragraph, a list item, a cell) ends with a space, an inline tag (a
/// link, a code span) with none, as a reader sees the page.
fn text(html: &str) -> String {
    const BLOCKS: &[&str] = &[
        "p", "li", "ul", "ol", "div", "section", "article", "nav", "h1", "h2", "h3", "h4", "tr",
        "td", "th", "table", "thead", "tbody", "dl", "dt", "dd", "br", "header", "footer", "main",
    ];
    let mut out = String::new();
    let mut tag: Option<String> = None;
    for c in html.chars() {
        match (c, tag.as_mut()) {
            ('<', None) => tag = Some(String::new()),
            ('>', Some(t)) => {
                let name: String = t
                    .trim_start_matches('/')
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric())
                    .collect();
                if BLOCKS.contains(&name.as_str()) {
                    out.push(' ');
                }
                tag = None;
            }
            (c, Some(t)) => t.push(c),
            (c, None) => out.push(c),
        }
    }
    let out = out
        .replace("&amp;", "&")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn run(mut record: RunRecord, id: &str, started: &str) -> RunRecord {
    record.run.id = id.to_owned();
    record.run.started_at = started.to_owned();
    record
}

#[test]
fn scores_under_two_credential_contexts_sit_in_two_groups() {
    let owner = run(scored_record(), "srv-owner", "2026-11-01T00:00:00.000Z");
    let mut anon = run(scored_record(), "srv-anon", "2026-11-02T00:00:00.000Z");
    anon.server.credential_context = CredentialContext::Anonymous;
    anon.preregistration.credential_context = Some(CredentialContext::Anonymous);
    let b = board(&[owner, anon]);
    let scored: Vec<_> = b
        .groups
        .iter()
        .filter(|g| g.runner_model.is_some())
        .collect();
    assert_eq!(scored.len(), 2, "{:?}", b.groups);
    for g in &scored {
        assert_eq!(g.rows.len(), 1, "{g:?}");
        let credential = g
            .credential
            .as_deref()
            .expect("a scored group names its credentials");
        assert!(
            g.id.ends_with(&format!(":{credential}")) || g.id.contains(&format!(":{credential}:")),
            "{}",
            g.id
        );
        assert!(g.title.contains(credential), "{}", g.title);
        // One run alone in its group is read against nothing.
        assert!(
            g.statement.contains("nothing to read it against"),
            "{}",
            g.statement
        );
    }
}

#[test]
fn a_thin_suite_prints_the_floor_it_was_held_to_on_the_row_and_the_page() {
    let mut r = refusal_record(Outcome::InsufficientSurface);
    r.preregistration.n_tasks = Some(12);
    r.preregistration.min_tasks = Some(8);
    r.gates.refused_at = Some("suite_size".into());
    let mut g = gate(
        "suite_size",
        CostTier::Free,
        GateDetail::SuiteSize {
            n_tasks: 10,
            min_tasks: 8,
            tool_count: Some(3),
        },
    );
    g.ok = false;
    g.reason = "suite_below_minimum".into();
    r.gates.records.retain(|g| g.id != "suite_size");
    r.gates.records.push(g);
    r.suite.tasks = Some(10);
    let b = board(std::slice::from_ref(&r));
    let words = "10 tasks admitted to the suite: the floor of 8 is met, not the 12 registered";
    let RowResult::Refused { teaser, .. } = &row(&b, &r.run.id).result else {
        panic!("a refused row");
    };
    assert!(teaser.contains(words), "{teaser}");
    let page = text(&page(&r, &b));
    assert!(page.contains(words), "{page}");
    assert!(!page.contains("against a minimum of"), "{page}");
    assert!(text(&board_page(b)).contains(words));
}

#[test]
fn reruns_are_named_with_their_outcome_and_group_on_the_row_and_the_page() {
    let first = run(scored_record(), "srv-a1", "2026-11-01T00:00:00.000Z");
    let second = run(
        refusal_record(Outcome::GateFailed),
        "srv-a2",
        "2026-11-02T00:00:00.000Z",
    );
    let mut other = run(scored_record(), "srv-good-a1", "2026-11-03T00:00:00.000Z");
    // A server whose slug the first one's is a prefix of is another server.
    other.server.slug = format!("{}-good", other.server.slug);
    let b = board(&[first.clone(), second.clone(), other]);
    let row2 = row(&b, "srv-a2");
    assert_eq!((row2.attempt.index, row2.attempt.of), (2, 2));
    assert_eq!(row2.attempt.named.len(), 1);
    let named = &row2.attempt.named[0];
    assert_eq!(
        (named.id.as_str(), named.index, named.outcome.as_str()),
        ("srv-a1", 1, "SCORED")
    );
    assert!(named.group.starts_with("scored:"), "{}", named.group);
    let sentence = row2.attempt.words().text();
    assert!(
        sentence.starts_with(
            "Run 2 of 2 of this server; the others: run 1 (SCORED, in Scored with runner"
        ),
        "{sentence}"
    );
    // The row and the record page say it in the same words, each a link.
    let page_html = page(&second, &b);
    assert!(text(&page_html).contains(&sentence), "{}", text(&page_html));
    assert!(
        page_html.contains("href=\"../../runs/srv-a1/\""),
        "{page_html}"
    );
    assert!(text(&board_page(b.clone())).contains(&sentence));
    // What the record counted when it was recorded is labelled as such.
    let mut recorded = second.clone();
    recorded.run.attempt = Some(Attempt {
        index: 1,
        of: 1,
        others: vec![],
    });
    assert!(text(&page(&recorded, &b)).contains("When it was recorded, it was the first run"));
}

#[test]
fn the_zero_policy_sentence_shows_only_where_the_record_leaves_it_open() {
    let mut stated = refusal_record(Outcome::ExtendExhausted);
    stated.preregistration.max_extensions = 0;
    stated.extensions.clear();
    let mut silent = stated.clone();
    silent.run.id = "silent".into();
    silent.preregistration.extension_protocol = None;
    let b = board(&[stated.clone(), silent.clone()]);
    let sentence =
        "cannot tell a run made before the extension protocol from one that bought no batch";
    assert!(!text(&page(&stated, &b)).contains(sentence));
    assert!(text(&page(&silent, &b)).contains(sentence));
    // The run's registered screen and protocol, in its own words.
    let own = text(&page(&stated, &b));
    assert!(
        own.contains("Null screen at generation: registered."),
        "{own}"
    );
    assert!(
        own.contains("Extension protocol, in the run's own words: 6 tasks per batch, at most 2."),
        "{own}"
    );
}

#[test]
fn a_short_extension_batch_is_marked_on_the_ledger() {
    let mut r = scored_record();
    assert!(!r.extensions.is_empty(), "the sample consumed a batch");
    r.preregistration.extension_size = 6;
    r.extensions[0].tasks_added = 4;
    r.extensions[0].short = true;
    let b = board(std::slice::from_ref(&r));
    let page = text(&page(&r, &b));
    assert!(page.contains("short: 4 of the 6 registered"), "{page}");
}

#[test]
fn the_null_baseline_refusal_reads_each_arm_against_the_agent_and_the_threshold() {
    let mut r = refusal_record(Outcome::GateFailed);
    r.gates.refused_at = Some("null_baseline".into());
    let rate = |label: &str, k: u64| NullRate {
        label: label.into(),
        k,
        n: 12,
        rate: k as f64 / 12.0,
        errors: 0,
    };
    let mut g = gate(
        "null_baseline",
        CostTier::Cheap,
        GateDetail::NullBaseline {
            rates: vec![
                rate("no-tools", 9),
                rate("stubbed-empty", 3),
                rate("random-valid-args", 0),
            ],
            t_null: Some(0.75),
            t_agent: Some(1.0),
            kill_threshold: Some(0.5),
            ratio: Some(0.5),
            percentile: Some(95),
            decision: Some("KILL".into()),
            explain: None,
        },
    );
    g.ok = false;
    g.reason = "null_answerable".into();
    r.gates.records.retain(|g| g.id != "null_baseline");
    r.gates.records.push(g);
    let b = board(std::slice::from_ref(&r));
    let page = text(&page(&r, &b));
    for line in [
        "Three null models ran the same suite.",
        "no-tools no tools at all, the task's prompt alone 9 of 12 75.0% at or above the line of 50.0% 0",
        "stubbed-empty the server's tools listed, every call answered empty 3 of 12 25.0% below the line of 50.0% 0",
        "random-valid-args no model: the task's expected tool called with random valid arguments 0 of 12 0.0% below the line of 50.0% 0",
        "Agent's rate with the real server: 100.0%.",
        "Null rate taken: 75.0%",
        "Kill line: 50.0%, the ratio 0.5 times the agent's 100.0%.",
        "Decision: KILL",
        "With no tools at all the model passed 9 of 12: these tasks were answerable from what the model already knew",
        "That finding is about our task generator, not about the server.",
    ] {
        assert!(page.contains(line), "{line:?} not in {page}");
    }
    // Only the arm at or above the line is read as a finding.
    assert!(
        !page.contains("With every tool call answered empty"),
        "{page}"
    );
    assert!(
        !page.contains("random valid arguments, and no model, passed"),
        "{page}"
    );
}

#[test]
fn the_answer_leak_refusal_counts_the_leaks_of_the_run() {
    let mut r = refusal_record(Outcome::Degenerate);
    r.gates.refused_at = Some("answer_leak".into());
    let mut g = gate(
        "answer_leak",
        CostTier::Free,
        GateDetail::AnswerLeak {
            leaks: vec![serde_json::json!({"task": "t3", "where": "prompt"})],
            at_generation: vec![
                serde_json::json!({"candidate": "c7"}),
                serde_json::json!({"candidate": "c9"}),
            ],
        },
    );
    g.ok = false;
    g.reason = "answer_leak".into();
    r.gates.records.retain(|g| g.id != "answer_leak");
    r.gates.records.push(g);
    let b = board(std::slice::from_ref(&r));
    let page = text(&page(&r, &b));
    assert!(
        page.contains("1 answer leaks in the driven suite; 2 dropped at generation."),
        "{page}"
    );
}

#[test]
fn every_rejected_candidate_is_listed_with_its_rule_and_linked() {
    let mut r = scored_record();
    r.suite.candidates_file = Some(FileRef {
        path: "candidates.json".into(),
        sha256: "ab".repeat(32),
        bytes: 321,
    });
    let list = CandidateList {
        schema: CANDIDATES_SCHEMA.into(),
        generator: "schema-walk/2".into(),
        rejected: vec![
            ListedCandidate {
                id: "tc3".into(),
                prompt: Some("Using the server's tools, find the hex of `U+0074`.".into()),
                tools: vec!["unicode".into()],
                rule: "answer-leak".into(),
                detail: "the answer `74` is in the prompt".into(),
            },
            ListedCandidate {
                id: "tc9".into(),
                prompt: None,
                tools: vec![],
                rule: "malformed".into(),
                detail: "no expected tools".into(),
            },
        ],
        screened_out: vec![],
    };
    let b = board(std::slice::from_ref(&r));
    let html = page_with(&r, &b, Some(list));
    let page = text(&html);
    for line in [
        "tc3 answer-leak Using the server's tools, find the hex of `U+0074`. unicode the answer `74` is in the prompt",
        "tc9 malformed (did not parse as a task) no expected tools",
    ] {
        assert!(page.contains(line), "{line:?} not in {page}");
    }
    assert!(
        html.contains("href=\"../../runs/demo-good/candidates.json\"")
            || html.contains("candidates.json\""),
        "{html}"
    );
}

#[test]
fn candidates_the_screen_could_not_ask_about_are_counted_on_the_row_and_the_page() {
    let mut r = scored_record();
    r.preregistration.null_screen = Some(true);
    r.suite.null_screened = Some(NullScreenCount {
        screened: 20,
        dropped: 3,
        errors: 2,
    });
    let b = board(std::slice::from_ref(&r));
    let board_text = text(&board_page(b.clone()));
    assert!(
        board_text.contains("null-screened suite, 2 candidates unscreened"),
        "{board_text}"
    );
    let own = text(&page(&r, &b));
    assert!(
        own.contains("2 screen calls failed, so 2 candidates were kept unscreened"),
        "{own}"
    );

    // A registered screen that was never paid for says so, with the reason.
    let mut skipped = scored_record();
    skipped.preregistration.null_screen = Some(true);
    skipped.suite.null_screened = None;
    skipped.suite.screen_skipped =
        Some("not run: the suite could not reach its floor of 8 tasks".to_owned());
    let b = board(std::slice::from_ref(&skipped));
    let board_text = text(&board_page(b.clone()));
    assert!(
        board_text.contains("screen registered, not run"),
        "{board_text}"
    );
    let skipped_page = text(&page(&skipped, &b));
    assert!(
        skipped_page.contains(
            "Null screen at generation: registered, not run: the suite could not reach its floor of 8 tasks"
        ),
        "{skipped_page}"
    );
}

#[test]
fn read_only_and_sandbox_runs_sit_in_two_groups_and_say_what_they_did() {
    let mut read_only = run(scored_record(), "srv-ro", "2026-11-01T00:00:00.000Z");
    read_only.access = Some(AccessLedger {
        mode: AccessMode::ReadOnly,
        restore: None,
        reset_command: None,
        copied_paths: vec![],
        writers: vec!["write_file".into(), "move_file".into()],
        setup_steps: Vec::new(),
        blocked: vec![BlockedTool {
            tool: "write_file".into(),
            calls: 3,
            trials: vec!["t2".into(), "t5".into()],
        }],
        writes: vec![],
        writes_total: 0,
        stale_trials: vec![],
    });
    let mut sandbox = run(scored_record(), "srv-sb", "2026-11-02T00:00:00.000Z");
    sandbox.access = Some(AccessLedger {
        mode: AccessMode::Sandbox,
        restore: Some(RestoreKind::Copy),
        reset_command: None,
        copied_paths: vec!["/srv/notes".into()],
        writers: vec!["write_file".into()],
        setup_steps: Vec::new(),
        blocked: vec![],
        writes: vec![WriteCall {
            tool: "write_file".into(),
            arguments: serde_json::json!({"path": "/tmp/copy/a.txt"}),
            corr_id: Some("generate".into()),
        }],
        writes_total: 1,
        stale_trials: vec![],
    });
    let b = board(&[read_only.clone(), sandbox.clone()]);
    let scored: Vec<_> = b
        .groups
        .iter()
        .filter(|g| g.runner_model.is_some())
        .collect();
    assert_eq!(
        scored.len(),
        2,
        "never read against each other: {:?}",
        b.groups
    );
    assert!(
        scored
            .iter()
            .any(|g| g.id.ends_with(":read-only") && g.title.ends_with("read-only"))
    );
    assert!(scored.iter().any(|g| g.id.ends_with(":sandbox")));
    let board_text = text(&board_page(b.clone()));
    assert!(
        board_text.contains("read-only (3 calls blocked)"),
        "{board_text}"
    );
    assert!(
        board_text.contains("sandbox, restored from a copy before every trial (1 write)"),
        "{board_text}"
    );
    let ro = text(&page(&read_only, &b));
    assert!(
        ro.contains("Credentials owner-key Access read-only (3 calls blocked)"),
        "{ro}"
    );
    assert!(ro.contains("write_file: 3 calls, in t2, t5"), "{ro}");
    let sb = text(&page(&sandbox, &b));
    assert!(sb.contains("never the originals"), "{sb}");
    assert!(sb.contains("Every write the run made (1):"), "{sb}");
    assert!(sb.contains("write_file generate"), "{sb}");

    // A record from before the mode says so.
    let old = run(scored_record(), "srv-old", "2026-10-01T00:00:00.000Z");
    let b = board(std::slice::from_ref(&old));
    // Its group keeps the three-part key, and its title says so.
    let group = b
        .groups
        .iter()
        .find(|g| g.runner_model.is_some())
        .expect("a scored group");
    assert_eq!(group.id.matches(':').count(), 3, "{}", group.id);
    assert!(
        group.title.ends_with("access not recorded"),
        "{}",
        group.title
    );
    let page_text = text(&page(&old, &b));
    assert!(page_text.contains("access not recorded"), "{page_text}");
}

#[test]
fn a_seeded_suite_says_so_on_the_row_and_its_page_lists_the_calls_and_every_move() {
    let mut seeded = run(scored_record(), "docs-seeded", "2026-11-03T00:00:00.000Z");
    seeded.preregistration.operator_hints = Some(OperatorHints {
        seed_calls: vec![SeedCall {
            tool: "convert_to_markdown".into(),
            arguments: serde_json::json!({"uri": "file:///srv/docs/memo.html"})
                .as_object()
                .cloned()
                .expect("an object"),
        }],
        context: None,
    });
    seeded.suite.tasks = Some(10);
    seeded.suite.discovery = Some(DiscoveryLedger {
        moves: vec![
            DiscoveryMove {
                name: "seed-calls".into(),
                tool: Some("convert_to_markdown".into()),
                tried: "1 call the operator gave".into(),
                found: "1 answered".into(),
                worked: true,
            },
            DiscoveryMove {
                name: "resources".into(),
                tool: None,
                tried: "resources/list".into(),
                found: "none listed".into(),
                worked: false,
            },
        ],
        seed_calls: 1,
        seeded_tasks: 6,
        discovered_tasks: 0,
    });
    let found = run(scored_record(), "docs-found", "2026-11-04T00:00:00.000Z");
    let b = board(&[seeded.clone(), found.clone()]);
    let board_text = text(&board_page(b.clone()));
    let row_words = "seeded by the operator: 1 call, 6 of 10 tasks start from them";
    assert_eq!(board_text.matches(row_words).count(), 1, "{board_text}");
    let page_text = text(&page(&seeded, &b));
    assert!(page_text.contains("How the suite was found"), "{page_text}");
    assert!(page_text.contains(row_words), "{page_text}");
    assert!(
        page_text.contains(r#"convert_to_markdown {"uri":"file:///srv/docs/memo.html"}"#),
        "{page_text}"
    );
    assert!(
        page_text
            .contains("Tasks from the operator's seed calls: 6; tasks from discovery's moves: 0."),
        "{page_text}"
    );
    assert!(
        page_text.contains("resources resources/list none listed"),
        "{page_text}"
    );
    // A suite with no hints and no ledger has no such section.
    let plain = text(&page(&found, &b));
    assert!(!plain.contains("How the suite was found"), "{plain}");
}

#[test]
fn a_change_is_marked_on_the_record_page_and_links_its_state_check_in_the_replay() {
    let mut record = run(scored_record(), "notes-act", "2026-11-05T00:00:00.000Z");
    assert!(!record.tapes.is_empty(), "the fixture names its tapes");
    let score = record.score.as_mut().expect("scored");
    let n = score.tasks.len() as u64;
    let last = score.tasks.last_mut().expect("a task");
    last.kind = Some("act".into());
    let act_id = last.task_id.clone();
    score.per_kind = KindScore::of(&score.tasks);
    record.suite.tasks = Some(n);
    record.suite.act = Some(ActLedger {
        restore: Some("copy".into()),
        tried: 2,
        admitted: 1,
        tasks: 1,
        judge_proposed: 0,
        judge_admitted: 0,
        notes: Vec::new(),
    });
    let b = board(std::slice::from_ref(&record));
    let html = page(&record, &b);
    let page_text = text(&html);
    assert!(
        page_text.contains(&format!("{} ask, 1 act", n - 1)),
        "{page_text}"
    );
    assert!(page_text.contains(&format!("{act_id} act")), "{page_text}");
    // The state check's reads are the trial `<task>::state` of the replay.
    let encoded = format!("trial={act_id}%3A%3Astate");
    let link = html
        .split("class=\"read-state\"")
        .nth(1)
        .expect("a link to the state check");
    assert!(
        html.contains(&encoded),
        "the link opens the state reads: {}",
        &link[..link.len().min(300)]
    );
}

#[test]
fn each_task_shows_its_shape_and_the_page_scores_each_shape_and_states_the_mix() {
    let mut record = run(scored_record(), "shapes", "2026-11-06T00:00:00.000Z");
    let score = record.score.as_mut().expect("scored");
    // The fixture's task, an aggregate failed on its first try, and a
    // lookup answered.
    let mut lookup = score.tasks[0].clone();
    lookup.task_id = "t2".into();
    lookup.first_try_success = true;
    lookup.shape = Some(TaskShape::Lookup);
    let failed = &mut score.tasks[0];
    failed.shape = Some(TaskShape::Aggregate);
    failed.first_try_success = false;
    let failed_id = failed.task_id.clone();
    score.tasks.push(lookup);
    score.per_shape = ShapeScore::of(&score.tasks);
    record.suite.quality = Some(SuiteQuality {
        tasks: 2,
        tools_listed: 3,
        per_tool: Vec::new(),
        answered_from_calls: 2,
        multi_call: 0,
        predicate_kinds: Vec::new(),
        per_shape: vec![
            KindCount {
                kind: "lookup".into(),
                count: 1,
            },
            KindCount {
                kind: "aggregate".into(),
                count: 1,
            },
        ],
        template_worded: Some(0),
    });
    record.preregistration.aimed_mix = Some(fitness_shared::record::AimedMix::COMPOSED);
    let b = board(std::slice::from_ref(&record));
    let page_text = text(&page(&record, &b));
    // Each task's row names its shape in words.
    assert!(
        page_text.contains(&format!("{failed_id} read it a count, total or average no")),
        "{page_text}"
    );
    assert!(
        page_text.contains("t2 read it a value looked up yes"),
        "{page_text}"
    );
    // Per shape, from the record's intervals.
    assert!(
        page_text.contains("a value looked up 1 1 of 1 100.0% (20.7% to 100.0%)"),
        "{page_text}"
    );
    assert!(
        page_text.contains("a count, total or average 1 0 of 1 0.0% (0.0% to 79.3%)"),
        "{page_text}"
    );
    // What the suite asks, its mix stated once.
    assert!(
        page_text.contains(
            "What the suite asks: shapes: lookup 1, aggregate 1; two calls or a computation over several records 1 (50%); count, total, rank or compare 1 (50%); worded from a template 0 (0%)"
        ),
        "{page_text}"
    );
    // The mix the generator registered, and whether the suite met it.
    assert!(
        page_text.contains(
            "Registered mix: aimed at at least 50% two calls or a computation over several records, at least 30% count, total, rank or compare, at most 10% worded from a template: met"
        ),
        "{page_text}"
    );
    // A suite that falls short says by how much.
    if let Some(q) = record.suite.quality.as_mut() {
        q.per_shape.remove(1);
        q.per_shape[0].count = 2;
    }
    let page_text = text(&page(&record, &b));
    assert!(
        page_text.contains(
            "missed (two calls or a computation 0% under 50%; count, total, rank or compare 0% under 30%)"
        ),
        "{page_text}"
    );
}
