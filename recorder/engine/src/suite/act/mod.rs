//! Act tasks (issue 44): a change the agent is asked to make, checked by
//! the state it leaves, never by its answer.
//!
//! Only in a sandbox whose state can be put back (`--sandbox-copy` or
//! `--reset`): for each tool that may write and only adds or edits (never
//! one labelled destructive), the harness gives it arguments of its own (a
//! fresh word no data holds, and the operator's folders where a path is
//! asked), calls it over the restored state, and looks for the fresh word
//! through the tools that read: the same arguments' reads, a search for
//! the word, the listings, a query language's catalogue. The first read
//! that shows the word after the call and not before is the task's state
//! check. Admission, each rule named in the ledger:
//!
//! - `act-call-failed`: the change itself failed on the restored state;
//! - `act-no-change`: no tool the agent has shows it;
//! - `act-check-passes-before`: the check passes on the restored state;
//! - `act-not-reproduced`: in a fresh restore, the solution must make the
//!   check pass again (twice in all, with the first call).
//!
//! The state is put back after every change, so the suite's other tasks
//! and every trial start from the state the sandbox holds.

use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;

use rand::SeedableRng as _;
use rand::rngs::ChaCha8Rng;
use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use super::admission::Rejection;
use super::destructive::{self, ToolDestructiveness};
use super::generators::schema_walk2::kinds;
use super::generators::walk::{Called, call};
use super::schema_args;
use super::task::{Predicate, StateCheck, Task, TaskKind};
use crate::mcp::connect::Session;
use crate::model::types::PlannedCall;

/// Writers tried at most.
const MAX_WRITERS: usize = 12;
/// Verbs of a tool that makes or edits content.
const CONTENT_VERBS: &[&str] = &[
    "write", "create", "add", "insert", "save", "append", "put", "set", "update", "edit", "new",
    "post", "record", "log", "note", "comment", "upsert", "store", "remember",
];
/// Reads tried as a state check for one change, at most.
const MAX_READS: usize = 10;

/// What act generation needs of the sandbox: put the state back, and the
/// session that talks to the server after it.
pub trait SandboxState {
    /// Put the state back as every trial starts from it (the copy restored
    /// and the server started again, or the operator's reset run).
    fn restore(&self, why: &str) -> impl std::future::Future<Output = anyhow::Result<()>>;
    /// The session open now.
    fn session(&self) -> anyhow::Result<Rc<Session>>;
}

/// What act generation tried and made.
#[derive(Debug, Default)]
pub struct ActOutcome {
    /// Admitted act tasks (ids `act-<tool>`, numbered by the caller).
    pub tasks: Vec<Task>,
    pub rejections: Vec<Rejection>,
    /// Changes tried (one candidate per writer given arguments).
    pub candidates: u64,
    /// Writers not tried, each with why.
    pub skipped: Vec<String>,
}

/// Inputs of act generation.
pub struct ActInput<'a> {
    pub tools: &'a [Tool],
    pub writers: &'a BTreeSet<String>,
    pub labels: &'a [ToolDestructiveness],
    /// The operator's paths (the copies' in a copy sandbox).
    pub roots: &'a [String],
    pub seed: u64,
    pub timeout: Duration,
    /// Values the suite's questions already give their tools' arguments,
    /// by argument name: an identifier a change needs (`id`, `todo_id`)
    /// is taken from these, so the change names a record that exists.
    pub known: &'a Map<String, Value>,
}

