//! `anthropic/<model>`: the Messages API with tool use.
//!
//! `POST {ANTHROPIC_BASE_URL}/v1/messages` (default
//! `https://api.anthropic.com`), key from `ANTHROPIC_API_KEY` in `x-api-key`.
//! Usage is already normalised by Anthropic: `input_tokens` excludes cache
//! reads and writes, thinking is part of `output_tokens`.
//!
//! Thinking blocks are not sent back in later requests (replaying them needs
//! the provider's signature, which the neutral conversation does not keep).

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::http::{self, post_json};
use super::types::ClientOptions;
use super::types::{
    ChatRequest, ChatResponse, ContentBlock, LlmError, Message, ModelClient, ModelId, ParsedReply,
    Role, StopReason, Usage, usage_count,
};

pub const KEY_ENV: &str = "ANTHROPIC_API_KEY";
pub const BASE_ENV: &str = "ANTHROPIC_BASE_URL";
pub const DEFAULT_BASE: &str = "https://api.anthropic.com";
pub const API_VERSION: &str = "2023-06-01";

/// A prompt-cache breakpoint: the request's prefix up to here is cached.
fn cache_point() -> Value {
    json!({"type": "ephemeral"})
}

pub struct AnthropicClient {
    id: ModelId,
    key: String,
    url: String,
    http: reqwest::Client,
    opts: ClientOptions,
}

impl AnthropicClient {
    /// Read the key and base URL from the environment.
    pub fn from_env(id: &ModelId, opts: &ClientOptions) -> anyhow::Result<AnthropicClient> {
        let key = crate::secrets::credential_env(KEY_ENV).ok_or_else(|| {
            anyhow::anyhow!("{id} needs an API key: set {KEY_ENV} (keys are never read from files)")
        })?;
        let base = crate::secrets::url_env(BASE_ENV).unwrap_or_else(|| DEFAULT_BASE.to_owned());
        Self::new(id, key, &base, opts)
    }

    pub fn new(
        id: &ModelId,
        key: String,
        base: &str,
        opts: &ClientOptions,
    ) -> anyhow::Result<AnthropicClient> {
        let http = http::client().map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(AnthropicClient {
            id: id.clone(),
            key,
            url: format!("{}/v1/messages", base.trim_end_matches('/')),
            http,
            opts: opts.clone(),
        })
    }

    pub fn body(&self, request: &ChatRequest) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.id.model));
        body.insert("max_tokens".into(), json!(request.max_tokens));
        // The stable prefix (tools, then system text) is marked for the
        // provider's prompt cache: every trial of a stage resends it byte
        // for byte, and a cached read is billed at a tenth of the price.
        if let Some(system) = request.system.as_deref().filter(|s| !s.is_empty()) {
            body.insert(
                "system".into(),
                json!([{"type": "text", "text": system, "cache_control": cache_point()}]),
            );
        }
        body.insert(
            "messages".into(),
            Value::Array(request.messages.iter().filter_map(message).collect()),
        );
        if !request.tools.is_empty() {
            let mut tools: Vec<Value> = request
                .tools
                .iter()
                .map(|t| Value::Object(t.api_object("input_schema")))
                .collect();
            if let Some(Value::Object(last)) = tools.last_mut() {
                last.insert("cache_control".into(), cache_point());
            }
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(t) = request.temperature {
            body.insert("temperature".into(), json!(t));
        }
        Value::Object(body)
    }
}

fn message(m: &Message) -> Option<Value> {
    let blocks: Vec<Value> = m
        .content
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::Thinking { .. } => None,
            ContentBlock::ToolUse { id, name, input } => {
                let input = if input.is_object() {
                    input.clone()
                } else {
                    json!({})
                };
                Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some(json!({
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": content,
                "is_error": is_error,
            })),
        })
        .collect();
    if blocks.is_empty() {
        return None;
    }
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(json!({"role": role, "content": blocks}))
}

/// Read a Messages API response body.
pub fn parse_response(body: &Value) -> Result<ParsedReply, String> {
    let content = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or("the response has no `content` list")?;
    let mut blocks = Vec::new();
    for b in content {
        match b.get("type").and_then(Value::as_str) {
            Some("text") => blocks.push(ContentBlock::Text {
                text: b
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }),
            Some("thinking") => blocks.push(ContentBlock::Thinking {
                text: b
                    .get("thinking")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
            }),
            Some("tool_use") => {
                let id = b.get("id").and_then(Value::as_str);
                let name = b.get("name").and_then(Value::as_str);
                let (Some(id), Some(name)) = (id, name) else {
                    return Err("a tool_use block lacks its id or name".to_owned());
                };
                blocks.push(ContentBlock::ToolUse {
                    id: id.to_owned(),
                    name: name.to_owned(),
                    input: b.get("input").cloned().unwrap_or_else(|| json!({})),
                });
            }
            // redacted_thinking and future block types carry nothing the loop uses.
            _ => {}
        }
    }
    let stop = match body.get("stop_reason").and_then(Value::as_str) {
        Some("end_turn" | "stop_sequence") => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        _ => StopReason::Other,
    };
    let usage = match body.get("usage").filter(|u| u.is_object()) {
        None => Ok(None),
        Some(u) => read_usage(u).map(Some),
    };
    let model = body.get("model").and_then(Value::as_str).map(str::to_owned);
    Ok((blocks, stop, usage, model))
}

/// A Messages API `usage` object; already normalised by Anthropic.
fn read_usage(u: &Value) -> Result<Usage, String> {
    let n = |k: &str| usage_count(u, k).map(|c| c.unwrap_or(0));
    Ok(Usage {
        input_tokens: n("/input_tokens")?,
        output_tokens: n("/output_tokens")?,
        cache_read_input_tokens: n("/cache_read_input_tokens")?,
        cache_creation_input_tokens: n("/cache_creation_input_tokens")?,
        thinking_tokens: None,
    })
}

impl ModelClient for AnthropicClient {
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
            let headers = [
                ("x-api-key", self.key.clone()),
                ("anthropic-version", API_VERSION.to_owned()),
            ];
            let ex = post_json(&self.http, &self.url, &headers, &body, &self.opts).await?;
            let parsed = parse_response(&ex.body);
            http::reply(ex, parsed, &names, &self.id.model)
        })
    }
}
