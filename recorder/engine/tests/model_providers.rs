//! The Anthropic and OpenAI-compatible clients against a fake API on
//! 127.0.0.1 that checks what it receives (path, auth, tool schema shape,
//! message order) and answers from a script: tool calls, a 429 then success,
//! 500s until the retries run out, a malformed body, a timeout.

use crate::model_fake;

use std::time::Duration;

use fitness_recorder::mcp::tap::Tap;
use fitness_recorder::model::ClientOptions;
use fitness_recorder::model::agent::{Budget, ToolMode, TrialEnd, TrialSpec, run_trial};
use fitness_recorder::model::anthropic::AnthropicClient;
use fitness_recorder::model::openai::OpenAiClient;
use fitness_recorder::model::types::{
    ChatRequest, ContentBlock, LlmErrorClass, Message, ModelClient, ModelId, Role, StopReason,
    ToolSpec, Usage,
};
use model_fake::{FakeApi, Reply};
use serde_json::{Value, json};

fn id(s: &str) -> ModelId {
    s.parse().expect("model id")
}

fn opts(timeout_ms: u64, max_retries: u32) -> ClientOptions {
    ClientOptions {
        seed: 7,
        timeout: Duration::from_millis(timeout_ms),
        max_retries,
        ..ClientOptions::default()
    }
}

fn add_tool() -> ToolSpec {
    ToolSpec {
        name: "add".into(),
        description: Some("Add two integers.".into()),
        input_schema: json!({"type": "object", "required": ["a", "b"],
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}),
    }
}

/// A conversation that has already made one tool call.
fn request_after_a_call() -> ChatRequest {
    ChatRequest {
        system: Some("Be exact.".into()),
        messages: vec![
            Message {
                role: Role::User,
                content: vec![ContentBlock::Text {
                    text: "What is 2+3?".into(),
                }],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "add".into(),
                    input: json!({"a": 2, "b": 3}),
                }],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "5".into(),
                    is_error: false,
                }],
            },
        ],
        tools: vec![add_tool()],
        max_tokens: 256,
        temperature: None,
        corr_id: Some("t1".into()),
        json_object: false,
    }
}

fn anthropic(fake: &FakeApi, o: &ClientOptions) -> AnthropicClient {
    AnthropicClient::new(
        &id("anthropic/claude-sonnet-4-5"),
        "sk-ant-test".into(),
        &fake.base,
        o,
    )
    .expect("client")
}

fn openai(fake: &FakeApi, o: &ClientOptions) -> OpenAiClient {
    OpenAiClient::new(
        &id("openai/gpt-4o"),
        Some("sk-oa-test".into()),
        &format!("{}/v1", fake.base),
        o,
    )
    .expect("client")
}

fn anthropic_text(text: &str) -> Reply {
    Reply::json(json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 100, "output_tokens": 7, "cache_read_input_tokens": 40,
                  "cache_creation_input_tokens": 10}
    }))
}

fn openai_text(text: &str) -> Reply {
    Reply::json(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 150, "completion_tokens": 9,
                  "prompt_tokens_details": {"cached_tokens": 50},
                  "completion_tokens_details": {"reasoning_tokens": 4}}
    }))
}

