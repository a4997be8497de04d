//! Arguments fitted to a tool's schema: which string slots a harvested
//! handle may fill and how well it fits each, the first round's arguments,
//! the argument sets that put handles into slots, a proposal fitted to the
//! schema at every depth, and the whole-word repairs an error suggests.
//! Pure: no call is made here.

use std::collections::HashSet;

use rand::rngs::ChaCha8Rng;
use serde_json::{Map, Value};

use super::kinds;
use super::text::{self, Handle};
use crate::suite::schema_args::{Limits, Unsatisfiable, valid_arguments_within};

/// Arguments to call with, and the slots a handle filled (slot, handle).
pub(super) type Plan = (Map<String, Value>, Vec<(String, usize)>);

/// Argument names that take a location.
const PATH_WORDS: &[&str] = &[
    "path",
    "paths",
    "dir",
    "directory",
    "folder",
    "file",
    "filename",
    "root",
    "repo",
    "repository",
    "source",
    "destination",
    "cwd",
];

/// Argument names that take a folder rather than a file.
const FOLDER_WORDS: &[&str] = &[
    "dir",
    "directory",
    "folder",
    "root",
    "repo",
    "repository",
    "project",
    "workspace",
    "cwd",
    "vault",
];

/// Does an argument of this name take a folder (`project_path`, `repo`,
/// `root`, `directory`)?
pub(super) fn takes_folder(arg: &str) -> bool {
    takes_path(arg)
        && crate::access::words(arg)
            .iter()
            .any(|w| FOLDER_WORDS.contains(&w.as_str()))
}

/// Does an argument of this name take a location (`path`, `file_path`,
/// `paths`, `dir`…)?
pub(super) fn takes_path(arg: &str) -> bool {
    crate::access::words(arg)
        .iter()
        .any(|w| PATH_WORDS.contains(&w.as_str()))
}

/// A path no measurement sends, whatever result it was read from: one
/// that climbs (`../../etc/passwd`, a request line in a web server's log)
/// or one in the machine's own folders (`/etc`, `/proc`, `/root`…), never
/// the operator's data.
pub(super) fn outside_any_data(value: &str) -> bool {
    const SYSTEM: &[&str] = &[
        "/etc", "/proc", "/sys", "/dev", "/boot", "/root", "/usr", "/bin", "/sbin", "/lib",
        "/var/lib", "/var/run", "/run",
    ];
    let climbs = value.split(['/', '\\']).any(|part| part == "..");
    climbs
        || SYSTEM
            .iter()
            .any(|s| value == *s || value.starts_with(&format!("{s}/")))
}

/// Argument names that take a revision.
const REVISION_WORDS: &[&str] = &["revision", "commit", "sha", "hash", "ref", "rev", "target"];

/// A string slot a handle may fill: a string property with no enum, const,
/// format or pattern, or an array of such strings.
fn free_string(p: &Value) -> bool {
    let Some(p) = kinds::of_type(p, "string") else {
        return false;
    };
    let format = p.get("format").and_then(Value::as_str);
    p.get("enum").is_none()
        && p.get("const").is_none()
        && format.is_none_or(|f| matches!(f, "uri" | "uri-reference" | "iri"))
        && p.get("pattern").is_none()
}

pub(super) fn slots(schema: &Value) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    for (k, p) in schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        // A date is a window the walk sets ([`sensible_values`]), never a
        // harvested name.
        if kinds::of_type(p, "string").is_some_and(|st| takes_date(k, &st).is_some()) {
            continue;
        }
        if free_string(p) {
            out.push((k.clone(), false));
        } else if kinds::of_type(p, "array")
            .is_some_and(|a| a.get("items").is_some_and(free_string))
        {
            out.push((k.clone(), true));
        }
    }
    out
}

