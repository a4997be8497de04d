//! Proposals: for each finding, a rewritten tool description or schema
//! change a client would see in `tools/list`, with the findings it answers
//! and their evidence.
//!
//! Two sources:
//! - **`rules/1`**, deterministic, used when no judge is given or the judge
//!   is a `sim/` profile:
//!   - `ambiguous_parameter`: the parameter's description is rewritten to say
//!     what value is meant. When the server's error texts at the evidence
//!     lines (or an integer type) show a numeric id, it becomes "The numeric
//!     <name> id (<name>_id), as digits, e.g. "<low>"[, from <low> to
//!     <high>]; not a name or an email."; otherwise it asks for the exact
//!     identifier the server returns, not a display name. The parameter is
//!     not renamed: the server still receives the same argument.
//!   - `corrected_argument`: the parameter's description gains what the
//!     schema knows (required; enum values; minimum and maximum) and the
//!     server's refusal text at the evidence lines.
//!   - `wrong_tool` and `missing_when_not_to_use` (one proposal per tool):
//!     the description gains "Do not use it for tasks that need <expected>:
//!     use <expected> instead.", naming the tools the mis-served tasks
//!     expected.
//!   - `unannotated_destructive`: annotations `destructiveHint: true`,
//!     `readOnlyHint: false`, and the description gains "It permanently
//!     changes or deletes data: call it only when the task asks for that."
//!   - `unactionable_error`: the description gains the valid arguments as
//!     the schema states them, since the errors do not.
//! - **the judge** (`judge:<provider/model>`): one call with the tools and
//!   the findings, asking for a JSON array of proposals. A reply is read
//!   robustly (the first JSON value in the text, an array or an object with
//!   `proposals`); proposals naming an unknown tool, finding or parameter, or
//!   an unknown annotation, are dropped; findings the judge left unanswered
//!   get the rule set's proposal.

use std::collections::{BTreeMap, BTreeSet};

use fitness_shared::record::{EvidenceLink, Finding, FindingKind, Proposal, ToolChange};
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use super::findings::WireReading;
use crate::mcp::tap::Tap;
use crate::model::types::{
    ChatRequest, ContentBlock, Message, ModelClient, ProviderKind, Role, text_of,
};
use crate::suite::PhaseSpend;
use crate::suite::task::Task;

/// The source label of the deterministic rule set.
pub const RULES_SOURCE: &str = "rules/1";

/// Annotation keys a proposal may set.
pub const ANNOTATION_KEYS: &[&str] = &[
    "title",
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];

/// What the rules read besides the findings.
pub struct Context<'a> {
    pub tools: &'a [Tool],
    pub tasks: &'a [Task],
    pub wire: &'a WireReading,
}

/// The rule set's proposals, ids `p1`, `p2`, ... in finding order.
pub fn by_rules(findings: &[Finding], ctx: &Context<'_>) -> Vec<Proposal> {
    let mut out: Vec<Proposal> = Vec::new();
    // wrong_tool and missing_when_not_to_use of one tool share a proposal.
    let mut selection: BTreeMap<&str, usize> = BTreeMap::new();
    for f in findings {
        let Some(tool) = ctx.tools.iter().find(|t| t.name == f.tool.as_str()) else {
            continue;
        };
        if matches!(
            f.kind,
            FindingKind::WrongTool | FindingKind::MissingWhenNotToUse
        ) && let Some(&i) = selection.get(f.tool.as_str())
        {
            let p = &mut out[i];
            p.answers.push(f.id.clone());
            extend_evidence(&mut p.evidence, &f.evidence);
            continue;
        }
        let (change, rationale) = rule(f, tool, ctx);
        if matches!(
            f.kind,
            FindingKind::WrongTool | FindingKind::MissingWhenNotToUse
        ) {
            selection.insert(f.tool.as_str(), out.len());
        }
        out.push(Proposal {
            id: String::new(),
            tool: f.tool.clone(),
            answers: vec![f.id.clone()],
            change,
            rationale,
            source: RULES_SOURCE.to_owned(),
            evidence: f.evidence.clone(),
        });
    }
    number(&mut out);
    out
}

fn number(proposals: &mut [Proposal]) {
    for (i, p) in proposals.iter_mut().enumerate() {
        p.id = format!("p{}", i + 1);
    }
}