#[tokio::test]
async fn anthropic_sends_the_messages_api_shape_and_reads_usage() {
    let fake = FakeApi::start(vec![
        Reply::json(json!({
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "thinking", "thinking": "add them", "signature": "s"},
                        {"type": "text", "text": "Let me add."},
                        {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 1, "b": 2}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 12, "output_tokens": 30}
        })),
        anthropic_text("5"),
    ])
    .await;
    let client = anthropic(&fake, &opts(5_000, 0));
    let first = client
        .complete(&request_after_a_call())
        .await
        .expect("first");
    assert_eq!(first.stop, StopReason::ToolUse);
    assert_eq!(
        first.content[2],
        ContentBlock::ToolUse {
            id: "toolu_9".into(),
            name: "add".into(),
            input: json!({"a": 1, "b": 2})
        }
    );
    assert!(matches!(&first.content[0], ContentBlock::Thinking { text } if text == "add them"));
    let second = client
        .complete(&request_after_a_call())
        .await
        .expect("second");
    assert_eq!(second.model, "claude-sonnet-4-5-20250929");
    // Anthropic's input_tokens already excludes the cache: kept as is.
    assert_eq!(
        second.usage,
        Some(Usage {
            input_tokens: 100,
            output_tokens: 7,
            cache_read_input_tokens: 40,
            cache_creation_input_tokens: 10,
            thinking_tokens: None
        })
    );
    assert_eq!(second.attempts, 1);

    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    let req = &seen[0];
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some("sk-ant-test"));
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(req.header("authorization"), None);
    let b = &req.body;
    assert_eq!(b["model"], "claude-sonnet-4-5");
    // The stable prefix is marked for the prompt cache: the system text
    // and the last tool.
    assert_eq!(b["system"][0]["text"], "Be exact.");
    assert_eq!(b["system"][0]["cache_control"]["type"], "ephemeral");
    let tools = b["tools"].as_array().expect("tools");
    assert_eq!(
        tools.last().expect("a tool")["cache_control"]["type"],
        "ephemeral"
    );
    assert_eq!(
        tools
            .iter()
            .filter(|t| t.get("cache_control").is_some())
            .count(),
        1,
        "one breakpoint after the tool list"
    );
    assert_eq!(b["max_tokens"], 256);
    assert_eq!(b["tools"][0]["name"], "add");
    assert_eq!(b["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(b["tools"][0]["input_schema"]["required"], json!(["a", "b"]));
    let roles: Vec<&str> = b["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    assert_eq!(b["messages"][1]["content"][0]["type"], "tool_use");
    assert_eq!(b["messages"][1]["content"][0]["id"], "call_1");
    assert_eq!(b["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(b["messages"][2]["content"][0]["tool_use_id"], "call_1");
    assert_eq!(b["messages"][2]["content"][0]["content"], "5");
}

#[tokio::test]
async fn openai_sends_chat_completions_shape_and_normalises_usage() {
    let fake = FakeApi::start(vec![openai_text("5")]).await;
    let client = openai(&fake, &opts(5_000, 0));
    let r = client.complete(&request_after_a_call()).await.expect("ok");
    assert_eq!(r.model, "gpt-4o-2024-08-06");
    assert_eq!(r.content, vec![ContentBlock::Text { text: "5".into() }]);
    // prompt_tokens includes the cached 50; reasoning stays in output.
    assert_eq!(
        r.usage,
        Some(Usage {
            input_tokens: 100,
            output_tokens: 9,
            cache_read_input_tokens: 50,
            cache_creation_input_tokens: 0,
            thinking_tokens: Some(4)
        })
    );
    let seen = fake.seen();
    let req = &seen[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some("Bearer sk-oa-test"));
    let b = &req.body;
    assert_eq!(b["model"], "gpt-4o");
    assert_eq!(b["seed"], 7);
    assert_eq!(b["max_tokens"], 256, "a compatible server gets max_tokens");
    assert_eq!(b["tools"][0]["type"], "function");
    assert_eq!(b["tools"][0]["function"]["name"], "add");
    assert_eq!(b["tools"][0]["function"]["parameters"]["type"], "object");
    let msgs = b["messages"].as_array().expect("messages");
    let roles: Vec<&str> = msgs
        .iter()
        .map(|m| m["role"].as_str().expect("role"))
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool"]);
    assert_eq!(msgs[0]["content"], "Be exact.");
    assert_eq!(msgs[2]["content"], Value::Null);
    assert_eq!(msgs[2]["tool_calls"][0]["id"], "call_1");
    assert_eq!(msgs[2]["tool_calls"][0]["function"]["name"], "add");
    let args: Value = serde_json::from_str(
        msgs[2]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .expect("arguments are a JSON string"),
    )
    .expect("valid JSON");
    assert_eq!(args, json!({"a": 2, "b": 3}));
    assert_eq!(msgs[3]["tool_call_id"], "call_1");
    assert_eq!(msgs[3]["content"], "5");
}

#[tokio::test]
async fn openai_tolerates_local_servers_without_usage_or_ids() {
    let fake = FakeApi::start(vec![Reply::json(json!({
        "choices": [{"message": {"content": null, "tool_calls": [
            {"type": "function", "function": {"name": "add", "arguments": "{\"a\": 1, \"b\": 2}"}},
            {"type": "function", "function": {"name": "add", "arguments": "{a: 1"}}
        ]}, "finish_reason": "tool_calls"}]
    }))])
    .await;
    // No key: a local server needs none.
    let client = OpenAiClient::new(&id("openai/llama3.1:8b"), None, &fake.base, &opts(5_000, 0))
        .expect("client");
    let r = client.complete(&request_after_a_call()).await.expect("ok");
    assert_eq!(r.usage, None);
    assert_eq!(r.model, "llama3.1:8b");
    assert_eq!(r.stop, StopReason::ToolUse);
    assert!(
        matches!(&r.content[0], ContentBlock::ToolUse { id, input, .. } if id == "call_0" && input == &json!({"a": 1, "b": 2}))
    );
    assert!(
        matches!(&r.content[1], ContentBlock::ToolUse { input: Value::String(s), .. } if s == "{a: 1")
    );
    assert_eq!(fake.seen()[0].header("authorization"), None);
    assert_eq!(fake.seen()[0].path, "/chat/completions");
}

/// One trial asking for a capital with no tools, on a fresh agent tape: its
/// outcome and the tape's text.
async fn trial_without_tools(
    client: &dyn ModelClient,
    corr_id: &str,
) -> (fitness_recorder::model::agent::TrialOutcome, String) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("agent.jsonl");
    let tap = Tap::create_kind(&path, "t", vec![], "llm").expect("tape");
    let access = fitness_recorder::access::Access::read_only(&[]);
    let spec = TrialSpec {
        corr_id,
        access: &access,
        prompt: "What is the capital of France?",
        instructions: None,
        tools: &[],
        mode: ToolMode::None,
        reference: None,
        budget: Budget::default(),
    };
    let out = run_trial(client, None, &spec, &tap).await;
    tap.end("done");
    (out, std::fs::read_to_string(&path).expect("tape"))
}

async fn rate_limited_then_ok(client: &dyn ModelClient, fake: &FakeApi) {
    let r = client
        .complete(&request_after_a_call())
        .await
        .expect("retried");
    assert_eq!(r.attempts, 2);
    assert_eq!(r.log.len(), 2);
    assert_eq!(r.log[0].status, Some(429));
    let f = r.log[0].failure.as_ref().expect("first attempt failed");
    assert_eq!(f.class, LlmErrorClass::RateLimited);
    assert_eq!(f.backoff_ms, Some(0), "Retry-After: 0 is honoured");
    assert_eq!(r.log[1].status, Some(200));
    assert!(r.log[1].failure.is_none());
    assert_eq!(fake.seen().len(), 2);
}

#[tokio::test]
async fn a_429_then_success_is_retried_for_both_providers() {
    let fake = FakeApi::start(vec![
        Reply::status(429, "{\"error\":\"slow down\"}").header("retry-after", "0"),
        anthropic_text("ok"),
    ])
    .await;
    rate_limited_then_ok(&anthropic(&fake, &opts(5_000, 3)), &fake).await;
    let fake = FakeApi::start(vec![
        Reply::status(429, "slow down").header("retry-after", "0"),
        openai_text("ok"),
    ])
    .await;
    rate_limited_then_ok(&openai(&fake, &opts(5_000, 3)), &fake).await;
}

#[tokio::test]
async fn retries_are_taped_as_requests_and_errors_without_keys() {
    let fake = FakeApi::start(vec![
        Reply::status(429, "slow down").header("retry-after", "0"),
        openai_text("Paris"),
    ])
    .await;
    let client = openai(&fake, &opts(5_000, 3));
    let (out, text) = trial_without_tools(&client, "null-1").await;
    assert_eq!(out.end, TrialEnd::Answered);
    assert_eq!(out.final_answer.as_deref(), Some("Paris"));
    assert_eq!(out.attempt_failures.len(), 1);
    assert_eq!(out.attempt_failures[0].class, LlmErrorClass::RateLimited);
    assert!(out.model_errors.is_empty());
    assert!(
        fake.seen()[1].body.get("tools").is_none(),
        "no tools offered"
    );
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let kinds: Vec<&str> = lines.iter().filter_map(|l| l["kind"].as_str()).collect();
    assert_eq!(kinds, ["llm", "llm.request", "llm.error", "llm.request"]);
    let err = lines
        .iter()
        .find(|l| l["kind"] == "llm.error")
        .expect("error event");
    assert_eq!(err["raw"]["status"], 429);
    assert_eq!(err["raw"]["class"], "rate_limited");
    assert_eq!(err["corr_id"], "null-1");
    assert!(
        !text.contains("sk-oa-test"),
        "the key never reaches the tape"
    );
    for l in lines.iter().skip(1).filter(|l| l["type"] != "end") {
        assert_eq!(l["corr_id"], "null-1", "{l}");
    }
}

#[tokio::test]
async fn server_errors_exhaust_the_bounded_retries() {
    for provider in ["anthropic", "openai"] {
        let fake = FakeApi::start(vec![
            Reply::status(500, "boom"),
            Reply::status(502, "bad gateway"),
            Reply::status(503, "unavailable"),
            anthropic_text("never reached"),
        ])
        .await;
        let o = opts(5_000, 2);
        let err = match provider {
            "anthropic" => anthropic(&fake, &o).complete(&request_after_a_call()).await,
            _ => openai(&fake, &o).complete(&request_after_a_call()).await,
        }
        .expect_err("500s exhaust the retries");
        assert_eq!(err.class, LlmErrorClass::Server, "{provider}");
        assert_eq!(err.status, Some(503));
        assert_eq!(err.attempts, 3);
        assert_eq!(err.log.len(), 3);
        assert!(err.log.iter().all(|a| a.failure.is_some()));
        assert_eq!(
            err.log[0].failure.as_ref().and_then(|f| f.backoff_ms),
            Some(250)
        );
        assert_eq!(
            err.log[1].failure.as_ref().and_then(|f| f.backoff_ms),
            Some(500)
        );
        assert_eq!(err.log[2].failure.as_ref().and_then(|f| f.backoff_ms), None);
        assert_eq!(fake.seen().len(), 3);
        assert_eq!(fake.left(), 1);
    }
}

#[tokio::test]
async fn a_malformed_body_is_classified_and_not_retried() {
    for (provider, body) in [
        ("anthropic", "this is not json"),
        ("openai", "{\"choices\": [{\"message\": {\"tool_calls\"}"),
        ("anthropic", "{\"id\": \"x\"}"),
        ("openai", "{\"choices\": []}"),
    ] {
        let fake = FakeApi::start(vec![Reply::status(200, body), openai_text("x")]).await;
        let o = opts(5_000, 3);
        let err = match provider {
            "anthropic" => anthropic(&fake, &o).complete(&request_after_a_call()).await,
            _ => openai(&fake, &o).complete(&request_after_a_call()).await,
        }
        .expect_err("malformed");
        assert_eq!(err.class, LlmErrorClass::Malformed, "{provider} {body}");
        assert_eq!(err.attempts, 1);
        assert_eq!(fake.seen().len(), 1);
    }
}

#[tokio::test]
async fn a_timeout_is_retried_then_classified() {
    let fake = FakeApi::start(vec![
        anthropic_text("late").delayed(Duration::from_secs(3)),
        anthropic_text("late").delayed(Duration::from_secs(3)),
    ])
    .await;
    let started = std::time::Instant::now();
    let err = anthropic(&fake, &opts(300, 1))
        .complete(&request_after_a_call())
        .await
        .expect_err("times out");
    assert_eq!(err.class, LlmErrorClass::Timeout);
    assert_eq!(err.attempts, 2);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let fake = FakeApi::start(vec![
        openai_text("late").delayed(Duration::from_secs(3)),
        openai_text("in time"),
    ])
    .await;
    let r = openai(&fake, &opts(300, 1))
        .complete(&request_after_a_call())
        .await
        .expect("second attempt in time");
    assert_eq!(r.attempts, 2);
    assert_eq!(
        r.log[0].failure.as_ref().map(|f| f.class),
        Some(LlmErrorClass::Timeout)
    );
}

#[tokio::test]
async fn auth_and_bad_requests_are_not_retried() {
    let fake = FakeApi::start(vec![Reply::status(401, "bad key"), openai_text("x")]).await;
    let err = openai(&fake, &opts(5_000, 3))
        .complete(&request_after_a_call())
        .await
        .expect_err("401");
    assert_eq!(err.class, LlmErrorClass::Auth);
    assert_eq!(err.attempts, 1);
    let fake = FakeApi::start(vec![Reply::status(400, "bad"), openai_text("x")]).await;
    let err = anthropic(&fake, &opts(5_000, 3))
        .complete(&request_after_a_call())
        .await
        .expect_err("400");
    assert_eq!(err.class, LlmErrorClass::BadRequest);
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test]
async fn an_error_object_in_a_200_body_is_classified_and_retried() {
    // OpenRouter reports upstream failures this way.
    let fake = FakeApi::start(vec![
        Reply::json(json!({"error": {"code": 429, "message": "Provider rate limited"}})),
        Reply::json(json!({"error": {"message": "upstream died"}})),
        openai_text("fine"),
    ])
    .await;
    let r = openai(&fake, &opts(5_000, 3))
        .complete(&request_after_a_call())
        .await
        .expect("third attempt");
    let classes: Vec<_> = r
        .log
        .iter()
        .map(|a| a.failure.as_ref().map(|f| f.class))
        .collect();
    assert_eq!(
        classes,
        [
            Some(LlmErrorClass::RateLimited),
            Some(LlmErrorClass::Server),
            None
        ]
    );
    assert_eq!(
        r.content,
        vec![ContentBlock::Text {
            text: "fine".into()
        }]
    );
}

#[tokio::test]
async fn a_model_that_keeps_failing_ends_the_trial_with_every_attempt_taped() {
    let fake = FakeApi::start(vec![
        Reply::status(529, "overloaded"),
        Reply::status(529, "overloaded"),
    ])
    .await;
    let client = anthropic(&fake, &opts(5_000, 1));
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("agent.jsonl");
    let tap = Tap::create_kind(&path, "t", vec![], "llm").expect("tape");
    let access = fitness_recorder::access::Access::read_only(&[]);
    let spec = TrialSpec {
        corr_id: "f1",
        access: &access,
        prompt: "What is 1 + 1?",
        instructions: None,
        tools: &[],
        mode: ToolMode::None,
        reference: None,
        budget: Budget::default(),
    };
    let out = run_trial(&client, None, &spec, &tap).await;
    tap.end("done");
    assert_eq!(out.end, TrialEnd::ModelFailed);
    assert_eq!(out.final_answer, None);
    assert_eq!(out.model_calls, 0);
    assert_eq!(out.model_errors.len(), 1);
    assert_eq!(out.model_errors[0].class, LlmErrorClass::Server);
    assert_eq!(out.attempt_failures.len(), 2);
    let text = std::fs::read_to_string(&path).expect("tape");
    assert_eq!(text.matches("\"kind\":\"llm.error\"").count(), 2);
    assert_eq!(text.matches("\"kind\":\"llm.request\"").count(), 2);
    assert!(!text.contains("sk-ant-test"));
}

#[tokio::test]
async fn mcp_tool_names_the_apis_reject_are_mapped_and_restored() {
    let mut request = request_after_a_call();
    request.tools.push(ToolSpec {
        name: "files.read".into(),
        description: None,
        input_schema: json!({"type": "object"}),
    });
    let fake = FakeApi::start(vec![
        Reply::json(json!({"content": [{"type": "tool_use", "id": "t1", "name": "files_read",
            "input": {}}], "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1}})),
        Reply::json(json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "files_read", "arguments": "{}"}}]},
            "finish_reason": "tool_calls"}]})),
    ])
    .await;
    let a = anthropic(&fake, &opts(5_000, 0))
        .complete(&request)
        .await
        .expect("anthropic");
    let o = openai(&fake, &opts(5_000, 0))
        .complete(&request)
        .await
        .expect("openai");
    for r in [&a, &o] {
        assert!(
            matches!(&r.content[0], ContentBlock::ToolUse { name, .. } if name == "files.read"),
            "{:?}",
            r.content
        );
    }
    let seen = fake.seen();
    assert_eq!(seen[0].body["tools"][1]["name"], "files_read");
    assert_eq!(seen[1].body["tools"][1]["function"]["name"], "files_read");
    assert_eq!(
        seen[0].body["tools"][0]["name"], "add",
        "valid names are unchanged"
    );
}

