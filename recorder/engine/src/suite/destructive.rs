//! The destructiveness signal (R-GEN item 7): every tool labelled destructive
//! or not before the drive, declared (annotations) and inferred side by side.
//!
//! **Declared**: `readOnlyHint: true` or `destructiveHint: false` → not
//! destructive; `destructiveHint: true` (without `readOnlyHint: true`) or
//! `readOnlyHint: false` alone → destructive (the MCP default for a writing
//! tool); no hint at all → undeclared.
//!
//! **Inferred, offline**: the rule set of [`crate::access::infer`] (name,
//! then the description's first verb, then the schema), the same rule
//! that decides which calls may write.
//!
//! With a judge, the judge's label (when it parses) is the inferred one and
//! the rule set's verdict is kept in the evidence.
//!
//! A tool is callable by the offline generator when it is not destructive by
//! its declaration, or, when it declares nothing, by the inference.

use rmcp::model::Tool;
use serde_json::{Value, json};

use serde::{Deserialize, Serialize};

use super::spend::PhaseSpend;
use crate::access::infer;
use crate::mcp::tap::Tap;
use crate::model::types::{ChatRequest, ContentBlock, Message, ModelClient, Role, text_of};

/// One tool's destructiveness, declared and inferred side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDestructiveness {
    pub tool: String,
    pub declared: Option<bool>,
    pub inferred: bool,
    pub disagreement: bool,
    pub evidence: String,
    /// The judge's own label, when it gave one that parsed: a tool it
    /// calls destructive may write, whatever the rule said
    /// ([`crate::access::writers`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<bool>,
}

/// A tool as a judge model is shown it: its name, description and input
/// schema.
pub fn tool_for_judge(t: &rmcp::model::Tool) -> Value {
    json!({
        "name": t.name,
        "description": t.description,
        "input_schema": Value::Object((*t.input_schema).clone()),
    })
}

/// A tool as the labelling judge reads it: name, description, each
/// argument's name and type, and the declared hints, if any.
fn tool_brief(t: &Tool) -> Value {
    let arguments: serde_json::Map<String, Value> = t
        .input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|props| {
            props
                .iter()
                .map(|(name, p)| {
                    let kind = match p.get("type") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => other.to_string(),
                        None => "any".to_owned(),
                    };
                    (name.clone(), Value::String(kind))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut brief = json!({"name": t.name, "description": t.description, "arguments": arguments});
    if let Some(a) = &t.annotations {
        brief["annotations"] = serde_json::to_value(a).unwrap_or(Value::Null);
    }
    brief
}

/// Output tokens the labelling call may write: a name and a one-word label
/// per tool (24 tokens each allowed), and the braces; never more than the
/// 4,096 an agent turn may.
pub fn label_output_cap(tools: usize) -> u32 {
    u32::try_from(tools.saturating_mul(24).saturating_add(64))
        .unwrap_or(u32::MAX)
        .min(4096)
}

/// What the annotations say: `Some(true)` destructive, `Some(false)` not,
/// `None` nothing declared.
pub fn declared(tool: &Tool) -> Option<bool> {
    let a = tool.annotations.as_ref()?;
    if a.read_only_hint == Some(true) || a.destructive_hint == Some(false) {
        Some(false)
    } else if a.destructive_hint == Some(true) || a.read_only_hint == Some(false) {
        Some(true)
    } else {
        None
    }
}

/// Does the tool declare it reaches beyond the server (`openWorldHint: true`)?
pub fn open_world(tool: &Tool) -> bool {
    tool.annotations
        .as_ref()
        .and_then(|a| a.open_world_hint)
        .unwrap_or(false)
}

/// Label every tool: declared and inferred side by side. With a judge, the
/// judge labels the tools (one call, phase `destructiveness`); its label is
/// the inferred one wherever it parses.
pub async fn assess(
    tools: &[Tool],
    judge: Option<&dyn ModelClient>,
    tape: &Tap,
) -> (Vec<ToolDestructiveness>, Option<PhaseSpend>) {
    let (judged, spend) = match judge {
        Some(judge) => {
            let (judged, phase) = ask_judge(judge, tools, tape).await;
            (judged, Some(phase))
        }
        None => (JudgeLabels::new(), None),
    };
    let labels = tools.iter().map(|t| label_tool(t, &judged)).collect();
    (labels, spend)
}

/// The judge's labels by tool name: destructive or not, and why.
type JudgeLabels = std::collections::BTreeMap<String, (bool, String)>;

/// Ask the judge to label the tools, in one taped call; the labels that
/// parse, and the call's spend.
async fn ask_judge(
    judge: &dyn ModelClient,
    tools: &[Tool],
    tape: &Tap,
) -> (JudgeLabels, PhaseSpend) {
    let mut phase = PhaseSpend::new("destructiveness", &judge.id().to_string());
    let mut judged = JudgeLabels::new();
    // One compact line per tool: what a label needs (the name, the words,
    // the arguments' names and types, the declared hints), not the
    // whole schema pretty-printed, which a small local model reads at tens
    // of tokens a second.
    let listing: Vec<String> = tools.iter().map(|t| tool_brief(t).to_string()).collect();
    let request = ChatRequest {
        system: Some(
            "You label MCP tools. For each tool, say \"computes\" when it only \
             calculates, converts, encodes or generates a value from its arguments, \
             \"reads\" when it only reads, lists or shows data, and \"writes\" when \
             calling it can change, delete or send data, or otherwise act on the world. \
             Reply with a JSON object mapping each tool name to \"computes\", \"reads\" \
             or \"writes\", and nothing else."
                .into(),
        ),
        messages: vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: listing.join("\n"),
            }],
        }],
        tools: vec![],
        max_tokens: label_output_cap(tools.len()),
        temperature: Some(0.0),
        corr_id: Some("suite::destructiveness".into()),
        json_object: true,
    };
    match crate::model::agent::taped_call(judge, &request, tape, "destructiveness").await {
        Ok(resp) => {
            phase.count(resp.usage.as_ref());
            judged = parse_labels(&text_of(&resp.content));
        }
        Err(_) => phase.threw(),
    }
    (judged, phase)
}

