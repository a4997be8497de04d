//! `openai/<model>`: Chat Completions with tools, for OpenAI and the servers
//! that speak its wire API (OpenRouter, Ollama, vLLM, llama.cpp).
//!
//! `POST {OPENAI_BASE_URL}/chat/completions` (default
//! `https://api.openai.com/v1`), `Authorization: Bearer $OPENAI_API_KEY`. With
//! a custom `OPENAI_BASE_URL` the key may be absent (local servers need none);
//! against the default endpoint it is required.
//!
//! Tolerated: no `usage` (the response then says so and the cost becomes a
//! floor), `content: null` beside `tool_calls`, `arguments` as a JSON string
//! (possibly invalid: then the tool_use input is that string and the loop
//! rejects the call as a schema reject without touching the server) or as an
//! object, missing tool-call ids (made up per response as `call_<n>`),
//! `reasoning_content` (kept as thinking).
//!
//! Usage normalised: `prompt_tokens` includes cached tokens, so
//! `input_tokens = prompt_tokens - prompt_tokens_details.cached_tokens`;
//! reasoning tokens are already inside `completion_tokens`.

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::http::{self, post_json};
use super::types::ClientOptions;
use super::types::ParsedReply;
use super::types::{
    ChatRequest, ChatResponse, ContentBlock, LlmError, Message, ModelClient, ModelId, Role,
    StopReason, Usage, UsageRead, usage_count,
};

pub const KEY_ENV: &str = "OPENAI_API_KEY";
pub const BASE_ENV: &str = "OPENAI_BASE_URL";
pub const DEFAULT_BASE: &str = "https://api.openai.com/v1";

/// Is the OpenAI-compatible server on this machine (`OPENAI_BASE_URL` on a
/// loopback host)? Such a server (llama.cpp) usually answers one call at a
/// time.
pub fn serves_locally() -> bool {
    crate::secrets::url_env(BASE_ENV)
        .and_then(|base| reqwest::Url::parse(&base).ok())
        .and_then(|url| url.host_str().map(str::to_owned))
        .is_some_and(|host| {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host == "localhost"
                || host
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        })
}

pub struct OpenAiClient {
    id: ModelId,
    key: Option<String>,
    url: String,
    /// OpenAI's own endpoint wants `max_completion_tokens`; the compatible
    /// servers still read `max_tokens`.
    official: bool,
    http: reqwest::Client,
    opts: ClientOptions,
}

impl OpenAiClient {
    pub fn from_env(id: &ModelId, opts: &ClientOptions) -> anyhow::Result<OpenAiClient> {
        let base = crate::secrets::url_env(BASE_ENV);
        let key = crate::secrets::credential_env(KEY_ENV);
        if key.is_none() && base.is_none() {
            anyhow::bail!(
                "{id} needs an API key: set {KEY_ENV} (keys are never read from files), or set {BASE_ENV} to a local server that needs none"
            );
        }
        Self::new(id, key, base.as_deref().unwrap_or(DEFAULT_BASE), opts)
    }

    pub fn new(
        id: &ModelId,
        key: Option<String>,
        base: &str,
        opts: &ClientOptions,
    ) -> anyhow::Result<OpenAiClient> {
        let http = http::client().map_err(|e| anyhow::anyhow!("{e}"))?;
        let base = base.trim_end_matches('/');
        Ok(OpenAiClient {
            id: id.clone(),
            key,
            url: format!("{base}/chat/completions"),
            official: base.starts_with("https://api.openai.com"),
            http,
            opts: opts.clone(),
        })
    }

    pub fn body(&self, request: &ChatRequest) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in &request.messages {
            push_message(&mut messages, m);
        }
        let mut body = Map::new();
        body.insert("model".into(), json!(self.id.model));
        body.insert("messages".into(), Value::Array(messages));
        let max_key = if self.official {
            "max_completion_tokens"
        } else {
            "max_tokens"
        };
        body.insert(max_key.into(), json!(request.max_tokens));
        body.insert("seed".into(), json!(self.opts.seed));
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| json!({"type": "function", "function": t.api_object("parameters")}))
                .collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if request.json_object && request.tools.is_empty() {
            body.insert("response_format".into(), json!({"type": "json_object"}));
        }
        if self.opts.stream {
            body.insert("stream".into(), json!(true));
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }
}