/// Retry-After in every form through the real clients: nothing panics, no
/// wait is longer than the client's cap (300 ms here; 20 s in a run), and a
/// nonsense value falls back to the exponential backoff (250 ms first).
#[tokio::test]
async fn retry_after_in_every_form_is_capped_and_nonsense_falls_back() {
    let day = std::time::SystemTime::now() + Duration::from_secs(86_400);
    let far = httpdate::fmt_http_date(day);
    let cases: &[(&'static str, &str, u64)] = &[
        ("retry-after-ms", "1e30", 300),
        ("retry-after-ms", "1.7e308", 300),
        ("retry-after", "1e30", 300),
        ("retry-after", &far, 300),
        ("retry-after", "Sun, 06 Nov 1994 08:49:37 GMT", 0),
        ("retry-after", "0.1", 100),
        ("retry-after-ms", "40", 40),
        ("retry-after-ms", "-5", 250),
        ("retry-after-ms", "NaN", 250),
        ("retry-after-ms", "inf", 250),
        ("retry-after", "-1", 250),
        ("retry-after", "NaN", 250),
        ("retry-after", "soon", 250),
    ];
    for (i, (header, value, expect_ms)) in cases.iter().enumerate() {
        let o = ClientOptions {
            max_backoff: Duration::from_millis(300),
            ..opts(5_000, 1)
        };
        let (fake, r) = if i % 2 == 0 {
            let fake = FakeApi::start(vec![
                Reply::status(429, "slow down").header(header, value),
                openai_text("ok"),
            ])
            .await;
            let r = openai(&fake, &o).complete(&request_after_a_call()).await;
            (fake, r)
        } else {
            let fake = FakeApi::start(vec![
                Reply::status(529, "overloaded").header(header, value),
                anthropic_text("ok"),
            ])
            .await;
            let r = anthropic(&fake, &o).complete(&request_after_a_call()).await;
            (fake, r)
        };
        let r = r.unwrap_or_else(|e| panic!("{header}: {value}: {e}"));
        let waited = r.log[0].failure.as_ref().and_then(|f| f.backoff_ms);
        assert_eq!(waited, Some(*expect_ms), "{header}: {value}");
        assert_eq!(fake.seen().len(), 2);
    }
}

/// A usage block with a negative, fractional, absurd or overflowing count is
/// not summed: the call counts as one without usage, the agent tape says
/// why, and the cost is a floor that names the calls without usage.
#[tokio::test]
async fn nonsense_usage_is_recorded_as_such_and_never_summed() {
    let anthropic_usage = |usage: Value| {
        Reply::json(json!({
            "model": "claude-sonnet-4-5-20250929",
            "content": [{"type": "text", "text": "Paris"}], "stop_reason": "end_turn",
            "usage": usage
        }))
    };
    let openai_usage = |usage: Value| {
        Reply::json(json!({
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris"}, "finish_reason": "stop"}],
            "usage": usage
        }))
    };
    let cases = [
        (
            "anthropic",
            anthropic_usage(json!({"input_tokens": u64::MAX, "output_tokens": u64::MAX})),
            "input_tokens",
        ),
        (
            "anthropic",
            anthropic_usage(json!({"input_tokens": 10, "output_tokens": -3})),
            "output_tokens",
        ),
        (
            "openai",
            openai_usage(json!({"prompt_tokens": 1e300, "completion_tokens": 2})),
            "prompt_tokens",
        ),
        (
            "openai",
            openai_usage(json!({"prompt_tokens": 5, "completion_tokens": 2.5})),
            "completion_tokens",
        ),
    ];
    for (provider, reply, field) in cases {
        let fake = FakeApi::start(vec![reply]).await;
        let o = opts(5_000, 0);
        let client: Box<dyn ModelClient> = match provider {
            "anthropic" => Box::new(anthropic(&fake, &o)),
            _ => Box::new(openai(&fake, &o)),
        };
        let (out, text) = trial_without_tools(client.as_ref(), "t1").await;
        assert_eq!(out.end, TrialEnd::Answered, "{provider} {field}");
        assert_eq!(
            out.usage,
            Usage::default(),
            "nothing summed: {provider} {field}"
        );
        assert_eq!(out.calls_without_usage, 1);
        let rejected: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).expect("json line"))
            .filter(|l| l["kind"] == "llm.usage_rejected")
            .collect();
        assert_eq!(rejected.len(), 1, "{text}");
        let why = rejected[0]["raw"]["why"].as_str().expect("why");
        assert!(why.contains(field), "{why}");

        let mut ledger = fitness_recorder::model::cost::CostLedger::new();
        ledger.add_calls(
            fitness_recorder::model::cost::Role::Runner,
            client.id(),
            &out.usage,
            u64::from(out.model_calls),
            u64::from(out.calls_without_usage),
            0,
        );
        let prices = fitness_recorder::model::price::PriceTable::bundled();
        match ledger.cost(&prices) {
            fitness_shared::record::Cost::Floor { reasons, .. } => assert!(
                reasons.iter().any(|r| r.contains("without usage")),
                "{reasons:?}"
            ),
            other => panic!("{provider}: a cost with nonsense usage is a floor: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_body_past_32_mib_is_a_malformed_failure_not_read_whole() {
    let fake = FakeApi::start(vec![
        Reply::status(200, &"x".repeat(33 << 20)),
        openai_text("never reached"),
    ])
    .await;
    let err = openai(&fake, &opts(10_000, 3))
        .complete(&request_after_a_call())
        .await
        .expect_err("too long");
    assert_eq!(err.class, LlmErrorClass::Malformed);
    assert!(
        err.message.contains("longer than 33554432 bytes"),
        "{}",
        err.message
    );
    assert_eq!(fake.seen().len(), 1, "not retried");
}

/// One SSE event carrying a `chat.completion.chunk`.
fn chunk(delta: Value, finish: Option<&str>) -> String {
    let c = json!({"object": "chat.completion.chunk", "model": "qwen2.5-coder-1.5b",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
    format!("data: {c}\n\n")
}

#[tokio::test]
async fn openai_streams_and_folds_the_reply_back_whatever_the_chunking() {
    let events = [
        chunk(json!({"role": "assistant", "content": "Let me "}), None),
        chunk(json!({"content": "add."}), None),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_7", "type": "function",
                                   "function": {"name": "add", "arguments": "{\"a\": 1,"}}]}),
            None,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": " \"b\": 2}"}}]}),
            None,
        ),
        chunk(json!({}), Some("tool_calls")),
        format!(
            "data: {}\n\n",
            json!({"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 12}})
        ),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    // Cut anywhere, events split across pieces, the first after a pause.
    let bytes = events.as_bytes();
    let mut pieces = Vec::new();
    for (i, part) in bytes.chunks(37).enumerate() {
        let pause = if i == 0 { 150 } else { 5 };
        pieces.push((
            Duration::from_millis(pause),
            String::from_utf8(part.to_vec()).expect("ascii"),
        ));
    }
    let fake = FakeApi::start(vec![Reply::stream(pieces)]).await;
    let client = openai(&fake, &opts(5_000, 0));
    let r = client.complete(&request_after_a_call()).await.expect("ok");
    let seen = fake.seen();
    assert_eq!(seen[0].body["stream"], true);
    assert_eq!(seen[0].body["stream_options"]["include_usage"], true);
    assert_eq!(
        r.content,
        vec![
            ContentBlock::Text {
                text: "Let me add.".into()
            },
            ContentBlock::ToolUse {
                id: "call_7".into(),
                name: "add".into(),
                input: json!({"a": 1, "b": 2})
            }
        ]
    );
    assert_eq!(r.stop, StopReason::ToolUse);
    assert_eq!(r.model, "qwen2.5-coder-1.5b");
    let usage = r.usage.expect("usage from the last event");
    assert_eq!((usage.input_tokens, usage.output_tokens), (40, 12));
    let ttft = r.ttft_ms.expect("a streamed reply has a first token");
    assert!((150..5_000).contains(&ttft), "ttft {ttft} ms");
}

#[tokio::test]
async fn a_stream_that_stalls_or_is_cut_fails_in_bounded_time() {
    // A first token, then silence longer than the timeout.
    let stalled = Reply::stream(vec![
        (Duration::ZERO, chunk(json!({"content": "thinking"}), None)),
        (Duration::from_secs(30), chunk(json!({}), Some("stop"))),
    ]);
    let fake = FakeApi::start(vec![stalled]).await;
    let client = openai(&fake, &opts(400, 0));
    let t0 = std::time::Instant::now();
    let e = client
        .complete(&request_after_a_call())
        .await
        .expect_err("stalled");
    assert_eq!(e.class, LlmErrorClass::Timeout, "{e:?}");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());

    // Cut before its last event: a transport failure, retried, then given up.
    let cut = || {
        Reply::stream(vec![(
            Duration::ZERO,
            chunk(json!({"content": "par"}), None),
        )])
    };
    let fake = FakeApi::start(vec![cut(), cut()]).await;
    let client = openai(&fake, &opts(2_000, 1));
    let e = client
        .complete(&request_after_a_call())
        .await
        .expect_err("cut");
    assert_eq!(e.class, LlmErrorClass::Transport, "{e:?}");
    assert_eq!(e.attempts, 2);
    assert_eq!(fake.left(), 0);
}

