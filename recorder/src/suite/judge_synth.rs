//! `judge-synth/1`: the judge model reads the tool schemas and the server
//! instructions and writes candidate tasks (MCPEval-style synthesis) as a
//! JSON array of `{prompt, expected_tools, answer_key, check, solution,
//! rationale}`. One call (phase `synthesis`); the reply is parsed robustly:
//! code fences and prose around the array are ignored, and each element that
//! is not a task becomes a `malformed` candidate with the reason. A reply
//! with no array at all yields `want` malformed candidates, so the ledger
//! still counts what was asked for.

use rmcp::model::Tool;
use serde_json::{Value, json};

use super::admission::Candidate;
use super::task::{Predicate, Task};
use super::{GenerateOptions, PhaseSpend, response_text};
use crate::mcp::tap::Tap;
use crate::model::types::{ChatRequest, ContentBlock, Message, ModelClient, PlannedCall, Role};

const SYSTEM: &str = "You write evaluation tasks for an MCP server. Each task must be impossible \
to answer correctly without calling the server's tools (the answer comes from the server's data \
or computation, not from general knowledge), and its final answer must be checkable by machine. \
Reply with a JSON array only. Each element: {\"prompt\": string (what the agent is asked; never \
contains the answer), \"expected_tools\": [tool names], \"answer_key\": string, \"check\": one of \
{\"kind\":\"substring\",\"value\":string,\"case_insensitive\":bool} | {\"kind\":\"regex\",\"pattern\":string} \
| {\"kind\":\"json_path\",\"path\":\"$.a.b[0]\",\"equals\":any} | {\"kind\":\"number_within\",\"value\":number,\"tolerance\":number} \
| {\"kind\":\"all_of\",\"of\":[checks]} (the check is applied to the agent's final answer text), \
\"solution\": [{\"tool\": name, \"arguments\": {..}}] (the calls that reach the answer; a value an \
earlier call returns is written {{handle:NAME}} and declared in \"handles\": \
[{\"name\",\"produced_by\",\"consumed_by\"}] with call indexes), \"rationale\": string (why the \
server is required)}.";

/// Ask the judge for `want` candidates.
pub async fn synthesize(
    judge: &dyn ModelClient,
    tools: &[Tool],
    instructions: Option<&str>,
    want: usize,
    opts: &GenerateOptions,
    tape: &Tap,
) -> (Vec<Candidate>, PhaseSpend) {
    let mut phase = PhaseSpend::new("synthesis", &judge.id().to_string());
    let listing: Vec<Value> = tools
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "description": t.description,
                "input_schema": Value::Object((*t.input_schema).clone()),
                "annotations": t.annotations,
            })
        })
        .collect();
    let user = format!(
        "Server instructions:\n{}\n\nTools:\n{}\n\nWrite {want} distinct tasks.",
        instructions.unwrap_or("(none)"),
        serde_json::to_string_pretty(&listing).unwrap_or_default()
    );
    let request = ChatRequest {
        system: Some(SYSTEM.into()),
        messages: vec![Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: user }],
        }],
        tools: vec![],
        max_tokens: 16_000,
        temperature: Some(0.7),
        corr_id: Some(format!("suite::synthesis::{}", opts.seed)),
    };
    let text = match super::taped_call(judge, &request, tape, "synthesis").await {
        Ok(resp) => {
            phase.count(resp.usage.as_ref());
            response_text(&resp.content)
        }
        Err(e) => {
            phase.threw();
            return (
                malformed_all(want, opts, &format!("the judge call failed: {e}")),
                phase,
            );
        }
    };
    (parse_candidates(&text, want, opts), phase)
}

fn malformed_all(want: usize, opts: &GenerateOptions, why: &str) -> Vec<Candidate> {
    (1..=want)
        .map(|i| Candidate::new(format!("{}c{i}", opts.id_prefix), Err(why.to_owned())))
        .collect()
}

