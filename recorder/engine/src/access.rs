//! What a run may do to the server it measures: one rule for "may this
//! call write", said once, and the modes a run is in.
//!
//! **May write** ([`may_write`]): `readOnlyHint` where the tool declares
//! it; else `destructiveHint: true` says it writes; else the offline
//! inference ([`infer`]) over the tool's name, then the first words of its
//! description, then its schema:
//! 1. a name word that is a writing verb (`delete`, `create`, `set`, `send`,
//!    `run`, … see [`WRITE_VERBS`]) → writes;
//! 2. else a name word that is a reading verb (`get`, `list`, `read`,
//!    `search`, `fetch`, `describe`, … see [`READ_VERBS`]) → reads; so
//!    does a name ending in a noun of what it returns (`graph_summary`,
//!    `db_stats`, see [`READ_NOUNS`]) where no other word renews it and the
//!    description's first sentence names no change;
//! 3. else the first verb of either kind among the description's first five
//!    words ("Shows the commit logs" reads; so does a third person that
//!    says what the tool returns, "Reports duplicate rows", see
//!    [`DESCRIBING_VERBS`]);
//! 4. else a schema property named `confirm`, `force` or `overwrite` →
//!    writes;
//! 5. else writes (nothing says it only reads).
//!
//! A judge's label may only add ([`writers`]): a tool the judge calls
//! destructive writes, whatever the rule said.
//!
//! A tool that runs the SQL it is given (a running verb in its name,
//! `execute_query`, and a required `query`/`sql`/`statement` its words
//! call SQL) does not write by itself: each call is judged by its
//! statement, below.
//!
//! **A call writes by its arguments** ([`writes_by_arguments`]) when one of
//! them is a SQL statement that changes data (`INSERT INTO`, `UPDATE ..
//! SET`, `DELETE FROM`, `DROP TABLE`, ...), starts with any other command
//! than a reading one (`VACUUM`, `COPY`, `SET`, `CALL`), or reads and
//! still acts (`SELECT .. INTO`, `nextval(..)`, `pg_terminate_backend(..)`):
//! a tool named `query` runs whatever it is given (`mcp-sqlite`'s does), so
//! in a read-only run such a call is withheld like a writer's, whatever the
//! tool's name says.
//!
//! **Modes** ([`Access`]): read-only by default, where no call that may
//! write is made by any part of a run (the walk, the judge's solution
//! calls, the null arms, the reference agent, the runner: the drive's are
//! blocked, answered with [`blocked_message`]); a sandbox only when the
//! operator says the target may be written to.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use rmcp::model::Tool;
use serde_json::Value;

pub use fitness_shared::record::{AccessMode, RestoreKind};

/// Name or description words that mean the tool changes state.
pub const WRITE_VERBS: &[&str] = &[
    "delete",
    "remove",
    "drop",
    "destroy",
    "erase",
    "purge",
    "clear",
    "truncate",
    "wipe",
    "write",
    "create",
    "insert",
    "add",
    "update",
    "upsert",
    "set",
    "put",
    "patch",
    "modify",
    "edit",
    "rename",
    "move",
    "send",
    "post",
    "publish",
    "kill",
    "terminate",
    "stop",
    "reset",
    "restart",
    "execute",
    "exec",
    "run",
    "deploy",
    "toggle",
    "upload",
    "merge",
    "close",
    "cancel",
    "revoke",
    "grant",
    "archive",
    "overwrite",
    "replace",
    "append",
    "save",
    "store",
    "push",
    "commit",
    "approve",
    "transfer",
    "pay",
    "charge",
    "enable",
    "disable",
    "install",
    "uninstall",
    "trigger",
    "start",
    "submit",
    "assign",
    "invite",
    "ban",
    "lock",
    "unlock",
    "gzip",
    "compress",
    "subscribe",
    "unsubscribe",
    "register",
    "book",
    "order",
    "mark",
    "checkout",
    "switch",
    "apply",
    "import",
    "configure",
    "copy",
    "stage",
    "unstage",
    "init",
    "initialize",
    "reply",
    "comment",
    "fork",
    "attach",
    "detach",
    "link",
    "unlink",
    "restore",
    "rollback",
    "revert",
    "migrate",
    "flush",
    "prune",
    "bump",
    "refresh",
    "rebuild",
    "regenerate",
    "reindex",
    "sync",
    "recompute",
    "recalculate",
    "reload",
    "increment",
    "undo",
    "redo",
    "fix",
    "renumber",
    "dedupe",
    "deduplicate",
];

/// Name or description words that mean the tool only reads.
pub const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "read",
    "search",
    "find",
    "query",
    "fetch",
    "describe",
    "show",
    "view",
    "echo",
    "sum",
    "count",
    "lookup",
    "check",
    "validate",
    "inspect",
    "browse",
    "resolve",
    "explain",
    "summarize",
    "summarise",
    "calculate",
    "compute",
    "convert",
    "parse",
    "preview",
    "ping",
    "status",
    "info",
    "retrieve",
    "stat",
    "diff",
    "compare",
    "analyze",
    "analyse",
    "estimate",
    "translate",
    "open",
    "lookup",
    "returns",
    "return",
    "gets",
    "lists",
    "reads",
    "searches",
    "retrieves",
    "echoes",
    "fetches",
    "describes",
    "shows",
    "evaluate",
    "evaluates",
    "encode",
    "decode",
    "test",
    "match",
    "verify",
    "extract",
    "measure",
    "trace",
];

