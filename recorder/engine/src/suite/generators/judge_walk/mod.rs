//! `judge-walk/1`: the walk, guided by a judge. The work is split so the
//! judge does only what needs language and the harness what needs rigour:
//!
//! * **The judge proposes inputs** ([`JudgeGuide`]): for each callable tool,
//!   a few argument sets a user would send (`2+3` for an `expression`,
//!   `SELECT * FROM orders` for a `query`), in a small JSON answer, a batch
//!   of tools per call. It is asked twice: before the walk's first round,
//!   and after the rounds for the tools that have not answered yet, shown
//!   the values the walk harvested (a table named in a listing) and what
//!   those tools said when they failed.
//! * **The harness walks** exactly as `schema-walk/2` does
//!   ([`super::schema_walk2::walk_guided`]): it makes the calls (only on
//!   callable tools: read-only unless generation may write), keeps only
//!   successful, stable answers, harvests identifiers, chains calls, and
//!   builds every predicate from the real result, never from the judge.
//! * **The judge phrases the goal** ([`phrase`]) of each verified task as a
//!   request a user would make, shown the harness's wording and what the
//!   final tool does, never the answer. The harness keeps its own wording
//!   where the judge's drops a value the task is about, names a tool, or
//!   holds the answer; admission (rules scoped to this generator) rejects
//!   a prompt that names a tool and one whose wording asks for a label it
//!   also states as given.
//!
//! Every judge call is on the agent tape and in the `synthesis` spend; a
//! failed one is our failure, counted in `judge_calls` (the `synthesis`
//! gate refuses as COMPROMISED past its limit), and after
//! [`JudgeWalkConfig::max_failures_in_a_row`] failures in a row the judge
//! is not asked again: the walk goes on from the schema alone and the
//! harness's own wording stands.

mod judge;
mod phrase;

use fitness_shared::tape::timeline::excerpt;
use futures::future::LocalBoxFuture;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

pub(crate) use judge::Judge;
pub use judge::{JudgeWalkConfig, output_cap};
use judge::{TOKENS_PER_CALL_PROPOSED, TOKENS_PER_TASK_PHRASED};

use super::schema_walk2::{Asked, Guide, Proposed, SPREAD, WalkConfig2, max_per_tool, walk_guided};
use super::seam::{Candidates, GenerationInput, Generator};

/// `judge-walk/1`.
pub struct JudgeWalk1;

impl Generator for JudgeWalk1 {
    fn config(&self, input: &GenerationInput<'_>) -> Map<String, Value> {
        let mut config = Map::new();
        config.insert(
            "walk".into(),
            walk_config().to_json(max_per_tool(input.want)),
        );
        config.insert("seed_handles".into(), json!(input.opts.seed_handles.len()));
        config.insert("judge_walk".into(), JudgeWalkConfig::default().to_json());
        config.insert("spread".into(), json!(SPREAD));
        config
    }

    fn propose<'a>(
        &'a self,
        input: &'a GenerationInput<'a>,
    ) -> LocalBoxFuture<'a, anyhow::Result<Candidates>> {
        Box::pin(async move {
            let Some(judge) = input.judge else {
                anyhow::bail!("judge-walk/1 needs a judge model");
            };
            let config = JudgeWalkConfig::default();
            let callable = super::walk::callable_tools(&input.surface(), &mut Default::default());
            let mut guide = JudgeGuide {
                judge: Judge::new(judge, input.tape, input.opts.seed, &config),
                values_per_tool: config.values_per_tool(input.want, callable.len()),
                config: config.clone(),
            };
            let walked = walk_guided(input, &walk_config(), Some(&mut guide)).await;
            let mut candidates = Candidates::walked(walked);
            let mut judge = guide.judge;
            phrase::phrase(&mut candidates.candidates, input.tools, &mut judge, &config).await;
            candidates.judge_calls = Some(judge.calls);
            candidates.synthesis = Some(judge.phase);
            Ok(candidates)
        })
    }
}

/// The walk under the judge: `schema-walk/2`'s, with state witnesses (a
/// read-only walk passes over what it created), and more facts from one
/// call (a listing of a whole graph names many records; the cap per tool
/// still spreads the suite).
fn walk_config() -> WalkConfig2 {
    WalkConfig2 {
        witness_state: true,
        facts_per_call: 10,
        ..WalkConfig2::default()
    }
}

// The config as the suite registers it, prompts included: here, beside the
// proposing prompts and in reach of `phrase`'s, which the judge's room
// below may not use.
impl JudgeWalkConfig {
    pub fn to_json(&self) -> Value {
        json!({
            "tools_per_call": self.tools_per_call,
            "values_per_tool": self.values_per_tool,
            "max_values_per_tool": self.max_values_per_tool,
            "tasks_per_call": self.tasks_per_call,
            "max_failures_in_a_row": self.max_failures_in_a_row,
            "output_tokens_per_proposed_call": TOKENS_PER_CALL_PROPOSED,
            "output_tokens_per_phrased_task": TOKENS_PER_TASK_PHRASED,
            "temperature": 0.0,
            "prompts": [PROPOSE_SYSTEM, PROPOSE_AGAIN, phrase::SYSTEM],
        })
    }
}