/// Propose and admit act tasks, the state put back after each change.
pub async fn generate<S: SandboxState>(
    state: &S,
    input: &ActInput<'_>,
) -> anyhow::Result<ActOutcome> {
    let mut out = ActOutcome::default();
    let mut rng = ChaCha8Rng::seed_from_u64(input.seed ^ 0x6163_745f_7461_736b);
    let dir_root = input
        .roots
        .iter()
        .find(|r| std::path::Path::new(r).is_dir())
        .cloned();
    for tool in changers(input) {
        if out.candidates as usize >= MAX_WRITERS {
            out.skipped.push(format!(
                "`{}`: only {MAX_WRITERS} changes are tried",
                tool.name
            ));
            continue;
        }
        let marker = format!(
            "{}_{}",
            schema_args::word(&mut rng),
            schema_args::word(&mut rng)
        );
        let others = [
            schema_args::word(&mut rng),
            schema_args::word(&mut rng),
            schema_args::word(&mut rng),
        ];
        let variants = argument_variants(tool, &marker, &others, dir_root.as_deref(), input.known);
        if variants.is_empty() {
            out.skipped.push(format!(
                "`{}`: no arguments the harness can give it",
                tool.name
            ));
            continue;
        }
        out.candidates += 1;
        // The next variant only where the server refused the call (a path
        // it wants relative, say); any other rule ends the change.
        let mut last = None;
        for args in variants {
            let reads = state_reads(input, tool, &args, &marker, dir_root.as_deref());
            let mut task = act_task(tool, args, &marker);
            match try_change(state, input, &task, &reads).await? {
                Ok(read) => {
                    task.state_check = Some(StateCheck { reads: vec![read] });
                    out.tasks.push(task);
                    last = None;
                    break;
                }
                Err((rule, detail)) => {
                    let again = rule == "act-call-failed";
                    last = Some(Rejection::of(&task.id, Some(&task), rule, detail));
                    if !again {
                        break;
                    }
                }
            }
        }
        out.rejections.extend(last);
    }
    if out.candidates > 0 {
        state.restore("after act generation").await?;
    }
    Ok(out)
}

/// The writers a change may be asked of: listed as writing, not
/// open-world, not one whose name says it returns secrets. One labelled
/// destructive may be tried too: the sandbox puts the state back, and a
/// change is only ever made with arguments that name the fresh word (a
/// tool that could only be given the operator's folder is never called).
fn changers<'t>(input: &ActInput<'t>) -> Vec<&'t Tool> {
    let mut found: Vec<&Tool> = input
        .tools
        .iter()
        .filter(|t| input.writers.contains(t.name.as_ref()))
        .filter(|t| !destructive::open_world(t))
        .filter(|t| super::reading::exposes_secrets(t).is_none())
        .collect();
    // Those that only add first, then those whose name says they make or
    // edit content: the changes a person asks of such a server.
    found.sort_by_key(|t| {
        (
            !crate::access::only_adds(t),
            !crate::access::words(&t.name)
                .iter()
                .any(|w| CONTENT_VERBS.contains(&w.as_str())),
            t.name.to_string(),
        )
    });
    found
}

/// One change tried: on the restored state, the reads before, the call,
/// the reads after; then again in a fresh restore with the read that
/// showed it. The read that checks it, or the rule it broke.
async fn try_change<S: SandboxState>(
    state: &S,
    input: &ActInput<'_>,
    task: &Task,
    reads: &[PlannedCall],
) -> anyhow::Result<Result<PlannedCall, (&'static str, String)>> {
    let change = &task.solution[0];
    state
        .restore(&format!("before act {}", change.tool))
        .await?;
    let session = state.session()?;
    session.set_corr_id(Some("generate::act"));
    let mut before = Vec::new();
    for r in reads {
        before.push(read_text(&session, r, input.timeout).await);
    }
    if let Err(said) = make(&session, change, input.timeout).await {
        return Ok(Err(("act-call-failed", said)));
    }
    let mut shown = None;
    for (r, was) in reads.iter().zip(&before) {
        let now = read_text(&session, r, input.timeout).await;
        if task.check.check(&now) && !task.check.check(was) {
            shown = Some(r.clone());
            break;
        }
    }
    drop(session);
    let Some(read) = shown else {
        let tried: Vec<String> = reads.iter().map(|r| format!("`{}`", r.tool)).collect();
        return Ok(Err((
            "act-no-change",
            format!(
                "after `{}` no read showed `{}` (tried {})",
                change.tool,
                task.answer_key,
                if tried.is_empty() {
                    "no read: none could be given arguments".to_owned()
                } else {
                    tried.join(", ")
                }
            ),
        )));
    };
    state
        .restore(&format!("before act {} again", change.tool))
        .await?;
    let session = state.session()?;
    session.set_corr_id(Some("generate::act"));
    if task
        .check
        .check(&read_text(&session, &read, input.timeout).await)
    {
        return Ok(Err((
            "act-check-passes-before",
            format!(
                "`{}` shows `{}` on the restored state",
                read.tool, task.answer_key
            ),
        )));
    }
    let again = make(&session, change, input.timeout).await;
    let now = read_text(&session, &read, input.timeout).await;
    if again.is_err() || !task.check.check(&now) {
        return Ok(Err((
            "act-not-reproduced",
            format!(
                "in a fresh restore, `{}` then `{}` did not show `{}` again",
                change.tool, read.tool, task.answer_key
            ),
        )));
    }
    Ok(Ok(read))
}