/// How well `handle` fits the argument `arg`; `None` when it does not.
pub(super) fn affinity(arg: &str, handle: &Handle) -> Option<i32> {
    let words = crate::access::words(arg);
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    let wants_path = has(PATH_WORDS);
    let wants_revision = has(REVISION_WORDS) && !wants_path;
    let value = handle.value.as_str();
    if value.chars().count() > 200 || value.contains('\n') {
        return None;
    }
    // A URI parameter takes a URI that reaches nothing beyond the server
    // (a resource's, a `file://` one of the operator's paths), nothing else.
    if kinds::wants_uri(&words) {
        return kinds::local_uri(value).then_some(3);
    }
    // The working folder goes to a parameter that takes a folder only.
    if handle.key == text::WORKING_FOLDER && handle.from.is_none() {
        return (takes_folder(arg) && !outside_any_data(value)).then_some(3);
    }
    let path_like = (value.starts_with('/') || value.contains('/') || value.starts_with('~'))
        && !value.contains("://");
    let hex_like = (7..=64).contains(&value.len()) && value.chars().all(|c| c.is_ascii_hexdigit());
    if wants_path {
        if outside_any_data(value) {
            return None;
        }
        // A path, or a file's bare name as a listing gives it (a server
        // that takes paths relative to its folder takes it as it is).
        return if path_like {
            Some(3)
        } else {
            text::file_name_like(value).then_some(2)
        };
    }
    if wants_revision {
        return hex_like.then_some(3);
    }
    let key_words = crate::access::words(&handle.key);
    // `source_timezone` and `timezone` share `timezone`.
    let singular = |w: &str| w.trim_end_matches('s').to_owned();
    // A value a tool listed as what it lists (`list_languages`'s `python`
    // for `language`, `register_project`'s `proj` for `project`) fits a
    // parameter of that name best: the server offered it.
    if handle.noun.as_deref().is_some_and(|n| {
        let n = crate::access::words(n);
        n.last()
            .is_some_and(|last| words.iter().any(|w| singular(w) == singular(last)))
    }) && !path_like
        && !value.contains("://")
    {
        return Some(4);
    }
    let shared = key_words
        .iter()
        .any(|k| words.iter().any(|w| singular(w) == singular(k)));
    if shared {
        return Some(3);
    }
    if path_like || value.contains("://") {
        return None;
    }
    Some(1)
}

/// Argument sets for round 0: one per value of the first enumerated
/// property (at most `samples`), else `samples` seeded draws.
pub(super) fn first_round_args(
    schema: &Value,
    rng: &mut ChaCha8Rng,
    samples: usize,
    limits: &Limits,
) -> Result<Vec<Map<String, Value>>, Unsatisfiable> {
    let enumerated = schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|props| {
            props.iter().find_map(|(k, p)| {
                p.get("enum")
                    .and_then(Value::as_array)
                    .filter(|e| e.len() > 1)
                    .map(|e| (k.clone(), e.clone()))
            })
        });
    let has_args = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    match enumerated {
        Some((key, values)) => values
            .into_iter()
            .take(samples)
            .map(|v| {
                let mut args = valid_arguments_within(schema, rng, limits)?;
                sensible_values(schema, &mut args);
                args.insert(key.clone(), v);
                Ok(args)
            })
            .collect(),
        None if has_args => {
            let required = required_of(schema);
            (0..samples)
                .map(|i| {
                    let mut args = valid_arguments_within(schema, rng, limits)?;
                    sensible_values(schema, &mut args);
                    if i == 0 {
                        args.retain(|k, _| required.contains(k));
                    }
                    Ok(args)
                })
                .collect()
        }
        None => Ok(vec![Map::new()]),
    }
}

/// Words of a parameter's name that open a window of time, and that close
/// one.
const WINDOW_OPENS: &[&str] = &[
    "start", "from", "since", "after", "begin", "min", "earliest",
];
const WINDOW_CLOSES: &[&str] = &["end", "to", "until", "till", "before", "max", "latest"];
/// Words of a parameter's name that place a reader in a document.
const PLACES: &[&str] = &[
    "page",
    "line",
    "row",
    "chapter",
    "part",
    "paragraph",
    "slide",
];
const SKIPS: &[&str] = &["offset", "skip"];

/// Does a string parameter take a date: its format says so, or its name
/// (`date`, `start`, `until`…) and its description (`date`, `ISO 8601`,
/// `YYYY`) do? `Some(true)` for a day without a time.
pub(super) fn takes_date(key: &str, string: &Value) -> Option<bool> {
    let words = crate::access::words(key);
    let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
    let format = string.get("format").and_then(Value::as_str).unwrap_or("");
    let said = string
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    let a_date = matches!(format, "date" | "date-time")
        || ((words.iter().any(|w| w == "date" || w == "time")
            || has(WINDOW_OPENS)
            || has(WINDOW_CLOSES))
            && (said.contains("date") || said.contains("iso 8601") || said.contains("yyyy")));
    a_date.then(|| format == "date" || (said.contains("yyyy-mm-dd") && !said.contains("hh")))
}