/// The labels in the judge's reply, one entry per tool: `{"name":
/// "computes"|"reads"|"writes"}`, or, as a model may still answer,
/// `{"name": {"destructive": bool, "why": "..."}}`. Nothing for a tool
/// whose label is none of these; nothing at all when the reply does not
/// parse.
///
/// One word per tool, of three, not a verdict with a reason: asked for
/// `{"destructive": bool}` with a why "only when destructive", the local
/// 1.5B model wrote a why for every tool (its description) and so labelled
/// every tool destructive, `git_log` and `git_branch` among them; asked
/// for "reads" or "writes", it labelled mcp-server-git's twelve tools as
/// they declare but every one of `@coo-quack/calc-mcp`'s 21 calculators
/// "writes"; with "computes" beside them, both as a person would.
fn parse_labels(text: &str) -> JudgeLabels {
    let mut judged = JudgeLabels::new();
    let Some(Value::Object(map)) = super::predicate::first_json_value(text) else {
        return judged;
    };
    for (name, label) in map {
        let word = label.as_str().map(|w| w.trim().to_ascii_lowercase());
        let said = match word.as_deref() {
            Some("writes") => Some((true, "writes".to_owned())),
            Some("reads") => Some((false, "reads".to_owned())),
            Some("computes") => Some((false, "computes".to_owned())),
            _ => label.get("destructive").and_then(Value::as_bool).map(|d| {
                let why = label
                    .get("why")
                    .and_then(Value::as_str)
                    .filter(|w| !w.trim().is_empty())
                    .unwrap_or(if d { "destructive" } else { "not destructive" })
                    .to_owned();
                (d, why)
            }),
        };
        if let Some(said) = said {
            judged.insert(name, said);
        }
    }
    judged
}

/// One tool's label: declared, and inferred by the judge where it answered,
/// else by the rule set; a disagreement says both.
fn label_tool(t: &Tool, judged: &JudgeLabels) -> ToolDestructiveness {
    let name = t.name.to_string();
    let declared = declared(t);
    let (rule, rule_why) = infer(t);
    let (inferred, evidence) = match judged.get(&name) {
        Some((d, why)) => (
            *d,
            format!("judge: {why}; rule set: {rule_why} ({})", label(rule)),
        ),
        None => (rule, rule_why),
    };
    let disagreement = declared.is_some_and(|d| d != inferred);
    let evidence = if disagreement {
        format!(
            "declared {} by annotations {}, inferred {}: {evidence}",
            label(declared.unwrap_or(false)),
            annotations_text(t),
            label(inferred)
        )
    } else {
        evidence
    };
    ToolDestructiveness {
        judged: judged.get(&name).map(|(d, _)| *d),
        tool: name,
        declared,
        inferred,
        disagreement,
        evidence,
    }
}

/// Every tool labelled by the rule set alone (declared beside inferred),
/// for runs that stopped before the suite's own assessment.
pub fn labels_by_rule(tools: &[Tool]) -> Vec<ToolDestructiveness> {
    let none = JudgeLabels::new();
    tools.iter().map(|t| label_tool(t, &none)).collect()
}

