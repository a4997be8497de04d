//! A refusal's words read against the numbers printed beside them (issue
//! 62): each case is a run the engine makes (`fitness run` on the demo
//! servers and fixtures), published by `fitness publish`, and read on the
//! page a reader opens, beside the record the engine wrote.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::common;
use crate::model_fake;
use common::{FITNESS, board_of, page_text, publish_runs};

/// One run the engine made, published with the others in its directory.
struct Published {
    record: Value,
    dir: PathBuf,
    site: PathBuf,
    _tmp: tempfile::TempDir,
}

impl Published {
    fn id(&self) -> String {
        self.dir.file_name().unwrap().to_string_lossy().into_owned()
    }

    /// The record page's HTML, as `fitness publish` pre-rendered it.
    fn html(&self) -> String {
        std::fs::read_to_string(self.site.join("runs").join(self.id()).join("index.html"))
            .expect("the record page")
    }

    fn page(&self) -> String {
        page_text(&self.html())
    }

    fn gate(&self, id: &str) -> &Value {
        self.record["gates"]["records"]
            .as_array()
            .and_then(|g| g.iter().find(|r| r["id"] == id))
            .unwrap_or_else(|| panic!("no {id} gate in {}", self.record["gates"]))
    }
}

/// `fitness run` of `server` (a command line) with the sim runner and
/// `extra` flags, then `fitness publish` of its directory.
fn run_and_publish(server: &[&str], runner: &str, extra: &[&str]) -> Published {
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    let out = common::run_bounded(
        &common::run_args(runner, &runs, extra, server),
        Duration::from_secs(300),
    );
    let (dir, record) = common::run_result(&out);
    let site = tmp.path().join("site");
    publish_runs(tmp.path(), &runs, &site);
    Published {
        record,
        dir,
        site,
        _tmp: tmp,
    }
}

fn demo(server: &str, extra: &[&str]) -> Published {
    run_and_publish(&[FITNESS, "demo-server", server], "sim/diligent", extra)
}

/// The ledger row of `gate` on a record page: its state word and counts.
fn ledger_row(html: &str, gate: &str) -> String {
    let row = regex::Regex::new(&format!(
        r#"<tr data-gate="{gate}" class="(\w+)">(.*?)</tr>"#
    ))
    .expect("pattern");
    let caps = row
        .captures(html)
        .unwrap_or_else(|| panic!("no ledger row for {gate}"));
    format!("{} | {}", &caps[1], page_text(&caps[2]))
}

/// `demo-constant`: the random-arguments arm kills the run before any
/// paid call, so the other two arms never run. The page reads that one
/// arm against the line, says why the others did not run and how the line
/// was drawn with no agent's rate, and prints only the reading that arm
/// supports (never the no-tools sentence, never "passed without the
/// server" for an arm that called it).
#[test]
fn the_null_baseline_reads_each_arm_against_the_line_and_only_what_the_arms_that_ran_support() {
    let run = demo("constant", &[]);
    let gate = run.gate("null_baseline");
    assert_eq!(gate["detail"]["decision"], "KILL", "{gate}");
    let rates = gate["detail"]["rates"].as_array().expect("rates");
    let ran: Vec<&str> = rates
        .iter()
        .filter(|r| r["n"].as_u64() > Some(0))
        .filter_map(|r| r["label"].as_str())
        .collect();
    assert_eq!(ran, ["random-valid-args"], "{gate}");
    assert!(gate["detail"].get("t_agent").is_none(), "{gate}");

    let page = run.page();
    assert!(
        page.contains("One of the three null models ran before the gate decided"),
        "{page}"
    );
    assert!(
        !page.contains("Three null models ran the same suite"),
        "{page}"
    );
    for arm in ["no-tools", "stubbed-empty"] {
        assert!(
            page.contains(&format!(
                "{arm} {} none not run not run: the gate had decided on random-valid-args (the arms run cheapest first)",
                fitness_shared::reading::null_baseline::given(arm)
            )),
            "{arm}: {page}"
        );
    }
    assert!(
        page.contains("12 of 12 100.0% at or above the line of 50.0%"),
        "{page}"
    );
    assert!(
        page.contains("Agent's rate: not measured. The gate decided before any paid call"),
        "{page}"
    );
    assert!(
        page.contains(
            "Kill line: 50.0%, the ratio 0.5 times 100%, the highest rate an agent could reach"
        ),
        "{page}"
    );
    assert!(
        page.contains("Calling each task's expected tool with random valid arguments, and no model, passed 12 of 12: the server was called"),
        "{page}"
    );
    for wrong in [
        "With no tools at all",
        "When a model with no tools passes",
        "can be passed without the server",
        "Agent's rate: not recorded",
    ] {
        assert!(!page.contains(wrong), "{wrong}: {page}");
    }
    // The record's own words are the page's: nothing printed twice.
    let explain = gate["detail"]["explain"].as_str().expect("explain");
    assert!(page.contains(explain), "{explain}");
    assert!(!page.contains("In the record's words"), "{page}");
    // The board's row line is the numbers.
    let board = std::fs::read_to_string(run.site.join("index.html")).expect("board");
    assert!(
        page_text(&board).contains("Null rate 100.0% against the line 50.0% (random-valid-args 12 of 12, no-tools not run, stubbed-empty not run): KILL."),
        "{}",
        page_text(&board)
    );
}

