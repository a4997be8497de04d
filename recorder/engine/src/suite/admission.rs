//! Admission: every candidate is admitted or rejected by exactly one named
//! rule, checked in this order (the first that fails is recorded):
//!
//! | rule | rejects |
//! |---|---|
//! | `malformed` | a candidate that did not parse as a task |
//! | `no-expected-tools` | no expected tools |
//! | `unknown-tool` | an expected or solution tool the server does not list |
//! | `secrets-tool` | a solution that calls a tool whose name says it returns the environment or credentials (`env`, `secret`, `token`...) |
//! | `names-secret` | a prompt, answer key, check or solution argument holding a value the redaction policy keeps off disk (an `--env` or `--header` value, a token): a path a server resolved under the folder it was configured with, harvested and given back |
//! | `check-invalid` | a predicate that cannot be evaluated (bad regex, bad path…) |
//! | `check-too-permissive` | see [`Predicate::is_too_permissive`] |
//! | `check-rejects-key` | a predicate that does not accept the task's own answer key: it could never match |
//! | `answer-derivable` | a number the prompt's or the arguments' numbers give by one arithmetic step, or an argument plus or minus one: the server did no work (a count, total, rank or set computed over records: the prompt's numbers alone) |
//! | `answer-leak` | the answer key in the prompt, in the solution's bound arguments, or in the server instructions or a tool description |
//! | `check-matches-prompt` | the predicate accepts the prompt text itself (though the answer key is not in it) |
//! | `unchained-handle` | a `{{handle:NAME}}` with no earlier producing call, or a binding pointing forward or out of range |
//! | `write-excluded` | a task whose solution writes, where the run may not write |
//! | `answer-not-reached` | a judge's task whose solution, made at generation, fails or returns no answer its check accepts (or that has no solution to make) |
//! | `error-answer` | the answer came from a result that reads as an error (`ENOENT`, `not found`, a traceback...) |
//! | `two-right-answers` | a question with more than one right answer: two records share the largest value asked for, a name that names two records |
//! | `order-dependent` | an answer that depends on the order a server happens to list things in (the first of a list) |
//! | `reference-disagrees` | a composed question whose reference query, run through the server, does not give the answer computed from the records |
//! | `answer-changed` | an answer that is not the same when read again from a fresh server process |
//! | `names-tool` | `judge-walk/1`: the prompt names a tool, so it dictates the call |
//! | `label-as-given` | `judge-walk/1`: the harness's wording asks for a label it also states as given (`the hex of the item whose hex is ...`) |
//! | `duplicate` | the same normalised prompt as an admitted task or an earlier batch, or the same (solution, answer) |
//! | `check-not-discriminating` | a predicate that accepts another admitted task's answer key (of two tasks with one answer, the later): it cannot tell the tasks apart |
//!
//! `answer-derivable` and `check-not-discriminating` apply to every
//! generator but `schema-walk/1`, whose suites stay as they were generated
//! (a composed question's answer is computed over many records, so two
//! counts of 3 are no clash: `check-not-discriminating` passes it over);
//! `error-answer` reads the result a candidate's answer came from, which
//! only `schema-walk/2` and a verified `judge-synth/1` candidate carry.
//! `names-tool` and `label-as-given` apply to `judge-walk/1` alone, whose
//! prompts a judge words from the harness's own (`schema-walk/2`'s suites
//! stay as they were generated).
//!
//! `write-excluded`: a task writes when it says so or when its solution
//! calls a tool that may write ([`crate::access::may_write`], or the
//! judge's label). Such a task is admitted only in a sandbox whose trials
//! start from the state generation left; a read-only run never writes,
//! whatever the credential.
//!
//! The answer-leak test is case-insensitive and matches the answer as a whole
//! token (not inside a longer word or number), so the answer `12` does not
//! leak through `120`.

use std::collections::{BTreeSet, HashSet};

use fitness_shared::record::{AccessMode, TaskShape};
use rmcp::model::Tool;
use serde::Serialize;
use serde_json::Value;

