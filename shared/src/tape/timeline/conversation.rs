//! One trial as a reader follows it: the system text, the task prompt, each
//! assistant turn (its text, its tool calls with their arguments, tokens,
//! time to first token and duration), each tool result (its text, whether
//! it is JSON, images), what the harness did (a failed model call, a reply
//! cut short, a call withheld), and the verdict the stage gave it
//! (`fitness.task_end`); beside it, the trial's wire frames in order. Read
//! from the tapes' own lines (the timeline names where they are).

use serde_json::Value;

use super::entry::{EntryKind, LineRef, Timeline};
use crate::tape::line::Plane;

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolUse {
    pub name: String,
    /// The arguments, pretty-printed JSON.
    pub input: String,
}

/// A tool's result as the model was given it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// The result's text blocks, joined.
    pub text: String,
    /// The text is a JSON object or array (shown folded).
    pub json: bool,
    pub error: bool,
    /// Image blocks in the result.
    pub images: usize,
}

/// One step of the conversation, with the timeline entry it came from.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    System {
        entry: usize,
        text: String,
    },
    User {
        entry: usize,
        text: String,
    },
    Assistant {
        entry: usize,
        text: String,
        calls: Vec<ToolUse>,
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        ttft_ms: Option<u64>,
        duration_ms: Option<u64>,
    },
    Results {
        entry: usize,
        results: Vec<ToolResult>,
    },
    /// A harness event of the trial: a failed model call, a reply cut short
    /// or unreadable, a call withheld or refused.
    Event {
        entry: usize,
        title: String,
        fault: bool,
    },
}

/// The trial's verdict as its stage counted it.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub entry: usize,
    pub success: bool,
    /// Did the answer satisfy the task's check.
    pub check: Option<bool>,
    pub failure: Option<String>,
}

/// One attempt at the task: a trial that repeats (the drive's repetitions
/// share their task's `corr_id`) reads as one attempt after another, each
/// opening with its system text or prompt.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Attempt {
    pub steps: Vec<Step>,
    pub verdict: Option<Verdict>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Conversation {
    pub attempts: Vec<Attempt>,
    /// The trial's wire entries (the MCP plane), in time order.
    pub wire: Vec<usize>,
}

impl Conversation {
    /// Where the next step goes: a system text, or a prompt after the last
    /// attempt's verdict, opens a new attempt.
    fn attempt_for(&mut self, step: &Step) -> &mut Attempt {
        let opens = match (step, self.attempts.last()) {
            (_, None) => true,
            (Step::System { .. }, Some(a)) => !a.steps.is_empty() || a.verdict.is_some(),
            (Step::User { .. }, Some(a)) => a.verdict.is_some(),
            _ => false,
        };
        if opens {
            self.attempts.push(Attempt::default());
        }
        let last = self.attempts.len() - 1;
        &mut self.attempts[last]
    }
}

/// Harness events shown in the conversation, and whether each is a fault.
const EVENTS: [(&str, bool); 6] = [
    ("llm.error", true),
    ("llm.runaway", true),
    ("llm.malformed_reply", true),
    ("fitness.blocked_call", true),
    ("fitness.refused_call", true),
    ("fitness.destructive_call", true),
];