/// Nouns that name what a tool returns, as a name's last word
/// (`graph_summary`, `db_stats`, `server_version`): the name reads where
/// none of its other words renews state (`bump_version`,
/// `refresh_metadata`) and its description's first sentence names no
/// change.
const READ_NOUNS: &[&str] = &[
    "summary",
    "stats",
    "statistics",
    "overview",
    "details",
    "schema",
    "metadata",
    "health",
    "version",
];

/// Words that make what a reading noun names (`generate_summary`): with
/// such a noun, the tool may write (those that renew it, `rebuild_stats`,
/// `bump_version`, are [`WRITE_VERBS`]).
const RENEWING: &[&str] = &["generate", "build", "make", "collect"];

/// Verbs that say what a tool returns, only as a description's third
/// person ("Reports duplicate rows", "Detects outliers", "Gives a
/// summary"): as a name's word (`report_issue`, `give_access`) they may
/// act, and say nothing.
const DESCRIBING_VERBS: &[&str] = &[
    "reports",
    "detects",
    "identifies",
    "gives",
    "provides",
    "displays",
    "prints",
    "scans",
    "screens",
];

/// A name or text split into lowercase words (on punctuation and camelCase).
pub fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in s.chars() {
        if c.is_alphanumeric() {
            if c.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = c.is_lowercase();
            cur.extend(c.to_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Is `word` one of `verbs`, or that verb with a plain inflection?
fn is_verb(word: &str, verbs: &'static [&'static str]) -> Option<&'static str> {
    verbs.iter().copied().find(|v| inflects(word, v))
}

/// Is `word` the verb `v`, or `v` with a plain inflection?
fn inflects(word: &str, v: &str) -> bool {
    word == v
        || word.strip_suffix('s') == Some(v)
        || word.strip_suffix("es") == Some(v)
        || word.strip_suffix("ed") == Some(v)
        || word.strip_suffix('d') == Some(v)
}

/// Is `word` a writing verb, or a writing verb done again or undone
/// (`reorder`, `rewrite`, `unarchive`, `unset`)? ai-todo 3.0.2's `reorder`
/// rewrote its `TODO.md` in a walk that only reads: `reorder` had read as
/// no verb at all.
fn writing_verb(word: &str) -> Option<&'static str> {
    is_verb(word, WRITE_VERBS).or_else(|| {
        ["re", "un"].iter().find_map(|prefix| {
            let rest = word.strip_prefix(prefix)?;
            // `re` + a verb of three letters or more: never `read`
            // (`ad`), `rest`, `unit`.
            (rest.chars().count() >= 3)
                .then(|| is_verb(rest, WRITE_VERBS))
                .flatten()
        })
    })
}

/// The offline rule set: (writes, evidence).
pub fn infer(tool: &Tool) -> (bool, String) {
    let name = tool.name.to_string();
    // A place to put its output (`output_path`, `save_to`, `dest_dir`)
    // writes a file, whatever the tool's verb says (excel-mcp-polars'
    // `to_pandas` "converts" and writes `output_path`).
    if let Some(p) = output_location(tool) {
        return (true, format!("schema has the output location `{p}`"));
    }
    // A writing verb anywhere in the name writes, unless it is only an
    // inflected noun after a reading verb (`get_orders`, `list_posts`,
    // `git_diff_staged`): the object read, not an act.
    // A tool that runs what it is given (`execute_query`) and says it only
    // reads ("Execute a SELECT query … strictly READ-ONLY") reads.
    let name_verbs: Vec<&str> = words(&name)
        .iter()
        .filter_map(|w| writing_verb(w))
        .collect();
    if !name_verbs.is_empty()
        && name_verbs.iter().all(|v| RUNNING_VERBS.contains(v))
        && let Some(said) = says_read_only(tool.description.as_deref().unwrap_or(""))
    {
        return (
            false,
            format!("name `{name}` runs what it is given and the description says `{said}`"),
        );
    }
    // A tool that runs the SQL it is given (`execute_query` with its
    // `query`) writes or reads by the statement: its calls are judged one
    // by one ([`writes_by_arguments`]), never the tool.
    if !name_verbs.is_empty()
        && name_verbs.iter().all(|v| RUNNING_VERBS.contains(v))
        && let Some(p) = sql_parameter(tool)
    {
        return (
            false,
            format!(
                "name `{name}` runs the SQL statement it is given in `{p}`: a call writes by its statement"
            ),
        );
    }
    let mut read: Option<&'static str> = None;
    let mut after_read = false;
    let name_words = words(&name);
    for (position, w) in name_words.iter().enumerate() {
        let w = w.clone();
        // A thing a writing verb also names, right after the reading verb
        // (`get_post`, `analyze_commit`, `show_order`), is what is read; so
        // is a writing verb that only qualifies the noun after it
        // (`get_sync_status`, `show_deploy_history`).
        let qualifies = after_read
            && name_words.get(position + 1).is_some_and(|next| {
                STATE_NOUNS.contains(&next.as_str()) || READ_NOUNS.contains(&next.as_str())
            });
        let thing = after_read && NOUN_VERBS.contains(&w.as_str()) || qualifies;
        if let Some(v) = writing_verb(&w)
            && !(read.is_some() && w != v)
            && !thing
        {
            return (true, format!("name `{name}` has the writing verb `{v}`"));
        }
        after_read = false;
        if read.is_none() {
            read = is_verb(&w, READ_VERBS);
            after_read = read.is_some();
        }
    }
    let description = tool.description.as_deref().unwrap_or("");
    if let Some(said) = chains_change(description) {
        return (
            true,
            format!("the description goes on from what it finds to a change: `{said}`"),
        );
    }
    if let Some(v) = read {
        // A reading verb that also names a change (`resolve_blocker`,
        // `summarize_task_activity`, `open_issue`) reads only where the
        // description's first sentence names no change.
        if AMBIGUOUS_READ_VERBS.contains(&v)
            && let Some(said) = names_change(description)
        {
            return (
                true,
                format!(
                    "name `{name}` has the reading verb `{v}`, which may change state, and the description says `{said}`"
                ),
            );
        }
        // Resolving a problem settles it (`resolve_conflicts`: "Detect and
        // resolve duplicate task IDs" renumbered ai-todo's tasks);
        // resolving a name to what it stands for reads.
        if v == "resolve"
            && let Some(said) = words(&name)
                .into_iter()
                .chain(first_sentence(description))
                .find(|w| PROBLEMS.iter().any(|p| inflects(w, p)))
        {
            return (
                true,
                format!(
                    "name `{name}` has the reading verb `{v}`, which may change state, and the description says `{said}`"
                ),
            );
        }
        return (false, format!("name `{name}` has the reading verb `{v}`"));
    }
    if let Some((last, others)) = name_words.split_last()
        && READ_NOUNS.contains(&last.as_str())
        && !others.iter().any(|w| is_verb(w, RENEWING).is_some())
        && names_change(description).is_none()
    {
        return (
            false,
            format!("name `{name}` ends in `{last}`, what it returns"),
        );
    }
    // In the description, the first verb of either kind decides: "Shows
    // the commit logs" reads, though `commit` is a writing verb.
    for w in words(description).iter().take(5) {
        if let Some(v) = writing_verb(w) {
            return (
                true,
                format!("description begins with the writing verb `{v}`"),
            );
        }
        if let Some(v) =
            is_verb(w, READ_VERBS).or_else(|| DESCRIBING_VERBS.iter().copied().find(|d| d == w))
        {
            return (
                false,
                format!("description begins with the reading verb `{v}`"),
            );
        }
    }
    let schema = Value::Object((*tool.input_schema).clone());
    if let Some(props) = schema.get("properties").and_then(Value::as_object)
        && let Some(p) = props
            .keys()
            .find(|k| ["confirm", "force", "overwrite"].contains(&k.to_lowercase().as_str()))
    {
        return (true, format!("schema has a `{p}` property"));
    }
    (
        true,
        "no reading verb in the name or description: assumed destructive".into(),
    )
}