const PROPOSE_SYSTEM: &str = "You pick inputs to try on an MCP server's tools. For each tool \
listed, write the number of different argument objects asked for, each one a real user would \
send and likely to succeed and return real data: a lookup, a listing, a search, a calculation, \
a read-only query. Where a tool needs an existing name, id, path or table, use the values seen \
so far. Each input must need the server: no answer a person knows or works out in their \
head. A calculation takes three or more operations on numbers of several digits, or functions \
(sqrt, log, sin); a conversion or encoding takes a whole phrase; a lookup names a record that \
exists. Use only the names (tables, columns, paths, ids, URIs) shown as what the server \
holds or as values seen so far; never invent one, and never use a file name from the command \
line as a table. Never write, create, delete or change anything. Reply with one JSON object only, each \
tool's name mapped to its list of argument objects, for example \
{\"evaluate\": [{\"expression\": \"(1234 * 5678) / 91 - sqrt(2)\"}, {\"expression\": \"log(98765) * 3.7 + 2^20\"}], \
\"get_order\": [{\"order_id\": \"<an id seen so far>\"}], \"list_orders\": [{}]}.";

const PROPOSE_AGAIN: &str = "These tools have not answered yet; what each was called with and \
what it said is shown. Write different inputs, using the values seen so far.";

/// The guide: the judge proposes argument sets, a batch of tools per call.
struct JudgeGuide<'a> {
    judge: Judge<'a>,
    /// Argument sets asked for per tool.
    values_per_tool: usize,
    config: JudgeWalkConfig,
}

impl Guide for JudgeGuide<'_> {
    fn propose<'a>(&'a mut self, asked: Asked<'a>) -> LocalBoxFuture<'a, Vec<Proposed>> {
        Box::pin(async move {
            let mut proposed = Vec::new();
            let k = self.values_per_tool.max(1);
            // A call's answer stays within an agent turn's output.
            let per_call = self
                .config
                .tools_per_call
                .min(4096 / (k * TOKENS_PER_CALL_PROPOSED))
                .max(1);
            for batch in asked.tools.chunks(per_call) {
                let user = propose_prompt(batch, &asked, k);
                let cap = output_cap(batch.len() * k, TOKENS_PER_CALL_PROPOSED);
                let what = if asked.again {
                    "propose-again"
                } else {
                    "propose"
                };
                let Some(answer) = self.judge.ask(what, PROPOSE_SYSTEM, user, cap).await else {
                    continue;
                };
                proposed.extend(parse_proposals(&answer, batch, k));
            }
            proposed
        })
    }
}

/// One proposing call's request: the tools, the values seen, and on the
/// second asking what each tool said last.
fn propose_prompt(tools: &[&Tool], asked: &Asked<'_>, k: usize) -> String {
    let mut user = format!("{k} different argument objects for each tool.\n\nTools:\n");
    for t in tools {
        user.push_str(&tool_line(t));
        user.push('\n');
    }
    if !asked.about.trim().is_empty() {
        user.push_str("\nWhat the server holds (read from it before you were asked):\n");
        user.push_str(asked.about.trim_end());
        user.push('\n');
    }
    if let Some(context) = asked.context.filter(|c| !c.trim().is_empty()) {
        user.push_str("\nThe operator says: ");
        user.push_str(&excerpt(context, CONTEXT_CHARS));
        user.push('\n');
    }
    if !asked.seen.is_empty() {
        user.push_str("\nValues seen so far: ");
        let seen: Vec<String> = asked.seen.iter().map(|v| format!("`{v}`")).collect();
        user.push_str(&seen.join(", "));
        user.push('\n');
    }
    if asked.again {
        user.push('\n');
        user.push_str(PROPOSE_AGAIN);
        user.push('\n');
        for t in tools {
            for said in asked.errors.get(t.name.as_ref()).into_iter().flatten() {
                user.push_str(&format!("- {}: {said}\n", t.name));
            }
        }
    }
    user
}

/// Characters of the operator's context shown.
const CONTEXT_CHARS: usize = 2_000;

/// Characters of a description shown, and of an argument's.
const DESCRIPTION_CHARS: usize = 200;
const ARGUMENT_CHARS: usize = 100;

