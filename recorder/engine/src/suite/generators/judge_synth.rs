//! `judge-synth/1`: the judge model reads the tool schemas and the server
//! instructions and writes candidate tasks (MCPEval-style synthesis) as a
//! JSON array of `{prompt, expected_tools, answer_key, check, solution,
//! rationale}`.
//!
//! The judge is asked in batches of [`JudgeConfig::batch`] candidates (a
//! slow model answers four tasks in the time a fast one answers forty),
//! each call listing the prompts written so far so it does not repeat
//! them. The reply is parsed robustly: code fences and prose around the
//! array are ignored, and each element that is not a task becomes a
//! `malformed` candidate with the reason; a reply with no array at all
//! makes the batch's candidates malformed, so the ledger still counts what
//! the judge was asked for.
//!
//! A judge call that fails (a timeout, an API error) is a failure of our
//! measurement, never a candidate: it is counted in the ledger's
//! `judge_calls`, apart from every fate of a candidate, and after
//! [`JudgeConfig::max_failures_in_a_row`] failures in a row the judge is
//! not asked again.

use std::collections::BTreeSet;

use fitness_shared::record::JudgeCalls;
use futures::future::LocalBoxFuture;
use rmcp::model::Tool;
use serde_json::{Value, json};

use super::seam::{Candidates, GenerationInput, Generator};
use crate::mcp::tap::Tap;
use crate::model::types::{
    ChatRequest, ContentBlock, Message, ModelClient, PlannedCall, Role, text_of,
};
use crate::suite::destructive::tool_for_judge;
use crate::suite::options::GenerateOptions;
use crate::suite::spend::PhaseSpend;
use crate::suite::task::{Candidate, Predicate, Task};

const SYSTEM: &str = "You write evaluation tasks for an MCP server. Each task must be impossible \
to answer correctly without calling the server's tools (the answer comes from the server's data \
or computation, not from general knowledge or arithmetic on numbers in the prompt), and its final \
answer must be checkable by machine. \
Reply with one JSON object only, {\"tasks\": [...]}. Each task: {\"prompt\": string (what the agent is asked; never \
contains the answer), \"expected_tools\": [tool names], \"answer_key\": string, \"check\": one of \
{\"kind\":\"substring\",\"value\":string,\"case_insensitive\":bool} | {\"kind\":\"regex\",\"pattern\":string} \
| {\"kind\":\"json_path\",\"path\":\"$.a.b[0]\",\"equals\":any} | {\"kind\":\"number_within\",\"value\":number,\"tolerance\":number} \
| {\"kind\":\"all_of\",\"of\":[checks]} (the check is applied to the agent's final answer text and must accept the answer_key), \
\"solution\": [{\"tool\": name, \"arguments\": {..}}] (the calls that reach the answer; a value an \
earlier call returns is written {{handle:NAME}} and declared in \"handles\": \
[{\"name\",\"produced_by\",\"consumed_by\"}] with call indexes), \"rationale\": string (why the \
server is required)}.";

/// `judge-synth/1`.
pub struct JudgeSynth1;

impl Generator for JudgeSynth1 {
    fn config(&self, _input: &GenerationInput<'_>) -> serde_json::Map<String, Value> {
        let mut config = serde_json::Map::new();
        config.insert("judge_synth".into(), JudgeConfig::default().to_json());
        config
    }

    fn propose<'a>(
        &'a self,
        input: &'a GenerationInput<'a>,
    ) -> LocalBoxFuture<'a, anyhow::Result<Candidates>> {
        Box::pin(async move {
            let Some(judge) = input.judge else {
                anyhow::bail!("judge-synth/1 needs a judge model");
            };
            Ok(synthesized(input, judge, &JudgeConfig::default()).await)
        })
    }
}

