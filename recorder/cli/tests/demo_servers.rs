//! The bundled demo servers over stdio, through the same `Session` a run
//! uses: what each advertises, that each answers, and each one's designed
//! misbehaviour (broken's silence, constant's indifference, canary's hazards).

use crate::common;

use std::time::{Duration, Instant};

use common::FITNESS;
use fitness_recorder::demo::{DEMO_SERVERS, facts};
use fitness_recorder::mcp::connect::{Session, Target};
use fitness_recorder::mcp::stdio::StdioTarget;
use fitness_recorder::mcp::tap::Tap;
use rmcp::model::{CallToolResult, Tool};
use serde_json::{Value, json};

async fn connect(name: &str, extra: &[&str], timeout: Duration) -> Session {
    let mut args = vec!["demo-server".to_owned(), name.to_owned()];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    let target = Target::Stdio(StdioTarget {
        program: FITNESS.to_owned(),
        args,
        env: vec![],
    });
    Session::connect(&target, Tap::disabled(), None, timeout)
        .await
        .unwrap_or_else(|e| panic!("demo server {name} connects: {e:#}"))
}

async fn call(session: &Session, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().cloned().expect("arguments are an object");
    session
        .call_tool(tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool}: {e:#}"))
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_ref()).collect()
}

fn read_only(t: &Tool) -> bool {
    t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true)
}

const T: Duration = Duration::from_secs(20);

#[tokio::test]
async fn good_has_seven_read_only_tools_that_all_answer() {
    let s = connect("good", &[], T).await;
    let tools = s.list_tools().await.expect("tools/list");
    assert_eq!(
        names(&tools),
        [
            "country_facts",
            "convert_length",
            "order_lookup",
            "word_stats",
            "hash_text",
            "prime_info",
            "color_info"
        ]
    );
    assert!(tools.iter().all(read_only));
    // Rich argument spaces: an enum of 15+ values, integer ranges.
    let code_enum = &tools[0].input_schema["properties"]["code"]["enum"];
    assert!(code_enum.as_array().expect("enum").len() >= 15);
    assert_eq!(
        tools[2].input_schema["properties"]["order_id"]["maximum"],
        1030
    );
    let calls = [
        (
            "country_facts",
            json!({"code": "NO", "field": "capital"}),
            "Oslo",
        ),
        (
            "convert_length",
            json!({"value": 1, "from": "mile", "to": "kilometre"}),
            "1.60934 kilometre",
        ),
        (
            "order_lookup",
            json!({"order_id": 1001, "field": "customer"}),
            "Ada Okafor",
        ),
        (
            "word_stats",
            json!({"passage": 0, "stat": "word_count"}),
            "18 words",
        ),
        (
            "hash_text",
            json!({"text": "hello", "algorithm": "crc32"}),
            "3610a686",
        ),
        (
            "prime_info",
            json!({"n": 2000, "query": "nth_prime"}),
            "17389",
        ),
        (
            "color_info",
            json!({"name": "coral", "format": "hex"}),
            "#FF7F50",
        ),
    ];
    for (tool, args, expected) in calls {
        let r = call(&s, tool, args).await;
        assert_ne!(r.is_error, Some(true), "{tool}: {}", text(&r));
        assert!(text(&r).contains(expected), "{tool}: {}", text(&r));
    }
    // A wrong argument is a tool error that says what was expected.
    let r = call(
        &s,
        "order_lookup",
        json!({"order_id": 77, "field": "total"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains("between 1001 and 1030; you sent 77"),
        "{}",
        text(&r)
    );
    s.close().await;
}

#[tokio::test]
async fn thin_has_two_argument_less_tools() {
    let s = connect("thin", &[], T).await;
    let tools = s.list_tools().await.expect("tools/list");
    assert_eq!(names(&tools), ["server_version", "ping"]);
    for t in &tools {
        assert!(read_only(t));
        assert_eq!(t.input_schema["properties"], json!({}));
        let r = call(&s, &t.name, json!({})).await;
        assert_ne!(r.is_error, Some(true));
        assert!(!text(&r).is_empty());
    }
    s.close().await;
}

#[tokio::test]
async fn broken_answers_its_first_n_calls_then_never() {
    let s = connect("broken", &["--answer-first", "3"], Duration::from_secs(3)).await;
    let tools = s.list_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 4);
    assert!(tools.iter().all(read_only));
    for n in [1, 2, 3] {
        let r = call(&s, "prime_info", json!({"n": n, "query": "nth_prime"})).await;
        assert_ne!(r.is_error, Some(true));
    }
    let started = Instant::now();
    let args = json!({"n": 4, "query": "nth_prime"})
        .as_object()
        .cloned()
        .expect("object");
    let err = s
        .call_tool("prime_info", args)
        .await
        .expect_err("the fourth call is never answered");
    assert!(format!("{err:#}").contains("no answer within"), "{err:#}");
    assert!(started.elapsed() >= Duration::from_secs(3));
    // It still advertises its tools: only calls go unanswered.
    assert_eq!(s.list_tools().await.expect("tools/list").len(), 4);
    s.close().await;
}

#[tokio::test]
async fn brokens_cut_off_spans_processes_sharing_a_count_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("calls");
    let file = file.to_str().expect("utf-8");
    let extra = ["--answer-first", "2", "--count-file", file];
    let short = Duration::from_secs(3);
    let a = connect("broken", &extra, short).await;
    let b = connect("broken", &extra, short).await;
    let args = json!({"n": 5, "query": "nth_prime"});
    assert_eq!(
        text(&call(&a, "prime_info", args.clone()).await),
        "The requested prime is 11."
    );
    assert_eq!(
        text(&call(&b, "prime_info", args.clone()).await),
        "The requested prime is 11."
    );
    let third = args.as_object().cloned().expect("object");
    assert!(
        a.call_tool("prime_info", third).await.is_err(),
        "the third call overall hangs"
    );
    a.close().await;
    b.close().await;
}

