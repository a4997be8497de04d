//! The tasks one observation offers: which facts of its result are worth
//! asking for and how good an answer each makes, how the task names what it
//! asks about (and which calls come first), and each task's predicate.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::config::{labelled_prompt, quote_prompt};
use super::exploration::{Exploration, Observation};
use super::text::{self, Fact, Handle, label_words};
use crate::suite::generators::walk::{STOPWORDS, VOLATILE, salient};
use crate::suite::predicate::contains_token;
use crate::suite::task::Predicate;

/// Labels whose values are clock readings or counters of time.
const VOLATILE_LABEL_WORDS: &[&str] = &[
    "time",
    "date",
    "timestamp",
    "created",
    "modified",
    "accessed",
    "updated",
    "uptime",
    "elapsed",
    "now",
    "expires",
    "age",
    "mtime",
    "atime",
    "ctime",
    "birthtime",
];

/// A planned task before it is replayed.
pub(super) struct Spec {
    pub(super) observation: usize,
    pub(super) fact: Fact,
    pub(super) answer: String,
    pub(super) check: Predicate,
    pub(super) prompt: String,
    /// Indices of the observations whose calls come first.
    pub(super) chain: Vec<usize>,
    pub(super) score: i32,
}

/// Is `value` worth asking for, from this call?
fn usable(fact: &Fact, o: &Observation, forbidden: &str) -> bool {
    let value = fact.value.trim();
    let n = value.chars().count();
    if n == 0 || n > 200 || value.contains('\n') {
        return false;
    }
    if fact.number.is_none() && !value.chars().any(char::is_alphanumeric) {
        return false;
    }
    if fact.number.is_none() && n < 3 {
        return false;
    }
    // A blob (base64, a hash dump) is no answer to quote.
    if n > 60 && !value.contains(char::is_whitespace) {
        return false;
    }
    // Nor is a padded base64 string, however short: nobody asks for one.
    if n >= 12
        && value.ends_with('=')
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c))
    {
        return false;
    }
    if VOLATILE.is_match(value) {
        return false;
    }
    let label = label_words(&fact.label);
    if label
        .split_whitespace()
        .any(|w| VOLATILE_LABEL_WORDS.contains(&w))
    {
        return false;
    }
    if STOPWORDS.contains(&value.to_lowercase().as_str()) {
        return false;
    }
    if fact.subject.as_ref().is_some_and(|(_, s)| s == value) {
        return false;
    }
    // The record is named by a value the result gives it alone.
    if fact
        .subject
        .as_ref()
        .is_some_and(|(_, s)| o.text.matches(s.as_str()).count() != 1)
    {
        return false;
    }
    // A bare name asks nothing: it is asked for by another field.
    if text::is_naming(&fact.label) && fact.subject.is_none() {
        return false;
    }
    let args = Value::Object(o.args.clone()).to_string();
    if contains_token(&args, value) || contains_token(forbidden, value) {
        return false;
    }
    // A label that is an argument (`Debug:` for messageType `debug`) heads
    // an echo of the request, not a fact.
    if arg_scalars(&o.args)
        .iter()
        .any(|a| a.eq_ignore_ascii_case(fact.label.trim()))
    {
        return false;
    }
    !built_from_args(value, &o.args)
}