use super::predicate::contains_token;
use super::task::{Candidate, Predicate, Task};

/// One rejected candidate and the rule that rejected it, with what a
/// person needs to judge the rejection: its prompt and tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Rejection {
    pub candidate: String,
    pub rule: &'static str,
    pub detail: String,
    /// Its prompt, when it parsed as a task.
    pub prompt: Option<String>,
    /// The tools its solution calls (else its expected tools).
    pub tools: Vec<String>,
}

impl Rejection {
    /// As a candidate list shows it.
    pub fn listed(&self) -> fitness_shared::record::ListedCandidate {
        fitness_shared::record::ListedCandidate {
            id: self.candidate.clone(),
            prompt: self.prompt.clone(),
            tools: self.tools.clone(),
            rule: self.rule.to_owned(),
            detail: self.detail.clone(),
        }
    }

    /// The rejection of `task` (or of a candidate that never parsed).
    pub(crate) fn of(
        candidate: &str,
        task: Option<&Task>,
        rule: &'static str,
        detail: String,
    ) -> Rejection {
        let tools = task.map_or_else(Vec::new, Task::listed_tools);
        Rejection {
            candidate: candidate.to_owned(),
            rule,
            detail,
            prompt: task.map(|t| t.prompt.clone()),
            tools,
        }
    }
}

/// The rule names, in the order they are checked.
pub const RULES: &[&str] = &[
    "malformed",
    "no-expected-tools",
    "unknown-tool",
    "secrets-tool",
    "names-secret",
    "check-invalid",
    "check-too-permissive",
    "check-rejects-key",
    "answer-derivable",
    "answer-leak",
    "check-matches-prompt",
    "unchained-handle",
    "write-excluded",
    "answer-not-reached",
    "error-answer",
    "two-right-answers",
    "order-dependent",
    "reference-disagrees",
    "answer-changed",
    "names-tool",
    "label-as-given",
    "duplicate",
    "check-not-discriminating",
    "act-call-failed",
    "act-no-change",
    "act-check-passes-before",
    "act-not-reproduced",
];

/// What admission judges candidates against.
pub struct AdmissionContext<'a> {
    pub tools: &'a [Tool],
    pub instructions: Option<&'a str>,
    /// What the run may do to the server.
    pub access: AccessMode,
    /// Tasks that write may be admitted ([`crate::suite::GenerateOptions::writes`]).
    pub writes: bool,
    /// Names of the tools that may write.
    pub writers: &'a BTreeSet<String>,
    /// Prompts of earlier batches: a repeat is a `duplicate`.
    pub exclude_prompts: &'a [String],
    /// `answer-derivable` and `check-not-discriminating` apply (every
    /// generator but `schema-walk/1`).
    pub answer_rules: bool,
    /// `names-tool` and `label-as-given` apply (`judge-walk/1`).
    pub worded_rules: bool,
}

/// Admit or reject each candidate; admitted tasks keep the candidate order.
pub fn admit(candidates: Vec<Candidate>, ctx: &AdmissionContext) -> (Vec<Task>, Vec<Rejection>) {
    let mut batch = Batch {
        seen_prompts: ctx.exclude_prompts.iter().map(|p| normalise(p)).collect(),
        seen_solutions: HashSet::new(),
        admitted: Vec::new(),
        rejections: Vec::new(),
    };
    for c in candidates {
        match batch.judge(&c, ctx) {
            Ok(task) => batch.admitted.push(task),
            Err((rule, detail)) => {
                batch
                    .rejections
                    .push(Rejection::of(&c.id, c.parsed.as_ref().ok(), rule, detail));
            }
        }
    }
    let Batch {
        mut admitted,
        mut rejections,
        ..
    } = batch;
    if ctx.answer_rules {
        admitted = discriminating(admitted, &mut rejections);
    }
    (admitted, rejections)
}