/// A tool as the judge reads it when proposing inputs: one line with its
/// name, words, and each argument's name, type, whether it is required,
/// its allowed values and its words.
pub(crate) fn tool_line(t: &Tool) -> String {
    let mut line = format!(
        "- {}: {}",
        t.name,
        excerpt(t.description.as_deref().unwrap_or(""), DESCRIPTION_CHARS)
    );
    let required = crate::suite::schema_args::required_names(t.input_schema.get("required"));
    let props = t.input_schema.get("properties").and_then(Value::as_object);
    let mut args = Vec::new();
    for (name, p) in props.into_iter().flatten() {
        let kind = match p.get("type") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => "any".to_owned(),
        };
        let mut arg = format!(
            "{name} ({kind}{})",
            if required.contains(&name.as_str()) {
                ", required"
            } else {
                ""
            }
        );
        if let Some(values) = p.get("enum").and_then(Value::as_array) {
            let shown: Vec<String> = values.iter().take(8).map(Value::to_string).collect();
            arg.push_str(&format!(" one of {}", shown.join("|")));
        }
        if let Some(d) = p.get("description").and_then(Value::as_str) {
            arg.push_str(&format!(": {}", excerpt(d, ARGUMENT_CHARS)));
        }
        args.push(arg);
    }
    if args.is_empty() {
        line.push_str(" | no arguments");
    } else {
        line.push_str(" | arguments: ");
        line.push_str(&args.join("; "));
    }
    line
}

/// An argument object as a judge wrote it: an object, nothing (no
/// arguments), or the object as a JSON string (as some models write it).
pub(crate) fn argument_object(v: &Value) -> Option<Map<String, Value>> {
    match v {
        Value::Object(m) => Some(m.clone()),
        Value::Null => Some(Map::new()),
        Value::String(s) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Some(m),
            _ => None,
        },
        _ => None,
    }
}

/// The calls a proposing answer names, on the tools asked about, `k` per
/// tool at most: each tool's name mapped to its argument objects (as
/// asked), or a list of `{tool, arguments}` (as some models write it).
fn parse_proposals(answer: &Value, tools: &[&Tool], k: usize) -> Vec<Proposed> {
    let mut items: Vec<(String, Value)> = Vec::new();
    if let Some(calls) = answer.get("calls").and_then(Value::as_array) {
        for item in calls {
            if let Some(name) = item.get("tool").and_then(Value::as_str) {
                let args = item.get("arguments").cloned().unwrap_or(Value::Null);
                items.push((name.to_owned(), args));
            }
        }
    }
    for (name, sets) in answer.as_object().into_iter().flatten() {
        match sets {
            Value::Array(sets) => {
                items.extend(sets.iter().map(|a| (name.clone(), a.clone())));
            }
            Value::Object(_) => items.push((name.clone(), sets.clone())),
            _ => {}
        }
    }
    let mut out: Vec<Proposed> = Vec::new();
    for (name, args) in items {
        let name = name.as_str();
        if !tools.iter().any(|t| t.name == name) {
            continue;
        }
        if out.iter().filter(|(t, _)| t == name).count() >= k {
            continue;
        }
        let Some(args) = argument_object(&args) else {
            continue;
        };
        out.push((name.to_owned(), args));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_owned(),
            "Evaluate a mathematical expression.",
            std::sync::Arc::new(schema.as_object().cloned().unwrap_or_default()),
        )
    }

    #[test]
    fn a_tool_reads_as_one_line_with_its_arguments() {
        let t = tool(
            "calculate",
            json!({"type": "object", "required": ["expression"], "properties": {
                "expression": {"type": "string", "description": "e.g. 2 + 3"},
                "mode": {"type": "string", "enum": ["exact", "float"]}
            }}),
        );
        assert_eq!(
            tool_line(&t),
            "- calculate: Evaluate a mathematical expression. | arguments: expression (string, required): e.g. 2 + 3; mode (string) one of \"exact\"|\"float\""
        );
    }

    #[test]
    fn proposals_keep_the_tools_asked_about_k_each() {
        let t = tool("calculate", json!({"type": "object"}));
        let answer = json!({"calls": [
            {"tool": "calculate", "arguments": {"expression": "2+3"}},
            {"tool": "calculate", "arguments": "{\"expression\": \"7*6\"}"},
            {"tool": "calculate", "arguments": {"expression": "1-1"}},
            {"tool": "rm_rf", "arguments": {}},
            {"tool": "calculate", "arguments": 3},
        ]});
        let got = parse_proposals(&answer, &[&t], 2);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].1["expression"], "7*6");
        assert!(parse_proposals(&json!({"nothing": 1}), &[&t], 2).is_empty());
        let keyed =
            json!({"calculate": [{"expression": "2+3"}, {"expression": "9/3"}], "rm_rf": [{}]});
        let got = parse_proposals(&keyed, &[&t], 5);
        assert_eq!(got.len(), 2);
        assert_eq!(got[1].1["expression"], "9/3");
    }

    #[test]
    fn caps_grow_with_what_is_asked_and_stop_at_an_agent_turn() {
        assert_eq!(output_cap(15, 48), 784);
        assert_eq!(output_cap(1_000, 48), 4096);
    }
}