/// The values a person gives where a random draw says nothing: a window
/// of time as wide as it goes (a `start`/`from` date long ago, an
/// `end`/`until` date far ahead, where the parameter says it takes a date:
/// its format, or its words and description), the first page or line
/// (its minimum, else 1), an offset of 0. Each kept only where the schema
/// allows it (its pattern, its bounds).
pub(super) fn sensible_values(schema: &Value, args: &mut Map<String, Value>) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, value) in args.iter_mut() {
        let Some(p) = props.get(key) else { continue };
        let words = crate::access::words(key);
        let has = |set: &[&str]| words.iter().any(|w| set.contains(&w.as_str()));
        if let Some(string) = kinds::of_type(p, "string") {
            let Some(day_only) = takes_date(key, &string) else {
                continue;
            };
            let wide = if has(WINDOW_CLOSES) {
                if day_only {
                    "2099-12-31"
                } else {
                    "2099-12-31T23:59:59Z"
                }
            } else if has(WINDOW_OPENS) {
                if day_only {
                    "2000-01-01"
                } else {
                    "2000-01-01T00:00:00Z"
                }
            } else {
                continue;
            };
            let fits = string
                .get("pattern")
                .and_then(Value::as_str)
                .is_none_or(|pattern| regex::Regex::new(pattern).is_ok_and(|re| re.is_match(wide)));
            if fits {
                *value = Value::String(wide.to_owned());
            }
        } else if value.is_number() && (has(PLACES) || has(SKIPS)) {
            let min = p.get("minimum").and_then(Value::as_i64);
            let max = p.get("maximum").and_then(Value::as_i64);
            let want = if has(SKIPS) { 0 } else { 1 };
            let chosen = min.map_or(want, |m| m.max(want));
            if max.is_none_or(|m| chosen <= m) {
                *value = Value::from(chosen);
            }
        }
    }
}

/// Quoted values in a property description: `'America/New_York'`,
/// `"en-GB"`, `` `main` ``.
pub(super) fn documented_examples(description: &str) -> Vec<String> {
    let mut out = quoted_values(description);
    out.retain(|v| v.chars().count() >= 2);
    out.truncate(8);
    out
}