fn push_message(out: &mut Vec<Value>, m: &Message) {
    match m.role {
        Role::User => {
            // Tool results become `tool` messages, in order, before any text.
            let mut text = Vec::new();
            for b in &m.content {
                match b {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } => out.push(json!({
                        "role": "tool",
                        "tool_call_id": tool_use_id,
                        "content": content,
                    })),
                    ContentBlock::Text { text: t } => text.push(t.as_str()),
                    _ => {}
                }
            }
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text.join("\n\n")}));
            }
        }
        Role::Assistant => {
            let mut text = Vec::new();
            let mut calls = Vec::new();
            for b in &m.content {
                match b {
                    ContentBlock::Text { text: t } => text.push(t.as_str()),
                    ContentBlock::ToolUse { id, name, input } => {
                        let arguments = match input {
                            Value::String(raw) => raw.clone(),
                            other => other.to_string(),
                        };
                        calls.push(json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments},
                        }));
                    }
                    _ => {}
                }
            }
            let mut msg = Map::new();
            msg.insert("role".into(), json!("assistant"));
            msg.insert(
                "content".into(),
                if text.is_empty() {
                    Value::Null
                } else {
                    json!(text.join("\n\n"))
                },
            );
            if !calls.is_empty() {
                msg.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(msg));
        }
    }
}

/// Normalise a Chat Completions `usage` object (R-TAPE-4): `Ok(None)` when
/// it reports no counts, an error when a count is nonsense.
pub fn normalise_usage(u: &Value) -> UsageRead {
    if !u.is_object() {
        return Ok(None);
    }
    let prompt = usage_count(u, "/prompt_tokens")?;
    let completion = usage_count(u, "/completion_tokens")?;
    if prompt.is_none() && completion.is_none() {
        return Ok(None);
    }
    let cached = usage_count(u, "/prompt_tokens_details/cached_tokens")?.unwrap_or(0);
    let thinking = usage_count(u, "/completion_tokens_details/reasoning_tokens")?;
    let prompt = prompt.unwrap_or(0);
    Ok(Some(Usage {
        input_tokens: prompt.saturating_sub(cached),
        output_tokens: completion.unwrap_or(0),
        cache_read_input_tokens: cached.min(prompt),
        cache_creation_input_tokens: 0,
        thinking_tokens: thinking,
    }))
}

/// A tool call's `arguments`: JSON text of an object (as the API sends
/// them), an object, or nothing; anything else is kept as a string for the
/// schema check to reject.
fn call_arguments(arguments: Option<&Value>) -> Value {
    match arguments {
        Some(Value::String(raw)) if raw.trim().is_empty() => json!({}),
        Some(Value::String(raw)) => match serde_json::from_str::<Value>(raw) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::String(raw.clone()),
        },
        Some(v @ Value::Object(_)) => v.clone(),
        None | Some(Value::Null) => json!({}),
        Some(other) => Value::String(other.to_string()),
    }
}

/// Read a Chat Completions response body.
pub fn parse_response(body: &Value) -> Result<ParsedReply, String> {
    let choice = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or("the response has no `choices`")?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or("the first choice has no `message`")?;
    let mut blocks = Vec::new();
    for key in ["reasoning_content", "reasoning"] {
        if let Some(r) = message
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            blocks.push(ContentBlock::Thinking { text: r.to_owned() });
            break;
        }
    }
    match message.get("content") {
        Some(Value::String(s)) if !s.is_empty() => {
            blocks.push(ContentBlock::Text { text: s.clone() })
        }
        // Some servers send content parts.
        Some(Value::Array(parts)) => {
            let text: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            if !text.is_empty() {
                blocks.push(ContentBlock::Text {
                    text: text.join(""),
                });
            }
        }
        _ => {}
    }
    if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
        for (i, call) in calls.iter().enumerate() {
            let f = call.get("function").unwrap_or(call);
            let Some(name) = f.get("name").and_then(Value::as_str) else {
                return Err("a tool call has no function name".to_owned());
            };
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map_or_else(|| format!("call_{i}"), str::to_owned);
            let input = call_arguments(f.get("arguments"));
            blocks.push(ContentBlock::ToolUse {
                id,
                name: name.to_owned(),
                input,
            });
        }
    }
    let has_calls = blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::ToolUse { .. }));
    let stop = match choice.get("finish_reason").and_then(Value::as_str) {
        Some(super::stream::RUNAWAY_FINISH) => StopReason::Runaway,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        _ if has_calls => StopReason::ToolUse,
        Some("stop") => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        None => StopReason::EndTurn,
        Some(_) => StopReason::Other,
    };
    let usage = body.get("usage").map_or(Ok(None), normalise_usage);
    // llama.cpp streams `"model": "-"`: a name with no letter or digit
    // names nothing, so it reads as no name (the registered one stands).
    let model = body
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| fitness_shared::record::names_a_model(m))
        .map(str::to_owned);
    Ok((blocks, stop, usage, model))
}