/// A rule broken: its name and what broke it.
type Broken = (&'static str, String);

/// The batch being admitted: what it has admitted and rejected, and the
/// prompts and solutions already taken.
struct Batch {
    seen_prompts: HashSet<String>,
    seen_solutions: HashSet<String>,
    admitted: Vec<Task>,
    rejections: Vec<Rejection>,
}

impl Batch {
    /// The candidate as an admitted task, or the first rule it breaks.
    fn judge(&mut self, c: &Candidate, ctx: &AdmissionContext) -> Result<Task, Broken> {
        let task = c
            .parsed
            .as_ref()
            .map_err(|why| ("malformed", why.clone()))?;
        check(task, ctx)?;
        if let Some(why) = &c.unreached {
            return Err(("answer-not-reached", why.clone()));
        }
        if let Some((rule, why)) = &c.disproved {
            return Err((rule, why.clone()));
        }
        if let Some(source) = &c.source
            && super::reading::reads_as_error(source)
        {
            return Err((
                "error-answer",
                format!(
                    "the answer was read from a result that reads as an error: {}",
                    source.chars().take(120).collect::<String>()
                ),
            ));
        }
        if ctx.worded_rules {
            worded(c, task, ctx)?;
        }
        self.first_of_its_kind(task)?;
        let mut task = task.clone();
        task.id = c.id.clone();
        task.destructive = task_writes(&task, ctx);
        Ok(task)
    }

    /// `duplicate` unless the prompt, and the solution with its answer,
    /// are new; taken as seen when they are.
    fn first_of_its_kind(&mut self, task: &Task) -> Result<(), Broken> {
        let prompt_key = normalise(&task.prompt);
        let solution_key = format!(
            "{}\u{0}{}",
            serde_json::to_string(&task.solution).unwrap_or_default(),
            normalise(&task.answer_key)
        );
        if self.seen_prompts.contains(&prompt_key) {
            return Err((
                "duplicate",
                "the same prompt as an admitted or earlier task".into(),
            ));
        }
        if !task.solution.is_empty() && self.seen_solutions.contains(&solution_key) {
            return Err((
                "duplicate",
                "the same solution and answer as an admitted task".into(),
            ));
        }
        self.seen_prompts.insert(prompt_key);
        self.seen_solutions.insert(solution_key);
        Ok(())
    }
}

/// `names-tool`, `label-as-given`: a reworded prompt names no tool, and
/// the harness's wording does not ask for a label it states as given.
fn worded(c: &Candidate, task: &Task, ctx: &AdmissionContext) -> Result<(), Broken> {
    if let Some(tool) = ctx.tools.iter().find(|t| names_tool(&task.prompt, &t.name)) {
        return Err((
            "names-tool",
            format!(
                "the prompt names the tool `{}`: it dictates the call",
                tool.name
            ),
        ));
    }
    let wording = c.template.as_deref().unwrap_or(&task.prompt);
    if let Some(label) = label_as_given(wording) {
        return Err((
            "label-as-given",
            format!("the task asks for the {label} of a record it names by its {label}"),
        ));
    }
    Ok(())
}

/// Does `text` name the tool `name`? Only a name that is an identifier
/// (`get_weather`, `readFile`, `fs.read`) can be named: a tool called by
/// a plain word (`calculate`, `search`) is not dictated by a request that
/// uses the word.
pub fn names_tool(text: &str, name: &str) -> bool {
    let identifier = name.contains(['_', '-', '.', '/'])
        || name
            .chars()
            .skip(1)
            .any(|c| c.is_uppercase() || c.is_ascii_digit());
    identifier && contains_token(text, name)
}

/// The label a walk's wording asks for and also states as given
/// (`find the hex of the item whose hex is ...`).
pub fn label_as_given(wording: &str) -> Option<String> {
    static GIVEN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\bfind the (.{1,60}?) of the (?:record|item|entry) whose (.{1,60}?) is\b",
        )
        .expect("the wording pattern compiles")
    });
    let caps = GIVEN.captures(wording)?;
    let (asked, given) = (caps[1].trim().to_lowercase(), caps[2].trim().to_lowercase());
    (asked == given).then_some(asked)
}

