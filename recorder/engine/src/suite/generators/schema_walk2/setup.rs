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

/// Does a parameter take one file (`file_path`, `filename`), not a folder?
fn takes_file(p: &str) -> bool {
    takes_path(p)
        && !takes_folder(p)
        && crate::access::words(p)
            .iter()
            .any(|w| w == "file" || w == "filename")
}

impl Explorer<'_> {
    /// Make each setup step a held-back tool offers, where the walk can
    /// show it changes only the session.
    pub(super) async fn setup(&mut self, tools: &[Tool], callable: &[&Tool]) {
        let held: Vec<&Tool> = tools
            .iter()
            .filter(|t| self.writers.contains(t.name.as_ref()))
            .collect();
        for tool in held {
            let Some(noun) = sets_up(tool, callable) else {
                continue;
            };
            let name = tool.name.to_string();
            let Some(args) = self.setup_args(tool) else {
                self.stats.discovery.push(DiscoveryMove {
                    name: "setup".into(),
                    tool: Some(name.clone()),
                    tried: format!("it sets up the {noun} other tools ask for"),
                    found: "held back: it needs a value the operator did not give (a folder on the server's command line, or its working folder)".into(),
                    worked: false,
                });
                continue;
            };
            let call = PlannedCall {
                tool: name.clone(),
                arguments: args.clone(),
            };
            if !self.watching() {
                self.stats.discovery.push(DiscoveryMove {
                    name: "setup".into(),
                    tool: Some(name.clone()),
                    tried: format!("it sets up the {noun} other tools ask for"),
                    found: format!(
                        "held back: nothing here can show it changes only the session; the one call that would open the server is {} {}",
                        name,
                        Value::Object(args)
                    ),
                    worked: false,
                });
                continue;
            }
            let made = self.made(&name, args, Origin::Discovered, true).await;
            let files = self.settled().await;
            let found = match (made, files.is_empty()) {
                (Some(_), true) => {
                    self.ex.setup.push(call.clone());
                    self.stats.setup_steps.push(name.clone());
                    format!(
                        "made with {}: every file and listing the walk watches is as it was, so it is a setup step the run may make",
                        Value::Object(call.arguments.clone())
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
                tried: format!("it sets up the {noun} other tools ask for"),
                worked: self.ex.setup.contains(&call),
                found,
            });
        }
    }

    /// A setup step's arguments: a path or folder it takes is the
    /// server's working folder (or the operator's first folder); the other
    /// required ones schema-valid; optional ones left out.
    fn setup_args(&mut self, tool: &Tool) -> Option<serde_json::Map<String, Value>> {
        let schema = Value::Object((*tool.input_schema).clone());
        let required = super::fit::required_of(&schema);
        let folder = self
            .ex
            .handles
            .iter()
            .find(|h| h.from.is_none() && h.key == super::text::WORKING_FOLDER)
            .or_else(|| {
                self.ex
                    .handles
                    .iter()
                    .find(|h| h.from.is_none() && h.key == "path")
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
}