/// One verification call of a judge's solution, at most.
const VERIFY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// The judge's candidates, each with its solution calls verified against
/// the server.
async fn synthesized(
    input: &GenerationInput<'_>,
    judge: &dyn ModelClient,
    judge_config: &JudgeConfig,
) -> Candidates {
    let synthesis = synthesize(
        judge,
        input.tools,
        input.instructions,
        input.want,
        input.opts,
        judge_config,
        input.tape,
    )
    .await;
    let mut candidates = synthesis.candidates;
    // The tools the walk would call: none that may write unless generation
    // may, not destructive, not open-world, not one whose name says it
    // returns secrets.
    let callable: BTreeSet<String> =
        super::walk::callable_tools(&input.surface(), &mut Default::default())
            .iter()
            .map(|t| t.name.to_string())
            .collect();
    verify(&mut candidates, input.session, &callable, VERIFY_TIMEOUT).await;
    let observed = candidates
        .iter()
        .filter_map(|c| Some((c.id.clone(), c.source.clone()?)))
        .collect();
    Candidates {
        candidates,
        observed,
        walk: None,
        judge_calls: Some(synthesis.calls),
        synthesis: Some(synthesis.phase),
        holdings: None,
    }
}

/// How the judge is asked (registered in the suite's generator config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JudgeConfig {
    /// Candidates asked for in one call.
    pub batch: usize,
    /// Consecutive failed calls after which the judge is not asked again.
    pub max_failures_in_a_row: u32,
    /// Output tokens one call may spend.
    pub max_tokens: u32,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            batch: 4,
            max_failures_in_a_row: 2,
            max_tokens: 4_000,
        }
    }
}

impl JudgeConfig {
    pub fn to_json(&self) -> Value {
        json!({
            "batch": self.batch,
            "max_failures_in_a_row": self.max_failures_in_a_row,
            "max_tokens": self.max_tokens,
        })
    }
}

/// What synthesis produced: the candidates, the spend, the calls.
pub struct Synthesis {
    pub candidates: Vec<Candidate>,
    pub phase: PhaseSpend,
    pub calls: JudgeCalls,
}

/// Ask the judge for `want` candidates, `config.batch` at a time.
pub async fn synthesize(
    judge: &dyn ModelClient,
    tools: &[Tool],
    instructions: Option<&str>,
    want: usize,
    opts: &GenerateOptions,
    config: &JudgeConfig,
    tape: &Tap,
) -> Synthesis {
    let mut phase = PhaseSpend::new("synthesis", &judge.id().to_string());
    let mut calls = JudgeCalls {
        made: 0,
        failed: 0,
        last_error: None,
    };
    let listing = tools_listing(tools);
    let batch = config.batch.max(1);
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut written: Vec<String> = Vec::new();
    let mut failures_in_a_row = 0;
    let mut index = 0usize;
    while candidates.len() < want && failures_in_a_row < config.max_failures_in_a_row {
        let k = batch.min(want - candidates.len());
        index += 1;
        let request = ChatRequest {
            system: Some(SYSTEM.into()),
            messages: vec![Message {
                role: Role::User,
                content: vec![ContentBlock::Text {
                    text: batch_prompt(instructions, &listing, k, &written),
                }],
            }],
            tools: vec![],
            max_tokens: config.max_tokens,
            temperature: Some(0.7),
            corr_id: Some(format!("suite::synthesis::{}::{index}", opts.seed)),
            json_object: true,
        };
        calls.made += 1;
        match crate::model::agent::taped_call(judge, &request, tape, "synthesis").await {
            Ok(resp) => {
                failures_in_a_row = 0;
                phase.count(resp.usage.as_ref());
                let text = text_of(&resp.content);
                let first = candidates.len();
                for c in parse_candidates(&text, k, first, opts) {
                    if let Ok(t) = &c.parsed {
                        written.push(t.prompt.clone());
                    }
                    candidates.push(c);
                }
            }
            Err(e) => {
                failures_in_a_row += 1;
                phase.threw();
                calls.failed += 1;
                calls.last_error = Some(e.to_string());
            }
        }
    }
    Synthesis {
        candidates,
        phase,
        calls,
    }
}

