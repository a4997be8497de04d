//! Setup steps that change only the session. Many servers hold nothing
//! until told where to look: a project registered, a folder opened, a
//! database selected; every other tool asks for that project by name and
//! fails until then. Such a step is a write by its words, so a read-only
//! walk holds it back. Here it is made once, where:
//!
//! * its name says it sets up (`register`, `open`, `select`, `use`,
//!   `activate`, `load`, `connect`, `attach`, `mount`, `init`, `switch`)
//!   what other tools require by name (`register_project_tool` gives the
//!   `project` that `get_symbols` requires);
//! * its words say nothing of changing data (`delete`, `write`, `save`...);
//! * the walk watches the state: the operator's places on disk, and the
//!   listings that take no argument.
//!
//! After the call, a file changed in the operator's places means it is no
//! setup step: the change is named (as a reading tool's write is) and the
//! tool stays held back. Otherwise it is a setup step: the ledger names it,
//! the record lists it beside the tools never called, the run lets the
//! agent make it too, its result's values fit the parameters that ask for
//! what it set up, and a fresh server process is set up the same way
//! before it is read again. Where it cannot be shown (no watch), the step
//! stays held back and the ledger says the one call that would open the
//! server.

use fitness_shared::record::DiscoveryMove;
use rmcp::model::Tool;
use serde_json::Value;

use super::explore::Explorer;
use super::fit::{takes_folder, takes_path};
use crate::model::types::PlannedCall;
use crate::suite::task::Origin;

/// Verbs that set a session up.
const SETUP_VERBS: &[&str] = &[
    "register",
    "open",
    "select",
    "use",
    "activate",
    "load",
    "connect",
    "attach",
    "mount",
    "init",
    "initialize",
    "switch",
    "choose",
];
/// Words that say a tool changes data, whatever else it does.
const CHANGES: &[&str] = &[
    "delete",
    "remove",
    "drop",
    "write",
    "save",
    "overwrite",
    "destroy",
    "erase",
    "modify",
    "update",
    "edit",
    "rename",
    "move",
    "upload",
    "send",
    "commit",
    "push",
];

/// A held-back tool that would set the session up: the noun it sets up.
fn sets_up(tool: &Tool, others: &[&Tool]) -> Option<String> {
    let name = crate::access::words(&tool.name);
    if !name.iter().any(|w| SETUP_VERBS.contains(&w.as_str())) {
        return None;
    }
    let said = crate::access::words(tool.description.as_deref().unwrap_or(""));
    if name
        .iter()
        .chain(&said)
        .any(|w| CHANGES.contains(&w.as_str()))
    {
        return None;
    }
    let schema = Value::Object((*tool.input_schema).clone());
    let own_required = super::fit::required_of(&schema);
    let names = |p: &str, noun: &str| {
        crate::access::words(p)
            .iter()
            .any(|w| w.trim_end_matches('s') == noun)
    };
    let asked = |noun: &str| {
        others.iter().any(|t| {
            super::fit::required_of(&Value::Object((*t.input_schema).clone()))
                .iter()
                .any(|p| names(p, noun))
        })
    };
    // A step that needs what it would set up works inside it
    // (`select_columns` on a session's columns): no setup.
    let sets = |noun: &str| asked(noun) && !own_required.iter().any(|p| names(p, noun));
    // The noun its name gives (`register_project` sets up a project), or
    // the one a parameter it may be given names, which other tools require
    // (`load_csv` takes an optional `session_id` every other tool needs).
    let noun = super::kinds::tool_noun(&tool.name)?;
    let last = noun.rsplit('_').next()?.trim_end_matches('s').to_owned();
    if sets(&last) {
        return Some(last);
    }
    let params: Vec<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    params.iter().find_map(|p| {
        let w = crate::access::words(p);
        let noun = w
            .iter()
            .find(|x| !["id", "key", "name", "uuid"].contains(&x.as_str()))?
            .trim_end_matches('s')
            .to_owned();
        (w.len() <= 2 && sets(&noun)).then_some(noun)
    })
}

/// The operator's files a setup step is given in place of a folder it
/// refused, at most.
const FILES_TRIED: usize = 3;
/// Failed calls made again after the step they asked for, at most.
const ASKED_AGAIN: usize = 12;
/// Words that say something is missing or must come first.
const NEEDS: &[&str] = &[
    "not",
    "no",
    "needs",
    "need",
    "required",
    "requires",
    "require",
    "first",
    "missing",
    "before",
    "must",
    "uninitialized",
    "unavailable",
    "initialize",
];
/// Words that link a verb to what follows rather than name a thing made
/// (`filter_by_project`).
const LINKING: &[&str] = &[
    "by", "to", "from", "for", "of", "all", "a", "the", "in", "with",
];

