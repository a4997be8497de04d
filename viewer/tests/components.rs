//! Component tests in a real browser: the interval bar, the refusal slot and
//! a whole row, mounted into the page and read back from the DOM.

#![cfg(target_arch = "wasm32")]

use fitness_shared::board::{Row, RowResult};
use fitness_shared::record::Interval;
use fitness_viewer::url_state::ReplaySource;
use fitness_viewer::{IntervalBar, ResultSlot, RowView, UrlState, View};
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// Mount `f` into a fresh container and return the container.
fn mount<F, V>(f: F) -> web_sys::HtmlElement
where
    F: FnOnce() -> V + 'static,
    V: IntoView + 'static,
{
    let document = web_sys::window().unwrap().document().unwrap();
    let host: web_sys::HtmlElement = document.create_element("div").unwrap().unchecked_into();
    document.body().unwrap().append_child(&host).unwrap();
    let handle = leptos::mount::mount_to(host.clone(), f);
    std::mem::forget(handle);
    host
}

fn text(host: &web_sys::HtmlElement, css: &str) -> String {
    host.query_selector(css)
        .unwrap()
        .unwrap_or_else(|| panic!("{css} not rendered"))
        .text_content()
        .unwrap_or_default()
}

fn style(host: &web_sys::HtmlElement, css: &str) -> String {
    host.query_selector(css)
        .unwrap()
        .unwrap_or_else(|| panic!("{css} not rendered"))
        .get_attribute("style")
        .unwrap_or_default()
}

fn hf_interval() -> Interval {
    Interval {
        rate: 22.0 / 24.0,
        low: 0.742,
        high: 0.977,
        k: 22,
        n: 24,
    }
}

fn refused_row() -> Row {
    serde_json::from_value(serde_json::json!({
        "id": "mcp-vercel-com-2026-08-20T18-17-32-685Z",
        "server": {"slug": "mcp-vercel-com", "target": "https://mcp.vercel.com/mcp", "era": "modern"},
        "runner_model": "claude-sonnet-5",
        "credential": "anonymous",
        "suite": "0123456789ab",
        "started_at": "2026-08-20T18:17:32.685Z",
        "attempt": {"index": 2, "of": 2, "others": {"INSUFFICIENT_SURFACE": 1}},
        "result": {"kind": "refused", "code": "INSUFFICIENT_SURFACE", "gate": "structural", "tier": "free",
                   "reason": "too_few_generated", "teaser": "1 admitted case is below the minimum 8.", "k": 1, "n": 24},
        "probes": {"spec": "2026-07-28", "passed": 5, "applicable": 6, "unknown": 1, "failed": ["bogus-version-accepted"]},
        "cost": {"kind": "floor", "usd": 0.264189, "reasons": ["judge spend is not recorded"]},
        "signature": {"state": "unsigned"}
    }))
    .unwrap()
}

#[wasm_bindgen_test]
fn interval_bar_draws_the_band_and_the_point_on_the_0_100_axis() {
    let host = mount(|| view! { <IntervalBar interval=hf_interval() /> });
    assert_eq!(style(&host, ".band"), "left:74.20%;width:23.50%");
    assert_eq!(style(&host, ".point"), "left:91.67%");
    let label = host
        .query_selector(".axis")
        .unwrap()
        .unwrap()
        .get_attribute("aria-label")
        .unwrap();
    assert_eq!(
        label,
        "First-try success 91.7% (95% CI 74.2% to 97.7%), 22 of 24"
    );
}

#[wasm_bindgen_test]
fn scored_slot_prints_the_stored_interval() {
    let host = mount(|| {
        view! { <ResultSlot result=RowResult::Scored { first_try: hf_interval(), caveat: None } /> }
    });
    assert!(host.query_selector(".result.scored").unwrap().is_some());
    assert!(host.query_selector(".result.refused").unwrap().is_none());
    assert_eq!(
        text(&host, ".interval-text"),
        "91.7% (95% CI 74.2% to 97.7%), 22 of 24"
    );
}