/// `demo-broken`: the reference trials' calls are never answered, while
/// the walk's and the random arm's earlier calls were. The finding follows
/// the reference trials' own reading of the tape, stated from its counts;
/// the whole tape, every arm, would not have said "every call". The null
/// baseline, deferred to an agent's rate the run never measured, reads
/// undecided in the ledger and on the replay's strip, never passed; the
/// plan-power line prints its numbers.
#[test]
fn a_server_that_never_answers_the_reference_trials_is_a_finding_and_a_deferred_gate_is_undecided()
{
    let run = demo("broken", &["--timeout", "1"]);
    let construct = run.gate("construct");
    let reading = &construct["detail"]["tape_reading"];
    let calls = reading["calls_recorded"].as_u64().expect("calls");
    assert!(calls > 0, "{reading}");
    assert_eq!(reading["no_response"].as_u64(), Some(calls), "{reading}");
    let whole: u64 = run.record["trace_stats"]["planes"]["mcp"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["calls"].as_u64().unwrap_or(0))
        .sum();
    assert!(whole > calls, "other arms called the server too: {whole}");

    let page = run.page();
    let finding = format!(
        "Every one of the {calls} tools/call requests the reference trials made went unanswered: the server listed its tools and then sent no protocol response to any call. That is a finding about the server, not about the agent, stated from the recorded counts."
    );
    assert!(page.contains(&finding), "{page}");
    let notes = run.record["notes"]["own"].to_string();
    assert!(
        notes.contains("That is a finding about the server"),
        "{notes}"
    );

    // Deferred, then never decided: the run stopped before the drive.
    let null = run.gate("null_baseline");
    assert_eq!(null["detail"]["decision"], "DEFERRED", "{null}");
    let html = run.html();
    let row = ledger_row(&html, "null_baseline");
    assert!(
        row.starts_with("undecided | null_baseline cheap undecided awaiting_agent_rate"),
        "{row}"
    );
    assert!(!row.contains("passed"), "{row}");
    let plan = ledger_row(&html, "plan_power");
    let power = run.gate("plan_power")["detail"]["achieved_power"]
        .as_f64()
        .expect("power");
    assert!(
        plan.contains(&format!(
            "achieved power {power:.2} against the planned 0.80"
        )),
        "{plan}"
    );

    // The replay's strip reads the same from the tapes alone.
    let mut builder = fitness_shared::tape::timeline::TimelineBuilder::new();
    for (plane, name) in fitness_shared::site::TAPE_FILES {
        let tape = builder.add_tape(plane);
        builder.push_tape(tape, &std::fs::read(run.dir.join(name)).expect("tape"));
    }
    let shape = fitness_shared::tape::timeline::Shape::of(&builder.finish());
    let null_ticks: Vec<_> = shape
        .ticks
        .iter()
        .filter(|t| t.gate == "null_baseline")
        .map(|t| t.state)
        .collect();
    assert_eq!(
        null_ticks,
        [fitness_shared::gate_state::GateState::Undecided],
        "{:?}",
        shape.ticks
    );
}