/// The values a text quotes (`'x'`, `"x"`, `` `x` ``: no spaces, at most
/// 60 characters), each once, in order, 16 at most.
pub(super) fn quoted_values(text: &str) -> Vec<String> {
    static QUOTED: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"'([^'\s]{1,60})'|"([^"\s]{1,60})"|`([^`\s]{1,60})`"#)
            .expect("the quoted pattern compiles")
    });
    let mut out: Vec<String> = Vec::new();
    for c in QUOTED.captures_iter(text) {
        if let Some(m) = c.get(1).or(c.get(2)).or(c.get(3)) {
            let v = m.as_str().to_owned();
            if !out.contains(&v) {
                out.push(v);
            }
        }
        if out.len() >= 16 {
            break;
        }
    }
    out
}

/// The handles a slot may take, and what calls taught about them:
/// `(argument, value)` pairs that answered, and pairs the server refused by
/// naming the value.
pub(super) struct Fits<'a> {
    pub handles: &'a [Handle],
    pub worked: &'a HashSet<(String, String)>,
    pub refused: &'a HashSet<(String, String)>,
}

/// Argument sets that put harvested handles into a tool's string slots.
/// One slot varies over its fitting handles, best fit first and then in
/// the order found; every other required slot gets its best-fitting handle;
/// optional arguments stay out (a stray random filter would hide the
/// answer). The slots take turns varying (the first slot's next handle,
/// then the second's, ...), so a slot with many loose fits does not spend
/// every set before another slot's good fit is tried (a vault id and a
/// note's path). What a call taught the walk comes first: a value that
/// answered in an argument of the same name leads, and a value the server
/// refused in it by quoting it (`Vault 'Configured Obsidian Vaults' is not
/// configured`) is not given to it again, unless it also answered there.
/// At most `samples` new sets.
pub(super) fn handle_plans(
    schema: &Value,
    fits: &Fits<'_>,
    rng: &mut ChaCha8Rng,
    samples: usize,
    tried: &HashSet<String>,
    tool: &str,
    limits: &Limits,
) -> Result<Vec<Plan>, Unsatisfiable> {
    let required = required_of(schema);
    let slots = slots(schema);
    let ranked: Vec<Vec<usize>> = slots
        .iter()
        .map(|(slot, _)| {
            let taught = |h: &Handle, set: &HashSet<(String, String)>| {
                set.contains(&(slot.clone(), h.value.clone()))
            };
            let mut r: Vec<(bool, i32, bool, usize)> = fits
                .handles
                .iter()
                .enumerate()
                // A value that answered in the slot is never refused in
                // it (an error may quote a value that was not its cause).
                .filter(|(_, h)| !taught(h, fits.refused) || taught(h, fits.worked))
                .filter_map(|(i, h)| {
                    affinity(slot, h).map(|a| (!taught(h, fits.worked), a, h.from.is_none(), i))
                })
                .collect();
            // What the server itself named (a listing's files) before what
            // the operator handed it, at the same fit.
            r.sort_by_key(|(untaught, a, unlinked, _)| (*untaught, -a, *unlinked));
            r.into_iter().map(|(_, _, _, i)| i).collect()
        })
        .collect();
    let mut plans = Vec::new();
    let mut next = vec![0usize; slots.len()];
    loop {
        let mut turned = false;
        for (vary, (slot, _)) in slots.iter().enumerate() {
            while let Some(&i) = ranked[vary].get(next[vary]) {
                next[vary] += 1;
                if plans.len() >= samples {
                    return Ok(plans);
                }
                let mut args = valid_arguments_within(schema, rng, limits)?;
                sensible_values(schema, &mut args);
                args.retain(|k, _| k == slot || required.contains(k));
                let mut inputs = Vec::new();
                for (j, (other, is_array)) in slots.iter().enumerate() {
                    let chosen = if j == vary {
                        Some(i)
                    } else if required.contains(other) {
                        ranked[j].first().copied()
                    } else {
                        None
                    };
                    if let Some(h) = chosen {
                        let value = Value::String(fits.handles[h].value.clone());
                        args.insert(
                            other.clone(),
                            if *is_array {
                                Value::Array(vec![value])
                            } else {
                                value
                            },
                        );
                        inputs.push((other.clone(), h));
                    }
                }
                let key = format!("{tool}\u{0}{}", Value::Object(args.clone()));
                if tried.contains(&key) || plans.iter().any(|(a, _): &Plan| *a == args) {
                    continue;
                }
                plans.push((args, inputs));
                turned = true;
                break;
            }
        }
        if !turned {
            return Ok(plans);
        }
    }
}

/// A harvested value that can stand for a name in an argument: one short
/// word of letters, digits, `_`, `-` or `.`.
pub(super) fn identifier(v: &str) -> bool {
    (2..=60).contains(&v.chars().count())
        && v.chars().all(|c| c.is_alphanumeric() || "_-.".contains(c))
        && v.chars().next().is_some_and(char::is_alphabetic)
}

/// `text` with every whole-word `word` (any case) replaced by `with`;
/// `None` when nothing changed.
pub(super) fn replace_token(text: &str, word: &str, with: &str) -> Option<String> {
    let pattern = regex::Regex::new(&format!(r"(?i)\b{}\b", regex::escape(word))).ok()?;
    let out = pattern
        .replace_all(text, regex::NoExpand(with))
        .into_owned();
    (out != text).then_some(out)
}

/// A proposed argument set fitted to a tool's schema: names the schema
/// does not have are dropped (when it lists any), a number written as text
/// for a numeric argument and a scalar for a string one are converted; `None`
/// when a required argument is missing.
pub(super) fn fitted(schema: &Value, args: Map<String, Value>) -> Option<Map<String, Value>> {
    match fit(schema, Value::Object(args))? {
        Value::Object(args) => Some(args),
        _ => None,
    }
}

/// A proposed value fitted to its schema, at every depth: a number given
/// as text becomes a number (and back); an object keeps only the
/// properties the schema names, a key the schema names otherwise (`type`
/// for `entityType`, when one missing property ends in that word) is
/// renamed, and a missing required array or boolean is given its empty
/// value; an array's items are fitted to its `items`, a lone value given
/// where an array is wanted becomes one. `None` where a required property
/// is missing that nothing can stand for.
fn fit(schema: &Value, value: Value) -> Option<Value> {
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("");
    match (kind, value) {
        ("number" | "integer", Value::String(s)) => {
            if let Ok(n) = s.trim().parse::<i64>() {
                Some(Value::from(n))
            } else {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|_| kind == "number")
                    .and_then(serde_json::Number::from_f64)
                    .map(Value::Number)
                    .or(Some(Value::String(s)))
            }
        }
        ("string", Value::Number(n)) => Some(Value::String(n.to_string())),
        ("string", Value::Bool(b)) => Some(Value::String(b.to_string())),
        ("array", Value::Array(items)) => {
            let Some(item) = schema.get("items") else {
                return Some(Value::Array(items));
            };
            Some(Value::Array(
                items.into_iter().filter_map(|v| fit(item, v)).collect(),
            ))
        }
        ("array", lone @ (Value::String(_) | Value::Number(_) | Value::Object(_))) => {
            fit(schema, Value::Array(vec![lone]))
        }
        (_, Value::Object(mut object)) => {
            let Some(props) = schema.get("properties").and_then(Value::as_object) else {
                return Some(Value::Object(object));
            };
            let unknown: Vec<String> = object
                .keys()
                .filter(|k| !props.contains_key(*k))
                .cloned()
                .collect();
            for key in unknown {
                let Some(v) = object.remove(&key) else {
                    continue;
                };
                let key_words = crate::access::words(&key);
                let mut fits = props.keys().filter(|p| {
                    !object.contains_key(*p) && {
                        let p_words = crate::access::words(p);
                        !key_words.is_empty() && p_words.ends_with(&key_words)
                    }
                });
                if let (Some(p), None) = (fits.next(), fits.next()) {
                    object.insert(p.clone(), v);
                }
            }
            let mut fitted = Map::new();
            for (k, v) in object {
                fitted.insert(k.clone(), fit(&props[&k], v)?);
            }
            for r in required_of(schema) {
                if fitted.contains_key(&r) {
                    continue;
                }
                let empty = match props
                    .get(&r)
                    .and_then(|p| p.get("type"))
                    .and_then(Value::as_str)
                {
                    Some("array") => Value::Array(Vec::new()),
                    Some("boolean") => Value::Bool(false),
                    _ => return None,
                };
                fitted.insert(r, empty);
            }
            Some(Value::Object(fitted))
        }
        (_, v) => Some(v),
    }
}

