//! Who answers a server's requests for input during a run
//! ([`crate::mcp::input`]): sampling by the runner model, on the agent tape
//! under the trial's corr_id and in the run's spend (every call reserved on
//! the meter, as the agent's are); elicitation by the policy the operator
//! registered (`decline`, or `accept` with values the request's own schema
//! gives: its defaults, else its first choices).
//!
//! Only a trial of the agent or of the reference agent gets the runner's
//! help: generation and the null arms are answered "not served", so a
//! null arm never gets help the agent would not get, and a walk that
//! spends nothing stays so.

use std::sync::{Arc, Mutex};

use fitness_shared::record::ElicitationPolicy;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use crate::mcp::input::InputAnswers;
use crate::mcp::tap::Tap;
use crate::model::agent::taped_call;
use crate::model::cost::{CostLedger, Role as Spender};
use crate::model::types::{ChatRequest, ContentBlock, Message, ModelClient, Role, StopReason};

/// Tokens a sampling answer may have at most, whatever the server asks.
const MAX_SAMPLING_TOKENS: u32 = 1_024;

/// The corr_id suffixes of the stages that get no model's help.
const UNHELPED: &[&str] = &["::null-", "::screen", "generate"];

/// The runner answers sampling; the policy answers elicitation.
pub struct RunnerAnswers {
    pub runner: Arc<dyn ModelClient>,
    /// The agent tape.
    pub tape: Tap,
    pub policy: ElicitationPolicy,
    /// The runner's cap on one turn's output.
    pub max_output_tokens: u32,
    /// The runner's sampling calls, charged to the runner.
    pub spent: Mutex<CostLedger>,
}

impl RunnerAnswers {
    /// The sampling calls' spend so far.
    pub fn spent(&self) -> CostLedger {
        self.spent
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl InputAnswers for RunnerAnswers {
    fn sample<'a>(
        &'a self,
        corr_id: Option<&'a str>,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            let corr = corr_id.unwrap_or("generate");
            if UNHELPED.iter().any(|u| corr.contains(u)) {
                return Err(format!(
                    "sampling is not served to {corr}: only the agent's trials get the runner's help"
                ));
            }
            let request = sampling_request(params, corr, self.max_output_tokens)?;
            let result = taped_call(self.runner.as_ref(), &request, &self.tape, "sampling").await;
            self.spent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .add_call(
                    Spender::Runner,
                    self.runner.id(),
                    result.as_ref().ok().and_then(|r| r.usage.as_ref()),
                    result.is_err(),
                );
            let response = result.map_err(|e| format!("the runner model failed: {}", e.message))?;
            let text = crate::model::types::text_of(&response.content);
            Ok(json!({
                "model": self.runner.id().to_string(),
                "role": "assistant",
                "content": {"type": "text", "text": text},
                "stopReason": match response.stop {
                    StopReason::MaxTokens => "maxTokens",
                    _ => "endTurn",
                },
            }))
        })
    }

    fn elicit<'a>(&'a self, _corr_id: Option<&'a str>, params: &'a Value) -> BoxFuture<'a, Value> {
        Box::pin(async move { elicitation_answer(self.policy, params) })
    }

    fn sampler(&self) -> String {
        self.runner.id().to_string()
    }

    fn policy(&self) -> String {
        format!("policy {}", self.policy.as_str())
    }
}

/// A `sampling/createMessage`'s params as the runner's request: its
/// system prompt, its messages' text (an image or audio block is named,
/// never sent), its temperature, at most [`MAX_SAMPLING_TOKENS`].
fn sampling_request(params: &Value, corr: &str, cap: u32) -> Result<ChatRequest, String> {
    let mut messages = Vec::new();
    for m in params
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let role = match m.get("role").and_then(Value::as_str) {
            Some("assistant") => Role::Assistant,
            _ => Role::User,
        };
        let blocks: Vec<&Value> = match m.get("content") {
            Some(Value::Array(a)) => a.iter().collect(),
            Some(one) => vec![one],
            None => Vec::new(),
        };
        let text: Vec<String> = blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("text") => b
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned(),
                Some(other) => format!("[{other} content]"),
                None => String::new(),
            })
            .filter(|t| !t.is_empty())
            .collect();
        messages.push(Message {
            role,
            content: vec![ContentBlock::Text {
                text: text.join("\n"),
            }],
        });
    }
    if messages.is_empty() {
        return Err("the sampling request has no messages".into());
    }
    let asked = params
        .get("maxTokens")
        .and_then(Value::as_u64)
        .unwrap_or(u64::from(MAX_SAMPLING_TOKENS));
    let max_tokens = u32::try_from(asked)
        .unwrap_or(u32::MAX)
        .min(MAX_SAMPLING_TOKENS)
        .min(cap)
        .max(1);
    Ok(ChatRequest {
        system: params
            .get("systemPrompt")
            .and_then(Value::as_str)
            .map(str::to_owned),
        messages,
        tools: Vec::new(),
        max_tokens,
        temperature: params
            .get("temperature")
            .and_then(Value::as_f64)
            .map(|t| t.clamp(0.0, 2.0) as f32),
        corr_id: Some(format!("{corr}::sampling")),
        json_object: false,
    })
}

