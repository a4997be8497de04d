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
use serde_json::{Map, Value};

mod args;
pub(crate) mod judge;
mod reads;

use args::{argument_variants, each_leaf};
use reads::state_reads;

use super::admission::Rejection;
use super::call::{Called, call};
use super::destructive::{self, ToolDestructiveness};
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
    /// Changes admitted as the judge proposed them.
    pub judge_admitted: u64,
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
pub(crate) async fn generate<S: SandboxState>(
    state: &S,
    input: &ActInput<'_>,
    mut judge: Option<&mut judge::ChangeJudge<'_>>,
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
        let mut variants: Vec<(Map<String, Value>, Option<PlannedCall>)> =
            argument_variants(tool, &marker, &others, dir_root.as_deref(), input.known)
                .into_iter()
                .map(|a| (a, None))
                .collect();
        // The judge's change first, with the read it says shows it; the
        // harness's own arguments where it fails.
        let mut judged = false;
        if let Some(j) = judge.as_deref_mut() {
            let readers = reads::readers(input.tools, input.writers, tool);
            if let Some(p) = j.propose(tool, &marker, &readers).await {
                variants.insert(0, (p.arguments, p.read));
                judged = true;
            }
        }
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
        for (i, (args, proposed_read)) in variants.into_iter().enumerate() {
            let from_judge = judged && i == 0;
            let mut reads = state_reads(
                input.tools,
                input.writers,
                tool,
                &args,
                &marker,
                dir_root.as_deref(),
            );
            if let Some(r) = proposed_read {
                reads.retain(|x| *x != r);
                reads.insert(0, r);
            }
            let mut task = act_task(tool, args, &marker);
            match try_change(state, input, &task, &reads).await? {
                Ok(read) => {
                    task.state_check = Some(StateCheck { reads: vec![read] });
                    if from_judge {
                        task.rationale = task
                            .rationale
                            .map(|r| format!("{r} (the change as the judge proposed it)"));
                        out.judge_admitted += 1;
                    }
                    out.tasks.push(task);
                    last = None;
                    break;
                }
                Err((rule, detail)) => {
                    // The judge's change failed: the harness's own next.
                    let again = rule == "act-call-failed" || from_judge;
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
        // A server that says it failed in a result it did not flag.
        Called::Text(said) if crate::suite::reading::reads_as_error(&said) => Err(format!(
            "`{}` answered an error it did not flag: {}",
            change.tool,
            said.chars().take(160).collect::<String>()
        )),
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
        shape: Some(fitness_shared::record::TaskShape::Change),
    }
}

#[cfg(test)]
mod tests {
    use super::args::*;
    use super::reads::*;
    use super::*;
    use serde_json::json;
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
        // @zeeg/dex's update_task: only the id required, text optional. No
        // id known: never called (an invented id names no record); one
        // known: the id as it is, the fresh word in the text.
        let dex = tool(
            "update_task",
            json!({"type": "object", "required": ["id"], "properties": {
                "id": {"type": "string"}, "name": {"type": "string"},
                "description": {"type": "string"}}}),
        );
        assert!(argument_variants(&dex, "kaso_tor", &[], None, &Map::new()).is_empty());
        let seen: Map<String, Value> = [("id".to_owned(), json!("gg6dslsv"))].into_iter().collect();
        let args = argument_variants(&dex, "kaso_tor", &[], None, &seen);
        assert_eq!(args[0]["id"], "gg6dslsv");
        assert!(args[0].values().any(|v| v == "kaso_tor"), "{:?}", args[0]);
        // A tool that only adds may name its new record.
        let create = tool(
            "create_task",
            json!({"type": "object", "required": ["id", "name"], "properties": {
                "id": {"type": "string"}, "name": {"type": "string"}}}),
        );
        assert_eq!(
            argument_variants(
                &create,
                "kaso_tor",
                &["lanvi".to_owned()],
                None,
                &Map::new()
            )
            .len(),
            1
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
        let reads = state_reads(
            input.tools,
            input.writers,
            &write,
            &args,
            "kaso_tor",
            Some("/srv"),
        );
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