#[wasm_bindgen_test]
fn refusal_takes_the_score_slot_with_code_gate_teaser_and_reason() {
    let host = mount(|| view! { <ResultSlot result=refused_row().result /> });
    assert!(host.query_selector(".result.scored").unwrap().is_none());
    assert!(
        host.query_selector(".axis").unwrap().is_none(),
        "a refusal draws no score"
    );
    assert_eq!(text(&host, ".result.refused .code"), "INSUFFICIENT_SURFACE");
    assert_eq!(
        text(&host, ".result.refused .gate"),
        "stopped at the structural gate"
    );
    assert_eq!(
        text(&host, ".result.refused .teaser"),
        "1 admitted case is below the minimum 8."
    );
    assert_eq!(text(&host, ".result.refused .reason"), "too_few_generated");
}

#[wasm_bindgen_test]
fn row_carries_its_chips_attempts_probes_and_floor_cost() {
    let host = mount(|| view! { <RowView row=refused_row() /> });
    let article = host.query_selector("article.row").unwrap().unwrap();
    assert_eq!(
        article.get_attribute("data-run-id").as_deref(),
        Some("mcp-vercel-com-2026-08-20T18-17-32-685Z")
    );
    assert_eq!(
        article.get_attribute("data-outcome").as_deref(),
        Some("INSUFFICIENT_SURFACE")
    );
    assert_eq!(text(&host, ".chip.generator"), "generator not recorded");
    assert_eq!(text(&host, ".chip.runner"), "runner claude-sonnet-5");
    assert_eq!(text(&host, ".chip.screened"), "screen not recorded");
    assert_eq!(text(&host, ".suite"), "0123456789ab");
    // The other attempts are counted, and the server's history is one link.
    assert_eq!(
        text(&host, ".attempt"),
        "Run 2 of 2 of this server; the other 1: 1 INSUFFICIENT_SURFACE. Every run of this server"
    );
    assert_eq!(host.query_selector_all(".attempt a").unwrap().length(), 1);
    assert_eq!(
        host.query_selector(".attempt a.history")
            .unwrap()
            .unwrap()
            .get_attribute("href")
            .as_deref(),
        Some("servers/mcp-vercel-com/")
    );
    assert_eq!(
        host.query_selector("a.open-record")
            .unwrap()
            .unwrap()
            .get_attribute("href")
            .as_deref(),
        Some("runs/mcp-vercel-com-2026-08-20T18-17-32-685Z/")
    );
    assert_eq!(text(&host, ".chip.signature"), "Unsigned");
    assert_eq!(text(&host, ".checks"), "checks passed 5 of 6, 1 unknown");
    assert_eq!(text(&host, ".chip.server-fault"), "bogus-version-accepted");
    let cost = host.query_selector(".cost.floor").unwrap().unwrap();
    assert!(cost.text_content().unwrap().starts_with("at least $0.26"));
    assert_eq!(
        cost.get_attribute("title").as_deref(),
        Some("judge spend is not recorded")
    );
    assert_eq!(text(&host, ".open-record"), "Open the record");
    assert_eq!(
        text(&host, ".no-tapes"),
        "No tapes were published for this run."
    );
    let all = host.text_content().unwrap();
    assert!(
        !all.contains('#') && !all.contains("rank"),
        "no rank or position: {all}"
    );
}

#[wasm_bindgen_test]
fn record_text_is_rendered_as_text_never_html() {
    let mut row = refused_row();
    if let RowResult::Refused { reason, .. } = &mut row.result {
        *reason = "<b id=\"injected\">bold</b>".to_owned();
    }
    let host = mount(move || view! { <RowView row=row /> });
    assert!(host.query_selector("#injected").unwrap().is_none());
    assert_eq!(text(&host, ".reason"), "<b id=\"injected\">bold</b>");
}