/// The answer a policy gives an `elicitation/create`: `decline`, or
/// `accept` with a value for each field the requested schema names (its
/// default, else its first choice, else the type's plain value). A request
/// by URL (`mode: "url"`) is always declined: no person follows it.
pub fn elicitation_answer(policy: ElicitationPolicy, params: &Value) -> Value {
    let by_url = params.get("mode").and_then(Value::as_str) == Some("url");
    if policy == ElicitationPolicy::Decline || by_url {
        return json!({"action": "decline"});
    }
    let schema = params.get("requestedSchema").cloned().unwrap_or_default();
    let required = crate::suite::schema_args::required_names(schema.get("required"));
    let mut content = Map::new();
    for (name, field) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let value = field.get("default").cloned().or_else(|| {
            let first = |k: &str| {
                field
                    .get(k)
                    .and_then(Value::as_array)
                    .and_then(|a| a.first())
                    .cloned()
            };
            first("enum")
                .or_else(|| {
                    first("oneOf")
                        .or_else(|| first("anyOf"))
                        .and_then(|o| o.get("const").cloned())
                })
                .or_else(|| {
                    field
                        .get("items")
                        .and_then(|i| {
                            i.get("enum")
                                .or_else(|| i.get("anyOf"))
                                .and_then(Value::as_array)
                        })
                        .and_then(|a| a.first())
                        .map(|v| json!([v.get("const").unwrap_or(v)]))
                })
        });
        // A required field with nothing to say: a plain value of its type
        // (a string in its format).
        let value = value.or_else(|| {
            required.contains(&name.as_str()).then(|| {
                match field.get("format").and_then(Value::as_str) {
                    Some("email") => json!("operator@example.org"),
                    Some("uri") => json!("https://example.org"),
                    Some("date") => json!("2026-01-01"),
                    Some("date-time") => json!("2026-01-01T00:00:00Z"),
                    _ => crate::model::sim::example_value(field),
                }
            })
        });
        if let Some(v) = value {
            content.insert(name.clone(), v);
        }
    }
    json!({"action": "accept", "content": content})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_declining_policy_declines_and_an_accepting_one_fills_the_schema() {
        let asked = json!({"message": "Your details", "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "email": {"type": "string", "format": "email"},
                "seats": {"type": "integer", "minimum": 2},
                "colour": {"type": "string", "enum": ["teal", "ochre"]},
                "newsletter": {"type": "boolean", "default": false},
                "note": {"type": "string"}
            },
            "required": ["name", "email", "seats"]
        }});
        assert_eq!(
            elicitation_answer(ElicitationPolicy::Decline, &asked),
            json!({"action": "decline"})
        );
        let accepted = elicitation_answer(ElicitationPolicy::Accept, &asked);
        assert_eq!(accepted["action"], "accept");
        let c = &accepted["content"];
        assert_eq!(c["email"], "operator@example.org");
        assert_eq!(c["seats"], 2);
        assert_eq!(c["colour"], "teal");
        assert_eq!(c["newsletter"], false);
        assert!(
            c.get("note").is_none(),
            "an optional field with nothing to say is left out"
        );
        let by_url = json!({"mode": "url", "url": "https://example.org/auth"});
        assert_eq!(
            elicitation_answer(ElicitationPolicy::Accept, &by_url)["action"],
            "decline"
        );
    }

    #[tokio::test]
    async fn only_the_agent_s_and_the_reference_agent_s_trials_get_the_runner_s_help() {
        let runner = crate::model::client_for(
            &"sim/diligent".parse().expect("a model id"),
            &crate::model::ClientOptions::default(),
        )
        .expect("the sim runner");
        let answers = RunnerAnswers {
            runner,
            tape: Tap::disabled(),
            policy: ElicitationPolicy::Decline,
            max_output_tokens: 256,
            spent: Default::default(),
        };
        let params = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 20});
        for unhelped in [
            "t1::null-random",
            "t1::null-stubbed-empty",
            "t2::screen",
            "generate",
            "generate::x1",
        ] {
            assert!(
                answers.sample(Some(unhelped), &params).await.is_err(),
                "{unhelped}"
            );
        }
        for helped in ["t1", "t1::construct", "ask"] {
            let answer = answers.sample(Some(helped), &params).await.expect(helped);
            assert_eq!(answer["model"], "sim/diligent");
            assert_eq!(answer["role"], "assistant");
        }
        assert_eq!(
            answers
                .spent()
                .spend_lines(&crate::model::price::PriceTable::bundled())[0]
                .calls,
            3,
            "each answer is charged to the runner"
        );
    }

    #[test]
    fn a_sampling_request_becomes_the_runner_s_request_within_the_cap() {
        let params = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "Summarise: tides"}},
            {"role": "user", "content": [{"type": "image", "data": "AAA", "mimeType": "image/png"}]}
        ], "systemPrompt": "Be brief", "maxTokens": 100000, "temperature": 0.7});
        let r = sampling_request(&params, "t3", 512).expect("a request");
        assert_eq!(r.system.as_deref(), Some("Be brief"));
        assert_eq!(r.max_tokens, 512);
        assert_eq!(r.corr_id.as_deref(), Some("t3::sampling"));
        assert!(r.tools.is_empty());
        let texts: Vec<String> = r
            .messages
            .iter()
            .map(|m| crate::model::types::text_of(&m.content))
            .collect();
        assert_eq!(texts, ["Summarise: tides", "[image content]"]);
        assert!(sampling_request(&json!({"messages": []}), "t", 64).is_err());
    }
}