/// Does the server's own saying ask for `tool` as a step to make first?
/// It names the tool (`Use set_project_path tool to initialize`), or what
/// the tool makes, its name less its verb, in two words or more (`deep
/// index not built` for `build_deep_index`). The tool's words say nothing
/// of changing data. The sentence that asks.
fn asked_for(tool: &Tool, said: &str) -> Option<String> {
    let name = crate::access::words(&tool.name);
    let described = crate::access::words(tool.description.as_deref().unwrap_or(""));
    if name
        .iter()
        .chain(&described)
        .any(|w| CHANGES.contains(&w.as_str()))
    {
        return None;
    }
    let own = tool.name.to_lowercase();
    let made = &name[1.min(name.len())..];
    let by_made = name.len() >= 3 && !LINKING.contains(&made[0].as_str());
    said.split(['.', '\n', '"', '{', '}', ';', '!', '?'])
        .map(str::trim)
        .find(|sentence| {
            if sentence.to_lowercase().contains(&own) {
                return true;
            }
            // What it makes, in a sentence that says a need.
            let words = crate::access::words(sentence);
            by_made
                && words.iter().any(|w| NEEDS.contains(&w.as_str()))
                && words.windows(made.len()).any(|w| w == made)
        })
        .map(str::to_owned)
}

/// Does a parameter take one file (`file_path`, `filename`), not a folder?
fn takes_file(p: &str) -> bool {
    takes_path(p)
        && !takes_folder(p)
        && crate::access::words(p)
            .iter()
            .any(|w| w == "file" || w == "filename")
}

