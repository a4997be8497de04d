//! Reads that may show a change: the change's own values given to a
//! reading tool, a search for the fresh word, the listings, a query
//! language's catalogue; each completed from the change's values, an
//! enum, a default or the words of a description.

use std::collections::BTreeSet;

use rmcp::model::Tool;
use serde_json::{Map, Value, json};

use super::args::each_leaf;
use crate::model::types::PlannedCall;
use crate::suite::generators::schema_walk2::kinds;
use crate::suite::{destructive, reading};

/// Reads tried as a state check for one change, at most.
const MAX_READS: usize = 10;

/// The tools a change may be read back through: every tool the agent has
/// that does not write, is not open-world and returns no secrets.
pub(super) fn readers<'t>(
    tools: &'t [Tool],
    writers: &BTreeSet<String>,
    change: &Tool,
) -> Vec<&'t Tool> {
    tools
        .iter()
        .filter(|t| t.name != change.name && !writers.contains(t.name.as_ref()))
        .filter(|t| reading::exposes_secrets(t).is_none() && !destructive::open_world(t))
        .collect()
}

/// Reads that may show the change, the most particular first: a tool
/// given the change's own values by name, a search for the fresh word, a
/// listing that takes nothing, a query language's catalogue.
pub(super) fn state_reads(
    tools: &[Tool],
    writers: &BTreeSet<String>,
    change: &Tool,
    args: &Map<String, Value>,
    marker: &str,
    root: Option<&str>,
) -> Vec<PlannedCall> {
    let readers = readers(tools, writers, change);
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
        let required: Vec<String> =
            crate::suite::schema_args::required_names(schema.get("required"))
                .into_iter()
                .map(str::to_owned)
                .collect();
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

pub(super) fn planned<const N: usize>(t: &Tool, args: [(String, Value); N]) -> PlannedCall {
    PlannedCall {
        tool: t.name.to_string(),
        arguments: args.into_iter().collect(),
    }
}

/// Fill the required properties not yet in `a`: the change's value of the
/// same name (or the operator's folder, `at_root`, for a path), an
/// enum's first value, the folder for a path. False when one cannot be.
pub(super) fn complete(
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

/// The first value a description quotes (`'local'`, `"all"`, `` `asc` ``):
/// where a schema names no enum, the words often do.
pub(super) fn first_quoted(description: &str) -> Option<String> {
    static QUOTED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"['"`]([A-Za-z][\w-]{0,30})['"`]"#).expect("the quote pattern compiles")
    });
    QUOTED.captures(description).map(|c| c[1].to_owned())
}
