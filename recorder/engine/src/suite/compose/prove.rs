//! Proving a composed question before admission. Its reference query (a
//! query that computes the answer, where the server takes one) is run
//! through the server and must agree with the answer computed from the
//! records (`reference-disagrees` when not). Then everything is read again
//! from a fresh server process (stdio: started again; HTTP: a new session):
//! the reference query once more, and the calls that read each kind the
//! questions without one were composed over, the questions composed again
//! from what they read. An answer that changes (`answer-changed`) is
//! rejected: it is not one a run can check.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use super::choose::compose;
use super::question::{Answer, Composed};
use crate::mcp::connect::{Session, Target};
use crate::model::types::PlannedCall;
use crate::suite::call::{Called, call};
use crate::suite::holdings::{Holdings, Reach};
use crate::suite::printed::structured;
use crate::suite::written;

/// What proving found, for the ledger.
#[derive(Debug, Default, Clone)]
pub struct Proved {
    /// Questions whose reference query agreed, in the walk's session.
    pub agreed: u64,
    /// Questions read again in a fresh process and unchanged.
    pub fresh: u64,
    /// Why there was no fresh process, when there was none.
    pub no_fresh: Option<String>,
    /// Calls made.
    pub calls: u64,
}

/// A fresh server process (stdio: started again; HTTP: a new session),
/// tapped as `session` is, set up as the walk's was (`setup`: a project
/// registered), with the calls the setup made; or why there is none.
pub async fn fresh_session(
    target: Option<&Target>,
    session: &Session,
    setup: &[PlannedCall],
) -> (Result<Session, String>, u64) {
    let Some(target) = target else {
        return (Err("no server to start again was given".to_owned()), 0);
    };
    let fresh = match Session::connect(
        target,
        session.tap(),
        Some("generate::fresh".to_owned()),
        session.timeout(),
    )
    .await
    {
        Ok(f) => f,
        Err(e) => {
            return (
                Err(format!(
                    "a fresh server process could not be started: {e:#}"
                )),
                0,
            );
        }
    };
    let mut calls = 0;
    for step in setup {
        calls += 1;
        if !matches!(
            call(&fresh, &step.tool, &step.arguments, session.call_limit()).await,
            Called::Text(_)
        ) {
            fresh.close().await;
            return (
                Err(format!(
                    "the fresh server process refused the setup step `{}`",
                    step.tool
                )),
                calls,
            );
        }
    }
    (Ok(fresh), calls)
}