/// The screen's bias is printed once on the board, and every screened row
/// (and its record page) points to it; an unscreened row does not.
#[test]
fn the_board_states_the_screens_bias_once_and_each_screened_row_points_to_it() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let runs = tmp.path().join("runs");
    let mut ids = Vec::new();
    for extra in [&[][..], &["--no-screen"][..]] {
        let out = common::run_bounded(
            &common::run_args(
                "sim/diligent",
                &runs,
                extra,
                &[FITNESS, "demo-server", "good"],
            ),
            Duration::from_secs(300),
        );
        let (dir, record) = common::run_result(&out);
        assert_eq!(
            record["preregistration"]["null_screen"],
            extra.is_empty(),
            "{}",
            record["preregistration"]
        );
        ids.push(dir.file_name().unwrap().to_string_lossy().into_owned());
    }
    let site = tmp.path().join("site");
    publish_runs(tmp.path(), &runs, &site);
    let board = std::fs::read_to_string(site.join("index.html")).expect("board");
    let anchor = fitness_shared::reading::screen::BIAS_ANCHOR;
    assert_eq!(
        board.matches(&format!("id=\"{anchor}\"")).count(),
        1,
        "stated once"
    );
    let text = page_text(&board);
    for paragraph in fitness_shared::reading::screen::BIAS_STATEMENT {
        assert_eq!(text.matches(paragraph).count(), 1, "{paragraph}");
    }
    // Each row's chip: a link to the statement on the screened row only.
    let row_of = |id: &str| -> String {
        let start = board
            .find(&format!("data-run-id=\"{id}\""))
            .unwrap_or_else(|| panic!("row {id}"));
        let end = board[start..].find("</article>").expect("row end") + start;
        board[start..end].to_owned()
    };
    let screened = row_of(&ids[0]);
    let unscreened = row_of(&ids[1]);
    assert!(
        screened.contains(&format!("<a href=\"#{anchor}\""))
            && screened.contains("null-screened suite"),
        "{screened}"
    );
    assert!(!unscreened.contains(&format!("#{anchor}")), "{unscreened}");
    assert!(unscreened.contains("unscreened suite"), "{unscreened}");
    let record_page = |id: &str| {
        std::fs::read_to_string(site.join("runs").join(id).join("index.html")).expect("page")
    };
    assert!(record_page(&ids[0]).contains(&format!("href=\"../.././#{anchor}\"")));
    assert!(!record_page(&ids[1]).contains(&format!("#{anchor}")));
    // A screen registered but never run (the thin suite could not reach
    // its floor) screened nothing: no pointer on its row or its page.
    let thin = demo("thin", &[]);
    assert!(
        thin.record["suite"]["screen_skipped"].is_string(),
        "{}",
        thin.record["suite"]
    );
    assert!(!thin.html().contains(&format!("#{anchor}")));
    let board = std::fs::read_to_string(thin.site.join("index.html")).expect("board");
    assert!(
        !board.contains(&format!("<a href=\"#{anchor}\"")),
        "{board}"
    );
}

/// The canary with its two registered batches: the construct gate is
/// still unresolved after the last, so it resolves to FAIL. The record's
/// verdict and the last batch say FAIL; the page's verdict line, the last
/// batch's column and the closing sentence say what the pooled count
/// resolved to. With no batch registered the protocol says so in words.
#[test]
fn an_extension_ledger_that_runs_out_resolves_to_fail_and_a_zero_policy_says_so() {
    let run = demo("canary", &[]);
    assert_eq!(
        run.record["outcome"], "GATE_FAILED",
        "{:#}",
        run.record["gates"]
    );
    let gate = run.gate("construct");
    assert_eq!(gate["reason"], "unresolved_after_max_extensions");
    assert_eq!(gate["verdict"]["outcome"], "FAIL", "{gate}");
    assert_eq!(gate["detail"]["published"]["outcome"], "EXTEND", "{gate}");
    let batches = run.record["extensions"].as_array().expect("batches");
    assert_eq!(batches.len(), 2);
    assert_eq!(batches[0]["verdict_after"], "EXTEND");
    assert_eq!(batches[1]["verdict_after"], "FAIL");
    let (k, n) = (
        gate["verdict"]["k"].as_u64().unwrap(),
        gate["verdict"]["n"].as_u64().unwrap(),
    );

    let page = run.page();
    assert!(
        regex::Regex::new(&format!(
            r"{k} of {n} against a threshold of 90\.0%, alpha 0\.05, p = [0-9.]+: FAIL\."
        ))
        .unwrap()
        .is_match(&page),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            "After the last of the 2 registered extension batches the pool stood at {k} of {n}"
        )),
        "{page}"
    );
    assert!(
        page.contains("resolves to FAIL, so the run is refused as GATE_FAILED"),
        "{page}"
    );
    let last = regex::Regex::new(r#"<tr class="batch">(.*?)</tr>"#).unwrap();
    let rows: Vec<String> = last
        .captures_iter(&run.html())
        .map(|c| page_text(&c[1]))
        .collect();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows[0].contains("EXTEND, so batch 2"), "{rows:?}");
    assert!(
        rows[1].contains(&format!("{k}/{n} FAIL")) && !rows[1].contains("EXTEND"),
        "{rows:?}"
    );

    let none = demo("canary", &["--max-extensions", "0"]);
    let protocol = none.record["preregistration"]["extension_protocol"]
        .as_str()
        .expect("protocol");
    assert!(!protocol.contains("next of 0"), "{protocol}");
    assert!(
        protocol.starts_with("No extension batch is registered"),
        "{protocol}"
    );
    let page = none.page();
    assert!(!page.contains("0 batches"), "{page}");
    assert!(
        page.contains("Extension policy: no batch registered, so a gate the registered size cannot resolve is refused where it stands (EXTEND_EXHAUSTED)."),
        "{page}"
    );
    assert!(
        page.contains("The registration bought no extension batch, so the unresolved gate is refused where it stands: EXTEND_EXHAUSTED."),
        "{page}"
    );
}

