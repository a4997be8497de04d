//! State witnesses: how a read-only walk knows what it made. A tool that
//! reads by its name can still write: `@executeautomation/database-server`'s
//! `list_insights` creates a table on its first call, and a walk that then
//! described that table had a task about state it created itself.
//!
//! The witnesses are the read tools that take no argument and answer the
//! same twice in a row (a listing; never a clock), called before anything
//! else, the catalogue first (the listing whose name other tools' arguments
//! share: `list_tables` before `list_insights` where `describe_table` takes
//! a `table_name`). After the first call of every other tool, and once more
//! at the end, they are called again: a change is state the walk created,
//! its new words are [`Witnesses::created`], and the tool whose first call
//! preceded it is named in the walk's counts.
//!
//! The operator's places on disk ([`crate::watch`]) are watched the same
//! way, whatever the witnesses: a file written there after a tool's first
//! call names the tool, and the file is named on the walk's line (a server
//! that keeps a cache or an index in the project it reads).

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use rmcp::model::Tool;
use serde_json::{Map, Value};

use crate::mcp::connect::Session;
use crate::suite::generators::walk::{Called, WalkStats, call};
use crate::suite::reading::{reads_as_empty, reads_as_error};
use crate::watch::{Snapshot, Watched};

/// Witnesses at most.
const MAX_WITNESSES: usize = 3;

pub(super) struct Witnesses {
    /// Each witness and what it said last.
    seen: Vec<(String, String)>,
    /// Every word the witnesses said before the walk.
    before: BTreeSet<String>,
    /// Tools whose first call has been followed by a check.
    checked_after: HashSet<String>,
    /// Words a witness said only after the walk began.
    pub(super) created: BTreeSet<String>,
    timeout: Duration,
    /// The operator's places, and how they looked at the last check.
    disk: Option<(Watched, Snapshot)>,
}

impl Witnesses {
    /// Call the witnesses for the first time: each twice (a tool that
    /// answers differently at once is no witness), the ones already taken
    /// again after each new one.
    pub(super) async fn open(
        session: &Session,
        callable: &[&Tool],
        writers: &BTreeSet<String>,
        timeout: Duration,
        watched: &Watched,
        stats: &mut WalkStats,
    ) -> Witnesses {
        let disk = (!watched.places.is_empty()).then(|| (watched.clone(), watched.snapshot()));
        let mut w = Witnesses {
            seen: Vec::new(),
            before: BTreeSet::new(),
            checked_after: HashSet::new(),
            created: BTreeSet::new(),
            timeout,
            disk,
        };
        for tool in candidates(callable, writers) {
            if w.seen.len() >= MAX_WITNESSES {
                break;
            }
            let name = tool.name.to_string();
            w.checked_after.insert(name.clone());
            let first = w.ask(session, &name, stats).await;
            let again = w.ask(session, &name, stats).await;
            // Whatever it answered, its call may have changed the state.
            w.recheck(session, Some(&name), stats).await;
            // An answer that reads as an error or as nothing witnesses no
            // state (a tool that needs an argument its schema calls
            // optional answers the same error every time).
            let Some(first) = first.filter(|f| {
                again.as_deref() == Some(f.as_str()) && !reads_as_error(f) && !reads_as_empty(f)
            }) else {
                continue;
            };
            w.before.extend(words(&first));
            w.seen.push((name, first));
        }
        w
    }

    /// Is anything watched: a witness listing, or the operator's places?
    pub(super) fn watches(&self) -> bool {
        !self.seen.is_empty() || self.disk.is_some()
    }

    /// After the first call of `tool`: are the witnesses still saying what
    /// they said?
    pub(super) async fn after(&mut self, session: &Session, tool: &str, stats: &mut WalkStats) {
        if (self.seen.is_empty() && self.disk.is_none())
            || !self.checked_after.insert(tool.to_owned())
        {
            return;
        }
        self.recheck(session, Some(tool), stats).await;
    }

    /// After a setup step the walk made in a read-only run: the files it
    /// changed in the operator's places (by name), and the witnesses'
    /// answers now taken as the state the walk starts from (the step's own
    /// registry, a `list_projects`, names what it registered: no state
    /// the walk created).
    pub(super) async fn settle(&mut self, session: &Session, stats: &mut WalkStats) -> Vec<String> {
        for i in 0..self.seen.len() {
            let name = self.seen[i].0.clone();
            if let Some(now) = self.ask(session, &name, stats).await {
                self.before.extend(words(&now));
                self.seen[i].1 = now;
            }
        }
        let Some((watched, last)) = self.disk.as_mut() else {
            return Vec::new();
        };
        let now = watched.snapshot();
        let changes = watched.changes(last, &now);
        *last = now;
        let mut files = changes.named;
        if changes.counted > 0 {
            files.push(format!(
                "{} file(s) under a place given with --env",
                changes.counted
            ));
        }
        files
    }