/// The scalar argument values of a call, as text.
fn arg_scalars(args: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Number(n) => out.push(n.to_string()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    args.values().for_each(|v| walk(v, &mut out));
    out
}

/// An answer that spells an argument inside it
/// (`demo://resource/text/82` for resource id 82) is the request plus a
/// constant, not the server's work.
fn built_from_args(value: &str, args: &Map<String, Value>) -> bool {
    arg_scalars(args)
        .iter()
        .filter(|a| a.chars().count() >= 2)
        .any(|a| contains_token(value, a))
}

/// The predicate for a fact: the number, the whole short value, or the
/// salient word of a long one.
fn check_for(fact: &Fact, prompt: &str, forbidden: &str) -> Option<(String, Predicate)> {
    if let Some(v) = fact.number {
        return Some((fact.value.clone(), Predicate::number_near(v)));
    }
    let value = fact.value.trim();
    if value.chars().count() <= 60 {
        return Some((
            value.to_owned(),
            Predicate::Substring {
                value: value.to_owned(),
                case_insensitive: true,
            },
        ));
    }
    salient(value, prompt, forbidden)
}

/// `location `Chicago` and resource id 3`: the arguments a task may name
/// (scalars, one-element lists; never a handle slot).
fn args_phrase(args: &Map<String, Value>, skip: &[&str]) -> String {
    let mut parts = Vec::new();
    for (k, v) in args {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let v = match v {
            Value::Array(a) if a.len() == 1 => &a[0],
            other => other,
        };
        match v {
            Value::String(s) if !s.is_empty() && s.chars().count() <= 80 => {
                parts.push(format!("{} `{s}`", label_words(k)));
            }
            Value::Number(n) => parts.push(format!("{} {n}", label_words(k))),
            _ => {}
        }
    }
    parts.join(" and ")
}

/// How the task names what it asks about, and the calls before the last.
fn subject_of(o: &Observation, fact: &Fact, ex: &Exploration) -> (String, Vec<usize>) {
    // A fact of a record inside the result (a child in a listing) is named
    // by that record, not by the handle the call was made with.
    if let Some((k, v)) = &fact.subject
        && !o.inputs.iter().any(|(_, h)| {
            let handle = &ex.handles[*h];
            handle.value == *v || handle.alias.as_ref().is_some_and(|(_, a)| a == v)
        })
        && !o.inputs.is_empty()
    {
        let phrase = record_phrase(o.record.as_deref(), k, v);
        return (format!("{phrase}{}", scope(o, fact, ex)), Vec::new());
    }
    // A handle from another call's result, named by its record's alias.
    for (_, h) in &o.inputs {
        let handle = &ex.handles[*h];
        let Some((alias_label, alias)) = &handle.alias else {
            continue;
        };
        let named = if handle.parent.is_some() {
            entry_subject(o, *h, alias, ex)
        } else {
            item_subject(o, handle, alias_label, alias, ex)
        };
        if let Some(named) = named {
            return named;
        }
    }
    if let Some((k, v)) = &fact.subject {
        let phrase = record_phrase(o.record.as_deref(), k, v);
        return (format!("{phrase}{}", scope(o, fact, ex)), Vec::new());
    }
    let phrase = args_phrase(&o.args, &[]);
    if phrase.is_empty() {
        (String::new(), Vec::new())
    } else {
        (format!("for {phrase}"), Vec::new())
    }
}

/// Where a record is, where its subject alone does not say: the operator's
/// file it is in ([`operator_place`]), else, where another call of the tool
/// gave a record of the same subject a different value for the label (a
/// column whose type is `date` in two tables), the call's arguments
/// (` for table `visits``). Empty when the subject is enough.
fn scope(o: &Observation, fact: &Fact, ex: &Exploration) -> String {
    let place = operator_place(o, ex);
    if !place.is_empty() || o.record.is_some() {
        return place;
    }
    let Some(subject) = &fact.subject else {
        return String::new();
    };
    let ambiguous = ex.observations.iter().any(|p| {
        p.tool == o.tool
            && p.index != o.index
            && p.args != o.args
            && !p.broad
            && !p.handles_only
            && contains_token(&p.text, &subject.1)
            && text::facts(&p.text, p.json.as_ref()).iter().any(|g| {
                g.label == fact.label
                    && g.subject.as_ref() == Some(subject)
                    && g.value != fact.value
            })
    });
    let phrase = args_phrase(&o.args, &[]);
    if ambiguous && !phrase.is_empty() {
        format!(" for {phrase}")
    } else {
        String::new()
    }
}

/// `` in `suppliers.csv` ``: the operator's own file or folder the call
/// was made in, which nothing the server lists names; a task about a
/// record of it says where the record is. Empty otherwise.
fn operator_place(o: &Observation, ex: &Exploration) -> String {
    o.args
        .iter()
        .filter(|(k, _)| super::fit::takes_path(k))
        .filter_map(|(_, v)| v.as_str())
        .find(|v| ex.handles.iter().any(|h| h.from.is_none() && h.value == *v))
        .map(|v| format!(" in `{v}`"))
        .unwrap_or_default()
}

/// `of the record whose LABEL is `VALUE``.
fn record_phrase(kind: Option<&str>, label: &str, value: &str) -> String {
    match kind {
        Some(kind) => format!(
            "of the `{kind}` record whose {} is `{value}`",
            label_words(label)
        ),
        None => format!("of the record whose {} is `{value}`", label_words(label)),
    }
}

/// A path joined from listings, named by its root and the entry; the
/// listing calls along the way come first, outermost first. `None` when
/// one of them writes.
fn entry_subject(
    o: &Observation,
    h: usize,
    alias: &str,
    ex: &Exploration,
) -> Option<(String, Vec<usize>)> {
    let mut top = h;
    let mut depth = 0;
    while let Some(p) = ex.handles[top].parent {
        depth += 1;
        top = p;
        if depth > 8 {
            break;
        }
    }
    let mut chain = Vec::new();
    let mut cursor = Some(h);
    while let Some(c) = cursor {
        if let Some(from) = ex.handles[c].from
            && from != o.index
        {
            chain.push(from);
        }
        cursor = ex.handles[c].parent;
        if chain.len() > 8 {
            break;
        }
    }
    chain.reverse();
    chain.dedup();
    if chain.iter().any(|&c| ex.observations[c].writes) {
        return None;
    }
    let top = &ex.handles[top].value;
    let phrase = if depth >= 2 {
        format!("of the entry named `{alias}` somewhere under `{top}`")
    } else {
        format!("of the entry named `{alias}` in `{top}`")
    };
    Some((phrase, chain))
}

/// An item a reading call returned, named by its alias, with that call
/// first. `None` when the request already names it, the producing result
/// does not name one record by it, or a writing call returned it (state
/// the server now holds: the solution does not write again).
fn item_subject(
    o: &Observation,
    handle: &Handle,
    alias_label: &str,
    alias: &str,
    ex: &Exploration,
) -> Option<(String, Vec<usize>)> {
    if contains_token(&Value::Object(o.args.clone()).to_string(), alias)
        || handle
            .from
            .is_none_or(|f| ex.observations[f].text.matches(alias).count() != 1)
    {
        return None;
    }
    let from = handle.from?;
    if from == o.index || ex.observations[from].writes {
        return None;
    }
    let phrase = format!(
        "of the item whose {} is `{alias}`",
        label_words(alias_label)
    );
    Some((phrase, vec![from]))
}

/// The tasks one observation offers: its labelled facts, best first, at
/// most `per_call`; else its salient word.
pub(super) fn specs_for(
    o: &Observation,
    ex: &Exploration,
    forbidden: &str,
    per_call: usize,
) -> Vec<Spec> {
    let mut out = Vec::new();
    let mut labels_used = BTreeSet::new();
    for (score, fact) in scored_facts(o, ex, forbidden) {
        if out.len() >= per_call {
            break;
        }
        if !labels_used.insert((fact.label.clone(), fact.subject.clone())) {
            continue;
        }
        out.extend(labelled_spec(o, ex, fact, score, forbidden));
    }
    // A search that found one file for a value read elsewhere: which file
    // holds it.
    out.extend(match_spec(o, ex));
    // No labelled value worth asking for: the result's salient word, quoted,
    // unless other calls of the tool return it too.
    if out.iter().all(|s| s.score <= 0) {
        out.extend(salient_spec(o, ex, forbidden));
    }
    out
}

/// The file a search found alone, given a value another call's result
/// holds (a note's title, a line of it): "find which file holds `Poetry
/// open mic`", checked by the file's name. What a search server exists
/// for, and a value no search that finds every file can tell.
fn match_spec(o: &Observation, ex: &Exploration) -> Option<Spec> {
    if o.broad || o.handles_only {
        return None;
    }
    // The searched value: a handle another call gave, in an argument that
    // takes a search.
    let (slot, handle) = o.inputs.iter().find(|(slot, h)| {
        let words = crate::access::words(slot);
        words
            .iter()
            .any(|w| super::kinds::SEARCH_WORDS.contains(&w.as_str()))
            && ex.handles[*h].from.is_some_and(|f| f != o.index)
    })?;
    let query = ex.handles[*handle].value.clone();
    if query.chars().count() < 4 || text::file_name_like(&query) {
        return None;
    }
    let found: Vec<String> = text::harvest(&o.text, o.json.as_ref(), o.index)
        .into_iter()
        .map(|h| h.value)
        .filter(|v| text::file_name_like(v))
        .collect();
    let [file] = found.as_slice() else {
        return None;
    };
    let name = file.rsplit('/').next().unwrap_or(file);
    let stem = name.rsplit_once('.').map_or(name, |(stem, _)| stem);
    // The operator's own file names are no leak here (unlike a value the
    // walk was given): the agent is not given them, and the task asks
    // which of them holds the value.
    if stem.chars().count() < 3
        || contains_token(&query, stem)
        || o.args
            .values()
            .any(|v| contains_token(&v.to_string(), stem))
    {
        return None;
    }
    let prompt = format!(
        "Using the server's tools, find which file holds `{query}`. Reply with the file's name."
    );
    Some(Spec {
        observation: o.index,
        fact: Fact {
            label: format!("file matching {}", label_words(slot)),
            value: file.clone(),
            number: None,
            subject: None,
        },
        answer: stem.to_owned(),
        check: Predicate::Substring {
            value: stem.to_owned(),
            case_insensitive: true,
        },
        prompt,
        chain: Vec::new(),
        score: 3,
    })
}

/// The usable facts of a result with their scores, best first.
fn scored_facts(o: &Observation, ex: &Exploration, forbidden: &str) -> Vec<(i32, Fact)> {
    let all = text::facts(&o.text, o.json.as_ref());
    // A value the result gives under several labels tells none of them.
    let repeated = |f: &Fact| {
        all.iter()
            .filter(|g| g.value == f.value && g.label != f.label)
            .count()
            > 0
    };
    let mut facts: Vec<(i32, Fact)> = all
        .iter()
        .filter(|f| usable(f, o, forbidden) && !repeated(f))
        .cloned()
        .map(|f| (fact_score(&f, o, ex), f))
        .collect();
    facts.sort_by_key(|(s, _)| -s);
    facts
}

/// How good an answer a fact makes: a real label, a short value, and one
/// that only this call of the tool returns.
fn fact_score(f: &Fact, o: &Observation, ex: &Exploration) -> i32 {
    let mut score = 0;
    let words = label_words(&f.label);
    if !words.is_empty() && !["text", "content", "result", "value"].contains(&words.as_str()) {
        score += 3;
    }
    if f.number.is_some() {
        score += 1;
    } else if f.value.chars().count() <= 40 {
        score += 2;
    }
    // A sentence is a weaker answer than the value inside it.
    if f.value.split_whitespace().count() >= 4 {
        score -= 3;
    }
    // A value other calls of this tool also return does not tell
    // this call from them; but a call that names no input is told from
    // nothing (another call's same whole answer is this answer again), and
    // a fact of a record the result names is that record's, whichever call
    // returned the record (a search that finds one entity for several
    // queries).
    let elsewhere = ex
        .observations
        .iter()
        .filter(|p| ex.tells_apart(o, p))
        .filter(|p| !(o.args.is_empty() && p.text == o.text))
        .filter(|p| {
            f.subject
                .as_ref()
                .is_none_or(|(_, record)| !contains_token(&p.text, record))
        })
        .filter(|p| contains_token(&p.text, &f.value))
        .count();
    score -= 2 * elsewhere.min(3) as i32;
    score
}

/// The task asking for one labelled fact; `None` when it has no check,
/// its prompt gives the answer away, or other calls return it too.
fn labelled_spec(
    o: &Observation,
    ex: &Exploration,
    fact: Fact,
    score: i32,
    forbidden: &str,
) -> Option<Spec> {
    // A broad call's task names a record of its result, never its
    // arguments.
    if o.broad && fact.subject.is_none() {
        return None;
    }
    let (subject, chain) = subject_of(o, &fact, ex);
    let label = label_words(&fact.label);
    let prompt = if fact.number.is_some() || fact.value.chars().count() <= 60 {
        labelled_prompt(&label, &subject)
    } else {
        quote_prompt(&label, &subject)
    };
    let (answer, check) = check_for(&fact, &prompt, forbidden)?;
    if contains_token(&prompt, &answer) {
        return None;
    }
    // A value other calls of the tool return as well is a constant of
    // the tool, not this call's answer.
    if score < 0 {
        return None;
    }
    Some(Spec {
        observation: o.index,
        fact,
        answer,
        check,
        prompt,
        score: score + if chain.is_empty() { 0 } else { 2 },
        chain,
    })
}

/// A fact with no label and no value: what [`subject_of`] names a whole
/// result by.
fn unlabelled(value: String) -> Fact {
    Fact {
        label: String::new(),
        value,
        number: None,
        subject: None,
    }
}

/// The task quoting the result's salient word, when one is not a constant
/// of the tool (other calls return it too) and not built from the
/// arguments.
fn salient_spec(o: &Observation, ex: &Exploration, forbidden: &str) -> Option<Spec> {
    if o.broad {
        return None;
    }
    let (subject, chain) = subject_of(o, &unlabelled(String::new()), ex);
    let prompt = quote_prompt("", &subject);
    let args = Value::Object(o.args.clone()).to_string();
    // Words other calls of the tool return too are its constants.
    let mut known = forbidden.to_owned();
    for p in ex.observations.iter().filter(|p| ex.tells_apart(o, p)) {
        if known.len() > 1 << 20 {
            break;
        }
        known.push('\n');
        known.push_str(&p.text);
    }
    let (answer, check) =
        salient(&o.text, &format!("{prompt}\n{args}"), &known).filter(|(answer, _)| {
            // A number inside a hash or an id is no answer.
            !built_from_args(answer, &o.args) && contains_token(&o.text, answer)
        })?;
    Some(Spec {
        observation: o.index,
        fact: unlabelled(answer.clone()),
        answer,
        check,
        prompt,
        score: 0,
        chain,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn observation(index: usize, tool: &str, args: Value, text: &str) -> Observation {
        Observation {
            index,
            tool: tool.to_owned(),
            args: args.as_object().cloned().unwrap_or_default(),
            text: text.to_owned(),
            json: crate::suite::predicate::first_json_value(text),
            inputs: Vec::new(),
            writes: false,
            origin: None,
            handles_only: false,
            record: None,
            broad: false,
        }
    }

    #[test]
    fn a_named_record_s_fact_is_no_constant_and_names_the_operators_file() {
        // A tool that answers a CSV file whatever `sheet` says, called
        // twice on the operator's file; it failed on other files.
        let rows = r#"[{"name": "Kvarnen Mill", "city": "Uppsala"}, {"name": "Ferme Dubois", "city": "Malmo"}]"#;
        let mut ex = Exploration::default();
        ex.add_handle(Handle::unlinked("suppliers.csv", "file"));
        for (i, sheet) in ["Sheet1", "totals", "mean", "2024"].iter().enumerate() {
            ex.observations.push(observation(
                i,
                "preview",
                json!({"file_path": "suppliers.csv", "sheet": sheet}),
                rows,
            ));
        }
        let o = ex.observations[0].clone();
        // A fact of a named record is that record's, whichever call
        // returned it: the tool need not have failed for it to count.
        let specs = specs_for(&o, &ex, "", 4);
        let city = specs
            .iter()
            .find(|s| s.answer == "Uppsala")
            .unwrap_or_else(|| {
                let prompts: Vec<&str> = specs.iter().map(|s| s.prompt.as_str()).collect();
                panic!("{prompts:#?}")
            });
        assert!(
            city.prompt
                .contains("record whose name is `Kvarnen Mill` in `suppliers.csv`"),
            "the prompt says which of the operator's files: {}",
            city.prompt
        );
    }

    #[test]
    fn a_record_two_calls_describe_differently_is_named_with_its_calls_arguments() {
        let columns = |rows: &str| format!(r#"{{"columns": {rows}}}"#);
        let visits = columns(
            r#"[{"name": "visited_on", "type": "date"}, {"name": "fee", "type": "numeric"}]"#,
        );
        let vets =
            columns(r#"[{"name": "hired_on", "type": "date"}, {"name": "vet", "type": "text"}]"#);
        let mut ex = Exploration::default();
        ex.observations.push(observation(
            0,
            "describe_table",
            json!({"table": "visits"}),
            &visits,
        ));
        ex.observations.push(observation(
            1,
            "describe_table",
            json!({"table": "vets"}),
            &vets,
        ));
        let o = ex.observations[1].clone();
        let specs = specs_for(&o, &ex, "", 6);
        let hired = specs
            .iter()
            .find(|s| s.answer == "hired_on")
            .unwrap_or_else(|| {
                let prompts: Vec<&str> = specs.iter().map(|s| s.prompt.as_str()).collect();
                panic!("{prompts:#?}")
            });
        assert!(
            hired
                .prompt
                .contains("whose type is `date` for table `vets`"),
            "{}",
            hired.prompt
        );
        // A subject only one call describes needs no more.
        if let Some(vet) = specs.iter().find(|s| s.answer == "vet") {
            assert!(!vet.prompt.contains("for table"), "{}", vet.prompt);
        }
    }

    #[test]
    fn a_commit_is_asked_for_by_its_message_through_the_log() {
        let log = "Commit history:\nCommit: 91e702075cdad32fe604efec43f8f108c48648d6\nAuthor: Grace Hopper\nDate: 2026-11-08 10:00:00+00:00\nMessage: Log the Hebridean cargo manifest\n\n\nCommit: b010c88767d8b509ae91c0bd73d97b92a8d8a224\nAuthor: Grace Hopper\nDate: 2026-11-07 10:00:00+00:00\nMessage: Correct the Loch Fyne charts\n";
        let show = "commit 91e702075cdad32fe604efec43f8f108c48648d6\nAuthor: Grace Hopper <dev@example.org>\nDate:   2026-11-08 10:00:00 +0000\n\n    Log the Hebridean cargo manifest\n\n--- /dev/null\n+++ b/cargo.md\n@@ -0,0 +1 @@\n+Hold three carries whisky casks, peat bricks and a tractor.\n";
        let mut ex = Exploration::default();
        ex.observations
            .push(observation(0, "git_log", json!({"repo_path": "/r"}), log));
        for h in text::harvest(log, None, 0) {
            ex.handles.push(h);
        }
        let hash = ex
            .handles
            .iter()
            .position(|h| h.value.starts_with("91e7"))
            .expect("the commit is a handle");
        let mut o = observation(
            1,
            "git_show",
            json!({"repo_path": "/r", "revision": "91e702075cdad32fe604efec43f8f108c48648d6"}),
            show,
        );
        o.inputs = vec![("revision".to_owned(), hash)];
        ex.observations.push(o.clone());
        let specs = specs_for(&ex.observations[1], &ex, "git_show git_log", 6);
        assert!(!specs.is_empty(), "a task from the show");
        let s = &specs[0];
        assert_eq!(s.chain, vec![0], "the log call comes first");
        assert!(
            s.prompt.contains("`Log the Hebridean cargo manifest`"),
            "{}",
            s.prompt
        );
        assert!(!s.prompt.contains("91e7"), "{}", s.prompt);
        assert!(s.check.check(show));
    }
}