/// The tools as the judge is shown them, with their annotations.
fn tools_listing(tools: &[Tool]) -> String {
    let listing: Vec<Value> = tools
        .iter()
        .map(|t| {
            let mut v = tool_for_judge(t);
            v["annotations"] = json!(t.annotations);
            v
        })
        .collect();
    serde_json::to_string_pretty(&listing).unwrap_or_default()
}

/// One call's request for `k` tasks, naming the prompts already written
/// (the latest 40) so the judge writes different ones.
fn batch_prompt(instructions: Option<&str>, listing: &str, k: usize, written: &[String]) -> String {
    let mut user = format!(
        "Server instructions:\n{}\n\nTools:\n{listing}\n\nWrite {k} distinct tasks.",
        instructions.unwrap_or("(none)")
    );
    if !written.is_empty() {
        user.push_str("\nThese prompts are written already; write different ones:\n");
        for p in written.iter().rev().take(40) {
            user.push_str(&format!("- {p}\n"));
        }
    }
    user
}

/// Make each parsed candidate's solution calls now, zero tokens: the
/// calls of a task the judge claims reaches its answer. Only tasks whose
/// every call is to a tool in `callable` (listed, not destructive, not
/// open-world) are made; handles (`{{handle:NAME}}`) are filled from the
/// earlier results as the reference agent fills them. A task whose calls
/// fail, return an error, or return nothing its check accepts is marked
/// `answer-not-reached`; one that reaches its answer carries the result it
/// was read from.
pub async fn verify(
    candidates: &mut [Candidate],
    session: &crate::mcp::connect::Session,
    callable: &std::collections::BTreeSet<String>,
    timeout: std::time::Duration,
) {
    use super::walk::{Called, call};
    for c in candidates.iter_mut() {
        let Ok(task) = &c.parsed else {
            continue;
        };
        if task.solution.is_empty() {
            c.unreached = Some("the judge gave no solution calls to make".to_owned());
            continue;
        }
        // A call to a tool that may write, or one whose arguments change
        // data, is never made here; admission rejects the task
        // (`write-excluded`) where the run may not write.
        if task.solution.iter().any(|s| {
            !callable.contains(&s.tool)
                || crate::access::writes_by_arguments(&Value::Object(s.arguments.clone()))
        }) {
            continue;
        }
        let mut results: Vec<String> = Vec::new();
        let mut failed = None;
        for (i, step) in task.solution.iter().enumerate() {
            let earlier: Vec<(&str, bool)> = results.iter().map(|r| (r.as_str(), true)).collect();
            let args =
                crate::model::sim::substitute(&Value::Object(step.arguments.clone()), &earlier);
            let args = args.as_object().cloned().unwrap_or_default();
            match call(session, &step.tool, &args, timeout).await {
                Called::Text(t) => results.push(t),
                Called::Empty => results.push(String::new()),
                Called::Error(_) => {
                    failed = Some(format!("call {i} (`{}`) returned an error", step.tool));
                    break;
                }
                Called::Failed | Called::TimedOut => {
                    failed = Some(format!("call {i} (`{}`) failed or timed out", step.tool));
                    break;
                }
            }
        }
        if let Some(why) = failed {
            c.unreached = Some(why);
            continue;
        }
        match results.iter().find(|r| task.check.check(r)) {
            Some(r) => c.source = Some(r.clone()),
            None => {
                c.unreached = Some(format!(
                    "the solution's {} call(s) return no answer its check accepts (last result: {})",
                    results.len(),
                    results
                        .last()
                        .map(|r| r.chars().take(120).collect::<String>())
                        .unwrap_or_default()
                ))
            }
        }
    }
}

fn malformed_all(k: usize, first: usize, opts: &GenerateOptions, why: &str) -> Vec<Candidate> {
    (first + 1..=first + k)
        .map(|i| Candidate::new(format!("{}c{i}", opts.id_prefix), Err(why.to_owned())))
        .collect()
}