pub(super) fn required_of(schema: &Value) -> Vec<String> {
    crate::suite::schema_args::required_names(schema.get("required"))
        .into_iter()
        .map(str::to_owned)
        .collect()
}
/// The relative paths harvested from call `from`, each joined under the operator's roots
/// that are folders: `(joined, relative)`.
pub(super) fn rooted(from: usize, handles: &[Handle], roots: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in handles.iter().filter(|h| h.from == Some(from)) {
        if !kinds::relative_path(&h.value) {
            continue;
        }
        for r in roots {
            if std::path::Path::new(r).is_dir() {
                out.push((
                    format!(
                        "{}/{}",
                        r.trim_end_matches('/'),
                        h.value.trim_end_matches('/')
                    ),
                    h.value.clone(),
                ));
            }
        }
    }
    out.truncate(64);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_climbs_or_is_the_machines_own_is_never_sent() {
        let h = |v: &str| Handle::unlinked(v, "url");
        assert_eq!(affinity("file_path", &h("/../../etc/passwd")), None);
        assert_eq!(affinity("path", &h("logs/../../secret.txt")), None);
        assert_eq!(affinity("paths", &h("/usr/bin/grep")), None);
        assert_eq!(affinity("file_path", &h("/etc")), None);
        assert_eq!(affinity("file_path", &h("logs/waf.log")), Some(3));
        assert_eq!(affinity("file_path", &h("/srv/data/etc/notes.md")), Some(3));
    }

    #[test]
    fn a_path_argument_takes_a_listed_files_bare_name() {
        let handle = |value: &str| Handle {
            value: value.to_owned(),
            from: Some(0),
            key: "name".to_owned(),
            alias: None,
            parent: None,
            noun: None,
        };
        // sqlite-mcp-server's list_databases answers ["boardgames.db"];
        // its other tools take `db_path`.
        assert_eq!(affinity("db_path", &handle("boardgames.db")), Some(2));
        assert_eq!(
            affinity("path", &handle("/srv/data/boardgames.db")),
            Some(3)
        );
        assert_eq!(affinity("db_path", &handle("kanoxvi")), None);
        assert_eq!(affinity("file", &handle("v2.0")), None);
    }

    #[test]
    fn a_proposal_is_fitted_to_its_schema_at_every_depth() {
        let schema = serde_json::json!({"type": "object", "properties": {"entities": {"type": "array", "items": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "entityType": {"type": "string"},
                           "observations": {"type": "array", "items": {"type": "string"}}},
            "required": ["name", "entityType", "observations"]}}}, "required": ["entities"]});
        let proposed =
            serde_json::json!({"entities": [{"name": "Ada Quill", "type": "person", "age": 36}]});
        let entities = fitted(&schema, proposed.as_object().cloned().unwrap_or_default());
        assert_eq!(
            entities.map(Value::Object),
            Some(
                serde_json::json!({"entities": [{"name": "Ada Quill", "entityType": "person", "observations": []}]})
            )
        );
        // A required string nothing stands for: no call.
        let no_name = serde_json::json!({"entities": [{"type": "person"}]});
        assert_eq!(
            fitted(&schema, no_name.as_object().cloned().unwrap_or_default()).map(Value::Object),
            Some(serde_json::json!({"entities": []}))
        );
        let count = serde_json::json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
        let args = serde_json::json!({"n": "4"});
        assert_eq!(
            fitted(&count, args.as_object().cloned().unwrap_or_default()).map(Value::Object),
            Some(serde_json::json!({"n": 4}))
        );
    }

    #[test]
    fn a_word_the_error_named_is_replaced_whole() {
        assert_eq!(
            replace_token("SELECT * FROM products", "products", "orders").as_deref(),
            Some("SELECT * FROM orders")
        );
        assert_eq!(
            replace_token("SELECT * FROM productsx", "products", "orders"),
            None
        );
        assert!(identifier("orders") && identifier("mcp_insights"));
        assert!(!identifier("/tmp/shop.db") && !identifier("two words") && !identifier("42"));
    }

    #[test]
    fn handle_plans_take_turns_and_learn_from_what_answered_and_what_was_refused() {
        use rand::SeedableRng;
        let handle = |value: &str, key: &str| Handle {
            value: value.to_owned(),
            from: Some(0),
            key: key.to_owned(),
            alias: None,
            parent: None,
            noun: None,
        };
        // obsidian-mcp's read_note(vault, path): a resource's title and the
        // listed vault both fit `vault`; the notes a search found fit `path`.
        let handles = vec![
            handle("Configured Obsidian Vaults", "vaults"),
            handle("home", "vaults"),
            handle("Beekeeping/Varroa.md", "path"),
            handle("Kitchen/Plum chutney.md", "path"),
        ];
        let schema = serde_json::json!({"type": "object", "properties": {
            "vault": {"type": "string"}, "path": {"type": "string"}},
            "required": ["vault", "path"]});
        let plan = |worked: &HashSet<(String, String)>, refused: &HashSet<(String, String)>| {
            let fits = Fits {
                handles: &handles,
                worked,
                refused,
            };
            handle_plans(
                &schema,
                &fits,
                &mut ChaCha8Rng::seed_from_u64(1),
                4,
                &HashSet::new(),
                "read_note",
                &Limits::default(),
            )
            .expect("plans")
            .into_iter()
            .map(|(a, _)| {
                (
                    a["vault"].as_str().unwrap().to_owned(),
                    a["path"].as_str().unwrap().to_owned(),
                )
            })
            .collect::<Vec<_>>()
        };
        let pair = |v: &str, p: &str| (v.to_owned(), p.to_owned());
        let none = HashSet::new();
        // The slots take turns: the second set already varies the path.
        let first = plan(&none, &none);
        assert_eq!(first[0].0, "Configured Obsidian Vaults");
        assert!(
            first[..2]
                .iter()
                .any(|(_, p)| p == "Kitchen/Plum chutney.md" || p == "Beekeeping/Varroa.md")
        );
        assert!(
            first.iter().filter(|(_, p)| p.ends_with(".md")).count() >= 2,
            "{first:?}"
        );
        // The server refused the title as a vault, and `home` answered as
        // one: every set reads a note in `home`.
        let refused: HashSet<_> = [pair("vault", "Configured Obsidian Vaults")].into();
        let worked: HashSet<_> = [pair("vault", "home")].into();
        let taught = plan(&worked, &refused);
        assert!(taught.iter().all(|(v, _)| v == "home"), "{taught:?}");
        assert!(
            taught.contains(&pair("home", "Beekeeping/Varroa.md")),
            "{taught:?}"
        );
        assert!(
            taught.contains(&pair("home", "Kitchen/Plum chutney.md")),
            "{taught:?}"
        );
        // A value that answered in the slot is never refused there.
        let both: HashSet<_> = [pair("vault", "home")].into();
        assert!(plan(&both, &both).iter().any(|(v, _)| v == "home"));
    }
}