/// `check-not-discriminating`: the admitted tasks whose check accepts no
/// other task's answer (of two with the same answer, the first stays).
fn discriminating(admitted: Vec<Task>, rejections: &mut Vec<Rejection>) -> Vec<Task> {
    let keys: Vec<String> = admitted.iter().map(|t| normalise(&t.answer_key)).collect();
    let mut kept = Vec::with_capacity(admitted.len());
    for (j, task) in admitted.iter().enumerate() {
        // A typed check is the composer's: its answer was computed.
        let composed = matches!(
            task.check,
            Predicate::Number { .. }
                | Predicate::Date { .. }
                | Predicate::Set { .. }
                | Predicate::Text { .. }
        );
        let clash = admitted.iter().enumerate().find(|(i, other)| {
            !composed
                && *i != j
                && if keys[*i] == keys[j] {
                    *i < j
                } else {
                    task.check.check(&other.answer_key)
                }
        });
        match clash {
            Some((_, other)) => rejections.push(Rejection::of(
                &task.id,
                Some(task),
                "check-not-discriminating",
                format!(
                    "{} also accepts `{}`, the answer of task {}",
                    describe(&task.check),
                    other.answer_key,
                    other.id
                ),
            )),
            None => kept.push(task.clone()),
        }
    }
    kept
}

/// A task that writes: marked so, or its solution calls a tool that may
/// write or gives a call a statement that changes data
/// ([`crate::access::writes_by_arguments`]).
fn task_writes(task: &Task, ctx: &AdmissionContext) -> bool {
    task.destructive
        || task.solution.iter().any(|c| {
            ctx.writers.contains(&c.tool)
                || crate::access::writes_by_arguments(&Value::Object(c.arguments.clone()))
        })
}

/// Every rule but `malformed` and `duplicate` (which need the batch).
pub fn check(task: &Task, ctx: &AdmissionContext) -> Result<(), Broken> {
    if task.expected_tools.is_empty() {
        return Err(("no-expected-tools", "expected_tools is empty".into()));
    }
    listed_tools(task, ctx)?;
    names_no_secret(task)?;
    sound_check(task)?;
    if ctx.answer_rules
        && let Some(why) = derivable(task)
    {
        return Err(("answer-derivable", why));
    }
    leak(task, ctx)?;
    if task.check.check(&task.prompt) {
        return Err((
            "check-matches-prompt",
            format!("{} accepts the prompt itself", describe(&task.check)),
        ));
    }
    chained(task)?;
    allowed_to_write(task, ctx)
}

/// `unknown-tool`, `secrets-tool`: every tool the task names is listed,
/// and its solution calls none whose name says it returns secrets.
fn listed_tools(task: &Task, ctx: &AdmissionContext) -> Result<(), Broken> {
    let known: BTreeSet<String> = ctx.tools.iter().map(|t| t.name.to_string()).collect();
    for name in task
        .expected_tools
        .iter()
        .chain(task.solution.iter().map(|c| &c.tool))
    {
        if !known.contains(name) {
            return Err(("unknown-tool", format!("the server lists no tool `{name}`")));
        }
    }
    // A tool whose name says it returns the environment or credentials:
    // the walk never calls one, and no task may send the agent to it.
    for call in &task.solution {
        if let Some(tool) = ctx.tools.iter().find(|t| t.name == call.tool.as_str())
            && let Some(word) = super::reading::exposes_secrets(tool)
        {
            return Err((
                "secrets-tool",
                format!(
                    "the solution calls `{}`, whose name says `{word}`: what it returns must reach neither a suite nor a tape",
                    call.tool
                ),
            ));
        }
    }
    Ok(())
}