/// Parse the judge's reply into candidates (one per array element).
pub fn parse_candidates(text: &str, want: usize, opts: &GenerateOptions) -> Vec<Candidate> {
    let Some(items) = find_array(text) else {
        return malformed_all(want, opts, "the reply holds no JSON array of tasks");
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let id = format!("{}c{}", opts.id_prefix, i + 1);
            let parsed = parse_task(item, &id);
            Candidate::new(id, parsed)
        })
        .collect()
}

/// The first JSON array in `text` (inside code fences or prose).
fn find_array(text: &str) -> Option<Vec<Value>> {
    if let Ok(Value::Array(a)) = serde_json::from_str::<Value>(text.trim()) {
        return Some(a);
    }
    for (i, c) in text.char_indices() {
        if c == '[' {
            let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            if let Some(Ok(Value::Array(a))) = stream.next()
                && a.iter().any(Value::is_object)
            {
                return Some(a);
            }
        }
    }
    // A top-level object holding the array (`{"tasks": [...]}`).
    if let Some(Value::Object(o)) = super::predicate::first_json_value(text) {
        return o.into_iter().find_map(|(_, v)| match v {
            Value::Array(a) => Some(a),
            _ => None,
        });
    }
    None
}

fn parse_task(item: &Value, id: &str) -> Result<Task, String> {
    let obj = item
        .as_object()
        .ok_or_else(|| format!("element is not an object: {}", short(item)))?;
    let string = |k: &str| -> Result<String, String> {
        match obj.get(k) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
            Some(Value::Number(n)) if k == "answer_key" => Ok(n.to_string()),
            _ => Err(format!("`{k}` is missing or not a non-empty string")),
        }
    };
    let prompt = string("prompt")?;
    let answer_key = string("answer_key")?;
    let expected_tools = match obj.get("expected_tools") {
        Some(Value::Array(a)) => a
            .iter()
            .map(|t| {
                t.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| "`expected_tools` holds a non-string".to_owned())
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => Vec::new(),
        Some(_) => return Err("`expected_tools` is not a list".into()),
    };
    let check: Predicate = serde_json::from_value(
        obj.get("check")
            .cloned()
            .ok_or_else(|| "`check` is missing".to_owned())?,
    )
    .map_err(|e| format!("`check` is not a predicate: {e}"))?;
    let solution: Vec<PlannedCall> = match obj.get("solution") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| format!("`solution` is not a list of calls: {e}"))?,
    };
    let handles = match obj.get("handles") {
        None | Some(Value::Null) => Vec::new(),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| format!("`handles` is not a list of bindings: {e}"))?,
    };
    Ok(Task {
        id: id.to_owned(),
        prompt,
        expected_tools,
        answer_key,
        check,
        destructive: obj
            .get("destructive")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        solution,
        handles,
        rationale: obj
            .get("rationale")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 80 {
        format!("{}…", s.chars().take(80).collect::<String>())
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::GeneratorId;

    #[test]
    fn fenced_arrays_parse_and_garbage_elements_are_malformed() {
        let opts = GenerateOptions::new(GeneratorId::JudgeSynth1, 2, 1);
        let reply = "Here you are:\n```json\n[\n {\"prompt\": \"What is the sum of the ids?\", \"expected_tools\": [\"get-sum\"], \"answer_key\": \"12\", \"check\": {\"kind\": \"number_within\", \"value\": 12, \"tolerance\": 0}, \"solution\": [{\"tool\": \"get-sum\", \"arguments\": {\"a\": 3, \"b\": 9}}], \"rationale\": \"needs the server\"},\n \"oops\",\n {\"prompt\": \"x\"}\n]\n```\nDone.";
        let c = parse_candidates(reply, 4, &opts);
        assert_eq!(c.len(), 3);
        let t = c[0].parsed.as_ref().expect("the first parses");
        assert_eq!(t.expected_tools, vec!["get-sum".to_owned()]);
        assert_eq!(t.solution[0].arguments["b"], json!(9));
        assert!(c[1].parsed.is_err());
        assert!(c[2].parsed.as_ref().unwrap_err().contains("answer_key"));
        let none = parse_candidates("I cannot do that.", 4, &opts);
        assert_eq!(none.len(), 4);
        assert!(none.iter().all(|c| c.parsed.is_err()));
    }
}
