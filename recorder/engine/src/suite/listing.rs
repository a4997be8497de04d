//! A suite as a person reads it before paying for a run: every task with
//! its prompt, the calls that reach its answer and its check, and every
//! rejected candidate as the record's candidate list shows it (id, prompt,
//! tools, rule, what the rule saw). The same listing is printed by
//! `fitness suite` and written as Markdown beside the suite file. Both
//! are returned unredacted: the caller redacts them with the suite.

use serde_json::Value;

use super::admission::Rejection;
use super::hashed::Suite;
use super::task::{Predicate, Task};
use crate::model::types::PlannedCall;

/// A check as a reader takes it in.
pub fn check_text(p: &Predicate) -> String {
    match p {
        Predicate::Substring {
            value,
            case_insensitive,
        } => format!(
            "the answer contains `{value}`{}",
            if *case_insensitive { " (any case)" } else { "" }
        ),
        Predicate::NumberWithin { value, tolerance } => {
            if *tolerance == 0.0 {
                format!("the answer holds the number {value}")
            } else {
                format!("the answer holds a number within {tolerance} of {value}")
            }
        }
        Predicate::Number { value, .. } => format!(
            "the answer gives the number {} (as a person writes it: `1,234`, `1234.0`, rounded no coarser than the data), with no more than a few other numbers beside it",
            super::compose::number_text_of(*value, 6)
        ),
        Predicate::Date { value } => {
            format!("the answer gives the date {value} in any common form")
        }
        Predicate::Set { members, others } => format!(
            "the answer names every one of {} (any order, whole words){}",
            quoted(members),
            if others.is_empty() {
                String::new()
            } else {
                format!(" and none of the {} others", others.len())
            }
        ),
        Predicate::Text {
            value,
            others,
            max_others,
        } => format!(
            "the answer names `{value}` (whole words, any case){}",
            if others.is_empty() {
                String::new()
            } else {
                format!(
                    ", and at most {max_others} of the {} other candidates",
                    others.len()
                )
            }
        ),
        other => serde_json::to_string(other).unwrap_or_else(|_| "a check".to_owned()),
    }
}

fn quoted(values: &[String]) -> String {
    values
        .iter()
        .map(|v| format!("`{v}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A task's check: on the answer for a question; on what the harness
/// reads after the trial for a change.
pub fn task_check_text(t: &Task) -> String {
    let text = check_text(&t.check);
    match &t.state_check {
        Some(state) if t.is_act() => {
            let reads: Vec<String> = state.reads.iter().map(call_text).collect();
            text.replacen(
                "the answer",
                &format!("after the trial, what {} reads", reads.join(" and ")),
                1,
            )
        }
        _ => text,
    }
}

/// The calls of a solution, one after the other.
fn chain(task: &Task) -> String {
    if task.solution.is_empty() {
        return "(none given)".to_owned();
    }
    task.solution
        .iter()
        .map(call_text)
        .collect::<Vec<_>>()
        .join(" → ")
}

/// Every task, as `fitness suite` prints it.
pub fn tasks_text(tasks: &[Task]) -> String {
    let mut out = format!("tasks ({}):\n", tasks.len());
    for t in tasks {
        out.push_str(&format!(
            "  {}  {}{}\n      calls: {}\n      check: {}\n",
            t.id,
            t.shape
                .map(|s| format!("[{}] ", s.as_str()))
                .unwrap_or_default(),
            one_line(&t.prompt),
            chain(t),
            task_check_text(t)
        ));
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A Markdown table cell: one line, pipes escaped.
fn cell(s: &str) -> String {
    one_line(s).replace('|', "\\|")
}

/// The suite as Markdown: what made it (`ledger`, as printed), its tasks,
/// and its rejected candidates.
pub fn markdown(s: &Suite, rejections: &[Rejection], ledger: &str) -> String {
    let mut md = format!(
        "# Suite {}\n\nGenerator `{}`, seed {}, {} task(s).\n\n```text\n{}```\n\n## Tasks\n\n",
        &s.hash.chars().take(12).collect::<String>(),
        s.generator,
        s.seed,
        s.tasks.len(),
        ledger
    );
    if s.tasks.is_empty() {
        md.push_str("None.\n");
    }
    for t in &s.tasks {
        md.push_str(&format!(
            "### {}{}\n\n> {}\n\n- calls: {}\n- check: {}\n- answer: `{}`\n",
            t.id,
            t.shape
                .map(|s| format!(" ({}: {})", s.as_str(), s.words()))
                .unwrap_or_default(),
            one_line(&t.prompt),
            chain(t).replace('`', "'"),
            task_check_text(t),
            one_line(&t.answer_key).replace('`', "'"),
        ));
        if let Some(r) = &t.rationale {
            md.push_str(&format!("- how it was made: {}\n", one_line(r)));
        }
        md.push('\n');
    }
    md.push_str("## Rejected candidates\n\n");
    if rejections.is_empty() {
        md.push_str("None.\n");
    } else {
        md.push_str("| id | prompt | tools | rule | what the rule saw |\n|---|---|---|---|---|\n");
        for r in rejections {
            let l = r.listed();
            md.push_str(&format!(
                "| {} | {} | {} | `{}` | {} |\n",
                cell(&l.id),
                cell(l.prompt.as_deref().unwrap_or("(did not parse)")),
                cell(&l.tools.join(", ")),
                l.rule,
                cell(&l.detail)
            ));
        }
    }
    md
}

/// One call: the tool and its arguments.
fn call_text(c: &PlannedCall) -> String {
    format!("{} {}", c.tool, Value::Object(c.arguments.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checks_read_as_words() {
        assert_eq!(
            check_text(&Predicate::Substring {
                value: "lamp".into(),
                case_insensitive: true
            }),
            "the answer contains `lamp` (any case)"
        );
        assert_eq!(
            check_text(&Predicate::NumberWithin {
                value: 4.0,
                tolerance: 0.0
            }),
            "the answer holds the number 4"
        );
    }
}