/// Make the change; what the server said when it failed.
async fn make(session: &Session, change: &PlannedCall, timeout: Duration) -> Result<(), String> {
    match call(session, &change.tool, &change.arguments, timeout).await {
        Called::Text(_) | Called::Empty => Ok(()),
        Called::Error(said) => Err(format!(
            "`{}` answered an error: {}",
            change.tool,
            said.chars().take(160).collect::<String>()
        )),
        Called::Failed => Err(format!("`{}` failed", change.tool)),
        Called::TimedOut => Err(format!("`{}` timed out", change.tool)),
    }
}

/// The text of one read; an error, an empty result or a failed call reads
/// as nothing.
async fn read_text(session: &Session, read: &PlannedCall, timeout: Duration) -> String {
    match call(session, &read.tool, &read.arguments, timeout).await {
        Called::Text(t) => t,
        _ => String::new(),
    }
}

/// What a trial left, as its state check reads it: the reads' text joined
/// in order, each under the corr_id `<trial>::state` on the wire tape
/// (never on the agent's).
pub async fn read_state(
    session: &Session,
    check: &StateCheck,
    corr_id: &str,
    timeout: Duration,
) -> String {
    let _tag = session.tagged(&format!("{corr_id}::state")).await;
    let mut parts = Vec::new();
    for read in &check.reads {
        parts.push(read_text(session, read, timeout).await);
    }
    parts.join("\n")
}

/// The task of a change: its prompt in the tool's words with every value
/// to write, the call as its solution, the fresh word as what the check
/// must find.
fn act_task(tool: &Tool, args: Map<String, Value>, marker: &str) -> Task {
    // Each value to write as `key `value``, the key in words.
    let mut said = Vec::new();
    let all = Value::Object(args.clone());
    each_leaf(&all, None, &mut |key, leaf| {
        let text = match leaf {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let name = key.map_or_else(|| "value".to_owned(), |k| crate::access::words(k).join(" "));
        said.push(format!("{name} `{text}`"));
    });
    let action = crate::access::words(&tool.name).join(" ");
    let prompt = format!(
        "Using the server's tools, make this change: {action}, with {}. Reply when it is done.",
        said.join(", ")
    );
    Task {
        id: format!("act-{}", tool.name),
        prompt,
        expected_tools: vec![tool.name.to_string()],
        answer_key: marker.to_owned(),
        check: Predicate::Substring {
            value: marker.to_owned(),
            case_insensitive: false,
        },
        destructive: true,
        solution: vec![PlannedCall {
            tool: tool.name.to_string(),
            arguments: args,
        }],
        handles: Vec::new(),
        rationale: Some(format!(
            "act: `{}` made a read the agent also has show `{marker}`, which it did not show on the restored state",
            tool.name
        )),
        origin: None,
        kind: TaskKind::Act,
        state_check: None,
    }
}

/// Every leaf of `value` (an argument set) with the name of the argument
/// it stands under (arrays take their argument's name).
fn each_leaf<'v>(
    value: &'v Value,
    key: Option<&'v str>,
    f: &mut impl FnMut(Option<&'v str>, &'v Value),
) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                each_leaf(v, Some(k), f);
            }
        }
        Value::Array(items) => {
            for v in items {
                each_leaf(v, key, f);
            }
        }
        leaf => f(key, leaf),
    }
}