#[wasm_bindgen_test]
fn url_state_reads_the_page_from_the_path_and_the_query() {
    use fitness_shared::site::Page;
    use fitness_viewer::View;
    let state = UrlState::parse(None, "?run=gitmcp-io-2026-08-20T03-30-29-022Z&tier=paid");
    assert_eq!(
        state.view,
        View::Record("gitmcp-io-2026-08-20T03-30-29-022Z".to_owned())
    );
    assert_eq!(state.tier.as_deref(), Some("paid"));
    assert_eq!(UrlState::parse(None, ""), Default::default());
    // A record page is its path; its replay is a query on it.
    let page = Page::Record("r1".to_owned());
    assert_eq!(
        UrlState::parse(Some(&page), "").view,
        View::Record("r1".into())
    );
    assert_eq!(
        UrlState::parse(Some(&page), "?view=replay").view,
        View::Replay(ReplaySource::Run("r1".into()))
    );
    let server = Page::Server("svelte".to_owned());
    assert_eq!(
        UrlState::parse(Some(&server), "").view,
        View::Server("svelte".into())
    );
}

#[wasm_bindgen_test]
fn replay_links_parse_from_the_query() {
    let s = UrlState::parse(
        None,
        "?run=abc&view=replay&event=12&corr=probe%3A%3Abogus&arm=probes&kind=call&embed=1",
    );
    assert_eq!(s.view, View::Replay(ReplaySource::Run("abc".into())));
    assert_eq!(s.links.event, Some(12));
    assert_eq!(s.links.corr.as_deref(), Some("probe::bogus"));
    assert_eq!(s.links.arm.as_deref(), Some("probes"));
    assert_eq!(s.links.kind.as_deref(), Some("call"));
    assert!(s.embed);
    let t = UrlState::parse(None, "?trace=https://a.example/m.jsonl;b/agent.jsonl");
    assert_eq!(
        t.view,
        View::Replay(ReplaySource::Trace(vec![
            "https://a.example/m.jsonl".into(),
            "b/agent.jsonl".into()
        ]))
    );
}

#[wasm_bindgen_test]
fn probe_evidence_links_open_the_replay_on_their_trial() {
    let href = fitness_viewer::api::replay_trial_url("run-1", "probe::bogus version");
    assert_eq!(
        href,
        "runs/run-1/?view=replay&corr=probe%3A%3Abogus%20version"
    );
    // And the link reads back as the same trial.
    let page = fitness_shared::site::Page::parse("runs/run-1/").unwrap();
    let s = UrlState::parse(Some(&page), href.split_once('?').unwrap().1);
    assert_eq!(s.links.corr.as_deref(), Some("probe::bogus version"));
    assert_eq!(s.view, View::Replay(ReplaySource::Run("run-1".into())));
}

#[wasm_bindgen_test]
fn links_lead_back_to_the_site_root_from_any_page() {
    use fitness_viewer::api;
    api::set_base("../../");
    assert_eq!(api::site_url("./"), "../../");
    assert_eq!(api::record_page_url("r2"), "../../runs/r2/");
    assert_eq!(api::server_page_url("s"), "../../servers/s/");
    // A run id that could leave its directory makes no link at all.
    assert_eq!(api::record_page_url("../etc"), "");
    api::set_base("");
    assert_eq!(api::site_url("./"), "./");
    assert_eq!(api::replay_url("r2"), "runs/r2/?view=replay");
}

/// A real record: the canary demo server run by `fitness run` with the sim
/// runner (EXTEND_EXHAUSTED), carrying two findings and two proposals.
const CANARY: &str = include_str!("fixtures/canary-record.json");

