//! The judge as `judge-walk/1` asks it: how it is asked
//! ([`JudgeWalkConfig`]), the output each call may write ([`output_cap`]),
//! and every call taped, counted, and stopped after too many failures in a
//! row ([`Judge`]).

use fitness_shared::record::JudgeCalls;
use serde_json::Value;

use crate::mcp::tap::Tap;
use crate::model::types::{ChatRequest, ContentBlock, Message, ModelClient, Role, text_of};
use crate::suite::predicate::first_json_value;
use crate::suite::spend::PhaseSpend;

/// How the judge is asked (registered in the suite's generator config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeWalkConfig {
    /// Tools shown in one proposing call.
    pub tools_per_call: usize,
    /// Argument sets asked for per tool, at least: more where few tools
    /// must fill the suite ([`JudgeWalkConfig::values_per_tool`]).
    pub values_per_tool: usize,
    /// Argument sets asked for per tool, at most.
    pub max_values_per_tool: usize,
    /// Tasks phrased in one call.
    pub tasks_per_call: usize,
    /// Consecutive failed calls after which the judge is not asked again.
    pub max_failures_in_a_row: u32,
}

impl Default for JudgeWalkConfig {
    fn default() -> Self {
        JudgeWalkConfig {
            tools_per_call: 5,
            values_per_tool: 3,
            max_values_per_tool: 10,
            tasks_per_call: 6,
            max_failures_in_a_row: 2,
        }
    }
}

/// Output tokens a call may write: `per_item` for each thing asked for,
/// and the braces; never more than the 4,096 an agent turn may.
pub fn output_cap(items: usize, per_item: usize) -> u32 {
    u32::try_from(items.saturating_mul(per_item).saturating_add(64))
        .unwrap_or(u32::MAX)
        .min(4096)
}

/// Output tokens allowed per proposed argument set, and per phrased task.
pub(super) const TOKENS_PER_CALL_PROPOSED: usize = 48;
pub(super) const TOKENS_PER_TASK_PHRASED: usize = 64;

impl JudgeWalkConfig {
    /// Argument sets to ask for per tool, for `want` candidates over
    /// `tools` callable tools: enough that each tool's share of the suite
    /// can come from distinct inputs.
    pub fn values_per_tool(&self, want: usize, tools: usize) -> usize {
        want.div_ceil(tools.max(1)).clamp(
            self.values_per_tool,
            self.max_values_per_tool.max(self.values_per_tool),
        )
    }
}

/// The judge as this generator asks it: every call taped and counted, a
/// failed one counted apart, and no call after too many failures in a row.
pub(crate) struct Judge<'a> {
    model: &'a dyn ModelClient,
    tape: &'a Tap,
    seed: u64,
    max_failures_in_a_row: u32,
    failures_in_a_row: u32,
    index: usize,
    pub(crate) calls: JudgeCalls,
    pub(crate) phase: PhaseSpend,
}

impl<'a> Judge<'a> {
    pub(crate) fn new(
        model: &'a dyn ModelClient,
        tape: &'a Tap,
        seed: u64,
        config: &JudgeWalkConfig,
    ) -> Self {
        Judge {
            model,
            tape,
            seed,
            max_failures_in_a_row: config.max_failures_in_a_row,
            failures_in_a_row: 0,
            index: 0,
            calls: JudgeCalls {
                made: 0,
                failed: 0,
                last_error: None,
            },
            phase: PhaseSpend::new("synthesis", &model.id().to_string()),
        }
    }

    /// The judge stopped being asked: too many failures in a row.
    pub(crate) fn given_up(&self) -> bool {
        self.failures_in_a_row >= self.max_failures_in_a_row
    }

    /// One call: the JSON object the judge answered, or `None` (a failed
    /// call is counted; a reply that is no JSON object gives nothing).
    pub(crate) async fn ask(
        &mut self,
        what: &str,
        system: &str,
        user: String,
        max_tokens: u32,
    ) -> Option<Value> {
        if self.given_up() {
            return None;
        }
        self.index += 1;
        let request = ChatRequest {
            system: Some(system.to_owned()),
            messages: vec![Message {
                role: Role::User,
                content: vec![ContentBlock::Text { text: user }],
            }],
            tools: vec![],
            max_tokens,
            temperature: Some(0.0),
            corr_id: Some(format!("suite::{what}::{}::{}", self.seed, self.index)),
            json_object: true,
        };
        self.calls.made += 1;
        match crate::model::agent::taped_call(self.model, &request, self.tape, "synthesis").await {
            Ok(resp) => {
                self.failures_in_a_row = 0;
                self.phase.count(resp.usage.as_ref());
                first_json_value(&text_of(&resp.content)).filter(Value::is_object)
            }
            Err(e) => {
                self.failures_in_a_row += 1;
                self.phase.threw();
                self.calls.failed += 1;
                self.calls.last_error = Some(e.to_string());
                None
            }
        }
    }
}