/// The tools that may write, by the one rule and the judge's labels
/// (which only add).
pub fn writers(
    tools: &[Tool],
    labels: &[ToolDestructiveness],
) -> std::collections::BTreeSet<String> {
    crate::access::writers(tools, &|name| {
        labels
            .iter()
            .any(|l| l.tool == name && l.judged == Some(true))
    })
}

fn label(destructive: bool) -> &'static str {
    if destructive {
        "destructive"
    } else {
        "non-destructive"
    }
}

fn annotations_text(tool: &Tool) -> String {
    tool.annotations
        .as_ref()
        .and_then(|a| serde_json::to_string(a).ok())
        .unwrap_or_else(|| "{}".into())
}

/// Is the tool destructive by its label: the declaration first, the
/// inference when undeclared.
pub fn labelled_destructive(label: &ToolDestructiveness) -> bool {
    label.declared.unwrap_or(label.inferred)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tool(name: &str, description: &str) -> Tool {
        let schema = serde_json::json!({"type": "object", "properties": {}});
        let Value::Object(map) = schema else {
            unreachable!()
        };
        Tool::new(name.to_owned(), description.to_owned(), Arc::new(map))
    }

    #[test]
    fn rule_set_reads_names_then_descriptions() {
        assert!(infer(&tool("delete_entities", "")).0);
        assert!(infer(&tool("createIssue", "")).0);
        assert!(infer(&tool("toggle-simulated-logging", "")).0);
        assert!(!infer(&tool("get-sum", "")).0);
        assert!(!infer(&tool("search_nodes", "")).0);
        assert!(!infer(&tool("echo", "")).0);
        assert!(!infer(&tool("weather", "Returns the forecast for a city")).0);
        assert!(infer(&tool("weather", "Sends the forecast to a phone")).0);
        assert!(
            infer(&tool("frobnicate", "")).0,
            "unknown means destructive"
        );
    }

    #[test]
    fn the_labelling_judge_reads_each_tool_in_one_compact_line() {
        let schema = serde_json::json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"path": {"type": "string", "description": "File to remove"},
                           "force": {"type": "boolean"}},
            "required": ["path"]
        });
        let Value::Object(map) = schema else {
            unreachable!()
        };
        let mut t = Tool::new("rm", "Removes a file", Arc::new(map));
        t.annotations = Some(rmcp::model::ToolAnnotations::new().destructive(true));
        let line = tool_brief(&t).to_string();
        assert!(!line.contains('\n') && !line.contains("$schema"), "{line}");
        assert!(line.contains(r#""path":"string""#), "{line}");
        assert!(line.contains(r#""force":"boolean""#), "{line}");
        assert!(line.contains(r#""destructiveHint":true"#), "{line}");
        assert_eq!(label_output_cap(13), 376);
        assert_eq!(label_output_cap(500), 4096);
    }

    #[test]
    fn the_judges_labels_are_read_with_a_why_only_where_it_gave_one() {
        let labels = parse_labels(
            "Here:\n{\"rm\": {\"destructive\": true, \"why\": \"removes files\"}, \"cat\": {\"destructive\": false}, \"ls\": {\"maybe\": 1}}",
        );
        assert_eq!(labels.get("rm"), Some(&(true, "removes files".to_owned())));
        assert_eq!(
            labels.get("cat"),
            Some(&(false, "not destructive".to_owned()))
        );
        assert_eq!(labels.get("ls"), None, "no label");
        assert!(parse_labels("I cannot help with that.").is_empty());
    }

    #[test]
    fn the_judges_one_word_labels_are_read() {
        let labels = parse_labels(
            "{\"git_log\": \"reads\", \"git_reset\": \"Writes \", \"hash\": \"computes\", \"git_show\": \"maybe\"}",
        );
        assert_eq!(labels.get("git_log"), Some(&(false, "reads".to_owned())));
        assert_eq!(labels.get("git_reset"), Some(&(true, "writes".to_owned())));
        assert_eq!(labels.get("hash"), Some(&(false, "computes".to_owned())));
        assert_eq!(labels.get("git_show"), None, "none of the words");
    }

    #[tokio::test]
    async fn disagreement_is_flagged_with_evidence() {
        let mut t = tool("trigger-long-running-operation", "Demonstrates progress");
        t.annotations = Some(rmcp::model::ToolAnnotations::new().read_only(true));
        let (labels, spend) = assess(&[t], None, &Tap::disabled()).await;
        assert!(spend.is_none());
        let l = &labels[0];
        assert_eq!(l.declared, Some(false));
        assert!(l.inferred);
        assert!(l.disagreement);
        assert!(l.evidence.contains("trigger"), "{}", l.evidence);
        assert!(!labelled_destructive(l), "the declaration decides");
    }
}