fn extend_evidence(into: &mut Vec<EvidenceLink>, more: &[EvidenceLink]) {
    for e in more {
        if !into.contains(e) {
            into.push(e.clone());
        }
    }
}

/// The error texts of the calls whose response lines are among the evidence.
fn evidence_errors<'w>(f: &Finding, wire: &'w WireReading) -> Vec<&'w str> {
    let lines: BTreeSet<u64> = f.evidence.iter().map(|e| e.line).collect();
    wire.calls
        .iter()
        .filter(|c| c.response_line.is_some_and(|l| lines.contains(&l)))
        .filter_map(|c| c.error.as_deref())
        .collect()
}

/// The first "<a> to <b>" or "between <a> and <b>" range of integers in a text.
fn range_in(text: &str) -> Option<(i64, i64)> {
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_digit() || c.is_alphabetic() || c == '-'))
        .filter(|w| !w.is_empty())
        .collect();
    for w in words.windows(3) {
        if let (Ok(a), Ok(b)) = (w[0].parse::<i64>(), w[2].parse::<i64>())
            && (w[1] == "to" || w[1] == "and")
            && a <= b
        {
            return Some((a, b));
        }
    }
    None
}

fn param_schema<'t>(tool: &'t Tool, param: &str) -> Option<&'t Map<String, Value>> {
    tool.input_schema
        .get("properties")
        .and_then(|p| p.get(param))
        .and_then(Value::as_object)
}

fn required(tool: &Tool, param: &str) -> bool {
    tool.input_schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|v| v.as_str() == Some(param)))
}

/// What the schema says about a parameter, in words.
fn schema_words(schema: &Map<String, Value>) -> Option<String> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let shown: Vec<String> = values.iter().take(20).map(Value::to_string).collect();
        let more = if values.len() > 20 { ", ..." } else { "" };
        return Some(format!("one of {}{more}", shown.join(", ")));
    }
    let ty = schema.get("type").and_then(Value::as_str);
    let min = schema.get("minimum").and_then(Value::as_f64);
    let max = schema.get("maximum").and_then(Value::as_f64);
    let min_len = schema.get("minLength").and_then(Value::as_u64);
    let max_len = schema.get("maxLength").and_then(Value::as_u64);
    match (ty, min, max, min_len, max_len) {
        (Some(t), Some(lo), Some(hi), _, _) => Some(format!("{t} from {lo} to {hi}")),
        (Some(t), Some(lo), None, _, _) => Some(format!("{t} of at least {lo}")),
        (Some(t), None, Some(hi), _, _) => Some(format!("{t} of at most {hi}")),
        (Some(t), None, None, Some(a), Some(b)) => Some(format!("{t} of {a} to {b} characters")),
        (Some(t), ..) => Some(t.to_owned()),
        _ => None,
    }
}

fn expected_for(f: &Finding, ctx: &Context<'_>) -> Vec<String> {
    let lines: BTreeSet<u64> = f.evidence.iter().map(|e| e.line).collect();
    let mut expected = BTreeSet::new();
    for c in &ctx.wire.calls {
        if !lines.contains(&c.request_line) {
            continue;
        }
        let Some(corr) = &c.corr_id else { continue };
        let id = corr.strip_suffix("::construct").unwrap_or(corr);
        if let Some(task) = ctx.tasks.iter().find(|t| t.id == id) {
            expected.extend(task.expected_tools.iter().cloned());
        }
    }
    expected.remove(&f.tool);
    expected.into_iter().collect()
}

fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(120).collect();
    t.trim().to_owned()
}

/// One finding's change under `rules/1`, with its rationale.
fn rule(f: &Finding, tool: &Tool, ctx: &Context<'_>) -> (ToolChange, String) {
    let param = f.parameter.as_deref().unwrap_or_default();
    match f.kind {
        FindingKind::AmbiguousParameter => {
            say_what_to_send(tool, param, &evidence_errors(f, ctx.wire))
        }
        FindingKind::CorrectedArgument => {
            say_what_first_call_needs(tool, param, &evidence_errors(f, ctx.wire))
        }
        FindingKind::WrongTool | FindingKind::MissingWhenNotToUse => say_when_not_to_use(f, ctx),
        FindingKind::UnannotatedDestructive => declare_destructive(),
        FindingKind::UnactionableError => list_valid_arguments(tool),
    }
}

