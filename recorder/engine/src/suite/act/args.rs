//! A change's arguments: the fresh word the check looks for, words of
//! their own for other text, paths in the operator's folder (or bare
//! names where the server wants them), a statement for a tool that takes
//! SQL, and the identifiers the questions already use.

use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use crate::suite::generators::schema_walk2::kinds;

/// Every leaf of `value` (an argument set) with the name of the argument
/// it stands under (arrays take their argument's name).
pub(super) fn each_leaf<'v>(
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
pub(super) enum Role {
    Sql,
    /// A folder the server works in (a repository, a root).
    Folder,
    /// A path to make: a file, or a folder where the tool makes folders.
    NewPath,
    Uri,
    Text,
}

pub(super) fn role(key: &str, tool: &Tool) -> Role {
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
pub(super) fn arguments(
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
pub(super) fn argument_variants(
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
pub(super) fn common_extension(root: &str) -> String {
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
pub(super) struct Filler<'a> {
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
        {
            // An identifier names a record that exists: one the questions
            // use, else none (an invented one names nothing), unless the
            // tool only adds, where it may name the new record.
            if let Some(v) = self.known.get(k) {
                return Some(v.clone());
            }
            if !crate::access::only_adds(self.tool) {
                return None;
            }
        }
        let ty = match crate::model::sim::schema_type(schema) {
            Some(t) => t,
            None if schema.get("properties").is_some() => "object",
            None => "string",
        };
        match ty {
            "object" => {
                let props = schema.get("properties").and_then(Value::as_object)?;
                let required = crate::suite::schema_args::required_names(schema.get("required"));
                // The required ones; where none takes text, the first
                // optional ones that do, so the change names the fresh word.
                let mut keys = required;
                // An identifier carries no fresh word.
                if !keys
                    .iter()
                    .any(|k| props.get(*k).is_some_and(takes_text) && !is_id(k))
                {
                    keys.extend(
                        props
                            .iter()
                            .filter(|(k, p)| {
                                !keys.contains(&k.as_str()) && takes_text(p) && !is_id(k)
                            })
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

/// Does an argument name a record by its identifier (`id`, `todo_id`)?
pub(super) fn is_id(key: &str) -> bool {
    crate::access::words(key).iter().any(|w| w == "id")
}

/// Does a property take text (a string, or a string or null)?
pub(super) fn takes_text(p: &Value) -> bool {
    let string = |v: &Value| v.get("type").and_then(Value::as_str) == Some("string");
    string(p)
        || ["anyOf", "oneOf"].iter().any(|k| {
            p.get(*k)
                .and_then(Value::as_array)
                .is_some_and(|b| b.iter().any(string))
        })
}