/// A property of the tool's input that names where its output goes: an
/// output, save, export or destination word with a path, file, folder or
/// directory word (`output_path`, `save_to_file`, `dest_dir`), or
/// `destination` / `dest` alone.
fn output_location(tool: &Tool) -> Option<String> {
    const OUT: &[&str] = &["output", "out", "save", "export", "dest", "destination"];
    const PLACE: &[&str] = &[
        "path",
        "file",
        "filename",
        "dir",
        "directory",
        "folder",
        "to",
    ];
    let props = tool.input_schema.get("properties")?.as_object()?;
    props
        .keys()
        .find(|k| {
            let w = words(k);
            let out = w.iter().any(|x| OUT.contains(&x.as_str()));
            let place = w.iter().any(|x| PLACE.contains(&x.as_str()));
            (out && place) || matches!(w.as_slice(), [x] if x == "destination" || x == "dest")
        })
        .cloned()
}

/// The required string parameter a tool takes a SQL statement in: named
/// `query`, `sql`, `statement` (or with them, `sql_query`), where the
/// tool's name or words say SQL.
fn sql_parameter(tool: &Tool) -> Option<String> {
    let props = tool.input_schema.get("properties")?.as_object()?;
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let says_sql = |text: &str| words(text).iter().any(|w| w == "sql");
    let (key, schema) = props.iter().find(|(k, v)| {
        required.contains(&k.as_str())
            && v.get("type").and_then(Value::as_str) == Some("string")
            && words(k)
                .iter()
                .any(|w| matches!(w.as_str(), "query" | "sql" | "statement"))
    })?;
    let described = schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    (says_sql(&tool.name)
        || says_sql(tool.description.as_deref().unwrap_or(""))
        || says_sql(described)
        || says_sql(key))
    .then(|| key.clone())
}

/// Nouns of the state a tool reports, after the word they are of
/// (`sync_status`, `deploy_history`).
const STATE_NOUNS: &[&str] = &[
    "status", "state", "info", "history", "log", "logs", "progress", "result", "results", "report",
    "count", "list", "settings", "options", "preview",
];

/// Writing verbs that are also things (a post, a commit, an order): as the
/// word right after a reading verb, the thing read.
const NOUN_VERBS: &[&str] = &[
    "post", "commit", "order", "comment", "link", "stage", "book", "mark", "reply", "archive",
    "patch", "run", "import", "transfer", "charge", "lock", "switch", "deploy", "merge", "push",
    "trigger",
];

/// Reading verbs that also name a change: resolving a blocker, opening an
/// issue, summarising (and so compacting) a history, checking an item off,
/// parsing files again into an index.
const AMBIGUOUS_READ_VERBS: &[&str] = &[
    "parse",
    "resolve",
    "summarize",
    "summarise",
    "open",
    "check",
    "test",
    "match",
    "validate",
    "verify",
];

/// Words that name a change in a description though no tool is named by
/// them (`reduce context size`, `reopen`, `a new issue`).
const CHANGE_WORDS: &[&str] = &["reduce", "compact", "reopen", "new"];