#[wasm_bindgen_test]
fn findings_and_proposals_render_with_links_into_the_replay() {
    let record = fitness_shared::record::RunRecord::from_json(CANARY).expect("the fixture reads");
    assert_eq!(record.findings.len(), 2);
    let run_id = record.run.id.clone();
    let host = mount(move || {
        view! {
            <fitness_viewer::routes::record::RecordView
                record=std::sync::Arc::new(record)
                signature=RwSignal::new(fitness_shared::integrity::SignatureState::Unsigned)
                site_key=false
            />
        }
    });
    let findings = host.query_selector_all(".finding").unwrap();
    assert_eq!(findings.length(), 2);
    let all = text(&host, ".findings");
    assert!(all.contains("get_profile.user"), "{all}");
    assert!(all.contains("purge_cache"), "{all}");
    assert!(all.contains("Proposed rewrites"), "{all}");
    let link: web_sys::Element = host
        .query_selector(".finding a.evidence")
        .unwrap()
        .expect("an evidence link");
    let href = link.get_attribute("href").unwrap_or_default();
    assert!(
        href.starts_with(&format!("runs/{run_id}/?view=replay")),
        "{href}"
    );
    assert!(
        link.text_content()
            .unwrap_or_default()
            .contains("mcp.jsonl line")
    );
}

#[wasm_bindgen_test]
fn a_row_links_to_its_standing_notes_set_in_the_methods_section() {
    let mut row = refused_row();
    let set_id = format!("sha256:{}", "ab0e7c242ddd".repeat(5) + "abcd");
    row.standing = Some(fitness_shared::board::RowStanding {
        set_id: set_id.clone(),
        count: 7,
    });
    let host = mount(move || view! { <RowView row=row /> });
    let link = host.query_selector("a.standing-link").unwrap().unwrap();
    assert_eq!(link.text_content().unwrap_or_default(), "7 standing notes");
    assert_eq!(
        link.get_attribute("href").as_deref(),
        Some("#standing-ab0e7c242ddd")
    );
    // A row without a set has no link.
    let host = mount(|| view! { <RowView row=refused_row() /> });
    assert!(host.query_selector("a.standing-link").unwrap().is_none());
}

#[wasm_bindgen_test]
fn a_void_slot_says_no_gate_decided_and_reads_its_reason_as_prose() {
    let result: RowResult = serde_json::from_value(serde_json::json!({
        "kind": "refused", "code": "VOID", "tier": "unattributed",
        "reason": "No score. The run reached its spend cap of 60 model calls before it completed its registered size.",
        "teaser": "The run ended before it completed its registered size."
    }))
    .unwrap();
    let host = mount(move || view! { <ResultSlot result=result /> });
    assert_eq!(text(&host, ".result.refused .code"), "VOID");
    assert_eq!(
        text(&host, ".result.refused .gate"),
        "no gate decided this run"
    );
    assert!(host.query_selector(".reason.prose").unwrap().is_some());
    // A code-like reason stays monospace.
    let host = mount(|| view! { <ResultSlot result=refused_row().result /> });
    assert!(host.query_selector(".reason.prose").unwrap().is_none());
}

#[wasm_bindgen_test]
fn an_imported_pass_keeps_its_number_and_says_what_our_rule_reads() {
    let caveat = fitness_shared::board::ScoreCaveat {
        reads: "EXTEND".into(),
        k: 22,
        n: 24,
        wilson_low: 0.7415,
        threshold: 0.9,
        achieved_power: 0.344,
        planned_power: 0.8,
        imported: true,
    };
    let economics = fitness_shared::board::RowEconomics {
        calls: Some(1.5),
        tokens: Some(17921.0),
        usd: Some(0.0405),
    };
    let host = mount(move || {
        view! {
            <ResultSlot
                result=RowResult::Scored { first_try: hf_interval(), caveat: Some(caveat) }
                economics=Some(economics)
            />
        }
    });
    assert_eq!(
        text(&host, ".interval-text"),
        "91.7% (95% CI 74.2% to 97.7%), 22 of 24"
    );
    assert_eq!(
        text(&host, ".caveat"),
        "Imported pass. Under fitness-report/2 the construct gate reads EXTEND: 22 of 24, Wilson 95% low 74.2%, below the 90% threshold."
    );
    assert_eq!(
        text(&host, ".economics"),
        "1.5 calls, 17,921 tokens, $0.0405 per completed task"
    );
}