/// What a string argument is, by its name and its tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Sql,
    /// A folder the server works in (a repository, a root).
    Folder,
    /// A path to make: a file, or a folder where the tool makes folders.
    NewPath,
    Uri,
    Text,
}

fn role(key: &str, tool: &Tool) -> Role {
    if kinds::sql_slot(tool).as_deref() == Some(key) {
        return Role::Sql;
    }
    let words = crate::access::words(key);
    let has = |ws: &[&str]| words.iter().any(|w| ws.contains(&w.as_str()));
    if has(&["repo", "repository", "root", "cwd", "workspace", "workdir"]) {
        Role::Folder
    } else if has(&["uri", "url"]) {
        Role::Uri
    } else if has(&[
        "path",
        "file",
        "filename",
        "filepath",
        "dir",
        "directory",
        "folder",
    ]) {
        Role::NewPath
    } else {
        Role::Text
    }
}

/// Arguments for a change: every required property (all of a tool's
/// properties that take text when none is required), the first text the
/// fresh word (the one the check looks for) and the others words of their
/// own, a path in the operator's folder, a statement that makes a table
/// named by the fresh word. `None` when a value cannot be given.
#[cfg(test)]
fn arguments(
    tool: &Tool,
    marker: &str,
    others: &[String],
    root: Option<&str>,
) -> Option<Map<String, Value>> {
    argument_variants(tool, marker, others, root, &Map::new())
        .into_iter()
        .next()
}

/// [`arguments`] in the forms a server may want them: paths under the
/// operator's folder, then (where a path is asked) the bare name, each
/// with the extension most of the folder's files have.
fn argument_variants(
    tool: &Tool,
    marker: &str,
    others: &[String],
    root: Option<&str>,
    known: &Map<String, Value>,
) -> Vec<Map<String, Value>> {
    let schema = Value::Object((*tool.input_schema).clone());
    let extension = root.map_or_else(|| "txt".to_owned(), common_extension);
    let mut out = Vec::new();
    for relative in [false, true] {
        let mut filler = Filler {
            tool,
            marker,
            others,
            root,
            known,
            extension: &extension,
            relative,
            texts: 0,
            plain: 0,
            paths: 0,
        };
        if let Some(Value::Object(args)) = filler.fill(&schema, None, 0)
            && !args.is_empty()
            && filler.texts > 0
            && !out.contains(&args)
        {
            out.push(args);
        }
        if filler.paths == 0 {
            break;
        }
    }
    out
}

/// The extension most files under `root` have (`md` in a vault of notes),
/// `txt` when it has none; at most 2,000 entries are read, four folders
/// deep.
fn common_extension(root: &str) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = Default::default();
    let mut stack = vec![(std::path::PathBuf::from(root), 0)];
    let mut seen = 0;
    while let Some((dir, depth)) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            seen += 1;
            if seen > 2000 {
                break;
            }
            let path = entry.path();
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            match entry.file_type() {
                Ok(t) if t.is_dir() && depth < 4 && !hidden => stack.push((path, depth + 1)),
                Ok(t) if t.is_file() && !hidden => {
                    if let Some(ext) = path.extension().and_then(|e| e.to_str())
                        && ext.len() <= 8
                        && ext.chars().all(|c| c.is_ascii_alphanumeric())
                    {
                        *counts.entry(ext.to_ascii_lowercase()).or_default() += 1;
                    }
                }
                _ => {}
            }
        }
    }
    counts
        .into_iter()
        .max_by_key(|(e, n)| (*n, std::cmp::Reverse(e.clone())))
        .map_or_else(|| "txt".to_owned(), |(e, _)| e)
}

