//! A model of what a server holds, built from what discovery read through
//! it: the kinds of record (a table's rows, a listing's entries), their
//! fields, every record as read, whether the records read are all of them
//! and how that was shown, and the calls an agent reaches them with.
//! Generators build it (they know how to read a server); the composer
//! ([`super::compose`]) asks questions over it. It goes into the suite's
//! config, and so its hash, as [`Holdings::summary`].

use serde_json::{Map, Value, json};

use crate::model::types::PlannedCall;

/// Records of one kind read at most; a larger kind is not composed over
/// (its records could not all be read, so no answer over them is proved).
pub const MAX_RECORDS: usize = 300;

/// What the server holds, as far as the harness read it.
#[derive(Debug, Clone, Default)]
pub struct Holdings {
    pub kinds: Vec<RecordKind>,
    /// Kinds seen but not modelled, and why (too many records, rows that
    /// did not parse, a count that did not match), for the ledger.
    pub notes: Vec<String>,
    /// Setup steps the records are read after (a project registered): a
    /// fresh server process is set up the same way, and a question that
    /// reads by calls starts with them.
    pub setup: Vec<PlannedCall>,
}

/// One kind of record.
#[derive(Debug, Clone)]
pub struct RecordKind {
    /// As the server names it: a table's name, a listing's key.
    pub name: String,
    /// Field names, in the order the server gives them.
    pub fields: Vec<String>,
    /// Every record as read, field name to value.
    pub records: Vec<Map<String, Value>>,
    /// How the records read are known to be all of them (`COUNT(*) of 42
    /// matched 42 rows read`); `None` when that was not shown, and then
    /// nothing is composed over them.
    pub complete: Option<String>,
    /// Where the server states another count of this kind than the
    /// records read (`get_statistics` gives `total_todos` 8, 7 listed): a
    /// question over all of them has two right answers, and is refused.
    pub counted_otherwise: Option<String>,
    /// How an agent reaches the records.
    pub reach: Reach,
}

/// How an agent reaches a kind's records.
#[derive(Debug, Clone)]
pub enum Reach {
    /// The rows of a table behind a tool that takes a query language: the
    /// composer writes each question's reference query, run through the
    /// server, which must agree with the answer it computed.
    Query(QueryTool),
    /// Calls that read every record, in order: a listing's pages, or a
    /// listing and then a read of each entry it names. With no query
    /// language, an answer over several records stands only where the
    /// records are complete.
    Calls(ReadCalls),
}

/// How a kind's records are read by calls.
#[derive(Debug, Clone, PartialEq)]
pub struct ReadCalls {
    pub calls: Vec<PlannedCall>,
    /// `None`: every call is a page of the listing, whose records are the
    /// objects each lists. `Some`: the first call lists the entries and
    /// each later call reads one ([`Entries`]).
    pub per_entry: Option<Entries>,
    /// The key the records' list is under, where a listing holds several
    /// (`relations` beside `entities`).
    pub list: Option<String>,
}

/// Entries a listing names, each read by a call of its own: the record is
/// the entry's name (the call's `arg`) under `field`, with the fields the
/// read's text gives.
#[derive(Debug, Clone, PartialEq)]
pub struct Entries {
    pub field: String,
    pub arg: String,
}

impl Entries {
    /// The record one read gives: the fields of its text, the entry's
    /// name under `field`, and where the entry is a file and the text
    /// names it no other way, its name less folder and extension under
    /// `name` (`/people/Ana Costa.md` is `Ana Costa`, as a note's links
    /// name it).
    pub fn record(&self, args: &Map<String, Value>, text: &str) -> Option<Map<String, Value>> {
        let entry = one_name(args.get(&self.arg)?)?;
        let mut record = entry_fields(text)?;
        record.insert(self.field.clone(), Value::String(entry.to_owned()));
        if !record.contains_key("name")
            && !record.contains_key("title")
            && let Some(stem) = file_stem(entry)
        {
            record.insert("name".into(), Value::String(stem.to_owned()));
        }
        Some(record)
    }
}

/// The one name a call's argument gives: a string, or a list of one.
pub fn one_name(v: &Value) -> Option<&str> {
    match v {
        Value::String(s) => Some(s),
        Value::Array(a) if a.len() == 1 => a[0].as_str(),
        _ => None,
    }
}

/// A file's name less its folders and its extension (`notes/Ana
/// Costa.md` is `Ana Costa`), where it has an extension.
fn file_stem(path: &str) -> Option<&str> {
    let file = path.rsplit('/').next()?;
    let (stem, ext) = file.rsplit_once('.')?;
    let ext_like = (1..=5).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric());
    (ext_like && !stem.trim().is_empty()).then(|| stem.trim())
}