/// `names-secret`: nothing the task says or sends holds a value the
/// redaction policy keeps off disk; such a value would reach a model API
/// in the prompt, or a record only redacted and no longer callable.
fn names_no_secret(task: &Task) -> Result<(), Broken> {
    let policy = crate::secrets::policy();
    let places = [
        ("prompt", task.prompt.clone()),
        ("answer key", task.answer_key.clone()),
        (
            "check",
            serde_json::to_string(&task.check).unwrap_or_default(),
        ),
        (
            "solution",
            serde_json::to_string(&task.solution).unwrap_or_default(),
        ),
    ];
    match places.iter().find(|(_, text)| policy.finds(text)) {
        Some((place, _)) => Err((
            "names-secret",
            format!("its {place} holds a value kept off disk"),
        )),
        None => Ok(()),
    }
}

/// `check-invalid`, `check-too-permissive`, `check-rejects-key`: the check
/// can be evaluated, refuses a guess, and accepts the answer key.
fn sound_check(task: &Task) -> Result<(), Broken> {
    task.check
        .validate()
        .map_err(|e| ("check-invalid", e.clone()))?;
    if task.check.is_too_permissive() {
        return Err((
            "check-too-permissive",
            format!(
                "{} accepts answers that carry no knowledge",
                describe(&task.check)
            ),
        ));
    }
    if !task.check.check(&task.answer_key) {
        return Err((
            "check-rejects-key",
            format!(
                "{} does not accept the answer key `{}`",
                describe(&task.check),
                task.answer_key
            ),
        ));
    }
    Ok(())
}

/// `write-excluded`: a task that writes is admitted only where the run
/// lets it (`ctx.writes`: a sandbox whose trials start from the state
/// generation left).
fn allowed_to_write(task: &Task, ctx: &AdmissionContext) -> Result<(), Broken> {
    if !task_writes(task, ctx) || ctx.writes {
        return Ok(());
    }
    let tools: Vec<&str> = task
        .solution
        .iter()
        .filter(|c| ctx.writers.contains(&c.tool))
        .map(|c| c.tool.as_str())
        .collect();
    Err((
        "write-excluded",
        format!(
            "its solution writes ({}) and the run may not: {}",
            if tools.is_empty() {
                "marked so".to_owned()
            } else {
                tools.join(", ")
            },
            match ctx.access {
                AccessMode::ReadOnly => "it is read-only (no --sandbox)",
                AccessMode::Sandbox =>
                    "the sandbox is reset before every trial, so generation never writes",
            }
        ),
    ))
}

/// Why a numeric answer needs no server: it is one arithmetic step from
/// the numbers the task already gives (the prompt, the solution's
/// arguments, their lengths), or one of them plus or minus one.
pub fn derivable(task: &Task) -> Option<String> {
    let (value, tolerance) = match &task.check {
        Predicate::NumberWithin { value, tolerance } => (*value, *tolerance),
        _ => (task.answer_key.trim().parse::<f64>().ok()?, 0.0),
    };
    if !value.is_finite() {
        return None;
    }
    let mut given: Vec<f64> = super::predicate::numbers_in(&task.prompt);
    // A computation over several records (a count, a total, a rank, a
    // set) reads them by its calls; their arguments (the names read, and
    // their lengths) give none of it. Otherwise the answer's calls may be
    // the server doing arithmetic on what it was given.
    let computed = matches!(
        task.shape,
        Some(TaskShape::Aggregate | TaskShape::Comparison | TaskShape::Set)
    );
    for call in task.solution.iter().filter(|_| !computed) {
        for (_, v) in &call.arguments {
            collect_numbers(v, &mut given);
        }
    }
    given.retain(|n| n.is_finite());
    given.truncate(64);
    let close = |x: f64| (x - value).abs() <= tolerance.max(1e-9 * value.abs().max(1.0));
    for &a in &given {
        for (x, how) in [
            (a, "equals"),
            (a + 1.0, "is one more than"),
            (a - 1.0, "is one less than"),
        ] {
            if close(x) {
                return Some(format!("the answer {value} {how} the given {a}"));
            }
        }
    }
    for (i, &a) in given.iter().enumerate() {
        for &b in &given[i + 1..] {
            let steps = [
                (a + b, "+"),
                (a - b, "-"),
                (b - a, "-"),
                (a * b, "x"),
                (if b != 0.0 { a / b } else { f64::NAN }, "/"),
                (if a != 0.0 { b / a } else { f64::NAN }, "/"),
            ];
            if let Some((_, op)) = steps.iter().find(|(x, _)| x.is_finite() && close(*x)) {
                return Some(format!(
                    "the answer {value} is {a} {op} {b}, from numbers the task gives"
                ));
            }
        }
    }
    None
}