/// The conversation of trial `corr` (its `corr_id`), reading the lines from
/// `tapes` (each tape's bytes, by the timeline's tape index).
pub fn conversation(timeline: &Timeline, corr: &str, tapes: &[Vec<u8>]) -> Conversation {
    let mut out = Conversation::default();
    let line = |r: &LineRef| -> Option<Value> {
        let bytes = tapes.get(r.tape)?.get(r.start..r.end)?;
        serde_json::from_slice(bytes).ok()
    };
    for e in timeline
        .entries
        .iter()
        .filter(|e| e.corr_id.as_deref() == Some(corr))
    {
        let Some(v) = e.lines.first().and_then(line) else {
            continue;
        };
        match e.kind {
            EntryKind::Turn => {
                if let Some(step) = turn_step(e.n, &v) {
                    out.attempt_for(&step).steps.push(step);
                }
            }
            EntryKind::Event => {
                let kind = v["kind"].as_str().unwrap_or("");
                if kind == "fitness.task_end" {
                    let raw = &v["raw"];
                    let step = Step::Event {
                        entry: e.n,
                        title: String::new(),
                        fault: false,
                    };
                    out.attempt_for(&step).verdict = Some(Verdict {
                        entry: e.n,
                        success: raw["success"].as_bool().unwrap_or(false),
                        check: raw["checkResult"].as_bool(),
                        failure: raw["failure"].as_str().map(str::to_owned),
                    });
                } else if let Some((_, fault)) = EVENTS.iter().find(|(k, _)| *k == kind) {
                    let step = Step::Event {
                        entry: e.n,
                        title: e.title.clone(),
                        fault: *fault,
                    };
                    out.attempt_for(&step).steps.push(step);
                }
            }
            _ if e.plane == Plane::Mcp => out.wire.push(e.n),
            _ => {}
        }
    }
    out
}