/// The values of one change's arguments.
struct Filler<'a> {
    tool: &'a Tool,
    marker: &'a str,
    others: &'a [String],
    root: Option<&'a str>,
    known: &'a Map<String, Value>,
    /// The extension a new file gets.
    extension: &'a str,
    /// New paths as bare names, not under the operator's folder.
    relative: bool,
    /// New paths given.
    paths: usize,
    /// Values given that carry the fresh word or a word of their own (a
    /// change given none is never made).
    texts: usize,
    /// Plain texts given so far (the first is the fresh word).
    plain: usize,
}

impl Filler<'_> {
    fn fill(&mut self, schema: &Value, key: Option<&str>, depth: usize) -> Option<Value> {
        if depth > 6 {
            return None;
        }
        if let Some(c) = schema.get("const") {
            return Some(c.clone());
        }
        if let Some(first) = schema
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return Some(first.clone());
        }
        if let Some(branch) = ["anyOf", "oneOf"].iter().find_map(|k| {
            schema.get(*k).and_then(Value::as_array).and_then(|b| {
                b.iter()
                    .find(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            })
        }) {
            return self.fill(branch, key, depth + 1);
        }
        if let Some(k) = key
            && is_id(k)
            && let Some(v) = self.known.get(k)
        {
            return Some(v.clone());
        }
        let ty = match crate::model::sim::schema_type(schema) {
            Some(t) => t,
            None if schema.get("properties").is_some() => "object",
            None => "string",
        };
        match ty {
            "object" => {
                let props = schema.get("properties").and_then(Value::as_object)?;
                let required: Vec<&str> = schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                // The required ones; where none takes text, the first
                // optional ones that do, so the change names the fresh word.
                let mut keys = required;
                let known = |k: &str| is_id(k) && self.known.contains_key(k);
                if !keys
                    .iter()
                    .any(|k| props.get(*k).is_some_and(takes_text) && !known(k))
                {
                    keys.extend(
                        props
                            .iter()
                            .filter(|(k, p)| !keys.contains(&k.as_str()) && takes_text(p))
                            .map(|(k, _)| k.as_str())
                            .take(if keys.is_empty() { 4 } else { 1 })
                            .collect::<Vec<_>>(),
                    );
                }
                let mut map = Map::new();
                for k in keys {
                    let p = props.get(k)?;
                    map.insert(k.to_owned(), self.fill(p, Some(k), depth + 1)?);
                }
                Some(Value::Object(map))
            }
            "array" => {
                let items = schema
                    .get("items")
                    .cloned()
                    .unwrap_or(json!({"type": "string"}));
                Some(json!([self.fill(&items, key, depth + 1)?]))
            }
            "integer" => Some(json!(
                schema
                    .get("minimum")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
                    .max(1)
            )),
            "number" => Some(json!(
                schema
                    .get("minimum")
                    .and_then(Value::as_f64)
                    .unwrap_or(1.0)
                    .max(1.0)
            )),
            "boolean" => Some(json!(false)),
            "string" => Some(json!(self.text(key)?)),
            _ => None,
        }
    }

    fn text(&mut self, key: Option<&str>) -> Option<String> {
        let (marker, root) = (self.marker, self.root);
        let role = key.map_or(Role::Text, |k| role(k, self.tool));
        let makes_folders = crate::access::words(&self.tool.name)
            .iter()
            .any(|w| ["directory", "dir", "folder", "mkdir"].contains(&w.as_str()));
        Some(match role {
            Role::Sql => {
                self.texts += 1;
                format!("CREATE TABLE {marker} (note TEXT)")
            }
            Role::Folder => root?.to_owned(),
            Role::NewPath => {
                self.texts += 1;
                self.paths += 1;
                let folder = makes_folders
                    || key.is_some_and(|k| {
                        crate::access::words(k)
                            .iter()
                            .any(|w| ["directory", "dir", "folder"].contains(&w.as_str()))
                    });
                let name = if folder {
                    marker.to_owned()
                } else {
                    format!("{marker}.{}", self.extension)
                };
                if self.relative {
                    name
                } else {
                    format!("{}/{name}", root?)
                }
            }
            Role::Uri => {
                self.texts += 1;
                format!("file://{}/{marker}.{}", root?, self.extension)
            }
            Role::Text => {
                self.texts += 1;
                self.plain += 1;
                match self.plain {
                    1 => marker.to_owned(),
                    n => self
                        .others
                        .get((n - 2) % self.others.len().max(1))
                        .cloned()
                        .unwrap_or_else(|| marker.to_owned()),
                }
            }
        })
    }
}