fn collect_numbers(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Number(n) => out.extend(n.as_f64()),
        Value::String(s) => {
            out.push(s.chars().count() as f64);
            out.extend(super::predicate::numbers_in(s));
        }
        Value::Array(a) => {
            out.push(a.len() as f64);
            a.iter().for_each(|x| collect_numbers(x, out));
        }
        Value::Object(o) => o.values().for_each(|x| collect_numbers(x, out)),
        _ => {}
    }
}

fn describe(p: &Predicate) -> String {
    serde_json::to_string(p).unwrap_or_else(|_| "the check".into())
}

fn leak(task: &Task, ctx: &AdmissionContext) -> Result<(), Broken> {
    match leak_place(task, ctx.instructions, ctx.tools) {
        None => Ok(()),
        Some(place) => Err(("answer-leak", format!("the answer key is in the {place}"))),
    }
}

/// Where a task gives its answer away, if it does: its prompt, the
/// arguments of a solution call, the server's instructions or a tool's
/// description, as a whole token in any case (`12` does not leak through
/// `120`, nor `month` through `monthly_readings`). The one test both
/// admission and the `answer_leak` gate apply.
pub fn leak_place(task: &Task, instructions: Option<&str>, tools: &[Tool]) -> Option<String> {
    let answer = task.answer_key.trim();
    if answer.is_empty() {
        return None;
    }
    // An act task's prompt and solution carry the value to write: what
    // its check finds in the state, never an answer given away.
    let own = if task.is_act() {
        0
    } else {
        task.solution.len()
    };
    if !task.is_act() && contains_token(&task.prompt, answer) {
        return Some("prompt".into());
    }
    for (i, call) in task.solution.iter().enumerate().take(own) {
        let args = Value::Object(call.arguments.clone());
        if strings_of(&args).any(|s| contains_token(&s, answer)) {
            return Some(format!("solution arguments (call {i}, `{}`)", call.tool));
        }
    }
    if instructions.is_some_and(|i| contains_token(i, answer)) {
        return Some("server instructions".into());
    }
    tools
        .iter()
        .find(|t| {
            t.description
                .as_deref()
                .is_some_and(|d| contains_token(d, answer))
        })
        .map(|t| format!("description of `{}`", t.name))
}

/// Every string and number in a JSON value, as text (keys too).
fn strings_of(v: &Value) -> Box<dyn Iterator<Item = String> + '_> {
    match v {
        Value::String(s) => Box::new(std::iter::once(s.clone())),
        Value::Number(n) => Box::new(std::iter::once(n.to_string())),
        Value::Bool(b) => Box::new(std::iter::once(b.to_string())),
        Value::Null => Box::new(std::iter::empty()),
        Value::Array(a) => Box::new(a.iter().flat_map(strings_of)),
        Value::Object(o) => Box::new(
            o.iter()
                .flat_map(|(k, v)| std::iter::once(k.clone()).chain(strings_of(v))),
        ),
    }
}

/// `{{handle:NAME}}` placeholders in a value.
pub fn placeholders(v: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for s in strings_of(v) {
        let mut rest = s.as_str();
        while let Some(i) = rest.find("{{handle:") {
            let after = &rest[i + "{{handle:".len()..];
            match after.find("}}") {
                Some(j) => {
                    out.push(after[..j].trim().to_owned());
                    rest = &after[j + 2..];
                }
                None => break,
            }
        }
    }
    out
}

