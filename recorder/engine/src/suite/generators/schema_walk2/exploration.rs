//! What an exploration found: each successful call ([`Observation`]),
//! the handles harvested, the state the walk created, what the server said
//! about itself, and how a call's result becomes handles.

use std::collections::BTreeSet;

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::fit::documented_examples;
use super::text::{Handle, harvest};
use crate::suite::task::Origin;

/// One successful call.
#[derive(Debug, Clone)]
pub struct Observation {
    pub index: usize,
    pub tool: String,
    pub args: Map<String, Value>,
    /// What an agent reads from the result.
    pub text: String,
    /// The structured content, else the first JSON value of the text.
    pub json: Option<Value>,
    /// Arguments filled with a harvested handle: (argument, handle index).
    pub inputs: Vec<(String, usize)>,
    /// The tool is not declared read-only: its calls may change state.
    pub writes: bool,
    /// Where the call came from, when not the walk's own guess: the
    /// operator's seed calls, a discovery move, or a value either gave.
    pub origin: Option<Origin>,
    /// Its result gives handles but no task (a catalogue, a broad search:
    /// its own request is no goal a user states).
    pub handles_only: bool,
    /// What its records are, where a discovery move knows (a table's
    /// name): a task names the record by it.
    pub record: Option<String>,
    /// A broad discovery call (a search given `.` or `%`, a table's first
    /// rows): it returns everything, so a task from it names a record of its result, never
    /// its arguments ("for query `.`" is no goal a user states).
    pub broad: bool,
}

impl Observation {
    /// Is `p` another call of this tool that a task must be told apart
    /// from? A discovery call (a search for everything, a catalogue)
    /// returns every value and tells nothing apart: its answers never make
    /// another call's answer a constant.
    pub fn told_apart_from(&self, p: &Observation) -> bool {
        p.tool == self.tool && p.index != self.index && !p.handles_only && !p.broad
    }
}

/// Everything the exploration found.
#[derive(Debug, Default)]
pub struct Exploration {
    pub observations: Vec<Observation>,
    pub handles: Vec<Handle>,
    /// Words the state witnesses said only after the walk began: state
    /// the walk created ([`super::witness`]).
    pub created: BTreeSet<String>,
    /// What the server says about itself and what discovery found (its
    /// tables and columns), as a judge is shown it.
    pub about: String,
    /// Handles only a discovery move found (a resource's values, a table,
    /// a `file://` URI): a call made with one is discovered.
    pub discovered: BTreeSet<usize>,
    /// Tools some call of which failed: what they answer depends on what
    /// they are given.
    pub failed_tools: BTreeSet<String>,
    /// What the server holds, as discovery read it whole: the composer's
    /// model.
    pub holdings: crate::suite::holdings::Holdings,
}

/// The key of a handle that is one of the operator's files.
pub(super) const OPERATOR_FILE: &str = "file";

impl Exploration {
    /// Must a task from `o` be told apart from `p`'s answer? As
    /// [`Observation::told_apart_from`], except that the same answer to a
    /// call given some of the same values, by a tool that fails on other
    /// values, is that call's answer again: the values they differ in were
    /// not read (excel-mcp-polars answers a CSV file whatever `sheet_name`
    /// says), and its values are no constant of the tool.
    pub(super) fn tells_apart(&self, o: &Observation, p: &Observation) -> bool {
        let same_answer_again = self.failed_tools.contains(&o.tool)
            && p.text == o.text
            && o.args.iter().any(|(k, v)| p.args.get(k) == Some(v));
        o.told_apart_from(p) && !same_answer_again
    }

    /// The absolute paths the operator gave the server (on its command
    /// line).
    pub(super) fn operator_roots(&self) -> Vec<String> {
        self.handles
            .iter()
            .filter(|h| h.from.is_none() && h.key == "path" && h.value.starts_with('/'))
            .map(|h| h.value.clone())
            .collect()
    }

    /// The operator's files by the names they were offered under.
    pub(super) fn operator_files(&self) -> Vec<String> {
        self.handles
            .iter()
            .filter(|h| h.from.is_none() && h.key == OPERATOR_FILE)
            .map(|h| h.value.clone())
            .collect()
    }

    /// Is `value` a handle only discovery found (not the operator's own)?
    pub(super) fn discovered_value(&self, value: &str) -> bool {
        self.handles
            .iter()
            .position(|h| h.value == value)
            .is_some_and(|i| self.discovered.contains(&i))
    }