/// Reads that may show the change, the most particular first: a tool
/// given the change's own values by name, a search for the fresh word, a
/// listing that takes nothing, a query language's catalogue.
fn state_reads(
    input: &ActInput<'_>,
    change: &Tool,
    args: &Map<String, Value>,
    marker: &str,
    root: Option<&str>,
) -> Vec<PlannedCall> {
    let readers: Vec<&Tool> = input
        .tools
        .iter()
        .filter(|t| t.name != change.name && !input.writers.contains(t.name.as_ref()))
        .filter(|t| super::reading::exposes_secrets(t).is_none() && !destructive::open_world(t))
        .collect();
    let mut given = Map::new();
    // The change's values by their own names (the first of each name).
    let all = Value::Object(args.clone());
    each_leaf(&all, None, &mut |key, leaf| {
        if let Some(k) = key
            && !given.contains_key(k)
        {
            given.insert(k.to_owned(), leaf.clone());
        }
    });
    let mut particular = Vec::new();
    let mut searches = Vec::new();
    let mut listings = Vec::new();
    let mut catalogues = Vec::new();
    for t in readers {
        let schema = &t.input_schema;
        let props = schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<String> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if let Some(slot) = kinds::sql_slot(t) {
            for d in kinds::DIALECTS {
                catalogues.push(planned(t, [(slot.clone(), json!(d.tables))]));
            }
            continue;
        }
        if let Some(slot) = kinds::search_slot(t) {
            let mut a = Map::new();
            a.insert(slot.clone(), json!(marker));
            if complete(&mut a, &required, &props, &given, root, false) {
                searches.push(PlannedCall {
                    tool: t.name.to_string(),
                    arguments: a,
                });
            }
            continue;
        }
        if required.is_empty() {
            listings.push(planned(t, []));
            continue;
        }
        let shares = required.iter().any(|k| given.contains_key(k));
        for at_root in [false, true] {
            let mut a = Map::new();
            if complete(&mut a, &required, &props, &given, root, at_root) {
                let call = PlannedCall {
                    tool: t.name.to_string(),
                    arguments: a,
                };
                let list = if shares {
                    &mut particular
                } else {
                    &mut listings
                };
                if !list.contains(&call) {
                    list.push(call);
                }
            }
        }
    }
    particular
        .into_iter()
        .chain(searches)
        .chain(listings)
        .chain(catalogues)
        .take(MAX_READS)
        .collect()
}

fn planned<const N: usize>(t: &Tool, args: [(String, Value); N]) -> PlannedCall {
    PlannedCall {
        tool: t.name.to_string(),
        arguments: args.into_iter().collect(),
    }
}

/// Fill the required properties not yet in `a`: the change's value of the
/// same name (or the operator's folder, `at_root`, for a path), an
/// enum's first value, the folder for a path. False when one cannot be.
fn complete(
    a: &mut Map<String, Value>,
    required: &[String],
    props: &Map<String, Value>,
    given: &Map<String, Value>,
    root: Option<&str>,
    at_root: bool,
) -> bool {
    for k in required {
        if a.contains_key(k) {
            continue;
        }
        let p = props.get(k).cloned().unwrap_or(Value::Null);
        let words = crate::access::words(k);
        let pathish = words.iter().any(|w| {
            [
                "path",
                "file",
                "dir",
                "directory",
                "folder",
                "repo",
                "repository",
                "root",
            ]
            .contains(&w.as_str())
        });
        let value = if pathish && at_root {
            root.map(|r| json!(r))
        } else if let Some(v) = given.get(k) {
            Some(v.clone())
        } else if let Some(e) = p
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            Some(e.clone())
        } else if let Some(d) = p.get("default") {
            Some(d.clone())
        } else if let Some(q) = p
            .get("description")
            .and_then(Value::as_str)
            .and_then(first_quoted)
        {
            Some(json!(q))
        } else if pathish {
            root.map(|r| json!(r))
        } else {
            None
        };
        match value {
            Some(v) => {
                a.insert(k.clone(), v);
            }
            None => return false,
        }
    }
    true
}