/// What resolving settles, as a name's or a first sentence's word: a
/// `resolve` over one of these changes the record.
const PROBLEMS: &[&str] = &[
    "conflict",
    "duplicate",
    "blocker",
    "issue",
    "incident",
    "dispute",
    "alert",
    "ticket",
    "bug",
    "problem",
    "thread",
];

/// The word in which a description's first sentence names a change, if
/// it does: a writing verb, a word of [`CHANGE_WORDS`], or a verb done
/// again with a hyphen (`Re-parse a project's markdown into the index`:
/// md-todo-hub 0.3.2's `parse_todos` rewrote its index in a walk that only
/// reads).
fn names_change(description: &str) -> Option<String> {
    static AGAIN: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"(?i)\b(re-[a-z]{3,})").expect("the re- pattern compiles")
    });
    let words = first_sentence(description);
    if let Some(w) = words
        .iter()
        .find_map(|w| writing_verb(w).or_else(|| is_verb(w, CHANGE_WORDS)))
    {
        return Some(w.to_owned());
    }
    let end = first_sentence_end(description);
    AGAIN.captures(&description[..end]).map(|c| c[1].to_owned())
}

/// Where a description's first sentence goes on to a change, `and` or
/// `then` with a writing verb and its object ("Find recurring patterns …
/// and write a promotion proposal to _consolidations/": mnemosyne-lite
/// 0.6.0's `memory_distill` wrote its vault in a walk that only reads;
/// "Search and replace the text"). The object makes it an act: "open and
/// close prices", "start and stop times" name no change.
fn chains_change(description: &str) -> Option<String> {
    const JOINS: &[&str] = &["and", "then"];
    const OBJECTS: &[&str] = &[
        "a", "an", "the", "it", "them", "its", "their", "this", "that", "these", "those", "to",
        "into", "each", "every", "all", "any", "one", "new",
    ];
    first_sentence(description).windows(3).find_map(|w| {
        (JOINS.contains(&w[0].as_str())
            && writing_verb(&w[1]).is_some()
            && OBJECTS.contains(&w[2].as_str()))
        .then(|| w.join(" "))
    })
}

/// The words of a description's first sentence (to the first full stop
/// followed by a space or the end, 40 words at most).
fn first_sentence(description: &str) -> Vec<String> {
    words(&description[..first_sentence_end(description)])
        .into_iter()
        .take(40)
        .collect()
}

/// Where a description's first sentence ends (a byte index).
fn first_sentence_end(description: &str) -> usize {
    description
        .find(". ")
        .or_else(|| description.find(".\n"))
        .unwrap_or(description.len())
}

/// Writing verbs of a tool that runs what it is given: what it runs
/// decides, and its description may say it only reads.
const RUNNING_VERBS: &[&str] = &["execute", "exec", "run"];

/// The words in which a description says its tool only reads
/// (`read-only`, `readonly`, `only SELECT`), if it does.
fn says_read_only(description: &str) -> Option<String> {
    static READ_ONLY: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(read[- ]?only|only (?:a |one )?select\b|select[- ]only|only read(?:s|ing)?\b)",
        )
        .expect("the read-only pattern compiles")
    });
    let head: String = description.chars().take(600).collect();
    READ_ONLY.captures(&head).map(|c| c[1].to_owned())
}

/// Writing verbs that only add state (a new record, an observation), never
/// change or remove what is there.
pub const ADDING_VERBS: &[&str] = &["create", "insert", "add"];

/// Does this tool, by its name, only add state: every writing verb in its
/// name is an adding one (`create_entities`, `add_observations`, never
/// `delete_entities` or `create_or_replace`)? Never when it declares
/// `destructiveHint: true`.
pub fn only_adds(tool: &Tool) -> bool {
    if tool.annotations.as_ref().and_then(|a| a.destructive_hint) == Some(true) {
        return false;
    }
    let verbs: Vec<&str> = words(&tool.name)
        .iter()
        .filter_map(|w| is_verb(w, WRITE_VERBS))
        .collect();
    !verbs.is_empty() && verbs.iter().all(|v| ADDING_VERBS.contains(v))
}

/// SQL that changes data or a database's shape, anywhere in a text (a
/// `WITH ... DELETE FROM` too).
static SQL_WRITE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r#"(?is)\b(?:insert\s+(?:or\s+\w+\s+)?into|replace\s+into|merge\s+into|delete\s+from|update\s+[\w."`\[\]]+\s+set|(?:drop|alter|truncate)\s+(?:table|index|view|trigger|database|schema|column|user|role)|create\s+(?:or\s+replace\s+)?(?:temp(?:orary)?\s+)?(?:table|index|unique|view|trigger|database|schema|virtual|user|role)|attach\s+(?:database\s+)?['"]|detach\s+database|pragma\s+[\w.]+\s*=|grant\s+\w+(?:\s*,\s*\w+)*\s+on|revoke\s+\w+(?:\s*,\s*\w+)*\s+on\b)"#,
    )
    .expect("the SQL pattern compiles")
});

/// The SQL commands a statement may start with and still only read.
const SQL_READS: &[&str] = &[
    "select", "with", "show", "describe", "desc", "explain", "values", "table", "pragma",
];