impl Explorer<'_> {
    /// Make each setup step a held-back tool offers, or the server's
    /// words ask for ([`asked_for`]), where the walk can show it changes
    /// only the session; each tool is tried once. Did a step get made?
    pub(super) async fn setup(&mut self, tools: &[Tool], callable: &[&Tool]) -> bool {
        let held: Vec<&Tool> = tools
            .iter()
            .filter(|t| self.writers.contains(t.name.as_ref()))
            .filter(|t| {
                !self
                    .stats
                    .discovery
                    .iter()
                    .any(|m| m.name == "setup" && m.tool.as_deref() == Some(t.name.as_ref()))
            })
            .collect();
        let said = self.said();
        let before = self.ex.setup.len();
        for tool in held {
            let asks = said.iter().find_map(|s| asked_for(tool, s));
            let Some(why) = sets_up(tool, callable)
                .map(|noun| format!("it sets up the {noun} other tools ask for"))
                .or_else(|| {
                    asks.as_ref().map(|asks| {
                        format!(
                            "the server asks for it: \"{}\"",
                            fitness_shared::tape::timeline::excerpt(asks, 120)
                        )
                    })
                })
            else {
                continue;
            };
            let name = tool.name.to_string();
            let Some(args) = self.setup_args(tool) else {
                self.stats.discovery.push(DiscoveryMove {
                    name: "setup".into(),
                    tool: Some(name.clone()),
                    tried: why.clone(),
                    found: "held back: it needs a value the operator did not give (a folder on the server's command line, or its working folder)".into(),
                    worked: false,
                });
                continue;
            };
            let mut call = PlannedCall {
                tool: name.clone(),
                arguments: args.clone(),
            };
            if !self.watching() {
                self.stats.discovery.push(DiscoveryMove {
                    name: "setup".into(),
                    tool: Some(name.clone()),
                    tried: why.clone(),
                    found: format!(
                        "held back: nothing here can show it changes only the session; the one call that would open the server is {} {}",
                        name,
                        Value::Object(args)
                    ),
                    worked: false,
                });
                continue;
            }
            let mut made = self
                .made(&name, args.clone(), Origin::Discovered, true)
                .await;
            // A folder refused where a file was wanted (`open_database`
            // given the folder the database is in): the operator's files
            // there, those its words name the kind of first.
            if made.is_none() {
                for alt in self.files_instead(tool, &args) {
                    made = self
                        .made(&name, alt.clone(), Origin::Discovered, true)
                        .await;
                    if made.is_some() {
                        call.arguments = alt;
                        break;
                    }
                }
            }
            let files = self.settled().await;
            let found = match (made, files.is_empty()) {
                (Some(_), true) => {
                    self.ex.setup.push(call.clone());
                    self.stats.setup_steps.push(name.clone());
                    let again = if asks.is_some() {
                        self.asked_again(tool).await
                    } else {
                        0
                    };
                    format!(
                        "made with {}: every file and listing the walk watches is as it was, so it is a setup step the run may make{}",
                        Value::Object(call.arguments.clone()),
                        if again > 0 {
                            format!("; {again} call(s) that asked for it made again")
                        } else {
                            String::new()
                        }
                    )
                }
                (Some(_), false) => format!(
                    "it changed {} in the operator's places, so it is no setup step and stays held back",
                    files.join(", ")
                ),
                (None, _) => {
                    let said = self.last_said.clone().unwrap_or_default();
                    format!(
                        "it failed{}",
                        if said.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", fitness_shared::tape::timeline::excerpt(&said, 160))
                        }
                    )
                }
            };
            self.stats.discovery.push(DiscoveryMove {
                name: "setup".into(),
                tool: Some(name),
                tried: why,
                worked: self.ex.setup.contains(&call),
                found,
            });
        }
        self.ex.setup.len() > before
    }

    /// The failed calls whose saying asked for the step `step`, made again
    /// now that it is made, [`ASKED_AGAIN`] at most, one per distinct
    /// call; how many.
    async fn asked_again(&mut self, step: &Tool) -> usize {
        let mut again: Vec<(String, serde_json::Map<String, Value>)> = Vec::new();
        for (tool, args, said) in &self.failed_calls {
            if again.len() >= ASKED_AGAIN {
                break;
            }
            let call = (tool.clone(), args.clone());
            if !again.contains(&call) && asked_for(step, said).is_some() {
                again.push(call);
            }
        }
        let mut n = again.len();
        for (tool, args) in again {
            let _ = self.call(&tool, args, Vec::new()).await;
        }
        // An answer that said it (a status, not an error) is read again in
        // its place: what it said no longer holds.
        let stale: Vec<usize> = self
            .ex
            .observations
            .iter()
            .filter(|o| !o.writes && asked_for(step, &o.text).is_some())
            .map(|o| o.index)
            .take(ASKED_AGAIN * 4)
            .collect();
        for i in stale {
            let (tool, args) = {
                let o = &self.ex.observations[i];
                (o.tool.clone(), o.args.clone())
            };
            self.stats.calls += 1;
            if let crate::suite::call::Called::Text(text) =
                crate::suite::call::call(self.session, &tool, &args, self.config.call_timeout).await
            {
                let o = &mut self.ex.observations[i];
                o.json = super::text::structured(&text);
                o.text = text;
                n += 1;
            }
        }
        n
    }

    /// `args` with the folder its path argument was given replaced by each
    /// of the operator's files, [`FILES_TRIED`] at most: those whose
    /// extension the tool's words name or begin (`db` for `database`)
    /// first.
    fn files_instead(
        &self,
        tool: &Tool,
        args: &serde_json::Map<String, Value>,
    ) -> Vec<serde_json::Map<String, Value>> {
        let Some((slot, _)) = args.iter().find(|(k, v)| {
            takes_path(k) && v.as_str().is_some_and(|v| std::path::Path::new(v).is_dir())
        }) else {
            return Vec::new();
        };
        let said: Vec<String> = crate::access::words(&tool.name)
            .into_iter()
            .chain(crate::access::words(
                tool.description.as_deref().unwrap_or(""),
            ))
            .collect();
        let named = |f: &String| {
            f.rsplit_once('.').is_some_and(|(_, ext)| {
                let ext = ext.to_lowercase();
                said.iter()
                    .any(|w| *w == ext || (ext.len() >= 2 && w.starts_with(&ext)))
            })
        };
        let mut files = self.ex.operator_files();
        files.sort_by_key(|f| !named(f));
        files
            .into_iter()
            .take(FILES_TRIED)
            .map(|f| {
                let mut alt = args.clone();
                alt.insert(slot.clone(), Value::String(f));
                alt
            })
            .collect()
    }

    /// A setup step's arguments: a path or folder it takes is the
    /// operator's first folder (or the server's working folder); the other
    /// required ones schema-valid; optional ones left out.
    fn setup_args(&mut self, tool: &Tool) -> Option<serde_json::Map<String, Value>> {
        let schema = Value::Object((*tool.input_schema).clone());
        let required = super::fit::required_of(&schema);
        // The folder the operator named on the server's command line
        // first, else the folder the server was started in.
        let folder = self
            .ex
            .handles
            .iter()
            .find(|h| {
                h.from.is_none() && h.key == "path" && std::path::Path::new(&h.value).is_dir()
            })
            .or_else(|| {
                self.ex
                    .handles
                    .iter()
                    .find(|h| h.from.is_none() && h.key == super::text::WORKING_FOLDER)
            })
            .map(|h| h.value.clone());
        let slot = required
            .iter()
            .find(|p| takes_folder(p) || takes_path(p))
            .cloned();
        // A file it loads is one of the operator's files, the one its
        // words name the kind of (`load_csv` and `harvest.csv`) first.
        if let Some(slot) = slot.as_ref().filter(|p| takes_file(p)) {
            let said: Vec<String> = crate::access::words(&tool.name)
                .into_iter()
                .chain(crate::access::words(
                    tool.description.as_deref().unwrap_or(""),
                ))
                .collect();
            let files = self.ex.operator_files();
            let file = files
                .iter()
                .find(|f| {
                    f.rsplit_once('.')
                        .is_some_and(|(_, ext)| said.contains(&ext.to_lowercase()))
                })
                .or(files.first())?
                .clone();
            return self.with_slot(tool, slot, &file);
        }
        match (slot, folder) {
            (Some(slot), Some(folder)) => {
                let mut args = self.with_slot(tool, &slot, &folder)?;
                // What it sets up is named as a person names a project: by
                // its folder's name.
                let named = folder
                    .trim_end_matches('/')
                    .rsplit('/')
                    .next()
                    .unwrap_or("");
                let name_slot = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .and_then(|p| {
                        p.keys()
                            .find(|k| crate::access::words(k) == ["name"])
                            .cloned()
                    });
                if let Some(k) = name_slot.filter(|_| !named.is_empty()) {
                    args.insert(k, Value::String(named.to_owned()));
                }
                Some(args)
            }
            (Some(_), None) => None,
            (None, _) if required.is_empty() => Some(serde_json::Map::new()),
            (None, _) => {
                let first = required.first()?.clone();
                let args = self.with_slot(tool, &first, "")?;
                // A required value the walk must invent is no setup it can
                // make for the operator.
                args.get(&first)
                    .and_then(Value::as_str)
                    .is_some_and(|v| !v.is_empty())
                    .then_some(args)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            std::sync::Arc::new(schema.as_object().expect("an object").clone()),
        )
    }

    #[test]
    fn a_step_that_makes_what_others_require_sets_up_one_that_needs_it_does_not() {
        let load = tool(
            "load_csv",
            "Load a CSV file into a session.",
            json!({"type": "object", "properties": {"file_path": {"type": "string"}, "session_id": {"type": "string"}}, "required": ["file_path"]}),
        );
        let select = tool(
            "select_columns",
            "Select specific columns from the dataframe.",
            json!({"type": "object", "properties": {"session_id": {"type": "string"}, "columns": {"type": "array"}}, "required": ["session_id", "columns"]}),
        );
        let sort = tool(
            "sort_data",
            "Sort data by columns.",
            json!({"type": "object", "properties": {"session_id": {"type": "string"}, "columns": {"type": "array"}}, "required": ["session_id", "columns"]}),
        );
        let register = tool(
            "register_project_tool",
            "Register a project directory for code exploration.",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "name": {"type": "string"}}, "required": ["path"]}),
        );
        let symbols = tool(
            "get_symbols",
            "Extract symbols from a file.",
            json!({"type": "object", "properties": {"project": {"type": "string"}, "file_path": {"type": "string"}}, "required": ["project", "file_path"]}),
        );
        let others = [&select, &sort, &symbols];
        assert_eq!(sets_up(&load, &others).as_deref(), Some("session"));
        assert_eq!(
            sets_up(&select, &[&load, &sort]),
            None,
            "it needs the session and columns it would set up"
        );
        assert_eq!(sets_up(&register, &others).as_deref(), Some("project"));
    }

    #[test]
    fn a_step_the_server_names_or_says_is_missing_is_asked_for() {
        let deep = tool(
            "build_deep_index",
            "Build the deep index (full symbol extraction) for the current project.",
            json!({"type": "object", "properties": {}}),
        );
        let set = tool(
            "set_project_path",
            "Set the base project path for indexing.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        );
        let filter = tool(
            "filter_by_project",
            "Filter todos by project.",
            json!({"type": "object", "properties": {"project": {"type": "string"}}, "required": ["project"]}),
        );
        let wipe = tool(
            "delete_deep_index",
            "Delete the deep index.",
            json!({"type": "object", "properties": {}}),
        );
        let missing = r#"{"status": "needs_deep_index", "message": "File not found in index or deep index not built"}"#;
        assert!(asked_for(&deep, missing).is_some_and(|s| s.contains("deep_index")));
        assert_eq!(asked_for(&wipe, missing), None, "its words change data");
        assert!(
            asked_for(&set, "Use set_project_path tool to initialize file watcher")
                .is_some_and(|s| s.starts_with("Use set_project_path"))
        );
        assert_eq!(
            asked_for(
                &filter,
                "3 todos, listed by project: Barn, Orchard; none is missing"
            ),
            None,
            "a verb's preposition names nothing made"
        );
        assert_eq!(
            asked_for(&deep, "The deep index holds 4 files."),
            None,
            "nothing says it is missing"
        );
    }
}
