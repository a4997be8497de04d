//! The judge phrases each verified task's goal as a request a user would
//! make. It is shown the harness's wording alone (a small model copies
//! whatever else it is shown into the request), never the answer. The harness keeps the
//! judge's wording only when it keeps every value the task is about (the
//! backticked ones), names no tool and does not hold the answer; otherwise
//! its own wording stands. Either way the harness's wording is kept on the
//! candidate ([`Candidate::template`]) for admission to read.

use rmcp::model::Tool;
use serde_json::Value;

use super::judge::{Judge, JudgeWalkConfig, TOKENS_PER_TASK_PHRASED, output_cap};
use crate::suite::admission::names_tool;
use crate::suite::predicate::contains_token;
use crate::suite::task::Candidate;

pub(super) const SYSTEM: &str = "You reword test tasks the way a user would ask them. Keep \
each task's meaning and copy every value in backticks or double quotes exactly, as quoted. Do not name any \
tool or function and do not say how to call anything. One sentence each. Reply with one JSON \
object only: {\"requests\": [{\"id\": \"...\", \"request\": \"...\"}]}.";

/// The fixed opening of the walk's prompts, and where its reply
/// instruction starts.
const OPENING: &str = "Using the server's tools, ";
const REPLY: &str = " Reply with ";

/// A walk prompt split into its goal (`find the humidity for location
/// `Chicago`.`) and its reply instruction (` Reply with the humidity ...`).
fn split(prompt: &str) -> (&str, &str) {
    let body = prompt.strip_prefix(OPENING).unwrap_or(prompt);
    match body.find(REPLY) {
        Some(i) => (&body[..i], &body[i..]),
        None => (body, ""),
    }
}

/// The values a text quotes, in backticks (the walk's) or double quotes
/// (the composer's `the book "Kindred"`).
fn quoted(text: &str) -> Vec<&str> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .chain(text.split('"').skip(1).step_by(2))
        .filter(|v| !v.is_empty())
        .collect()
}

/// Why the judge's wording cannot stand, if it cannot.
fn unusable(request: &str, goal: &str, answer: &str, tools: &[Tool]) -> Option<&'static str> {
    let n = request.chars().count();
    if !(8..=400).contains(&n) || request.contains('\n') {
        return Some("empty, too long or more than one line");
    }
    if quoted(goal).iter().any(|v| !request.contains(v)) {
        return Some("it dropped a value the task is about");
    }
    // A request is words around the values: a bare expression asks
    // nothing.
    let mut outside = request.to_owned();
    for v in quoted(goal) {
        outside = outside.replace(v, " ");
    }
    let words = outside
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.chars().count() >= 2)
        .count();
    if words < 3 {
        return Some("it is not a request in words");
    }
    if tools.iter().any(|t| names_tool(request, &t.name)) {
        return Some("it names a tool");
    }
    if contains_token(request, answer) {
        return Some("it holds the answer");
    }
    None
}

/// The judge's request as a sentence: a capital first letter and a
/// closing stop where it wrote none (the 1.5B model sometimes copied the
/// goal as given, "find the item of ... `Ada Quill`", before the reply
/// instruction is appended).
fn sentence(request: &str) -> String {
    let mut chars = request.chars();
    let mut out: String = match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    if !out.ends_with(['.', '?', '!']) {
        out.push('.');
    }
    out
}

/// Phrase every parsed candidate, `tasks_per_call` per judge call.
pub(super) async fn phrase(
    candidates: &mut [Candidate],
    tools: &[Tool],
    judge: &mut Judge<'_>,
    config: &JudgeWalkConfig,
) {
    let ids: Vec<usize> = candidates
        .iter()
        .enumerate()
        .filter(|(_, c)| c.parsed.is_ok())
        .map(|(i, _)| i)
        .collect();
    for batch in ids.chunks(config.tasks_per_call.max(1)) {
        let mut user = String::from("Tasks:\n");
        for &i in batch {
            let Ok(task) = &candidates[i].parsed else {
                continue;
            };
            let (goal, _) = split(&task.prompt);
            user.push_str(&format!("- id {}: {goal}\n", candidates[i].id));
        }
        let cap = output_cap(batch.len(), TOKENS_PER_TASK_PHRASED);
        let answer = judge.ask("phrase", SYSTEM, user, cap).await;
        let written: Vec<(String, String)> = answer
            .as_ref()
            .and_then(|a| a.get("requests"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| {
                Some((
                    r.get("id")?.as_str()?.to_owned(),
                    r.get("request")?.as_str()?.trim().to_owned(),
                ))
            })
            .collect();
        for &i in batch {
            let c = &mut candidates[i];
            let Ok(task) = &mut c.parsed else {
                continue;
            };
            let template = task.prompt.clone();
            c.template = Some(template.clone());
            let (goal, reply) = split(&template);
            let Some((_, request)) = written.iter().find(|(id, _)| *id == c.id) else {
                continue;
            };
            let kept = match unusable(request, goal, &task.answer_key, tools) {
                Some(why) => format!(" (the judge's wording was not used: {why})"),
                None => {
                    task.prompt = format!("{}{reply}", sentence(request));
                    String::new()
                }
            };
            let rationale = task.rationale.take().unwrap_or_default();
            task.rationale = Some(format!(
                "{rationale}; worded by the harness as: {template}{kept}"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_judges_request_is_kept_as_a_sentence() {
        assert_eq!(
            sentence("find the item whose customer is `Ada Quill`"),
            "Find the item whose customer is `Ada Quill`."
        );
        assert_eq!(sentence("Who owns `notes.md`?"), "Who owns `notes.md`?");
    }

    #[test]
    fn a_walk_prompt_splits_into_goal_and_reply() {
        let p = "Using the server's tools, find the humidity for location `Chicago`. Reply with the humidity exactly as the server gives it.";
        let (goal, reply) = split(p);
        assert_eq!(goal, "find the humidity for location `Chicago`.");
        assert_eq!(
            reply,
            " Reply with the humidity exactly as the server gives it."
        );
        assert_eq!(quoted(goal), vec!["Chicago"]);
    }

    #[test]
    fn the_judges_wording_stands_only_when_it_keeps_the_task() {
        let tools = vec![Tool::new(
            "get_weather",
            "Weather now",
            std::sync::Arc::new(serde_json::Map::new()),
        )];
        let goal = "find the humidity for location `Chicago`.";
        assert_eq!(
            unusable(
                "How humid is it in `Chicago` right now?",
                goal,
                "61",
                &tools
            ),
            None
        );
        assert_eq!(
            unusable("How humid is it in Boston?", goal, "61", &tools),
            Some("it dropped a value the task is about")
        );
        assert_eq!(
            unusable("Call get_weather for `Chicago`.", goal, "61", &tools),
            Some("it names a tool")
        );
        assert_eq!(
            unusable("Is the humidity in `Chicago` 61?", goal, "61", &tools),
            Some("it holds the answer")
        );
        let sum = "find what the server returns for expression `log(98765) * 3.7` and quote it.";
        assert_eq!(
            unusable("log(98765) * 3.7", sum, "42.5", &tools),
            Some("it is not a request in words")
        );
    }
}