/// A note's link as the name it links to: `[[Ana Costa]]` and `[[Ana
/// Costa|Ana]]` are `Ana Costa`; any other value is itself.
fn unlinked(v: &str) -> &str {
    v.strip_prefix("[[")
        .and_then(|x| x.strip_suffix("]]"))
        .map(|x| x.split(['|', '#']).next().unwrap_or(x).trim())
        .filter(|x| !x.is_empty() && !x.contains("]]"))
        .unwrap_or(v)
}

impl ReadCalls {
    /// The records the calls' texts (one per call, in order) hold, or
    /// `None` where a text does not read as they did.
    pub fn records(&self, texts: &[String], fields: &[String]) -> Option<Vec<Map<String, Value>>> {
        if texts.len() != self.calls.len() {
            return None;
        }
        match &self.per_entry {
            None => {
                let mut all = Vec::new();
                for t in texts {
                    all.extend(listed(t, self.list.as_deref())?);
                }
                Some(keep_fields(all, fields))
            }
            Some(entries) => {
                let mut all = Vec::new();
                for (call, text) in self.calls.iter().zip(texts).skip(1) {
                    all.push(entries.record(&call.arguments, text)?);
                }
                Some(keep_fields(all, fields))
            }
        }
    }
}

fn keep_fields(records: Vec<Map<String, Value>>, fields: &[String]) -> Vec<Map<String, Value>> {
    if fields.is_empty() {
        return records;
    }
    records
        .into_iter()
        .map(|r| r.into_iter().filter(|(k, _)| fields.contains(k)).collect())
        .collect()
}

/// The records a listing's text holds: the records it stands for (the
/// text itself, or the list a wrapper holds under `key`, else its first),
/// each object's scalar fields.
pub fn listed(text: &str, key: Option<&str>) -> Option<Vec<Map<String, Value>>> {
    let v = crate::suite::printed::structured(text)?;
    let all = lists(&v, None);
    let (_, rows) = match key {
        Some(k) => all.into_iter().find(|(at, _)| at.as_deref() == Some(k))?,
        None => all.into_iter().next()?,
    };
    Some(rows)
}

/// A list of records with the key it is under (none at the top).
pub type KeyedList = (Option<String>, Vec<Map<String, Value>>);

/// The first list of records in `v`, with the key it is under.
pub fn first_list(v: &Value, key: Option<&str>) -> Option<KeyedList> {
    lists(v, key).into_iter().next()
}

/// Every list of records in `v` (a graph's entities and its relations),
/// each with the key it is under, in the order found, each record its
/// scalar fields: a list of objects, or rows printed as lists under a
/// list of their columns' names (`{"columns": [...], "rows": [[...]]}`,
/// a column a name or an object with a `name`).
pub fn lists(v: &Value, key: Option<&str>) -> Vec<KeyedList> {
    match v {
        Value::Array(a) if let Some(rows) = gridded(a) => vec![(key.map(str::to_owned), rows)],
        Value::Array(a) if !a.is_empty() && a.iter().all(Value::is_object) => vec![(
            key.map(str::to_owned),
            a.iter().filter_map(Value::as_object).map(scalars).collect(),
        )],
        Value::Object(o) => {
            if let Some(rows) = columned(o) {
                return vec![(key.map(str::to_owned), rows)];
            }
            o.iter().flat_map(|(k, x)| lists(x, Some(k))).collect()
        }
        _ => Vec::new(),
    }
}

/// A grid whose first row names its columns (a spreadsheet's range, a
/// CSV read as lists): each later row a record. The first row is names
/// (distinct words, none empty) that no row below repeats in its column;
/// every row is as wide, two columns or more, two rows or more.
fn gridded(a: &[Value]) -> Option<Vec<Map<String, Value>>> {
    let (head, rows) = a.split_first()?;
    let names: Vec<String> = head
        .as_array()?
        .iter()
        .map(|c| {
            c.as_str()
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
        })
        .collect::<Option<_>>()?;
    let distinct: std::collections::BTreeSet<&String> = names.iter().collect();
    if names.len() < 2 || distinct.len() != names.len() || rows.len() < 2 {
        return None;
    }
    rows.iter()
        .map(|r| {
            let r = r.as_array().filter(|r| r.len() == names.len())?;
            if r.iter().zip(&names).any(|(c, n)| c.as_str() == Some(n)) {
                return None;
            }
            Some(
                names
                    .iter()
                    .zip(r)
                    .filter(|(_, c)| !c.is_object() && !c.is_array())
                    .map(|(n, c)| (n.clone(), c.clone()))
                    .collect(),
            )
        })
        .collect()
}