/// `ambiguous_parameter`: the parameter's description says which value is
/// meant, digits with their range for a numeric id; `errors` are the
/// server's refusals the finding rests on.
fn say_what_to_send(tool: &Tool, param: &str, errors: &[&str]) -> (ToolChange, String) {
    let schema = param_schema(tool, param);
    let integer = schema
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .is_some_and(|t| t == "integer" || t == "number");
    let numeric = integer
        || errors.iter().any(|e| {
            let l = e.to_lowercase();
            l.contains("numeric") || l.contains("number")
        });
    let range = errors.iter().find_map(|e| range_in(e)).or_else(|| {
        let s = schema?;
        Some((s.get("minimum")?.as_i64()?, s.get("maximum")?.as_i64()?))
    });
    let mut change = ToolChange::default();
    change
        .parameter_descriptions
        .insert(param.to_owned(), identifier_text(param, numeric, range));
    let rationale = format!(
        "`{param}` names an entity but not the value meant; {} the rewrite says what to send.",
        if errors.is_empty() {
            "without errors to learn from,".to_owned()
        } else {
            format!("the server refused {} calls on it and", errors.len())
        }
    );
    (change, rationale)
}

/// The description of an entity-named parameter: a numeric id as digits
/// (with its range), else the exact identifier, never a display name.
fn identifier_text(param: &str, numeric: bool, range: Option<(i64, i64)>) -> String {
    let id_name = if param.ends_with("id") {
        param.to_owned()
    } else {
        format!("{param}_id")
    };
    if !numeric {
        return format!(
            "The exact identifier of the {param} as this server's other results give it ({id_name}); not a display name."
        );
    }
    let example = range.map_or(1, |(lo, _)| lo.max(1));
    let range = range
        .map(|(lo, hi)| format!(", from {lo} to {hi}"))
        .unwrap_or_default();
    let entity = if param == "id" {
        "numeric".to_owned()
    } else {
        format!("numeric {param}")
    };
    format!(
        "The {entity} id ({id_name}), as digits, e.g. \"{example}\"{range}; not a name or an email."
    )
}