    /// The handle index for `value`, adding it when new.
    pub(super) fn add_handle(&mut self, handle: Handle) -> Option<usize> {
        if self.handles.len() >= MAX_HANDLES {
            return None;
        }
        if let Some(i) = self.handles.iter().position(|h| h.value == handle.value) {
            return Some(i);
        }
        self.handles.push(handle);
        Some(self.handles.len() - 1)
    }
}

/// Handles kept at most: the exploration stays bounded whatever a server
/// lists.
const MAX_HANDLES: usize = 2_000;

impl Exploration {
    /// An exploration holding its first handles: the operator's values,
    /// then the examples each tool's schema documents.
    pub(super) fn seeded(seeds: &[String], files: &[String], callable: &[&Tool]) -> Exploration {
        let mut ex = Exploration::default();
        // The recorder's working folder, which a stdio server shares, is a
        // place to hand a parameter that takes a folder (`project_path`,
        // `repo`), never a file's path; the paths on the command line are
        // the operator's paths.
        let working = std::env::current_dir()
            .ok()
            .map(|d| d.to_string_lossy().into_owned());
        for s in seeds {
            let key = if working.as_deref() == Some(s.as_str()) {
                super::text::WORKING_FOLDER
            } else {
                "path"
            };
            ex.add_handle(Handle::unlinked(s.as_str(), key));
        }
        // The files in the server's reach, as the operator names them.
        for f in files {
            ex.add_handle(Handle::unlinked(f.as_str(), OPERATOR_FILE));
        }
        // The examples a tool's own schema documents (`e.g. 'Europe/London'`)
        // are values the server says it takes.
        for tool in callable {
            for (key, p) in tool
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
            {
                let description = p.get("description").and_then(Value::as_str).unwrap_or("");
                for example in documented_examples(description) {
                    ex.add_handle(Handle::unlinked(example, key.as_str()));
                }
            }
        }
        ex
    }

    /// Keep a successful call with the handles its result gives; a bare
    /// entry name listed for a path is also that path joined with the name.
    pub(super) fn observe(&mut self, o: Observation) {
        let path_arg = o.args.iter().find_map(|(k, v)| {
            super::fit::takes_path(k)
                .then(|| v.as_str().map(str::to_owned))
                .flatten()
        });
        let parent = path_arg
            .as_ref()
            .and_then(|p| self.handles.iter().position(|h| &h.value == p));
        let policy = crate::secrets::policy();
        let noun = super::kinds::tool_noun(&o.tool);
        for mut h in harvest(&o.text, o.json.as_ref(), o.index) {
            h.noun.clone_from(&noun);
            // A value that holds a secret is never sent back (a path the
            // server resolved under the folder given with `--env`): no
            // task could name the call it would be in.
            if policy.finds(&h.value) {
                continue;
            }
            // A file's name (`boardgames.db`) holds no entries to join.
            if let Some(p) = &path_arg
                && !h.value.contains('/')
                && h.key_is_entry()
                && !super::text::file_name_like(p)
            {
                let joined = format!("{}/{}", p.trim_end_matches('/'), h.value);
                self.add_handle(Handle {
                    value: joined,
                    from: Some(o.index),
                    key: "path".to_owned(),
                    alias: Some(("name".to_owned(), h.value.clone())),
                    parent,
                    noun: None,
                });
            }
            h.from = Some(o.index);
            // A file a result names by its relative path is also its bare
            // name, for a parameter that takes a file's name apart from its
            // folder (`filename` beside `subfolder`).
            let bare = (!h.value.starts_with('/') && super::text::file_name_like(&h.value))
                .then(|| h.value.rsplit_once('/').map(|(_, name)| name.to_owned()))
                .flatten();
            let path = h.value.clone();
            self.add_handle(h);
            if let Some(name) = bare {
                self.add_handle(Handle {
                    value: name,
                    from: Some(o.index),
                    key: "filename".to_owned(),
                    alias: Some(("path".to_owned(), path)),
                    parent: None,
                    noun: None,
                });
            }
        }
        // A relative path a listing gave is also tried under each folder
        // the operator gave the server.
        let roots = self.operator_roots();
        if !roots.is_empty() {
            for (joined, relative) in super::fit::rooted(o.index, &self.handles, &roots) {
                if let Some(i) = self.add_handle(Handle {
                    value: joined,
                    from: Some(o.index),
                    key: "path".to_owned(),
                    alias: Some(("path".to_owned(), relative)),
                    parent: None,
                    noun: None,
                }) {
                    self.discovered.insert(i);
                }
            }
        }
        self.observations.push(o);
    }
}