/// Run each question's reference query and read everything again in
/// `fresh` (set up by [`fresh_session`]); mark what fails by its rule.
pub async fn prove(
    items: &mut [Composed],
    holdings: &Holdings,
    session: &Session,
    fresh: Result<&Session, String>,
    timeout: Duration,
    seed: u64,
) -> Proved {
    let mut proved = Proved::default();
    for c in items.iter_mut().filter(|c| c.disproved.is_none()) {
        let Some(reference) = &c.reference else {
            continue;
        };
        proved.calls += 1;
        match call(session, &reference.tool, &reference.arguments, timeout).await {
            Called::Text(text) => match agrees(&c.answer, &text) {
                Ok(()) => {
                    proved.agreed += 1;
                    c.evidence = Some(text);
                }
                Err(why) => {
                    c.disproved = Some(("reference-disagrees", why));
                }
            },
            other => {
                c.disproved = Some((
                    "reference-disagrees",
                    format!("the reference query {}", failed(other)),
                ));
            }
        }
    }
    let fresh = match fresh {
        Ok(f) => f,
        Err(why) => {
            proved.no_fresh = Some(why);
            return proved;
        }
    };
    // The reference queries, again.
    for c in items.iter_mut().filter(|c| c.disproved.is_none()) {
        let Some(reference) = &c.reference else {
            continue;
        };
        proved.calls += 1;
        let again = match call(fresh, &reference.tool, &reference.arguments, timeout).await {
            Called::Text(text) => agrees(&c.answer, &text),
            other => Err(format!("the reference query {}", failed(other))),
        };
        match again {
            Ok(()) => proved.fresh += 1,
            Err(why) => {
                c.disproved = Some((
                    "answer-changed",
                    format!("read again in a fresh server process: {why}"),
                ));
            }
        }
    }
    // The kinds read by their calls, read again and composed again.
    let mut again = holdings.clone();
    for kind in again.kinds.iter_mut() {
        let Reach::Calls(reads) = &kind.reach else {
            continue;
        };
        let mut texts = Vec::new();
        for c in &reads.calls {
            proved.calls += 1;
            match call(fresh, &c.tool, &c.arguments, timeout).await {
                Called::Text(t) => texts.push(t),
                _ => break,
            }
        }
        kind.records = reads.records(&texts, &kind.fields).unwrap_or_default();
    }
    let recomposed: BTreeMap<String, String> = compose(&again, seed, usize::MAX)
        .into_iter()
        .map(|c| (c.prompt, c.answer.key()))
        .collect();
    for c in items
        .iter_mut()
        .filter(|c| c.disproved.is_none() && c.reference.is_none())
    {
        match recomposed.get(&c.prompt) {
            Some(key) if *key == c.answer.key() => proved.fresh += 1,
            Some(key) => {
                c.disproved = Some((
                    "answer-changed",
                    format!("read again in a fresh server process, the records give {key:?}"),
                ));
            }
            None => {
                c.disproved = Some((
                    "answer-changed",
                    "read again in a fresh server process, the records no longer support the question".into(),
                ));
            }
        }
    }
    proved
}

fn failed(c: Called) -> &'static str {
    match c {
        Called::Error(_) => "answered with an error",
        Called::Empty => "answered nothing",
        Called::TimedOut => "timed out",
        _ => "failed",
    }
}

/// The values a reference query's result gives as its answer: those under
/// an `answer` column, else a single column's values, else every scalar it
/// holds.
fn answer_values(text: &str) -> Vec<Value> {
    fn under_answer(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    if k.eq_ignore_ascii_case("answer") && !x.is_object() && !x.is_array() {
                        out.push(x.clone());
                    } else {
                        under_answer(x, out);
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| under_answer(x, out)),
            _ => {}
        }
    }
    fn scalars(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(o) => o.values().for_each(|x| scalars(x, out)),
            Value::Array(a) => a.iter().for_each(|x| scalars(x, out)),
            Value::Null => {}
            other => out.push(other.clone()),
        }
    }
    let Some(v) = structured(text) else {
        // A bare value printed alone, or under its column's name (a
        // one-column table: its rules and pipes are no values).
        let lines: Vec<&str> = text
            .lines()
            .map(|l| l.trim().trim_matches('|').trim())
            .filter(|l| {
                !l.is_empty()
                    && !l
                        .chars()
                        .all(|c| matches!(c, '-' | '+' | '|' | ':' | '=' | ' '))
            })
            .collect();
        // The one `answer: 5` line among a printed result's labels.
        let labelled: Vec<Value> = crate::suite::printed::labelled::records(text)
            .into_iter()
            .flatten()
            .filter(|(l, _)| l.eq_ignore_ascii_case("answer"))
            .map(|(_, v)| Value::String(v))
            .collect();
        if !labelled.is_empty() {
            return labelled;
        }
        return match lines.as_slice() {
            [only] => vec![Value::String((*only).to_owned())],
            [head, only] if head.eq_ignore_ascii_case("answer") => {
                vec![Value::String((*only).to_owned())]
            }
            _ => Vec::new(),
        };
    };
    let mut out = Vec::new();
    under_answer(&v, &mut out);
    if out.is_empty() {
        scalars(&v, &mut out);
    }
    out
}