/// Does an argument name a record by its identifier (`id`, `todo_id`)?
fn is_id(key: &str) -> bool {
    crate::access::words(key).iter().any(|w| w == "id")
}

/// Does a property take text (a string, or a string or null)?
fn takes_text(p: &Value) -> bool {
    let string = |v: &Value| v.get("type").and_then(Value::as_str) == Some("string");
    string(p)
        || ["anyOf", "oneOf"].iter().any(|k| {
            p.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|b| b.iter().any(string))
        })
}

/// The first value a description quotes (`'local'`, `"all"`, `` `asc` ``):
/// where a schema names no enum, the words often do.
fn first_quoted(description: &str) -> Option<String> {
    static QUOTED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"['"`]([A-Za-z][\w-]{0,30})['"`]"#).expect("the quote pattern compiles")
    });
    QUOTED.captures(description).map(|c| c[1].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_owned(),
            String::new(),
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        )
    }

    #[test]
    fn a_change_is_given_the_fresh_word_and_paths_in_the_operators_folder() {
        let entities = tool(
            "create_entities",
            json!({"type": "object", "required": ["entities"], "properties": {"entities": {
                "type": "array", "items": {"type": "object",
                "required": ["name", "entityType", "observations"],
                "properties": {"name": {"type": "string"}, "entityType": {"type": "string"},
                    "observations": {"type": "array", "items": {"type": "string"}}}}}}}),
        );
        let others = ["lanvi".to_owned(), "dorka".to_owned()];
        let args = arguments(&entities, "kaso_tor", &others, None).expect("arguments");
        assert_eq!(args["entities"][0]["name"], "kaso_tor");
        assert_eq!(args["entities"][0]["entityType"], "lanvi");
        assert_eq!(args["entities"][0]["observations"][0], "dorka");
        let write = tool(
            "write_file",
            json!({"type": "object", "required": ["path", "content"],
                   "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
        );
        assert_eq!(
            arguments(&write, "kaso_tor", &others, None).map(|a| a["path"].clone()),
            Some(json!("kaso_tor.txt")),
            "no folder: a bare name, never a path elsewhere"
        );
        let args = arguments(&write, "kaso_tor", &others, Some("/srv/notes")).expect("arguments");
        assert_eq!(args["path"], "/srv/notes/kaso_tor.txt");
        let branch = tool(
            "git_create_branch",
            json!({"type": "object", "required": ["repo_path", "branch_name"],
                   "properties": {"repo_path": {"type": "string"}, "branch_name": {"type": "string"},
                                  "base_branch": {"type": "string"}}}),
        );
        let args = arguments(&branch, "kaso_tor", &others, Some("/srv/repo")).expect("arguments");
        assert_eq!(
            Value::Object(args.clone()),
            json!({"repo_path": "/srv/repo", "branch_name": "kaso_tor"})
        );
        let task = act_task(&branch, args, "kaso_tor");
        assert!(
            task.prompt.contains("branch name `kaso_tor`"),
            "{}",
            task.prompt
        );
        assert!(task.prompt.contains("git create branch"), "{}", task.prompt);
        assert!(task.is_act());
    }

    #[test]
    fn a_record_is_named_by_a_known_id_and_given_the_fresh_word() {
        let edit = tool(
            "edit_todo",
            json!({"type": "object", "required": ["id"], "properties": {
                "id": {"type": "integer"},
                "text": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null},
                "done": {"anyOf": [{"type": "boolean"}, {"type": "null"}]}}}),
        );
        let known: Map<String, Value> = [("id".to_owned(), json!(12))].into_iter().collect();
        let update = tool(
            "update_todo",
            json!({"type": "object", "required": ["todo_id"], "properties": {
                "todo_id": {"type": "string"},
                "text": {"anyOf": [{"type": "string"}, {"type": "null"}]}}}),
        );
        let with_id: Map<String, Value> =
            [("todo_id".to_owned(), json!("3"))].into_iter().collect();
        assert_eq!(
            Value::Object(argument_variants(&update, "kaso_tor", &[], None, &with_id)[0].clone()),
            json!({"todo_id": "3", "text": "kaso_tor"})
        );
        let args = argument_variants(&edit, "kaso_tor", &[], None, &known);
        assert_eq!(
            args,
            vec![
                json!({"id": 12, "text": "kaso_tor"})
                    .as_object()
                    .cloned()
                    .unwrap()
            ]
        );
        let done = tool(
            "mark_done",
            json!({"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}}),
        );
        assert!(
            argument_variants(&done, "kaso_tor", &[], None, &known).is_empty(),
            "a change that cannot name the fresh word is never made"
        );
    }

    #[test]
    fn new_files_take_the_extension_most_of_the_folder_has_then_a_bare_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("Projects")).unwrap();
        for f in ["Projects/a.md", "Projects/b.md", "c.md", "Home.base"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let root = dir.path().to_str().unwrap();
        assert_eq!(common_extension(root), "md");
        let write = tool(
            "write_note",
            json!({"type": "object", "required": ["path", "content"],
                   "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
        );
        let variants = argument_variants(&write, "kaso_tor", &[], Some(root), &Map::new());
        let paths: Vec<&str> = variants
            .iter()
            .map(|a| a["path"].as_str().unwrap())
            .collect();
        assert_eq!(
            paths,
            [format!("{root}/kaso_tor.md").as_str(), "kaso_tor.md"]
        );
    }

    #[test]
    fn a_description_names_the_value_a_schema_does_not() {
        assert_eq!(
            first_quoted("Whether to list local branches ('local'), remote branches ('remote') or all ('all').").as_deref(),
            Some("local")
        );
        assert_eq!(first_quoted("The branch type"), None);
    }

    #[test]
    fn reads_that_take_the_changes_values_come_before_listings() {
        let write = tool(
            "write_file",
            json!({"type": "object", "required": ["path", "content"],
                   "properties": {"path": {"type": "string"}, "content": {"type": "string"}}}),
        );
        let read = tool(
            "read_file",
            json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}),
        );
        let listing = tool("list_allowed_directories", json!({"type": "object"}));
        let search = tool(
            "search_files",
            json!({"type": "object", "required": ["path", "pattern"],
                   "properties": {"path": {"type": "string"}, "pattern": {"type": "string"}}}),
        );
        let tools = vec![write.clone(), read, listing, search];
        let writers = BTreeSet::from(["write_file".to_owned()]);
        let known = Map::new();
        let input = ActInput {
            tools: &tools,
            writers: &writers,
            labels: &[],
            roots: &[],
            seed: 1,
            timeout: Duration::from_secs(1),
            known: &known,
        };
        let args = arguments(&write, "kaso_tor", &[], Some("/srv")).expect("arguments");
        let reads = state_reads(&input, &write, &args, "kaso_tor", Some("/srv"));
        let named: Vec<String> = reads
            .iter()
            .map(|r| format!("{} {}", r.tool, Value::Object(r.arguments.clone())))
            .collect();
        assert_eq!(
            named[0], r#"read_file {"path":"/srv/kaso_tor.txt"}"#,
            "{named:?}"
        );
        assert!(
            named.contains(&r#"read_file {"path":"/srv"}"#.to_owned()),
            "{named:?}"
        );
        assert!(
            named
                .iter()
                .any(|n| n.starts_with("search_files") && n.contains("\"pattern\":\"kaso_tor\"")),
            "{named:?}"
        );
        assert!(
            named.contains(&"list_allowed_directories {}".to_owned()),
            "{named:?}"
        );
    }
}