/// Rows printed as lists beside their columns' names, as records.
fn columned(o: &Map<String, Value>) -> Option<Vec<Map<String, Value>>> {
    let rows = o.values().find_map(|v| {
        v.as_array()
            .filter(|a| !a.is_empty() && a.iter().all(Value::is_array))
    })?;
    let width = rows[0].as_array().map_or(0, Vec::len);
    let names: Vec<String> = o.values().find_map(|v| {
        let a = v.as_array().filter(|a| a.len() == width && width > 0)?;
        a.iter()
            .map(|c| match c {
                Value::String(s) => Some(s.clone()),
                Value::Object(c) => c.get("name").and_then(Value::as_str).map(str::to_owned),
                _ => None,
            })
            .collect::<Option<Vec<String>>>()
    })?;
    rows.iter()
        .map(|r| {
            let r = r.as_array().filter(|r| r.len() == width)?;
            let record: Map<String, Value> = names.iter().cloned().zip(r.iter().cloned()).collect();
            Some(scalars(&record))
        })
        .collect()
}

/// An object's scalar fields, and for each list it holds how many items
/// it has (`observations` gives `observations_count`: "which entity has
/// the most observations" is a question its records answer).
pub fn scalars(o: &Map<String, Value>) -> Map<String, Value> {
    o.iter()
        .filter_map(|(k, v)| match v {
            Value::String(_) | Value::Number(_) | Value::Bool(_) => Some((k.clone(), v.clone())),
            Value::Array(a) => Some((format!("{k}_count"), Value::from(a.len()))),
            _ => None,
        })
        .collect()
}

/// The fields one entry's text gives: its JSON object's scalars, else its
/// `Label: value` lines.
pub fn entry_fields(text: &str) -> Option<Map<String, Value>> {
    if let Some(Value::Object(mut o)) = crate::suite::printed::structured(text) {
        // A record under its one key (`{"todo": {...}}`) is that record.
        while o.len() == 1
            && let Some(Value::Object(inner)) = o.values().next()
        {
            o = inner.clone();
        }
        let s = scalars(&o);
        if !s.is_empty() {
            return Some(s);
        }
    }
    let first = crate::suite::printed::labelled::records(text)
        .into_iter()
        .next()?;
    let mut out = Map::new();
    for (label, value) in first {
        let value = crate::suite::printed::labelled::unquote(&value);
        out.entry(label)
            .or_insert(Value::String(unlinked(&value).to_owned()));
    }
    (!out.is_empty()).then_some(out)
}

/// A tool that takes a query language, and the table a kind is.
#[derive(Debug, Clone)]
pub struct QueryTool {
    pub tool: String,
    /// The parameter the statement goes in.
    pub slot: String,
    /// The tool's other arguments, as the catalogue gave them.
    pub fixed: Map<String, Value>,
    pub table: String,
}

impl QueryTool {
    /// The call that runs `statement`.
    pub fn call(&self, statement: &str) -> PlannedCall {
        let mut arguments = self.fixed.clone();
        arguments.insert(self.slot.clone(), Value::String(statement.to_owned()));
        PlannedCall {
            tool: self.tool.clone(),
            arguments,
        }
    }
}

impl RecordKind {
    /// A complete kind of `rows` (JSON objects) reached by no call: the
    /// composer's tests.
    #[cfg(test)]
    pub fn of_rows(name: &str, rows: Value) -> RecordKind {
        let records: Vec<Map<String, Value>> = rows
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_object().cloned())
            .collect();
        RecordKind {
            name: name.into(),
            fields: records
                .first()
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default(),
            records,
            complete: Some("test".into()),
            counted_otherwise: None,
            reach: Reach::Calls(ReadCalls {
                calls: vec![],
                per_entry: None,
                list: None,
            }),
        }
    }

    /// The calls that read every record: the table read whole, or the
    /// listing's calls.
    pub fn read_calls(&self) -> Vec<PlannedCall> {
        match &self.reach {
            Reach::Query(q) => vec![q.call(&format!("SELECT * FROM {}", q.table))],
            Reach::Calls(r) => r.calls.clone(),
        }
    }

    /// The tool an agent reaches the records with.
    pub fn tool(&self) -> &str {
        match &self.reach {
            Reach::Query(q) => &q.tool,
            Reach::Calls(r) => r.calls.last().map_or("", |c| c.tool.as_str()),
        }
    }
}

impl Holdings {
    /// What the suite's config and hash hold of the model: each kind, its
    /// fields, its records' count, how it is complete and reached (never
    /// the records themselves: the suite's answers are hashed with its
    /// tasks).
    pub fn summary(&self) -> Value {
        Value::Array(
            self.kinds
                .iter()
                .map(|k| {
                    json!({
                        "kind": k.name,
                        "fields": k.fields,
                        "records": k.records.len(),
                        "complete": k.complete,
                        "counted_otherwise": k.counted_otherwise,
                        "tool": k.tool(),
                        "query": matches!(k.reach, Reach::Query(_)),
                    })
                })
                .collect(),
        )
    }

    /// The kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&RecordKind> {
        self.kinds.iter().find(|k| k.name == name)
    }
}