#[tokio::test]
async fn trivia_answers_are_the_shared_fact_table() {
    let s = connect("trivia", &[], T).await;
    let tools = s.list_tools().await.expect("tools/list");
    assert_eq!(names(&tools), ["capital_of", "add"]);
    let instructions = s
        .service
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .expect("trivia gives instructions");
    assert!(instructions.contains("common knowledge"));
    for (country, capital) in facts::CAPITALS {
        let r = call(&s, "capital_of", json!({"country": country})).await;
        assert_eq!(text(&r), *capital);
    }
    assert_eq!(
        text(&call(&s, "add", json!({"a": 19, "b": 23})).await),
        "42"
    );
    s.close().await;
}

#[tokio::test]
async fn constant_ignores_its_arguments() {
    let s = connect("constant", &[], T).await;
    let tools = s.list_tools().await.expect("tools/list");
    assert_eq!(names(&tools), ["status", "uptime"]);
    assert!(tools.iter().all(read_only));
    let mut answers = std::collections::BTreeSet::new();
    for (verbose, region) in [
        (true, "us-east-1"),
        (false, "eu-west-3"),
        (true, "ap-south-1"),
    ] {
        let r = call(&s, "status", json!({"verbose": verbose, "region": region})).await;
        answers.insert(text(&r));
    }
    assert_eq!(
        answers.into_iter().collect::<Vec<_>>(),
        ["status OK build 7731"]
    );
    let a = call(&s, "uptime", json!({"service": "api", "window_days": 1})).await;
    let b = call(&s, "uptime", json!({"service": "web", "window_days": 300})).await;
    assert_eq!(text(&a), text(&b));
    // Arguments are still checked.
    let bad = call(&s, "status", json!({"verbose": true, "region": "mars-1"})).await;
    assert_eq!(bad.is_error, Some(true));
    s.close().await;
}

#[tokio::test]
async fn canary_shows_every_hazard() {
    let s = connect("canary", &[], T).await;
    let tools = s.list_tools().await.expect("tools/list");
    let tool = |n: &str| {
        tools
            .iter()
            .find(|t| t.name == n)
            .unwrap_or_else(|| panic!("canary has {n}"))
            .clone()
    };
    // Destructive, annotated and not.
    let delete = tool("delete_note");
    let a = delete.annotations.as_ref().expect("annotated");
    assert_eq!(a.destructive_hint, Some(true));
    assert_eq!(a.read_only_hint, Some(false));
    assert!(tool("purge_cache").annotations.is_none());
    // Ambiguous: `user` is typed a string but means a numeric id.
    assert_eq!(
        tool("get_profile").input_schema["properties"]["user"]["type"],
        "string"
    );
    let ok = call(&s, "get_profile", json!({"user": "1042"})).await;
    assert_ne!(ok.is_error, Some(true), "{}", text(&ok));
    let by_name = call(&s, "get_profile", json!({"user": "alice"})).await;
    assert_eq!(by_name.is_error, Some(true));
    assert!(text(&by_name).contains("numeric user id"));
    // Flaky: every third fetch_quote fails transiently; the others agree.
    let mut outcomes = Vec::new();
    for _ in 0..6 {
        outcomes.push(call(&s, "fetch_quote", json!({"symbol": "ACME"})).await);
    }
    let failed: Vec<bool> = outcomes.iter().map(|r| r.is_error == Some(true)).collect();
    assert_eq!(failed, [false, false, true, false, false, true]);
    assert!(text(&outcomes[2]).contains("transient"));
    assert_eq!(text(&outcomes[0]), text(&outcomes[4]));
    // Actionable isError over 50.
    let over = call(&s, "list_items", json!({"limit": 73})).await;
    assert_eq!(over.is_error, Some(true));
    assert_eq!(text(&over), "limit must be between 1 and 50; you sent 73");
    let fine = call(&s, "list_items", json!({"limit": 3})).await;
    assert_eq!(text(&fine), "3 items: anchor, beacon, bobbin");
    // Slow.
    let started = Instant::now();
    let slow = call(&s, "slow_report", json!({"id": 9})).await;
    assert!(started.elapsed() >= fitness_recorder::demo::SLOW_REPORT_DELAY);
    assert!(text(&slow).starts_with("Report 9:"));
    // structuredContent violates the declared outputSchema.
    let metrics = tool("get_metrics");
    let schema = metrics
        .output_schema
        .as_ref()
        .expect("declares an outputSchema");
    assert_eq!(schema["properties"]["latency_ms"]["type"], "integer");
    let r = call(&s, "get_metrics", json!({"service": "api"})).await;
    let structured = r.structured_content.expect("structured content");
    assert!(structured["latency_ms"].is_string(), "{structured}");
    // Enough well-behaved read-only tools for a suite.
    let read_only_count = tools.iter().filter(|t| read_only(t)).count();
    assert!(read_only_count >= 7, "{read_only_count}");
    s.close().await;
}

#[test]
fn every_demo_server_starts_and_lists_tools() {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    for (name, _) in DEMO_SERVERS {
        rt.block_on(async {
            let s = connect(name, &[], T).await;
            assert!(
                !s.list_tools().await.expect("tools/list").is_empty(),
                "{name}"
            );
            s.close().await;
        });
    }
}

#[test]
fn answer_first_is_refused_for_other_servers() {
    let out = common::fitness(&["demo-server", "good", "--answer-first", "3"]);
    assert!(!out.status.success());
    assert!(common::text(&out).contains("broken demo server only"));
}