/// `demo-trivia`: the screen deletes every admitted candidate. The run
/// sits with the null models that decided it (the runner's calls), its
/// size says where the admitted candidates went, the screen's ledger lists
/// every deleted candidate with the reply that answered it, and the page
/// prints the seed's reading.
#[test]
fn a_suite_the_screen_empties_reads_as_what_the_server_adds_with_the_screens_ledger() {
    let run = demo("trivia", &[]);
    assert_eq!(
        run.gate("structural")["reason"],
        "all_candidates_null_answerable"
    );
    let admitted = run.record["suite"]["admitted"].as_u64().expect("admitted");
    let screened = &run.record["suite"]["null_screened"];
    assert_eq!(screened["dropped"].as_u64(), Some(admitted), "{screened}");

    // The screen's ledger, beside the record and named in it.
    let list: Value = serde_json::from_slice(
        &std::fs::read(run.dir.join(fitness_shared::site::CANDIDATES_FILE))
            .expect("candidates.json"),
    )
    .expect("json");
    let deleted = list["screened_out"].as_array().expect("screened_out");
    assert_eq!(deleted.len() as u64, admitted, "{list}");
    assert!(
        deleted.iter().all(|c| c["rule"] == "null_screen"
            && c["detail"]
                .as_str()
                .is_some_and(|d| d.starts_with("the reply \""))),
        "{list}"
    );

    let board = board_of(&run.site);
    let group = board["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["rows"].as_array().unwrap().iter().any(|r| *r == run.id()))
        .expect("the row's group")
        .clone();
    assert_eq!(group["id"], "refused:cheap", "{group}");

    let page = run.page();
    assert!(!page.contains("0 tasks admitted to the suite"), "{page}");
    assert!(
        page.contains(&format!(
            "0 tasks in the suite: the null screen deleted all {admitted} candidates that passed admission"
        )),
        "{page}"
    );
    assert!(
        page.contains("That is a statement about what this server adds over what the model already knows, not about how many tools it has"),
        "{page}"
    );
    assert!(
        page.contains(&format!("Deleted by the null screen: {admitted}, each with what the runner answered with no tools")),
        "{page}"
    );
    let first = deleted[0]["prompt"].as_str().expect("prompt");
    assert!(page.contains(first), "{first}");
}

/// The smaller disagreements of issue 62, each on the page of a run made
/// for it: the screen's count with failed calls (every candidate put to it
/// accounted for once), and a failed spec-currency probe coloured as a
/// server fault on the board as on the record page.
#[test]
fn the_screens_failed_calls_and_a_stale_revision_read_as_what_they_are() {
    let unstable = run_and_publish(&[FITNESS, "demo-server", "good"], "sim/unstable", &[]);
    let screen = &unstable.record["suite"]["null_screened"];
    let (put, errors, dropped) = (
        screen["screened"].as_u64().unwrap(),
        screen["errors"].as_u64().unwrap(),
        screen["dropped"].as_u64().unwrap(),
    );
    assert!(errors > 0, "{screen}");
    let page = unstable.page();
    assert!(
        page.contains(&format!(
            "{put} candidates put to the screen; {errors} screen calls failed, so {errors} candidates were kept unscreened; of the {} screened, {dropped} deleted",
            put - errors
        )),
        "{page}"
    );
    assert!(!page.contains(&format!("{put} screened,")), "{page}");

    let legacy = run_and_publish(&[FITNESS, "fixture-server", "legacy"], "sim/diligent", &[]);
    let spec = legacy.record["probes"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "spec_currency")
        .expect("spec currency")
        .clone();
    assert_eq!(spec["status"]["result"], "fail", "{spec}");
    let board = std::fs::read_to_string(legacy.site.join("index.html")).expect("board");
    assert!(
        regex::Regex::new(r#"<span title="failed probe: a server fault, not a refusal" class="spec chip server-fault">spec [0-9-]+ \(not the current revision\)</span>"#)
            .unwrap()
            .is_match(&board),
        "{board}"
    );
    assert!(
        legacy
            .html()
            .contains(r#"<tr class="server-fault"><th scope="row">spec_currency</th>"#)
    );
}

/// A local server that names its model `-` (llama.cpp's stream does): the
/// record keeps no reported name, and the page never prints "the provider
/// reported -".
#[tokio::test(flavor = "multi_thread")]
async fn a_model_name_that_names_nothing_is_not_printed_as_the_providers() {
    use model_fake::{FakeApi, Reply};
    let script = (0..400)
        .map(|_| {
            Reply::json(serde_json::json!({
                "model": "-",
                "choices": [{"message": {"role": "assistant", "content": "I do not know."}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 4}
            }))
        })
        .collect();
    let fake = FakeApi::start(script).await;
    let (runs, dir, record) =
        common::run_on_fake_api(&fake, &["--generator", "schema-walk/2", "--no-screen"]).await;
    assert!(!fake.seen().is_empty(), "the runner was called");
    assert!(
        record["run"].get("runner_reported").is_none(),
        "{}",
        record["run"]
    );
    let tmp = tempfile::tempdir().expect("tempdir");
    let site = tmp.path().join("site");
    publish_runs(tmp.path(), runs.path(), &site);
    let page = read_page(&site, &dir);
    assert!(
        page.contains("Runner model openai/fake-runner Judge model"),
        "{page}"
    );
    assert!(!page.contains("(the provider reported"), "{page}");
}

fn read_page(site: &Path, dir: &Path) -> String {
    page_text(
        &std::fs::read_to_string(
            site.join("runs")
                .join(dir.file_name().unwrap())
                .join("index.html"),
        )
        .expect("the record page"),
    )
}

/// An imported `fitness-report/1` record that generated 12 candidates and
/// admitted 5: the gate's block and the ledger below it print the same
/// candidates, and no registered size the record never held.
#[test]
fn an_imported_record_prints_its_candidates_and_suite_the_same_way_twice() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let site = tmp.path().join("site");
    let viewer = common::fake_viewer(tmp.path());
    let anchor = common::anchor_dir();
    let out = common::fitness(&[
        "publish",
        "--import",
        common::s(&anchor.join("runs.json")),
        "--traces",
        common::s(&anchor.join("traces")),
        "--viewer",
        common::s(&viewer),
        "--out",
        common::s(&site),
    ]);
    assert!(out.status.success(), "{}", common::text(&out));
    let id = "docs-mcp-cloudflare-com-2026-08-19T22-06-43-422Z";
    let record: Value = serde_json::from_slice(
        &std::fs::read(site.join("runs").join(id).join("record.json")).expect("record"),
    )
    .expect("json");
    let source = &record["gates"]["records"][1]["source_detail"];
    assert_eq!(
        (source["nRequested"].as_u64(), source["nGenerated"].as_u64()),
        (Some(12), Some(5))
    );
    let page = read_page(&site, &site.join("runs").join(id));
    assert_eq!(
        page.matches("Candidates generated: 12").count(),
        2,
        "{page}"
    );
    assert!(!page.contains("Candidates generated: 5"), "{page}");
    assert!(page.contains("Admitted: 5"), "{page}");
    assert!(
        !page.contains("registered 12") && !page.contains("registered 5"),
        "{page}"
    );
}