impl ModelClient for OpenAiClient {
    fn id(&self) -> &ModelId {
        &self.id
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let names = http::ToolNames::new(request.tools.iter().map(|t| t.name.as_str()));
            let body = self.body(&names.request(request));
            let mut headers = Vec::new();
            if let Some(key) = &self.key {
                headers.push(("authorization", format!("Bearer {key}")));
            }
            let ex = post_json(&self.http, &self.url, &headers, &body, &self.opts).await?;
            let parsed = parse_response(&ex.body);
            http::reply(ex, parsed, &names, &self.id.model)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_tokens_leave_input_and_reasoning_stays_in_output() {
        let u = normalise_usage(&json!({
            "prompt_tokens": 1200, "completion_tokens": 300,
            "prompt_tokens_details": {"cached_tokens": 1000},
            "completion_tokens_details": {"reasoning_tokens": 120}
        }))
        .expect("counts")
        .expect("usage");
        assert_eq!(u.input_tokens, 200);
        assert_eq!(u.cache_read_input_tokens, 1000);
        assert_eq!(u.output_tokens, 300);
        assert_eq!(u.thinking_tokens, Some(120));
        assert_eq!(normalise_usage(&json!({})), Ok(None));
        assert_eq!(normalise_usage(&Value::Null), Ok(None));
    }

    #[test]
    fn nonsense_usage_is_named_not_counted() {
        for (usage, why) in [
            (
                json!({"prompt_tokens": -5, "completion_tokens": 1}),
                "`prompt_tokens` is -5",
            ),
            (
                json!({"prompt_tokens": 1, "completion_tokens": 1.5}),
                "`completion_tokens` is 1.5",
            ),
            (
                json!({"prompt_tokens": u64::MAX, "completion_tokens": 1}),
                "18446744073709551615",
            ),
            (
                json!({"prompt_tokens": 1e300, "completion_tokens": 1}),
                "1e+300",
            ),
            (
                json!({"prompt_tokens": 1, "completion_tokens": "many"}),
                "\"many\"",
            ),
            (
                json!({"prompt_tokens": 2, "completion_tokens": 1,
                    "completion_tokens_details": {"reasoning_tokens": 1_000_000_001_u64}}),
                "reasoning_tokens",
            ),
        ] {
            let err = normalise_usage(&usage).expect_err("nonsense");
            assert!(err.contains(why), "{usage}: {err}");
        }
    }

    #[test]
    fn null_content_with_calls_and_invalid_arguments_are_read() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": null,
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "add", "arguments": "{\"a\":1}"}},
                {"function": {"name": "echo", "arguments": "{not json"}}
            ]}, "finish_reason": "tool_calls"}]});
        let (blocks, stop, usage, model) = parse_response(&body).expect("parsed");
        assert_eq!(stop, StopReason::ToolUse);
        assert_eq!(usage, Ok(None));
        assert_eq!(model, None);
        assert_eq!(
            blocks,
            vec![
                ContentBlock::ToolUse {
                    id: "a".into(),
                    name: "add".into(),
                    input: json!({"a": 1})
                },
                ContentBlock::ToolUse {
                    id: "call_1".into(),
                    name: "echo".into(),
                    input: json!("{not json")
                },
            ]
        );
    }

    #[test]
    fn a_reported_model_that_names_nothing_reads_as_none() {
        let reply = |model: &str| {
            json!({"model": model, "choices": [{"message": {"role": "assistant", "content": "ok"},
                "finish_reason": "stop"}]})
        };
        let (.., model) = parse_response(&reply("-")).expect("parsed");
        assert_eq!(model, None, "llama.cpp's placeholder is no name");
        let (.., model) = parse_response(&reply("qwen2.5-coder-1.5b")).expect("parsed");
        assert_eq!(model.as_deref(), Some("qwen2.5-coder-1.5b"));
    }
}