/// Parse one reply into candidates (one per array element, `k` at most),
/// numbered after the `first` candidates already made.
pub fn parse_candidates(
    text: &str,
    k: usize,
    first: usize,
    opts: &GenerateOptions,
) -> Vec<Candidate> {
    let Some(items) = find_array(text) else {
        return malformed_all(k, first, opts, "the reply holds no JSON array of tasks");
    };
    let mut written: Vec<Candidate> = items
        .iter()
        .take(k)
        .enumerate()
        .map(|(i, item)| {
            let id = format!("{}c{}", opts.id_prefix, first + i + 1);
            let parsed = parse_task(item, &id);
            Candidate::new(id, parsed)
        })
        .collect();
    // A short array: the tasks asked for and not written are counted too
    // (and the synthesis loop always moves on: a judge that answers `[]`
    // forever cannot keep it asking).
    let n = written.len();
    if n < k {
        written.extend(malformed_all(
            k - n,
            first + n,
            opts,
            &format!("the judge wrote {n} of the {k} tasks asked for"),
        ));
    }
    written
}

/// The array of tasks in `text`: the whole reply, an object holding it
/// (`{"tasks": [...]}`), or the first array inside code fences or prose
/// whose objects look like tasks (have a `prompt`). Another array in prose
/// (a solution's calls written out) is not taken for the tasks.
fn find_array(text: &str) -> Option<Vec<Value>> {
    let tasks_like = |a: &[Value]| a.iter().any(|v| v.get("prompt").is_some());
    match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Array(a)) => return Some(a),
        Ok(Value::Object(o)) => {
            if let Some(a) = o.into_iter().find_map(|(_, v)| match v {
                Value::Array(a) => Some(a),
                _ => None,
            }) {
                return Some(a);
            }
        }
        _ => {}
    }
    for (i, c) in text.char_indices() {
        if c == '[' || c == '{' {
            let mut stream = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(Value::Array(a))) if tasks_like(&a) => return Some(a),
                Some(Ok(Value::Object(o))) => {
                    if let Some(a) = o.into_iter().find_map(|(_, v)| match v {
                        Value::Array(a) if tasks_like(&a) => Some(a),
                        _ => None,
                    }) {
                        return Some(a);
                    }
                }
                _ => {}
            }
        }
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
        origin: None,
        kind: Default::default(),
        state_check: None,
        shape: None,
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
        let c = parse_candidates(reply, 4, 0, &opts);
        // Three written, the fourth asked for and not written.
        assert_eq!(c.len(), 4);
        assert!(
            c[3].parsed
                .as_ref()
                .unwrap_err()
                .contains("wrote 3 of the 4")
        );
        let t = c[0].parsed.as_ref().expect("the first parses");
        assert_eq!(t.expected_tools, vec!["get-sum".to_owned()]);
        assert_eq!(t.solution[0].arguments["b"], json!(9));
        assert!(c[1].parsed.is_err());
        assert!(c[2].parsed.as_ref().unwrap_err().contains("answer_key"));
        // A reply in prose whose only JSON is a solution's calls: no tasks.
        let prose = "1. **Prompt:** Read the file.\n**Solution:** ```[{\"tool\": \"read\", \"arguments\": {}}]```";
        let c = parse_candidates(prose, 4, 0, &opts);
        assert_eq!(c.len(), 4);
        assert!(
            c.iter().all(|c| c
                .parsed
                .as_ref()
                .unwrap_err()
                .contains("no JSON array of tasks")),
            "{:?}",
            c.iter().map(|c| &c.parsed).collect::<Vec<_>>()
        );
        // The object the JSON mode asks for.
        let object = "{\"tasks\": [{\"prompt\": \"p\"}]}";
        assert_eq!(parse_candidates(object, 4, 0, &opts).len(), 4);
        assert_eq!(
            parse_candidates("[]", 4, 0, &opts).len(),
            4,
            "an empty array"
        );
        let none = parse_candidates("I cannot do that.", 4, 6, &opts);
        assert_eq!(none.len(), 4);
        assert_eq!(none[0].id, "tc7");
        assert!(none.iter().all(|c| c.parsed.is_err()));
    }
}