/// SQL commands that change data, the database or the session, or run
/// code: a statement that starts with one writes.
const SQL_COMMANDS: &[&str] = &[
    "insert",
    "update",
    "delete",
    "merge",
    "replace",
    "upsert",
    "create",
    "drop",
    "alter",
    "truncate",
    "rename",
    "grant",
    "revoke",
    "copy",
    "call",
    "do",
    "vacuum",
    "analyze",
    "analyse",
    "reindex",
    "cluster",
    "refresh",
    "comment",
    "lock",
    "set",
    "reset",
    "begin",
    "start",
    "commit",
    "rollback",
    "savepoint",
    "release",
    "prepare",
    "execute",
    "exec",
    "deallocate",
    "declare",
    "listen",
    "notify",
    "unlisten",
    "load",
    "install",
    "attach",
    "detach",
    "export",
    "import",
    "checkpoint",
    "discard",
    "use",
    "reassign",
    "optimize",
    "flush",
    "kill",
    "purge",
    "security",
    "handler",
];

/// What a reading statement may still do to the database: `SELECT ..
/// INTO` makes a table; these functions move sequences, end sessions,
/// write files or take locks.
static SQL_EFFECTS: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)\binto\b|\b(?:nextval|setval|pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile|pg_switch_wal|pg_promote|pg_create_restore_point|pg_file_write|pg_advisory\w*|pg_try_advisory\w*|lo_import|lo_export|lo_unlink|lo_create|dblink\w*|set_config|load_extension|writefile|edit|sleep|pg_sleep|benchmark)\s*\(",
    )
    .expect("the SQL effects pattern compiles")
});

/// Does this statement text change anything? A text whose statements
/// (split on `;`) each start with a command: it writes unless every one
/// starts with a reading command (`SELECT`, `WITH`, `SHOW`, …) and none
/// makes a table or calls a function with an effect. Any other text
/// writes where it carries a writing statement anywhere.
fn statement_writes(text: &str) -> bool {
    if SQL_WRITE.is_match(text) {
        return true;
    }
    // Statements split by `;` are statements, whatever their words.
    let several = text.trim_end().trim_end_matches(';').contains(';');
    text.split(';').any(|piece| {
        let first = words(piece.trim_start())
            .into_iter()
            .next()
            .unwrap_or_default();
        if SQL_READS.contains(&first.as_str()) {
            SQL_EFFECTS.is_match(piece)
        } else {
            SQL_COMMANDS.contains(&first.as_str()) && (several || reads_as_sql(piece))
        }
    })
}

/// Is this text, starting with a SQL command word, a statement rather
/// than words (`VACUUM`, `COPY t TO '/tmp/x'`, `SET search_path = x`,
/// never `set theory` or `start here`)? One word alone, or a word of SQL's
/// grammar or its punctuation after the command.
fn reads_as_sql(piece: &str) -> bool {
    const GRAMMAR: &[&str] = &[
        "table",
        "from",
        "into",
        "to",
        "on",
        "database",
        "schema",
        "index",
        "view",
        "user",
        "role",
        "values",
        "where",
        "extension",
        "transaction",
        "work",
        "session",
        "all",
        "verbose",
        "full",
        "function",
        "procedure",
        "sequence",
        "materialized",
        "column",
        "trigger",
        "if",
        "exists",
        "or",
        "by",
        "in",
        "as",
        "local",
        "global",
    ];
    let rest: Vec<String> = words(piece).into_iter().skip(1).collect();
    rest.is_empty()
        || rest.iter().any(|w| GRAMMAR.contains(&w.as_str()))
        || piece.contains(['=', '(', '\'', '"'])
}

/// Does a call with these arguments change the server's state whatever
/// the tool: is any string in them a statement that writes
/// ([`statement_writes`])?
pub fn writes_by_arguments(args: &Value) -> bool {
    match args {
        Value::String(s) => statement_writes(s),
        Value::Array(items) => items.iter().any(writes_by_arguments),
        Value::Object(map) => map.values().any(writes_by_arguments),
        _ => false,
    }
}

/// May a call of this tool change the server's state? `readOnlyHint`
/// where declared, else `destructiveHint: true`, else [`infer`].
pub fn may_write(tool: &Tool) -> bool {
    let annotations = tool.annotations.as_ref();
    match annotations.and_then(|a| a.read_only_hint) {
        Some(read_only) => !read_only,
        None if annotations.and_then(|a| a.destructive_hint) == Some(true) => true,
        None => infer(tool).0,
    }
}

/// The tools of a run that may write: by [`may_write`], and every tool
/// `judged` writing (a judge's label only adds).
pub fn writers(tools: &[Tool], judged: &dyn Fn(&str) -> bool) -> BTreeSet<String> {
    tools
        .iter()
        .filter(|t| may_write(t) || judged(t.name.as_ref()))
        .map(|t| t.name.to_string())
        .collect()
}

/// What a run may do to the server, and to the tools that may write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub mode: AccessMode,
    /// The tools that may write (see [`writers`]).
    pub writers: BTreeSet<String>,
}

impl Access {
    /// A read-only run over `tools` by the rule alone (no judge yet).
    pub fn read_only(tools: &[Tool]) -> Access {
        Access {
            mode: AccessMode::ReadOnly,
            writers: writers(tools, &|_| false),
        }
    }

    /// Is a call of `tool` withheld from the server in this mode?
    pub fn blocks(&self, tool: &str) -> bool {
        self.mode == AccessMode::ReadOnly && self.writers.contains(tool)
    }

    /// Is this call withheld from the server in this mode: a call of a
    /// tool that may write, or a call whose arguments write
    /// ([`writes_by_arguments`])?
    pub fn blocks_call(&self, tool: &str, args: &Value) -> bool {
        self.blocks(tool) || (self.mode == AccessMode::ReadOnly && writes_by_arguments(args))
    }