    /// The last check, when the walk is over.
    pub(super) async fn close(&mut self, session: &Session, stats: &mut WalkStats) {
        self.recheck(session, None, stats).await;
    }

    async fn recheck(&mut self, session: &Session, by: Option<&str>, stats: &mut WalkStats) {
        let mut changed = false;
        for i in 0..self.seen.len() {
            let name = self.seen[i].0.clone();
            let Some(now) = self.ask(session, &name, stats).await else {
                continue;
            };
            if now != self.seen[i].1 {
                changed = true;
                for word in words(&now) {
                    if !self.before.contains(&word) {
                        self.created.insert(word);
                    }
                }
                self.seen[i].1 = now;
            }
        }
        if let Some((watched, last)) = self.disk.as_mut() {
            let now = watched.snapshot();
            let changes = watched.changes(last, &now);
            if !changes.is_empty() {
                changed = true;
                for f in changes.named {
                    if !stats.files_written.contains(&f) {
                        stats.files_written.push(f);
                    }
                }
                stats.files_written_unnamed += changes.counted;
            }
            *last = now;
        }
        if changed {
            let by = by.unwrap_or("(a later call)").to_owned();
            if !stats.changed_state.contains(&by) {
                stats.changed_state.push(by);
            }
        }
    }

    async fn ask(&self, session: &Session, tool: &str, stats: &mut WalkStats) -> Option<String> {
        stats.state_checks += 1;
        match call(session, tool, &Map::new(), self.timeout).await {
            Called::Text(t) => Some(t),
            _ => None,
        }
    }
}

/// Does `value` (an argument or an answer) name state the walk created
/// (a word in `created`)?
pub(super) fn names_created(created: &BTreeSet<String>, value: &Value) -> bool {
    match value {
        Value::String(s) => words(s).iter().any(|w| created.contains(w)),
        Value::Array(a) => a.iter().any(|v| names_created(created, v)),
        Value::Object(o) => o.values().any(|v| names_created(created, v)),
        _ => false,
    }
}

/// The read tools that take no argument, the catalogue first: those whose
/// name shares a word with other tools' arguments, then by name.
fn candidates<'t>(callable: &[&'t Tool], writers: &BTreeSet<String>) -> Vec<&'t Tool> {
    let arguments: Vec<String> = callable
        .iter()
        .flat_map(|t| {
            t.input_schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.keys().flat_map(|k| crate::access::words(k)))
                .collect::<Vec<_>>()
        })
        .map(|w| singular(&w))
        .collect();
    let mut found: Vec<(usize, &Tool)> = callable
        .iter()
        .copied()
        .filter(|t| !writers.contains(t.name.as_ref()) && takes_nothing(t))
        .map(|t| {
            let shared = crate::access::words(&t.name)
                .iter()
                .map(|w| singular(w))
                .filter(|w| w.len() > 2 && arguments.contains(w))
                .count();
            (shared, t)
        })
        .collect();
    found.sort_by(|(a, x), (b, y)| b.cmp(a).then_with(|| x.name.cmp(&y.name)));
    found.into_iter().map(|(_, t)| t).collect()
}

fn takes_nothing(tool: &Tool) -> bool {
    tool.input_schema
        .get("required")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
}

fn singular(word: &str) -> String {
    word.strip_suffix('s')
        .filter(|w| w.len() > 2)
        .unwrap_or(word)
        .to_owned()
}

/// The words of a text that can name something: runs of letters, digits
/// and `_-./:@` holding a letter.
pub(super) fn words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_alphanumeric() || "_-./:@".contains(c)))
        .map(|w| w.trim_matches(|c: char| ".:-".contains(c)))
        .filter(|w| w.len() > 1 && w.chars().any(char::is_alphabetic))
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::Tool;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_owned(),
            "",
            Arc::new(schema.as_object().cloned().unwrap_or_default()),
        )
    }

    #[test]
    fn the_catalogue_is_witnessed_first() {
        let tools = [
            tool("list_insights", json!({"type":"object"})),
            tool("list_tables", json!({"type":"object"})),
            tool(
                "describe_table",
                json!({"type":"object","properties":{"table_name":{"type":"string"}},"required":["table_name"]}),
            ),
            tool("drop_table", json!({"type":"object"})),
        ];
        let callable: Vec<&Tool> = tools.iter().collect();
        let writers = BTreeSet::from(["drop_table".to_owned()]);
        let names: Vec<String> = candidates(&callable, &writers)
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert_eq!(names, ["list_tables", "list_insights"]);
    }

    #[test]
    fn words_are_names_not_numbers() {
        let w = words("[{\"name\": \"mcp_insights\"}, {\"name\": \"orders\"}] 2 tables.");
        assert!(w.contains("mcp_insights") && w.contains("orders") && w.contains("tables"));
        assert!(!w.contains("2"));
    }
}