/// The one number a query's result gives as its answer (a count).
pub fn answer_number(text: &str) -> Option<f64> {
    match answer_values(text).as_slice() {
        [only] => match written::numbers(&as_text(only)).as_slice() {
            [w] => Some(w.value),
            _ => None,
        },
        _ => None,
    }
}

fn as_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.trim().to_owned(),
        other => other.to_string(),
    }
}

/// Does a reference query's result agree with `answer`? Exactly the one
/// number, date or text, or exactly the set's members.
pub fn agrees(answer: &Answer, text: &str) -> Result<(), String> {
    let values = answer_values(text);
    let shown: Vec<String> = values.iter().map(as_text).collect();
    let said = || {
        let mut s = shown.join(", ");
        if s.chars().count() > 120 {
            s = s.chars().take(120).collect::<String>() + "...";
        }
        s
    };
    match answer {
        Answer::Number { value, .. } => {
            let [only] = shown.as_slice() else {
                return Err(format!(
                    "the reference query gave {} values ({}), not one number",
                    shown.len(),
                    said()
                ));
            };
            let w = written::numbers(only);
            let close = |x: f64| (x - value).abs() <= 1e-6 * value.abs().max(1.0);
            let rounded = |x: &written::Written| written::writes(*x, *value, 0) && x.decimals >= 2;
            match w.as_slice() {
                [x] if close(x.value) || rounded(x) => Ok(()),
                _ => Err(format!(
                    "the reference query gave {}, the records {}",
                    said(),
                    answer.key()
                )),
            }
        }
        Answer::Date { value } => match shown.as_slice() {
            [only] if written::ymd(only).is_some_and(|d| written::ymd(value) == Some(d)) => Ok(()),
            _ => Err(format!(
                "the reference query gave {}, the records {value}",
                said()
            )),
        },
        Answer::Text { value, .. } => match shown.as_slice() {
            [only] if only == value => Ok(()),
            _ => Err(format!(
                "the reference query gave {}, the records {value:?}",
                said()
            )),
        },
        Answer::Set { members, .. } => {
            let mut got = shown.clone();
            got.sort();
            let mut want = members.clone();
            want.sort();
            if got == want {
                Ok(())
            } else {
                Err(format!(
                    "the reference query gave {} members ({}), the records {}",
                    got.len(),
                    said(),
                    want.len()
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_result_agrees_in_any_printed_form_and_only_exactly() {
        let three = Answer::Number {
            value: 3.0,
            decimals: 0,
        };
        for text in [
            r#"[{"answer": 3}]"#,
            r#"{"rows": [{"answer": "3"}], "rowCount": 1}"#,
            "[(3,)]",
            "answer\n3",
            "| answer |\n|---|\n| 3 |",
        ] {
            assert_eq!(agrees(&three, text), Ok(()), "{text}");
        }
        assert!(agrees(&three, r#"[{"answer": 4}]"#).is_err());
        assert!(agrees(&three, r#"[{"answer": 3}, {"answer": 3}]"#).is_err());
        let mean = Answer::Number {
            value: 3.456_666_666,
            decimals: 2,
        };
        assert_eq!(agrees(&mean, r#"[{"answer": 3.4566666666666666}]"#), Ok(()));
        assert_eq!(agrees(&mean, r#"[{"answer": "3.46"}]"#), Ok(()));
        let set = Answer::Set {
            members: vec!["Kindred".into(), "Dawn".into()],
            others: vec![],
        };
        assert_eq!(
            agrees(&set, r#"[{"answer": "Dawn"}, {"answer": "Kindred"}]"#),
            Ok(())
        );
        assert!(agrees(&set, r#"[{"answer": "Dawn"}]"#).is_err());
        let text = Answer::Text {
            value: "Kindred".into(),
            others: vec![],
        };
        assert!(agrees(&text, r#"[{"answer": "Kindred"}, {"answer": "Dawn"}]"#).is_err());
    }
}