    /// Does a call of `tool` write?
    pub fn writes(&self, tool: &str) -> bool {
        self.writers.contains(tool)
    }
}

/// What a run or a suite says before it starts: its mode and the tools it
/// will never call.
pub fn announcement(
    mode: AccessMode,
    writers: &BTreeSet<String>,
    restore: Option<RestoreKind>,
) -> String {
    let restore = match restore {
        Some(RestoreKind::Copy) => {
            "the server runs over copies, put back before every trial that follows a write"
        }
        Some(RestoreKind::Reset) => {
            "--reset runs before generation, before every trial and after the run; generation writes nothing"
        }
        Some(RestoreKind::None) | None => {
            "nothing puts the state back: trials that write are counted apart"
        }
    };
    let named = |max: usize| {
        let mut names: Vec<&str> = writers.iter().map(String::as_str).take(max).collect();
        if writers.len() > max {
            names.push("…");
        }
        names.join(", ")
    };
    match (mode, writers.len()) {
        (AccessMode::ReadOnly, 0) => {
            "read-only: no listed tool may write, so every tool may be called".to_owned()
        }
        (AccessMode::ReadOnly, n) => format!(
            "read-only: never calls the {n} tool(s) that may write ({}); --sandbox allows them",
            named(12)
        ),
        (AccessMode::Sandbox, 0) => format!("sandbox ({restore}): no listed tool may write"),
        (AccessMode::Sandbox, n) => format!(
            "sandbox ({restore}): may call the {n} tool(s) that may write ({}), and lists every write on the record",
            named(12)
        ),
    }
}

/// What the agent is told when the harness withholds a call for a
/// statement in its arguments that changes data.
pub fn blocked_statement_message(tool: &str) -> String {
    format!(
        "blocked by the measurement harness: this call of `{tool}` carries a statement that changes data (INSERT, UPDATE, DELETE, DROP, ...), and this run is read-only (no --sandbox); the call was not sent to the server"
    )
}

