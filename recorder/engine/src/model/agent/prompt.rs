//! What the agent is told: the system text (the same for every trial of a
//! run), the tool list as offered, the task prompt, and for the reference
//! agent its answer key, which the tape withholds.

use rmcp::model::Tool;
use serde_json::Value;

use super::tape::turn_line;
use super::trial::TrialSpec;
use crate::mcp::tap::Tap;
use crate::model::sim::REFERENCE_FENCE;
use crate::model::types::{ContentBlock, Message, ReferenceHint, Role, ToolSpec};

/// What every trial's system text starts with.
pub const PREAMBLE: &str = "You are completing a task with the tools of an MCP server. \
Call tools when they help. When you know the answer, reply with the answer alone and call no tool.";

/// What the reference agent is handed after the task prompt: a human
/// paragraph and a ```fitness-reference JSON block that `sim/reference`
/// parses. It follows the prompt, never the system text: the system text
/// and the tool list stay the same prefix in every trial of every stage, so
/// a provider's prompt cache (or llama.cpp's one slot) reuses them.
pub fn reference_text(hint: &ReferenceHint) -> String {
    let mut s = String::from(
        "You are the reference agent. The answer key and the calls that reach it are below. \
Perform the calls in order (an argument written {{handle:NAME}} takes the value NAME from an \
earlier result), then reply with the answer.\n",
    );
    s.push_str(&format!("Answer: {}\n", hint.answer));
    if !hint.expected_tools.is_empty() {
        s.push_str(&format!(
            "Tools the solution uses: {}\n",
            hint.expected_tools.join(", ")
        ));
    }
    s.push_str(REFERENCE_FENCE);
    s.push('\n');
    s.push_str(&serde_json::to_string_pretty(hint).unwrap_or_else(|_| "{}".to_owned()));
    s.push_str("\n```\n");
    s
}

/// Taped in place of the reference block of a reference trial's first turn.
pub const REFERENCE_WITHHELD: &str = "[The reference agent's answer key and solution plan followed here. They are kept off the tape so that the suite's answers are never published.]";

/// The system text of a trial: the same for every trial of a run.
pub fn system_text(instructions: Option<&str>) -> String {
    let mut s = PREAMBLE.to_owned();
    if let Some(i) = instructions.map(str::trim).filter(|i| !i.is_empty()) {
        s.push_str("\n\nThe server's instructions:\n");
        s.push_str(i);
    }
    s
}

pub fn tool_spec(tool: &Tool) -> ToolSpec {
    ToolSpec {
        name: tool.name.to_string(),
        description: tool.description.as_ref().map(|d| d.to_string()),
        input_schema: Value::Object((*tool.input_schema).clone()),
    }
}

/// The trial's first two turns on the tape, and the conversation so far.
/// The system text goes on the tape first: what the agent was told is
/// evidence too. The reference agent's answer key and plan (after the task
/// prompt) are the one part withheld, so that a published tape never
/// publishes a suite's answers; the tape says where they were.
pub(super) fn open_trial(spec: &TrialSpec<'_>, tape: &Tap) -> Vec<Message> {
    let system_blocks = vec![ContentBlock::Text {
        text: system_text(spec.instructions),
    }];
    tape.line(&turn_line(
        "system",
        &system_blocks,
        None,
        None,
        None,
        spec.corr_id,
    ));
    let mut taped = vec![ContentBlock::Text {
        text: spec.prompt.to_owned(),
    }];
    let mut sent = taped.clone();
    if let Some(hint) = spec.reference {
        taped.push(ContentBlock::Text {
            text: REFERENCE_WITHHELD.to_owned(),
        });
        sent.push(ContentBlock::Text {
            text: reference_text(hint),
        });
    }
    tape.line(&turn_line("user", &taped, None, None, None, spec.corr_id));
    vec![Message {
        role: Role::User,
        content: sent,
    }]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reference_text_round_trips_through_the_sim_parser() {
        let hint = ReferenceHint {
            answer: "42".into(),
            expected_tools: vec!["add".into()],
            plan: vec![crate::model::types::PlannedCall {
                tool: "add".into(),
                arguments: serde_json::from_value(json!({"a": 40, "b": 2})).expect("map"),
            }],
        };
        let system = system_text(Some("Be brief."));
        assert!(system.starts_with(PREAMBLE));
        assert!(system.contains("Be brief."));
        assert_eq!(crate::model::sim::parse_reference(&system), None);
        let handed = format!("Add.\n\n{}", reference_text(&hint));
        assert_eq!(crate::model::sim::parse_reference(&handed), Some(hint));
    }
}