fn turn_step(entry: usize, v: &Value) -> Option<Step> {
    let blocks = v["blocks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let texts = || {
        blocks
            .iter()
            .filter(|b| b["type"] == "text")
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    match v["role"].as_str()? {
        "system" => Some(Step::System {
            entry,
            text: texts(),
        }),
        "assistant" => {
            let calls = blocks
                .iter()
                .filter(|b| b["type"] == "tool_use")
                .map(|b| ToolUse {
                    name: b["name"].as_str().unwrap_or("(unnamed)").to_owned(),
                    input: serde_json::to_string_pretty(&b["input"]).unwrap_or_default(),
                })
                .collect();
            Some(Step::Assistant {
                entry,
                text: texts(),
                calls,
                input_tokens: v["usage"]["input_tokens"].as_u64(),
                output_tokens: v["usage"]["output_tokens"].as_u64(),
                ttft_ms: v["timing"]["ttft_ms"].as_u64(),
                duration_ms: v["timing"]["duration_ms"].as_u64(),
            })
        }
        _ => {
            let results: Vec<ToolResult> = blocks
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(tool_result)
                .collect();
            if results.is_empty() {
                Some(Step::User {
                    entry,
                    text: texts(),
                })
            } else {
                Some(Step::Results { entry, results })
            }
        }
    }
}

fn tool_result(b: &Value) -> ToolResult {
    let (text, images) = match &b["content"] {
        Value::String(s) => (s.clone(), 0),
        Value::Array(parts) => (
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            parts.iter().filter(|p| p["type"] == "image").count(),
        ),
        Value::Null => (String::new(), 0),
        other => (other.to_string(), 0),
    };
    let json = matches!(
        serde_json::from_str::<Value>(text.trim()),
        Ok(Value::Object(_) | Value::Array(_))
    );
    ToolResult {
        text,
        json,
        error: b["is_error"].as_bool().unwrap_or(false),
        images,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tape::timeline::TimelineBuilder;

    #[test]
    fn a_trial_reads_as_prompt_turns_results_events_and_its_verdict() {
        let agent = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"a"}
{"type":"turn","t":"2026-01-01T00:00:01.000Z","role":"system","blocks":[{"type":"text","text":"Be brief."}],"corr_id":"t1"}
{"type":"turn","t":"2026-01-01T00:00:01.000Z","role":"user","blocks":[{"type":"text","text":"What is 2+3?"}],"corr_id":"t1"}
{"type":"turn","t":"2026-01-01T00:00:02.000Z","role":"assistant","blocks":[{"type":"tool_use","id":"u1","name":"add","input":{"a":2,"b":3}}],"usage":{"input_tokens":90,"output_tokens":12},"timing":{"ttft_ms":300,"duration_ms":900},"corr_id":"t1"}
{"type":"turn","t":"2026-01-01T00:00:02.100Z","role":"user","blocks":[{"type":"tool_result","tool_use_id":"u1","content":[{"type":"text","text":"{\"sum\":5}"},{"type":"image","data":"x"}]}],"corr_id":"t1"}
{"t":"2026-01-01T00:00:02.200Z","dir":"event","kind":"llm.error","corr_id":"t1","raw":{"class":"server"}}
{"type":"turn","t":"2026-01-01T00:00:03.000Z","role":"assistant","blocks":[{"type":"text","text":"5"}],"corr_id":"t1"}
{"t":"2026-01-01T00:00:03.000Z","dir":"event","kind":"fitness.task_end","corr_id":"t1","raw":{"taskId":"t1","success":true,"checkResult":true,"failure":null}}
{"type":"turn","t":"2026-01-01T00:00:04.000Z","role":"user","blocks":[{"type":"text","text":"other trial"}],"corr_id":"t2"}
{"type":"turn","t":"2026-01-01T00:00:05.000Z","role":"system","blocks":[{"type":"text","text":"Be brief."}],"corr_id":"t1"}
{"type":"turn","t":"2026-01-01T00:00:05.000Z","role":"user","blocks":[{"type":"text","text":"What is 2+3?"}],"corr_id":"t1"}
{"type":"turn","t":"2026-01-01T00:00:06.000Z","role":"assistant","blocks":[{"type":"text","text":"6"}],"corr_id":"t1"}
{"t":"2026-01-01T00:00:06.000Z","dir":"event","kind":"fitness.task_end","corr_id":"t1","raw":{"taskId":"t1","success":false,"checkResult":false,"failure":"wrong_answer"}}
"#;
        let mcp = r#"{"v":1,"type":"meta","startedAt":"2026-01-01T00:00:00.000Z","label":"m"}
{"t":"2026-01-01T00:00:02.010Z","dir":"in","corr_id":"t1","raw":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}}
{"t":"2026-01-01T00:00:02.050Z","dir":"out","corr_id":"t1","raw":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}]}}}
"#;
        let mut b = TimelineBuilder::new();
        let m = b.add_tape(Plane::Mcp);
        b.push_tape(m, mcp.as_bytes());
        let a = b.add_tape(Plane::Agent);
        b.push_tape(a, agent.as_bytes());
        let t = b.finish();
        let tapes = vec![mcp.as_bytes().to_vec(), agent.as_bytes().to_vec()];
        let c = conversation(&t, "t1", &tapes);
        assert_eq!(c.attempts.len(), 2, "a repetition is a second attempt");
        let second = c.attempts[1].verdict.clone().expect("its verdict");
        assert_eq!(second.failure.as_deref(), Some("wrong_answer"));
        assert_eq!(c.attempts[1].steps.len(), 3);
        let steps = &c.attempts[0].steps;
        let kinds: Vec<&str> = steps
            .iter()
            .map(|s| match s {
                Step::System { .. } => "system",
                Step::User { .. } => "user",
                Step::Assistant { .. } => "assistant",
                Step::Results { .. } => "results",
                Step::Event { .. } => "event",
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "system",
                "user",
                "assistant",
                "results",
                "event",
                "assistant"
            ]
        );
        let Step::Assistant {
            calls,
            ttft_ms,
            duration_ms,
            input_tokens,
            ..
        } = &steps[2]
        else {
            panic!("an assistant turn")
        };
        assert_eq!(calls[0].name, "add");
        assert!(calls[0].input.contains("\"a\": 2"));
        assert_eq!(
            (*ttft_ms, *duration_ms, *input_tokens),
            (Some(300), Some(900), Some(90))
        );
        let Step::Results { results, .. } = &steps[3] else {
            panic!("results")
        };
        assert!(results[0].json);
        assert_eq!(results[0].images, 1);
        assert_eq!(c.wire.len(), 1, "the call and its response are one entry");
        let v = c.attempts[0].verdict.clone().expect("a verdict");
        assert!(v.success && v.check == Some(true));
        assert!(conversation(&t, "absent", &tapes).attempts.is_empty());
    }
}