fn chained(task: &Task) -> Result<(), Broken> {
    let n = task.solution.len();
    for b in &task.handles {
        if b.produced_by >= n || b.consumed_by >= n {
            return Err((
                "unchained-handle",
                format!(
                    "handle `{}` binds calls {} → {} but the solution has {n} call(s)",
                    b.name, b.produced_by, b.consumed_by
                ),
            ));
        }
        if b.produced_by >= b.consumed_by {
            return Err((
                "unchained-handle",
                format!(
                    "handle `{}` is consumed by call {} but produced by call {} (not earlier)",
                    b.name, b.consumed_by, b.produced_by
                ),
            ));
        }
    }
    for (i, call) in task.solution.iter().enumerate() {
        for name in placeholders(&Value::Object(call.arguments.clone())) {
            let bound = task
                .handles
                .iter()
                .any(|b| b.name == name && b.consumed_by == i && b.produced_by < i);
            if !bound {
                return Err((
                    "unchained-handle",
                    format!(
                        "call {i} (`{}`) uses {{{{handle:{name}}}}} but no earlier call produces it",
                        call.tool
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Lowercase, punctuation dropped, whitespace collapsed.
pub fn normalise(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_lowercase().next().unwrap_or(c)
            } else {
                ' '
            }
        })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_naming_a_value_kept_off_disk_is_not_admitted() {
        use fitness_shared::redact::Secret;
        crate::secrets::register(
            vec![Secret::env("DATA_DIRS", "/srv/private-ledgers")],
            Vec::new(),
        );
        let task = |path: &str| {
            serde_json::from_value::<Task>(serde_json::json!({
                "id": "t1",
                "prompt": format!("Using the server's tools, find the rows of `{path}`."),
                "expected_tools": ["value_counts"],
                "answer_key": "Kvarnen",
                "check": {"kind": "substring", "value": "Kvarnen"},
                "solution": [{"tool": "value_counts", "arguments": {"file_path": path}}]
            }))
            .expect("a task")
        };
        assert_eq!(names_no_secret(&task("suppliers.csv")), Ok(()));
        let (rule, why) = names_no_secret(&task("/srv/private-ledgers/suppliers.csv"))
            .expect_err("a path under the configured folder names it");
        assert_eq!(rule, "names-secret");
        assert!(why.contains("prompt"), "{why}");
    }

    #[test]
    fn only_an_identifier_is_a_tool_named() {
        assert!(names_tool("Call get_weather for Paris", "get_weather"));
        assert!(names_tool("use readFile on it", "readFile"));
        assert!(!names_tool("Calculate (2 + 3) * 7", "calculate"));
        assert!(!names_tool("the weather_report", "weather"));
    }

    #[test]
    fn a_label_asked_for_and_given_is_found() {
        assert_eq!(
            label_as_given(
                "Using the server's tools, find the hex of the item whose hex is `U+0074`."
            ),
            Some("hex".to_owned())
        );
        assert_eq!(
            label_as_given("find the size of the record whose name is `a.txt`."),
            None
        );
    }

    #[test]
    fn tokens_match_whole() {
        assert!(contains_token("the sum is 12.", "12"));
        assert!(!contains_token("the sum is 120", "12"));
        assert!(contains_token("Echo: Tavimor!", "tavimor"));
        assert!(!contains_token("xtavimor", "tavimor"));
        assert!(contains_token("a {{x}} b", "{{x}}"));
    }

    #[test]
    fn placeholders_are_found_in_nested_arguments() {
        let v = serde_json::json!({"a": ["{{handle:id}}", {"b": "x {{handle: other }} y"}]});
        assert_eq!(placeholders(&v), vec!["id".to_owned(), "other".to_owned()]);
    }
}
