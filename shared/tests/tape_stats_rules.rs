//! The pairing and counting rules of `mcp-tape.stats/1`, each on a small
//! tape written for it.

use fitness_shared::stats::percentile_nearest_rank_as_reference as percentile;
use fitness_shared::tape::add_tape;
use fitness_shared::tape::stats::{
    ErrorSource, Origin, Stats, StatsBuilder, ToolStats, merge_planes,
};

fn stats_of(files: &[&str]) -> Stats {
    let mut builder = StatsBuilder::new();
    for text in files {
        add_tape(text.as_bytes(), &mut builder).expect("memory");
    }
    builder.finish(None)
}

fn call(ms: u32, id: &str, tool: &str) -> String {
    format!(
        r#"{{"t":"2026-08-19T20:00:00.{ms:03}Z","dir":"in","raw":{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}"}}}}}}"#
    )
}

fn answer(ms: u32, id: &str, body: &str) -> String {
    format!(
        r#"{{"t":"2026-08-19T20:00:00.{ms:03}Z","dir":"out","raw":{{"jsonrpc":"2.0","id":{id},{body}}}}}"#
    )
}

fn tool<'a>(s: &'a Stats, name: &str) -> &'a ToolStats {
    s.tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name} in {:?}", s.tools))
}

#[test]
fn requests_pair_with_responses_by_id() {
    let tape = [
        call(0, "1", "search"),
        call(10, "2", "search"),
        answer(50, "2", r#""result":{"content":[]}"#),
        answer(100, "1", r#""result":{"content":[]}"#),
    ]
    .join("\n");
    let s = stats_of(&[&tape]);
    let search = tool(&s, "search");
    assert_eq!((search.calls, search.errors, search.pending), (2, 0, 0));
    // Latencies 40 and 100 ms: nearest rank gives the lower for p50.
    assert_eq!(search.p50_ms.map(|n| n.0), Some(40.0));
    assert_eq!(search.p95_ms.map(|n| n.0), Some(100.0));
    assert_eq!(search.origin, Origin::Mcp);
}

#[test]
fn an_error_is_a_jsonrpc_error_or_a_result_flagged_is_error() {
    let tape = [
        call(0, "1", "a"),
        answer(5, "1", r#""error":{"code":-32602,"message":"bad args"}"#),
        call(10, "2", "a"),
        answer(
            15,
            "2",
            r#""result":{"isError":true,"content":[{"type":"text","text":" no such page "}]}"#,
        ),
        call(20, "3", "a"),
        answer(25, "3", r#""result":{"isError":false,"content":[]}"#),
    ]
    .join("\n");
    let s = stats_of(&[&tape]);
    assert_eq!(tool(&s, "a").errors, 2);
    let messages: Vec<&str> = s.errors.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages, ["bad args (code -32602)", "no such page"]);
    assert!(s.errors.iter().all(|e| e.source == ErrorSource::Tool));
}

#[test]
fn a_request_with_no_response_is_pending_and_untimed() {
    let tape = [
        call(0, "1", "slow"),
        call(10, "2", "slow"),
        answer(30, "2", r#""result":{}"#),
    ]
    .join("\n");
    let s = stats_of(&[&tape]);
    let slow = tool(&s, "slow");
    assert_eq!((slow.calls, slow.pending), (2, 1));
    assert_eq!(
        slow.p50_ms.map(|n| n.0),
        Some(20.0),
        "only the timed call counts"
    );
    let never = stats_of(&[&call(0, "9", "never")]);
    let never = tool(&never, "never");
    assert_eq!((never.calls, never.pending, never.p50_ms), (1, 1, None));
}

#[test]
fn ids_are_keyed_per_source_file() {
    // The same id in two files never pairs across them.
    let requests = call(0, "1", "x");
    let response = answer(40, "1", r#""result":{}"#);
    let s = stats_of(&[&requests, &response]);
    assert_eq!(tool(&s, "x").pending, 1);
    let together = stats_of(&[&format!("{requests}\n{response}")]);
    assert_eq!(tool(&together, "x").pending, 0);
}

#[test]
fn ids_compare_as_javascript_strings() {
    // The reference keys by String(id): 7 and "7" are the same request.
    let tape = [call(0, "7", "x"), answer(9, "\"7\"", r#""result":{}"#)].join("\n");
    assert_eq!(tool(&stats_of(&[&tape]), "x").pending, 0);
}

#[test]
fn percentiles_are_nearest_rank_in_whole_ms() {
    let sample: Vec<f64> = (1..=20).map(|i| f64::from(i) * 10.0).collect();
    assert_eq!(percentile(&sample, 50.0), Some(100.0));
    assert_eq!(percentile(&sample, 95.0), Some(190.0));
    assert_eq!(percentile(&[7.0], 95.0), Some(7.0));
    assert_eq!(percentile(&[], 50.0), None);
}

const TURN_TAPE: &str = concat!(
    r#"{"v":1,"type":"meta","startedAt":"2026-08-19T20:00:00.000Z","label":"l","kind":"llm","command":["c"]}"#,
    "\n",
    r#"{"t":"2026-08-19T20:00:01.000Z","type":"turn","role":"assistant","model":"claude-sonnet-5","usage":{"input_tokens":1000,"output_tokens":100},"blocks":[{"type":"tool_use","id":"tu1","name":"search","input":{}}]}"#,
    "\n",
    r#"{"t":"2026-08-19T20:00:03.000Z","type":"turn","role":"user","blocks":[{"type":"tool_result","tool_use_id":"tu1","content":"boom","is_error":true}]}"#,
    "\n",
    r#"{"t":"2026-08-19T20:00:04.000Z","type":"turn","role":"assistant","model":"claude-sonnet-5","echoed":true,"usage":{"input_tokens":999999,"output_tokens":999999},"blocks":[{"type":"tool_use","id":"tu1","name":"search","input":{}}]}"#,
    "\n",
    r#"{"t":"2026-08-19T20:00:05.000Z","type":"turn","role":"assistant","model":"mystery-model","usage":{"input_tokens":10,"output_tokens":1}}"#,
    "\n",
    r#"{"t":"2026-08-19T20:00:06.000Z","type":"end","reason":"eval_complete","durationMs":6000}"#,
    "\n",
);

#[test]
fn echoed_turns_are_never_calls_tokens_or_tool_uses() {
    let s = stats_of(&[TURN_TAPE]);
    let models = s
        .models
        .as_ref()
        .expect("assistant turns give a models block");
    let sonnet = &models.per_model[0];
    assert_eq!(sonnet.model, "claude-sonnet-5");
    assert_eq!(sonnet.calls, 1);
    assert_eq!(sonnet.input_tokens.map(|n| n.0), Some(1000.0));
    assert_eq!(models.summary.echoed_turns, 1);
    assert_eq!(models.summary.turns, 4);
    let search = tool(&s, "search");
    assert_eq!(
        (search.calls, search.errors, search.origin),
        (1, 1, Origin::Turn)
    );
    assert_eq!(search.p50_ms.map(|n| n.0), Some(2000.0));
}

#[test]
fn cost_is_a_floor_when_a_model_has_no_price() {
    let s = stats_of(&[TURN_TAPE]);
    let cost = &s.models.as_ref().expect("models").cost;
    // 1000 in at $2/M + 100 out at $10/M on claude-sonnet-5.
    assert_eq!(cost.total_usd.map(|n| n.0), Some(0.003));
    assert!(cost.partial);
    assert_eq!(cost.unpriced_models, ["mystery-model"]);
}

#[test]
fn a_wire_plane_has_no_models_block() {
    let s = stats_of(&[&call(0, "1", "x")]);
    assert!(s.models.is_none());
    let json = serde_json::to_value(&s).expect("serialise");
    assert!(json["models"].is_null(), "the field is there, as null");
}

#[test]
fn session_counts_every_line_and_the_skipped_ones() {
    let tape = format!("{TURN_TAPE}garbage\n{{\"dir\":\"sideways\"}}\n");
    let s = stats_of(&[&tape]);
    let r = &s.session.records;
    assert_eq!((r.total, r.meta, r.turn, r.end, r.other), (7, 1, 4, 1, 1));
    assert_eq!(s.session.skipped_lines, 1);
    assert_eq!(s.session.kind.as_deref(), Some("llm"));
    assert_eq!(s.session.duration_ms.map(|n| n.0), Some(6000.0));
    assert_eq!(s.session.end_reason.as_deref(), Some("eval_complete"));
}

#[test]
fn two_planes_merge_without_double_counting() {
    let wire = [call(0, "1", "search"), answer(500, "1", r#""result":{}"#)].join("\n");
    let merged = merge_planes(stats_of(&[&wire]), stats_of(&[TURN_TAPE]), None);
    // Tools come from the wire plane only; records are summed.
    assert_eq!(tool(&merged.merged, "search").calls, 1);
    assert_eq!(tool(&merged.merged, "search").origin, Origin::Mcp);
    assert_eq!(merged.merged.session.records.total, 2 + 6);
    assert_eq!(merged.merged.session.kind.as_deref(), Some("mcp+llm"));
    let json = serde_json::to_value(&merged).expect("serialise");
    assert_eq!(json["toolsPlane"], "mcp");
    assert_eq!(json["planes"]["agent"]["tools"][0]["origin"], "turn");
}

#[test]
fn a_duplicated_key_reads_as_json_parse_reads_it_last_wins() {
    // The second "params" wins, so the call is to "b", and the line counts.
    let tape = r#"{"t":"2026-08-19T20:00:00.000Z","dir":"in","raw":{"id":1,"method":"tools/call","params":{"name":"a"},"params":{"name":"b"}}}"#;
    let s = stats_of(&[tape]);
    assert_eq!(s.session.records.message, 1);
    assert_eq!(tool(&s, "b").calls, 1);
    assert!(s.tools.iter().all(|t| t.name != "a"));
}

#[test]
fn bytes_that_are_not_utf8_inside_a_string_read_as_a_replacement_character() {
    // readFileSync(path, 'utf8') turns them into U+FFFD; the line still counts.
    let mut tape = br#"{"t":"2026-08-19T20:00:00.000Z","dir":"in","raw":{"id":1,"method":"tools/call","params":{"name":"a"#.to_vec();
    tape.extend_from_slice(b"\xff\"}}}\n");
    let mut builder = StatsBuilder::new();
    let skips = add_tape(tape.as_slice(), &mut builder).expect("memory");
    let s = builder.finish(None);
    assert_eq!(skips.count, 0);
    assert_eq!(s.tools[0].name, "a\u{fffd}");
}

#[test]
fn the_reference_rank_and_the_exact_rank_differ_only_where_the_division_rounds() {
    use fitness_shared::stats::percentile_nearest_rank;
    // At the 50th and 95th percentiles the stats use, the two agree for
    // every n up to 1,000; at others the division rounds up a rank:
    // 28% of 25 is rank 7, but 0.28 * 25 computes to 7.000000000000001.
    assert_eq!(
        percentile_nearest_rank(&(1..=25).map(f64::from).collect::<Vec<_>>(), 28.0),
        Some(7.0)
    );
    assert_eq!(
        percentile(&(1..=25).map(f64::from).collect::<Vec<_>>(), 28.0),
        Some(8.0)
    );
    let mut differ = 0;
    for n in 1..=1000usize {
        let sample: Vec<f64> = (1..=n).map(|i| i as f64).collect();
        for p in (1..100).map(f64::from) {
            let exact = percentile_nearest_rank(&sample, p).unwrap();
            let reference = percentile(&sample, p).unwrap();
            // The reference's rank is never lower, and at most one higher.
            assert!(
                reference >= exact && reference - exact <= 1.0,
                "n {n} p {p}"
            );
            differ += usize::from(reference != exact);
            if p == 50.0 || p == 95.0 {
                assert_eq!(reference, exact, "n {n} p {p}");
            }
        }
    }
    assert_eq!(differ, 141, "the pairs where the division rounds");
}