/// `corrected_argument`: the parameter's description says what the first
/// call should have sent (required, valid values, what is refused, as the
/// first of `errors` says).
fn say_what_first_call_needs(tool: &Tool, param: &str, errors: &[&str]) -> (ToolChange, String) {
    let schema = param_schema(tool, param);
    let mut text = schema
        .and_then(|s| s.get("description"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_owned();
    if required(tool, param) {
        text.push_str(" Required: always send it.");
    }
    if let Some(words) = schema.and_then(schema_words) {
        text.push_str(&format!(" Valid values: {words}."));
    }
    if let Some(e) = errors.first() {
        text.push_str(&format!(" Other values are refused (\"{}\").", excerpt(e)));
    }
    let mut change = ToolChange::default();
    change
        .parameter_descriptions
        .insert(param.to_owned(), text.trim().to_owned());
    (
        change,
        "The agent had to correct this parameter after a failed call; the rewrite states what the first call should have sent.".to_owned(),
    )
}

/// `wrong_tool`, `missing_when_not_to_use`: a sentence on when not to use
/// the tool, naming the tools that were expected.
fn say_when_not_to_use(f: &Finding, ctx: &Context<'_>) -> (ToolChange, String) {
    let expected = expected_for(f, ctx);
    let sentence = if expected.is_empty() {
        "Do not use it for tasks it does not name; check the other tools first.".to_owned()
    } else {
        let names: Vec<String> = expected.iter().map(|t| format!("`{t}`")).collect();
        format!(
            "Do not use it for tasks that need {}: use {} instead.",
            names.join(" or "),
            names.join(" or ")
        )
    };
    let change = ToolChange {
        append_description: Some(sentence),
        ..ToolChange::default()
    };
    (
        change,
        "Agents chose this tool where another was expected; the rewrite says when not to use it."
            .to_owned(),
    )
}

/// `unannotated_destructive`: the annotations and the description say the
/// tool is destructive.
fn declare_destructive() -> (ToolChange, String) {
    let mut change = ToolChange::default();
    change
        .annotations
        .insert("destructiveHint".into(), json!(true));
    change
        .annotations
        .insert("readOnlyHint".into(), json!(false));
    change.append_description = Some(
        "It permanently changes or deletes data: call it only when the task asks for that."
            .to_owned(),
    );
    (
        change,
        "The tool is inferred destructive but its annotations do not say so; clients that confirm destructive calls rely on destructiveHint.".to_owned(),
    )
}

/// `unactionable_error`: the description lists the valid arguments the
/// schema gives.
fn list_valid_arguments(tool: &Tool) -> (ToolChange, String) {
    let props = tool
        .input_schema
        .get("properties")
        .and_then(Value::as_object);
    let parts: Vec<String> = props
        .map(|p| {
            p.iter()
                .filter_map(|(name, s)| {
                    let words = s.as_object().and_then(schema_words)?;
                    Some(format!("`{name}`: {words}"))
                })
                .collect()
        })
        .unwrap_or_default();
    let change = ToolChange {
        append_description: Some(if parts.is_empty() {
            "Its errors do not say what was wrong: check the arguments against the schema before calling.".to_owned()
        } else {
            format!("Valid arguments: {}.", parts.join("; "))
        }),
        ..ToolChange::default()
    };
    (
        change,
        "The tool's errors gave the agent nothing to act on; the rewrite puts the valid arguments where the agent reads before calling (the error texts themselves need a server change).".to_owned(),
    )
}

/// Apply a change to one tool object of a `tools/list` result.
pub fn apply_change(tool: &mut Map<String, Value>, change: &ToolChange) {
    if let Some(d) = &change.description {
        tool.insert("description".into(), Value::String(d.clone()));
    }
    if let Some(extra) = &change.append_description {
        let base = tool
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim_end()
            .to_owned();
        let text = if base.is_empty() {
            extra.clone()
        } else {
            format!("{base} {extra}")
        };
        tool.insert("description".into(), Value::String(text));
    }
    if !change.parameter_descriptions.is_empty()
        && let Some(props) = tool
            .get_mut("inputSchema")
            .and_then(|s| s.get_mut("properties"))
            .and_then(Value::as_object_mut)
    {
        for (name, text) in &change.parameter_descriptions {
            if let Some(p) = props.get_mut(name).and_then(Value::as_object_mut) {
                p.insert("description".into(), Value::String(text.clone()));
            }
        }
    }
    if !change.annotations.is_empty() {
        let annotations = tool
            .entry("annotations")
            .or_insert_with(|| Value::Object(Map::new()));
        if !annotations.is_object() {
            *annotations = Value::Object(Map::new());
        }
        if let Some(a) = annotations.as_object_mut() {
            for (k, v) in &change.annotations {
                a.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Apply every proposal, in order, to a `tools/list` result's `tools` array.
/// Returns how many tools changed.
pub fn apply_all(tools: &mut [Value], proposals: &[Proposal]) -> usize {
    let mut changed = BTreeSet::new();
    for p in proposals {
        for t in tools.iter_mut() {
            if t.get("name").and_then(Value::as_str) == Some(p.tool.as_str())
                && let Some(obj) = t.as_object_mut()
            {
                apply_change(obj, &p.change);
                changed.insert(p.tool.clone());
            }
        }
    }
    changed.len()
}

/// Is this judge one the rule set stands in for (absent or a sim profile)?
pub fn rules_stand_in(judge: Option<&dyn ModelClient>) -> bool {
    judge.is_none_or(|j| j.id().provider == ProviderKind::Sim)
}

/// Proposals from the judge model, with the rule set's proposal for every
/// finding the judge left unanswered. Returns the spend of the one call.
pub async fn by_judge(
    judge: &dyn ModelClient,
    findings: &[Finding],
    ctx: &Context<'_>,
    tape: &Tap,
) -> (Vec<Proposal>, PhaseSpend) {
    let mut phase = PhaseSpend::new("rewrite", &judge.id().to_string());
    let listing: Vec<Value> = ctx
        .tools
        .iter()
        .filter(|t| findings.iter().any(|f| f.tool == t.name.as_ref()))
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .collect();
    let asked: Vec<Value> = findings
        .iter()
        .map(|f| {
            json!({"id": f.id, "kind": f.kind, "tool": f.tool, "parameter": f.parameter, "summary": f.summary})
        })
        .collect();
    let request = ChatRequest {
        system: Some(
            "You rewrite MCP tool descriptions so that agents choose and call tools correctly. \
             For each finding, propose a change to what the client sees in tools/list. \
             Parameters cannot be renamed (the server keeps its argument names). \
             Reply with a JSON array and nothing else; each element: \
             {\"tool\": name, \"answers\": [finding ids], \"description\": optional full new description, \
             \"append_description\": optional sentence to append, \
             \"parameter_descriptions\": optional {parameter: new description}, \
             \"annotations\": optional {readOnlyHint|destructiveHint|idempotentHint|openWorldHint: bool}, \
             \"rationale\": one sentence}."
                .into(),
        ),
        messages: vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text {
                text: serde_json::to_string_pretty(&json!({"tools": listing, "findings": asked}))
                    .unwrap_or_default(),
            }],
        }],
        tools: vec![],
        max_tokens: 4096,
        temperature: Some(0.0),
        corr_id: Some("rewrite::proposals".into()),
        json_object: false,
    };
    let mut proposals = Vec::new();
    match crate::model::agent::taped_call(judge, &request, tape, "rewrite").await {
        Ok(resp) => {
            phase.count(resp.usage.as_ref());
            let text = text_of(&resp.content);
            proposals = parse_judge_reply(&text, findings, ctx.tools, &judge.id().to_string());
        }
        Err(_) => phase.threw(),
    }
    let answered: BTreeSet<&String> = proposals.iter().flat_map(|p| p.answers.iter()).collect();
    let rest: Vec<Finding> = findings
        .iter()
        .filter(|f| !answered.contains(&f.id))
        .cloned()
        .collect();
    proposals.extend(by_rules(&rest, ctx));
    number(&mut proposals);
    (proposals, phase)
}

/// Read a judge's reply into proposals, keeping only well-formed ones.
pub fn parse_judge_reply(
    text: &str,
    findings: &[Finding],
    tools: &[Tool],
    judge: &str,
) -> Vec<Proposal> {
    reply_items(text)
        .iter()
        .filter_map(|item| judge_proposal(item, findings, tools, judge))
        .collect()
}

/// The proposals of a reply: its JSON array, or the `proposals` array of
/// its JSON object.
fn reply_items(text: &str) -> Vec<Value> {
    match crate::suite::predicate::first_json_value(text) {
        Some(Value::Array(items)) => items,
        Some(Value::Object(mut o)) => match o.remove("proposals") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// One proposal of the judge's, when it names a listed tool, answers
/// findings on that tool, and proposes a well-formed change.
fn judge_proposal(
    item: &Value,
    findings: &[Finding],
    tools: &[Tool],
    judge: &str,
) -> Option<Proposal> {
    let tool_name = item.get("tool").and_then(Value::as_str)?;
    let tool = tools.iter().find(|t| t.name == tool_name)?;
    let answers: Vec<String> = item
        .get("answers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .filter(|id| findings.iter().any(|f| f.id == *id && f.tool == tool_name))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if answers.is_empty() {
        return None;
    }
    let change = judge_change(item, tool)?;
    let mut evidence = Vec::new();
    for f in findings.iter().filter(|f| answers.contains(&f.id)) {
        extend_evidence(&mut evidence, &f.evidence);
    }
    Some(Proposal {
        id: String::new(),
        tool: tool_name.to_owned(),
        answers,
        change,
        rationale: item_text(item, "rationale")
            .unwrap_or_else(|| "(no rationale given)".to_owned()),
        source: format!("judge:{judge}"),
        evidence,
    })
}

/// A non-empty text field of a reply item, trimmed.
fn item_text(item: &Value, key: &str) -> Option<String> {
    item.get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// The change a reply item proposes; `None` when it changes nothing, names
/// a parameter the tool lacks, gives an empty description or an annotation
/// that is not one. A description the judge hands back as it already
/// reads is no change ("Description becomes:" the same words would say a
/// rewrite where there is none).
fn judge_change(item: &Value, tool: &Tool) -> Option<ToolChange> {
    let unchanged = |new: &str, old: Option<&str>| old.is_some_and(|o| o.trim() == new);
    let mut change = ToolChange {
        description: item_text(item, "description")
            .filter(|d| !unchanged(d, tool.description.as_deref())),
        append_description: item_text(item, "append_description"),
        ..ToolChange::default()
    };
    let mut bad = false;
    if let Some(params) = item
        .get("parameter_descriptions")
        .and_then(Value::as_object)
    {
        for (name, text) in params {
            match (param_schema(tool, name), text.as_str()) {
                (Some(schema), Some(t))
                    if unchanged(t.trim(), schema.get("description").and_then(Value::as_str)) => {}
                (Some(_), Some(t)) if !t.trim().is_empty() => {
                    change
                        .parameter_descriptions
                        .insert(name.clone(), t.trim().to_owned());
                }
                _ => bad = true,
            }
        }
    }
    if let Some(ann) = item.get("annotations").and_then(Value::as_object) {
        for (k, v) in ann {
            if ANNOTATION_KEYS.contains(&k.as_str()) && (v.is_boolean() || k == "title") {
                change.annotations.insert(k.clone(), v.clone());
            } else {
                bad = true;
            }
        }
    }
    (!bad && change != ToolChange::default()).then_some(change)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_read_from_error_texts() {
        assert_eq!(
            range_in("no user \"x\": `user` is the numeric user id (1 to 9999)"),
            Some((1, 9999))
        );
        assert_eq!(
            range_in("limit must be between 1 and 50; you sent 80"),
            Some((1, 50))
        );
        assert_eq!(range_in("nothing here"), None);
    }

    #[test]
    fn a_judge_reply_is_read_robustly_and_checked() {
        use fitness_shared::record::EvidenceLink;
        use fitness_shared::tape::Plane;
        let tools: Vec<Tool> = vec![
            serde_json::from_value(json!({
                "name": "get_profile", "description": "Get a user's profile.",
                "inputSchema": {"type": "object", "properties": {"user": {"type": "string"}}}
            }))
            .unwrap(),
        ];
        let findings = vec![Finding {
            id: "f1".into(),
            kind: FindingKind::AmbiguousParameter,
            tool: "get_profile".into(),
            parameter: Some("user".into()),
            summary: "s".into(),
            evidence: vec![EvidenceLink {
                tape: Plane::Mcp,
                line: 9,
                corr_id: None,
            }],
        }];
        let reply = "Here you go:\n```json\n[\n\
            {\"tool\": \"get_profile\", \"answers\": [\"f1\"], \"parameter_descriptions\": {\"user\": \"Numeric user id.\"}, \"rationale\": \"ids\"},\n\
            {\"tool\": \"nope\", \"answers\": [\"f1\"], \"description\": \"x\"},\n\
            {\"tool\": \"get_profile\", \"answers\": [\"f1\"], \"parameter_descriptions\": {\"ghost\": \"x\"}},\n\
            {\"tool\": \"get_profile\", \"answers\": [\"f9\"], \"description\": \"x\"},\n\
            {\"tool\": \"get_profile\", \"answers\": [\"f1\"], \"annotations\": {\"destructiveHint\": \"yes\"}},\n\
            {\"tool\": \"get_profile\", \"answers\": [\"f1\"], \"description\": \" Get a user's profile. \"}\n]\n```";
        // Only the first proposes a change: the last hands back the
        // description as it already reads, which is no rewrite.
        let got = parse_judge_reply(reply, &findings, &tools, "anthropic/x");
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].source, "judge:anthropic/x");
        assert_eq!(
            got[0].change.parameter_descriptions["user"],
            "Numeric user id."
        );
        assert_eq!(got[0].evidence, findings[0].evidence);
        assert!(parse_judge_reply("no json at all", &findings, &tools, "j").is_empty());
    }

    #[test]
    fn changes_apply_to_a_tools_list_entry() {
        let mut tool = json!({
            "name": "purge_cache",
            "description": "Purge a cache.",
            "inputSchema": {"type": "object", "properties": {"scope": {"type": "string"}}}
        });
        let mut change = ToolChange {
            append_description: Some("Destructive.".into()),
            ..ToolChange::default()
        };
        change
            .parameter_descriptions
            .insert("scope".into(), "Which cache.".into());
        change
            .annotations
            .insert("destructiveHint".into(), json!(true));
        apply_change(tool.as_object_mut().unwrap(), &change);
        assert_eq!(tool["description"], "Purge a cache. Destructive.");
        assert_eq!(
            tool["inputSchema"]["properties"]["scope"]["description"],
            "Which cache."
        );
        assert_eq!(tool["annotations"]["destructiveHint"], true);
    }
}