/// What the agent is told when the harness withholds a call.
pub fn blocked_message(tool: &str) -> String {
    format!(
        "blocked by the measurement harness: `{tool}` may change the server's state, and this run is read-only (no --sandbox); the call was not sent to the server"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_sql_statement_that_writes_makes_the_call_write() {
        use serde_json::json;
        for sql in [
            "DELETE FROM orders",
            "update orders set status = 'x' where id = 1",
            "INSERT INTO orders VALUES (5, 'a')",
            "insert or replace into orders values (1)",
            "WITH gone AS (SELECT 1) DELETE FROM orders",
            "SELECT 1; DROP TABLE orders",
            "create table t (x)",
            "ALTER TABLE orders ADD COLUMN y",
            "PRAGMA journal_mode = WAL",
            "ATTACH DATABASE '/tmp/x.db' AS x",
        ] {
            assert!(writes_by_arguments(&json!({"sql": sql})), "{sql}");
        }
        assert!(writes_by_arguments(
            &json!({"queries": [{"q": "SELECT 1"}, {"q": "delete from t"}]})
        ));
        for read in [
            "SELECT * FROM orders",
            "SELECT customer FROM orders WHERE status = 'shipped'",
            "PRAGMA table_info(orders)",
            "update the notes",
            "create a list of my orders",
            "delete_entities",
            "2+3",
        ] {
            assert!(!writes_by_arguments(&json!({"a": read})), "{read}");
        }
        let tools = [tool("query", "Execute a raw SQL query")];
        let access = Access::read_only(&tools);
        assert!(!access.blocks("query"), "by its name, `query` reads");
        assert!(access.blocks_call("query", &json!({"sql": "DELETE FROM orders"})));
        assert!(!access.blocks_call("query", &json!({"sql": "SELECT * FROM orders"})));
    }

    fn tool(name: &str, description: &str) -> Tool {
        let serde_json::Value::Object(map) =
            serde_json::json!({"type": "object", "properties": {}})
        else {
            unreachable!()
        };
        Tool::new(name.to_owned(), description.to_owned(), Arc::new(map))
    }

    fn annotated(name: &str, annotations: serde_json::Value) -> Tool {
        let mut t = tool(name, "");
        t.annotations = serde_json::from_value(annotations).ok();
        t
    }

    #[test]
    fn a_tool_only_adds_when_every_writing_verb_of_its_name_adds() {
        assert!(only_adds(&tool("create_entities", "")));
        assert!(only_adds(&tool("addObservations", "")));
        assert!(!only_adds(&tool("delete_entities", "")));
        assert!(!only_adds(&tool("create_or_update", "")));
        assert!(!only_adds(&tool("read_graph", "")));
        assert!(!only_adds(&annotated(
            "create_table",
            serde_json::json!({"destructiveHint": true})
        )));
    }

    #[test]
    fn the_declaration_decides_where_there_is_one() {
        assert!(!may_write(&annotated(
            "delete_everything",
            serde_json::json!({"readOnlyHint": true})
        )));
        assert!(may_write(&annotated(
            "get_thing",
            serde_json::json!({"readOnlyHint": false})
        )));
        assert!(may_write(&annotated(
            "create_document",
            serde_json::json!({"destructiveHint": true})
        )));
        // destructiveHint: false says nothing about writing (an additive
        // writer): the name decides.
        assert!(may_write(&annotated(
            "create_directory",
            serde_json::json!({"destructiveHint": false})
        )));
    }

    #[test]
    fn the_description_s_first_verb_decides() {
        // mcp-server-git's descriptions, tools without annotations.
        assert!(!may_write(&tool("git_log", "Shows the commit logs")));
        assert!(!may_write(&tool(
            "git_status",
            "Shows the working tree status"
        )));
        assert!(may_write(&tool("git_checkout", "Switches branches")));
        assert!(may_write(&tool(
            "git_commit",
            "Records changes to the repository"
        )));
        assert!(!may_write(&tool(
            "git_diff_staged",
            "Shows changes that are staged for commit"
        )));
        assert!(may_write(&tool(
            "mark_task_done",
            "Mark a given task as done"
        )));
        assert!(!may_write(&tool("math", "Evaluate math expressions")));
        assert!(may_write(&tool(
            "format_text",
            "Format a specific range of text within a paragraph."
        )));
        assert!(may_write(&tool("frobnicate", "")), "unknown means writes");
        // What a tool returns, said in the third person or named by a noun.
        assert!(!may_write(&tool(
            "duplicate_finder",
            "Reports duplicate rows in the dataset."
        )));
        assert!(!may_write(&tool(
            "detect_outliers",
            "Detects Outliers in the dataset."
        )));
        assert!(!may_write(&tool(
            "graph_summary",
            "현재 위키 그래프의 전체 요약 통계를 반환한다."
        )));
        assert!(!may_write(&tool("db_stats", "")));
        assert!(may_write(&tool(
            "report_issue",
            "Report an issue to the maintainers"
        )));
        assert!(may_write(&tool("update_summary", "")));
        assert!(may_write(&tool("bump_version", "")));
        assert!(may_write(&tool("rebuild_stats", "")));
        assert!(may_write(&tool(
            "project_summary",
            "Summary of the project, saved to the wiki"
        )));
        assert!(may_write(&tool(
            "give_access",
            "Give a user access to a project"
        )));
        // A writing verb that is also a thing, right after a reading verb.
        assert!(!may_write(&tool("get_post", "")));
        assert!(!may_write(&tool("analyze_commit", "")));
        assert!(!may_write(&tool("trace_call_path", "")));
        assert!(!may_write(&tool("get_sync_status", "")));
        assert!(!may_write(&tool("show_deploy_history", "")));
        assert!(may_write(&tool("get_and_delete_log", "")));
        assert!(may_write(&tool("get_and_post", "")));
        assert!(may_write(&tool("find_replace", "")));
        // A writing verb as the inflected object of a reading one is a noun.
        assert!(!may_write(&tool("get_orders", "")));
        assert!(!may_write(&tool("get_all_comments", "")));
        assert!(may_write(&tool("get_or_create_user", "")));
        assert!(may_write(&tool("search_and_replace", "")));
    }

    #[test]
    fn a_reading_verb_that_may_change_state_reads_only_where_its_description_names_no_change() {
        // @stevestomp/ohno-mcp 0.20.0's tools, no annotations: both wrote
        // the operator's tasks in a read-only walk.
        assert!(may_write(&tool(
            "resolve_blocker",
            "Resolve a blocker and set task to in_progress"
        )));
        assert!(may_write(&tool(
            "summarize_task_activity",
            "Summarize task activity history to reduce context size"
        )));
        assert!(may_write(&tool(
            "open_issue",
            "Open a new issue in the tracker"
        )));
        // The same verbs where the words name no change still read.
        assert!(!may_write(&tool(
            "resolve_library_id",
            "Resolves a package name to a library ID. Use it before you fetch docs."
        )));
        assert!(!may_write(&tool(
            "summarize_file",
            "Summarize a file's contents in a few lines"
        )));
        assert!(!may_write(&tool(
            "open_file",
            "Opens a file and returns its text"
        )));
        // An unambiguous reading verb is not second-guessed.
        assert!(!may_write(&tool(
            "get_status",
            "Get the status of a new job"
        )));
    }

    #[test]
    fn a_description_that_goes_on_to_a_change_writes() {
        assert!(may_write(&tool(
            "memory_distill",
            "Find recurring patterns (cases/tags ingested >= min_repeat times within\n    window_days) and write a promotion proposal to _consolidations/."
        )));
        assert!(may_write(&tool(
            "tidy_notes",
            "Finds notes without a title, then renames them after their first line."
        )));
        assert!(may_write(&tool(
            "search_text",
            "Search files for a pattern and replace it with the given text."
        )));
        // Joined words that name no act: what is read.
        assert!(!may_write(&tool(
            "get_quotes",
            "Get open and close prices for a ticker."
        )));
        assert!(!may_write(&tool(
            "list_shifts",
            "Lists shifts with their start and stop times."
        )));
        assert!(!may_write(&tool(
            "git_log",
            "Shows the commit logs and commit messages"
        )));
    }

    #[test]
    fn a_writing_verb_done_again_or_undone_writes() {
        // ai-todo 3.0.2's `reorder` rewrote TODO.md in a walk that only read.
        for name in [
            "reorder",
            "rewrite_file",
            "unarchive_task",
            "unset_flag",
            "rerun_job",
        ] {
            assert!(may_write(&tool(name, "")), "{name}");
        }
        assert!(may_write(&tool("tidy", "Reorders the tasks by priority")));
        // `re` and `un` before no writing verb are no such verb.
        for name in [
            "read_notes",
            "review_summary",
            "report_stats",
            "get_unit_rates",
        ] {
            assert!(!may_write(&tool(name, "")), "{name}");
        }
        // As the inflected object of a reading verb, still a noun.
        assert!(!may_write(&tool("get_reorders", "")));
    }

    #[test]
    fn resolving_a_problem_or_parsing_again_writes() {
        // ai-todo 3.0.2's `resolve_conflicts` renumbered the tasks.
        assert!(may_write(&tool(
            "resolve_conflicts",
            "Detect and resolve duplicate task IDs"
        )));
        // md-todo-hub 0.3.2's `parse_todos` rewrote its index.
        assert!(may_write(&tool(
            "parse_todos",
            "Re-parse a project's markdown into the index. Returns the count."
        )));
        assert!(!may_write(&tool(
            "parse_date",
            "Parse a date in any format and return it as ISO 8601"
        )));
        assert!(!may_write(&tool(
            "resolve_path",
            "Resolve a relative path against the project root"
        )));
    }

    #[test]
    fn a_tool_that_runs_the_sql_it_is_given_writes_by_its_statement() {
        use serde_json::json;
        // mcp-alchemy 2026.10.15: no annotations, `query` and `params`.
        let mut t = tool("execute_query", "Execute a SQL query and return results");
        t.input_schema = Arc::new(
            serde_json::from_value(json!({"type": "object",
                "properties": {"query": {"type": "string"}, "params": {"type": "object"}},
                "required": ["query"]}))
            .unwrap(),
        );
        assert!(!may_write(&t));
        let access = Access::read_only(std::slice::from_ref(&t));
        for read in [
            "SELECT name FROM pets WHERE species = 'cat'",
            "WITH x AS (SELECT 1) SELECT * FROM x",
            "SHOW TABLES",
            "select count(*) from visits; select 1",
        ] {
            assert!(
                !access.blocks_call("execute_query", &json!({"query": read})),
                "{read}"
            );
        }
        for write in [
            "DELETE FROM pets",
            "SELECT * INTO pets_copy FROM pets",
            "SELECT nextval('pets_id_seq')",
            "SELECT pg_terminate_backend(42)",
            "VACUUM",
            "COPY pets TO '/tmp/pets.csv'",
            "SET search_path = other",
            "CALL archive_pets()",
            "SELECT 1; ANALYZE pets",
            "LOAD 'httpfs'",
        ] {
            assert!(
                access.blocks_call("execute_query", &json!({"query": write})),
                "{write}"
            );
        }
        // Words that start like a command are no statement.
        assert!(!writes_by_arguments(&json!({"q": "set theory"})));
        assert!(!writes_by_arguments(&json!({"q": "start here"})));
        // A runner that does not say SQL stays a writer (a Cypher or shell
        // runner's statements are not read here).
        let mut cypher = tool("run_query", "Run a Cypher query against the graph");
        cypher.input_schema = t.input_schema.clone();
        assert!(may_write(&cypher));
    }

    #[test]
    fn a_tool_that_runs_what_it_is_given_reads_where_it_says_it_only_reads() {
        // sqlite-mcp-server 0.1.7, no annotations.
        assert!(!may_write(&tool(
            "execute_query",
            "Execute a SELECT query on a database. Strictly enforced as READ-ONLY."
        )));
        assert!(!may_write(&tool(
            "run_sql",
            "Run a read-only SQL statement"
        )));
        assert!(may_write(&tool("execute_query", "Execute a SQL query")));
        // Only a runner's name: a tool named for a change stays a writer.
        assert!(may_write(&tool(
            "delete_rows",
            "Delete rows. The table itself stays read-only."
        )));
    }

    #[test]
    fn a_judge_only_adds() {
        let tools = [tool("get_weather", ""), tool("delete_city", "")];
        let none = writers(&tools, &|_| false);
        assert_eq!(none, BTreeSet::from(["delete_city".to_owned()]));
        let judged = writers(&tools, &|n| n == "get_weather");
        assert_eq!(judged.len(), 2);
    }

    #[test]
    fn read_only_blocks_writers_and_a_sandbox_blocks_nothing() {
        let tools = [tool("get_weather", ""), tool("delete_city", "")];
        let mut access = Access::read_only(&tools);
        assert!(access.blocks("delete_city"));
        assert!(!access.blocks("get_weather"));
        access.mode = AccessMode::Sandbox;
        assert!(!access.blocks("delete_city"));
        assert!(access.writes("delete_city"));
    }

    #[test]
    fn a_tool_with_a_place_for_its_output_writes_whatever_its_verb() {
        let tool = |name: &str, description: &str, props: serde_json::Value| {
            let schema = serde_json::json!({"type": "object", "properties": props});
            Tool::new(
                name.to_owned(),
                description.to_owned(),
                std::sync::Arc::new(schema.as_object().cloned().unwrap_or_default()),
            )
        };
        // excel-mcp-polars 0.1.3: "convert" reads, `output_path` writes.
        let to_pandas = tool(
            "to_pandas",
            "Convert a sheet to a pandas-compatible Parquet file.",
            serde_json::json!({"file_path": {"type": "string"}, "output_path": {"type": "string"}}),
        );
        let (writes, why) = infer(&to_pandas);
        assert!(writes, "{why}");
        assert!(why.contains("output_path"), "{why}");
        for p in ["save_to", "dest_dir", "destination", "export_file"] {
            let t = tool(
                "get_report",
                "Get the report.",
                serde_json::json!({p: {"type": "string"}}),
            );
            assert!(infer(&t).0, "{p}");
        }
        // An output format or a target time zone is no place.
        for p in ["output_format", "target_timezone", "file_path", "out"] {
            let t = tool(
                "get_report",
                "Get the report.",
                serde_json::json!({p: {"type": "string"}}),
            );
            assert!(!infer(&t).0, "{p}");
        }
    }
}