#[tokio::test]
async fn a_refusal_for_rate_holds_the_other_calls_in_flight_too() {
    // The first call is refused with `retry-after: 1`; a second call that
    // starts while that wait runs is held for the rest of it instead of
    // being sent into the same limit, and says how long it waited.
    let fake = FakeApi::start(vec![
        Reply::status(429, "slow down").header("retry-after", "1"),
        anthropic_text("first"),
        anthropic_text("second"),
    ])
    .await;
    let o = ClientOptions {
        max_backoff: Duration::from_secs(5),
        ..opts(5_000, 2)
    };
    let client = anthropic(&fake, &o);
    let request = request_after_a_call();
    let first = client.complete(&request);
    let second = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        client.complete(&request).await
    };
    let (first, second) = tokio::join!(first, second);
    let (first, second) = (first.expect("first"), second.expect("second"));
    assert_eq!(first.log.len(), 2, "the refused call retried once");
    assert_eq!(second.log.len(), 1, "the held call was sent once");
    assert!(
        second.log[0].rate_wait_ms >= 500,
        "held for the rest of the refusal's wait: {:?}",
        second.log
    );
    assert_eq!(fake.seen().len(), 3);
}

/// llama.cpp's server answers 500 when the model wrote a tool call whose
/// arguments are not JSON (seen with Qwen2.5-Coder-1.5B: the same reply on
/// every retry). That is the model's output: the trial ends as a malformed
/// reply after one attempt, never retried as the API failing.
#[tokio::test]
async fn a_tool_call_its_api_cannot_parse_ends_the_trial_as_the_models_reply() {
    let body = r#"{"error":{"code":500,"message":"Failed to parse tool call arguments as JSON: [json.exception.parse_error.101] parse error at line 2, column 29: syntax error while parsing value - invalid string: missing closing quote","type":"server_error"}}"#;
    let fake = FakeApi::start(vec![
        Reply::status(500, body),
        Reply::status(500, body),
        openai_text("never reached"),
    ])
    .await;
    let client = openai(&fake, &opts(5_000, 3));
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("agent.jsonl");
    let tap = Tap::create_kind(&path, "t", vec![], "llm").expect("tape");
    let access = fitness_recorder::access::Access::read_only(&[]);
    let tools = [];
    let spec = TrialSpec {
        corr_id: "m1",
        access: &access,
        prompt: "What is in notes.txt?",
        instructions: None,
        tools: &tools,
        mode: ToolMode::None,
        reference: None,
        budget: Budget::default(),
    };
    let out = run_trial(&client, None, &spec, &tap).await;
    tap.end("done");
    assert_eq!(out.end, TrialEnd::MalformedReply);
    assert_eq!(out.final_answer, None);
    assert_eq!(out.attempt_failures.len(), 1, "not retried");
    assert_eq!(out.model_errors[0].class, LlmErrorClass::ModelOutput);
    assert_eq!(fake.left(), 2, "one request sent");
    let text = std::fs::read_to_string(&path).expect("tape");
    assert_eq!(text.matches("\"kind\":\"llm.malformed_reply\"").count(), 1);
    assert!(text.contains("\"class\":\"model_output\""));
}
