//! The entries a listing names, each read by another tool: a vault's
//! notes, a folder's files, a store's keys. Each is read whole where that
//! can be shown, grouped by folder or namespace into kinds, each record
//! the fields its read gives (a note's front matter, a hash's fields),
//! read by the tool that tells most about an entry; a read that only
//! speaks of the name it was given is no record.

use std::collections::{BTreeMap, BTreeSet};

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::explore::Explorer;
use super::model::{continuation, is_paging, noun_of, params, shared_fields};
use crate::model::types::PlannedCall;
use crate::suite::holdings::{self, Entries, Reach, ReadCalls, RecordKind};
use crate::suite::task::Origin;

/// Entries of one listing read one by one at most: a larger listing is
/// not read whole this way.
const MAX_ENTRIES: usize = 40;

impl Explorer<'_> {
    /// Before the entries a listing names are modelled: each tool that
    /// takes one name of their kind (`hgetall`'s `name` for a store's
    /// keys), and has read none of them, is tried on the first entry of
    /// each group (a namespace, a folder), so the tool that tells most
    /// about an entry is known, not only the one the walk happened to try.
    async fn try_readers(&mut self, callable: &[&Tool]) {
        let mut tried: BTreeSet<(String, String)> = BTreeSet::new();
        let n = self.ex.observations.len();
        for l in 0..n {
            let listing = &self.ex.observations[l];
            if listing.writes || listing.record.is_some() || !self.lists_everything(&listing.args) {
                continue;
            }
            let listing_tool = listing.tool.clone();
            let by_key = listed_by_key(listing);
            for (key, values) in by_key.into_iter().filter(|(_, v)| v.len() >= 3) {
                let firsts: Vec<String> = by_folder(values.clone())
                    .into_iter()
                    .filter_map(|(_, g)| g.into_iter().next())
                    .collect();
                for tool in callable {
                    if tool.name == listing_tool.as_str()
                        || self.writers.contains(tool.name.as_ref())
                    {
                        continue;
                    }
                    let schema = Value::Object((*tool.input_schema).clone());
                    let required = super::fit::required_of(&schema);
                    let [param] = required.as_slice() else {
                        continue;
                    };
                    let param = param.clone();
                    let typed = schema
                        .get("properties")
                        .and_then(|p| p.get(&param))
                        .and_then(|p| p.get("type"))
                        .and_then(Value::as_str);
                    let fits = super::fit::affinity(
                        &param,
                        &super::text::Handle::unlinked(values[0].as_str(), key.as_str()),
                    )
                    .is_some_and(|a| a >= 3);
                    if !fits || typed.is_some_and(|t| t != "string") {
                        continue;
                    }
                    let read_one = self.ex.observations.iter().any(|o| {
                        o.tool == tool.name.as_ref()
                            && o.args
                                .get(&param)
                                .and_then(holdings::one_name)
                                .is_some_and(|v| values.iter().any(|x| x == v))
                    });
                    if read_one {
                        continue;
                    }
                    for first in &firsts {
                        if !tried.insert((tool.name.to_string(), first.clone())) {
                            continue;
                        }
                        let args = Map::from_iter([(param.clone(), Value::String(first.clone()))]);
                        let _ = self.made(&tool.name, args, Origin::Discovered, false).await;
                    }
                }
            }
        }
    }

    /// Model every listing of entries that another tool reads one by one
    /// (the walk has read at least one so): every entry read, each a
    /// record of its name and the fields its read gives.
    pub(super) async fn model_entries(&mut self, callable: &[&Tool]) {
        self.try_readers(callable).await;
        let mut done: Vec<String> = Vec::new();
        // The tools a folder's files were read by (`read_file` given
        // `/notes/people/Ana Costa.md`): other folders are read the same
        // way, in a second pass.
        let mut readers: Vec<(usize, String, String)> = Vec::new();
        let mut modelled: BTreeSet<usize> = BTreeSet::new();
        let mut read_entries: BTreeSet<Vec<String>> = BTreeSet::new();
        let n = self.ex.observations.len();
        for (pass, l) in (0..2).flat_map(|pass| (0..n).map(move |l| (pass, l))) {
            let listing = &self.ex.observations[l];
            if listing.writes
                || listing.record.is_some()
                || done.contains(&listing.tool)
                || modelled.contains(&l)
            {
                continue;
            }
            let everything = self.lists_everything(&listing.args);
            // A folder's listing, whose entries a reader takes joined to
            // the folder (`/notes/people` lists `Ana Costa.md`, read as
            // `/notes/people/Ana Costa.md`): the folder is no filter.
            let folders: Vec<(String, String)> = listing
                .args
                .iter()
                .filter(|(k, _)| super::fit::takes_path(k))
                .filter_map(|(k, v)| {
                    Some((k.clone(), v.as_str()?.trim_end_matches('/').to_owned()))
                })
                .filter(|(_, v)| !v.is_empty())
                .collect();
            if !everything && folders.is_empty() {
                continue;
            }
            let listing_tool = listing.tool.clone();
            let mut by_key = listed_by_key(listing);
            // A tool the walk gave one of those values, with its other
            // arguments what the operator gave or a setup step set up.
            // The reader's own read gives fields (a record, not a file's
            // whole text).
            let candidates: Vec<(usize, String, String, String, Option<String>)> = self
                .ex
                .observations
                .iter()
                .filter_map(|o| {
                    if o.writes
                        || o.tool == listing_tool
                        || o.handles_only
                        || !describes_more_than_its_name(o)
                    {
                        return None;
                    }
                    let listed = |v: &str| {
                        by_key
                            .iter()
                            .find(|(_, vs)| vs.len() >= 3 && vs.iter().any(|x| x == v))
                            .map(|(key, _)| key.clone())
                    };
                    let (arg, key, folder) = o.args.iter().find_map(|(k, v)| {
                        let v = holdings::one_name(v)?;
                        if everything && let Some(key) = listed(v) {
                            return Some((k.clone(), key, None));
                        }
                        folders.iter().find_map(|(fk, folder)| {
                            let entry = v.strip_prefix(folder.as_str())?.strip_prefix('/')?;
                            let rest = without(&self.ex.observations[l].args, fk);
                            let key = listed(entry).filter(|_| self.lists_everything(&rest))?;
                            Some((k.clone(), key, Some(folder.clone())))
                        })
                    })?;
                    self.lists_everything(&without(&o.args, &arg))
                        .then(|| (o.index, o.tool.clone(), arg, key, folder))
                })
                .collect();
            // Of the tools that read an entry, one that reads what a file
            // holds before one that describes any path: a tool that also
            // answered for the folder itself (a file's size and dates)
            // describes paths.
            let describes_folders = |reader: &str| {
                self.ex.observations.iter().any(|x| {
                    x.tool == reader
                        && x.args.values().any(|v| {
                            holdings::one_name(v).is_some_and(|v| {
                                folders.iter().any(|(_, f)| f == v.trim_end_matches('/'))
                            })
                        })
                })
            };
            // Where a folder's own reads only describe it, the tool that
            // read another folder's files reads this one's too (a second
            // pass, once every folder's own reads are known).
            let files = by_key
                .iter()
                .filter(|(_, vs)| {
                    vs.len() >= 3
                        && vs
                            .iter()
                            .all(|v| super::text::file_name_like(&v.replace(' ', "_")))
                })
                .max_by_key(|(_, vs)| vs.len())
                .map(|(k, _)| k.clone());
            // (Only where the folder is all the listing was given: a
            // listing told what to leave out lists part of it.)
            let whole_folder = folders.first().filter(|(fk, _)| {
                self.lists_everything(&without(&self.ex.observations[l].args, fk))
            });
            let established =
                readers
                    .iter()
                    .filter(|_| pass == 1)
                    .filter_map(|(r, reader, arg)| {
                        let (_, folder) = whole_folder?;
                        Some((
                            *r,
                            reader.clone(),
                            arg.clone(),
                            files.clone()?,
                            Some(folder.clone()),
                        ))
                    });
            let mut all: Vec<_> = candidates.iter().cloned().chain(established).collect();
            // Of several, the one whose read tells most about the entry
            // (`hgetall`'s fields before `type`'s kind and expiry); the
            // first where they tell as much.
            let told = |c: &(usize, String, String, String, Option<String>)| {
                let o = &self.ex.observations[c.0];
                let given = o.args.get(&c.2).and_then(holdings::one_name).unwrap_or("");
                holdings::entry_fields(&o.text).map_or(0, |f| about_more_than(&f, given))
            };
            all.sort_by_key(|c| std::cmp::Reverse(told(c)));
            let read = all
                .iter()
                .find(|c| c.4.is_none() || !describes_folders(&c.1))
                .or_else(|| all.first().filter(|_| pass == 1))
                .cloned();
            let Some((r, reader, arg, key, folder)) = read else {
                continue;
            };
            modelled.insert(l);
            // A reader of files by their paths reads any folder's.
            let by_path = folder.is_some()
                || holdings::one_name(&self.ex.observations[r].args[&arg]).is_some_and(|v| {
                    v.contains('/') && super::text::file_name_like(&v.replace(' ', "_"))
                });
            if by_path && !describes_folders(&reader) && !readers.iter().any(|x| x.1 == reader) {
                readers.push((r, reader.clone(), arg.clone()));
            }
            let (Some(_), Some(&list_tool)) = (
                callable.iter().find(|t| t.name == reader.as_str()),
                callable.iter().find(|t| t.name == listing_tool.as_str()),
            ) else {
                continue;
            };
            // A folder's listing is one of many the tool gives (one a
            // folder); any other listing stands for the tool.
            if folder.is_none() {
                done.push(listing_tool.clone());
            }
            let mut entries = by_key.remove(&key).unwrap_or_default();
            if let Some(f) = &folder {
                for e in entries.iter_mut() {
                    *e = format!("{f}/{e}");
                }
            }
            // The shape the reader took its entry in (one name, or a list
            // of one), kept for every read.
            let in_list = self.ex.observations[r]
                .args
                .get(&arg)
                .is_some_and(Value::is_array);
            // What the listing names them (`projects` in a summary that
            // lists several things), else the listing tool's noun.
            let listed_as = {
                let w = crate::access::words(&key);
                (w.len() == 1
                    && w[0].chars().all(char::is_alphabetic)
                    && ![
                        "name", "names", "title", "id", "key", "value", "values", "file", "path",
                        "paths", "dir", "entries", "items", "results", "data", "list",
                    ]
                    .contains(&w[0].as_str()))
                .then(|| w[0].clone())
            };
            for (folder, entries) in by_folder(entries) {
                // The same entries listed by two tools are read once.
                if !read_entries.insert(entries.clone()) {
                    continue;
                }
                let name = folder
                    .or_else(|| listed_as.clone())
                    .unwrap_or_else(|| noun_of(&listing_tool));
                self.model_entry_kind(EntryKind {
                    name,
                    entries,
                    listing: l,
                    reader_at: r,
                    reader: reader.clone(),
                    arg: arg.clone(),
                    in_list,
                    list_tool,
                })
                .await;
            }
        }
    }

    /// One kind of the entries a listing names, each read by `reader`.
    async fn model_entry_kind(&mut self, k: EntryKind<'_>) {
        let EntryKind {
            name,
            entries,
            listing: l,
            reader_at: r,
            reader,
            arg,
            in_list,
            list_tool,
        } = k;
        let listing_tool = list_tool.name.to_string();
        if entries.len() > MAX_ENTRIES {
            self.ex.holdings.notes.push(format!(
                "{name}: `{listing_tool}` listed {} entries, not read one by one (at most {MAX_ENTRIES} are)",
                entries.len()
            ));
            return;
        }
        let listing_call = PlannedCall {
            tool: listing_tool.clone(),
            arguments: self.ex.observations[l].args.clone(),
        };
        let listing_json = self.ex.observations[l].json.clone().unwrap_or(Value::Null);
        let whole_list = continuation(&listing_json).is_none()
            && params(list_tool).iter().all(|p| !is_paging(p));
        let mut calls = vec![listing_call];
        let mut records = Vec::new();
        let field = crate::access::words(&arg).join("_");
        // Each read is a record: two fields or more that are not words
        // about the entry it was given (`{"error": "Todo with ID '2026-11-30'
        // not found"}` is none), and the same kind of record as the first:
        // most of that one's fields.
        let mut reference: Vec<String> = Vec::new();
        let per_entry = Entries {
            field: field.clone(),
            arg: arg.clone(),
        };
        for entry in &entries {
            let mut args = self.ex.observations[r].args.clone();
            let value = if in_list {
                Value::Array(vec![Value::String(entry.clone())])
            } else {
                Value::String(entry.clone())
            };
            args.insert(arg.clone(), value);
            let read = match self
                .ex
                .observations
                .iter()
                .find(|x| x.tool == reader && x.args == args)
            {
                Some(x) => Some(x.index),
                None => {
                    self.made(&reader, args.clone(), Origin::Discovered, true)
                        .await
                }
            };
            let Some(i) = read else {
                break;
            };
            let Some(record) = per_entry.record(&args, &self.ex.observations[i].text) else {
                break;
            };
            if about_more_than(&record, entry) < 2 {
                break;
            }
            if reference.is_empty() {
                reference = record.keys().cloned().collect();
            }
            let shared = reference.iter().filter(|k| record.contains_key(*k)).count();
            if shared * 2 < reference.len() {
                break;
            }
            records.push(record);
            calls.push(PlannedCall {
                tool: reader.clone(),
                arguments: args,
            });
        }
        let all_read = records.len() == entries.len();
        let mut fields = vec![field.clone()];
        fields.extend(shared_fields(&records).into_iter().filter(|f| *f != field));
        let complete = (whole_list && all_read && fields.len() >= 2).then(|| {
            format!(
                "`{listing_tool}` takes no page and no limit and listed {} entries, each read by `{reader}`",
                entries.len()
            )
        });
        if complete.is_none() {
            self.ex.holdings.notes.push(format!(
                "{name}: `{listing_tool}` listed {} entries and {} were read by `{reader}`, not shown to be every record",
                entries.len(),
                records.len()
            ));
            return;
        }
        self.ex.holdings.kinds.push(RecordKind {
            name,
            fields,
            records,
            complete,
            counted_otherwise: None,
            reach: Reach::Calls(ReadCalls {
                calls,
                per_entry: Some(per_entry),
                list: None,
            }),
        });
    }
}

/// Does a read give a record: two fields or more that are neither the name
/// it was given nor words about it? (`{"error": "Todo with ID 'shed' not
/// found", "todo_id": "shed"}` speaks of the name it was given; it holds
/// no record.)
fn describes_more_than_its_name(o: &super::exploration::Observation) -> bool {
    o.args.values().filter_map(holdings::one_name).all(|given| {
        holdings::entry_fields(&o.text).is_some_and(|f| about_more_than(&f, given) >= 2)
    }) && holdings::entry_fields(&o.text).is_some_and(|f| f.len() >= 2)
}

/// The fields of a record that are not the name it was read by, nor words
/// that hold it.
fn about_more_than(record: &Map<String, Value>, given: &str) -> usize {
    record
        .values()
        .filter(|v| {
            let t = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            given.is_empty() || !t.contains(given)
        })
        .count()
}

/// One kind of a listing's entries, and how each is read.
struct EntryKind<'t> {
    name: String,
    entries: Vec<String>,
    /// The listing's observation.
    listing: usize,
    /// The reader's first observation, whose other arguments every read
    /// keeps.
    reader_at: usize,
    reader: String,
    arg: String,
    /// The reader takes its entry in a list of one.
    in_list: bool,
    list_tool: &'t Tool,
}

/// A call's arguments less one.
fn without(args: &Map<String, Value>, key: &str) -> Map<String, Value> {
    args.iter()
        .filter(|(k, _)| k.as_str() != key)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What a listing lists, by the key each value was found under, each
/// value once, in the order it gives them.
fn listed_by_key(listing: &super::exploration::Observation) -> BTreeMap<String, Vec<String>> {
    let mut by_key: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for h in super::text::harvest(&listing.text, listing.json.as_ref(), listing.index) {
        let values = by_key.entry(h.key).or_default();
        if !values.contains(&h.value) {
            values.push(h.value);
        }
    }
    by_key
}

/// Entries grouped by the folder they are in, where they are paths (a
/// vault's `people/` and `projects/`): each folder is a kind of its own,
/// named by the folder. Entries that are no paths are one group, unnamed.
fn by_folder(entries: Vec<String>) -> Vec<(Option<String>, Vec<String>)> {
    let folder = |e: &str| {
        let t = e.trim_end_matches('/');
        let (dir, _) = t.rsplit_once('/')?;
        let last = dir.rsplit('/').next()?;
        (!last.is_empty()).then(|| last.to_owned())
    };
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in &entries {
        match folder(e) {
            Some(f) => groups.entry(f).or_default().push(e.clone()),
            None => return by_namespace(entries),
        }
    }
    if groups.len() < 2 {
        // One folder names its entries' kind (`people`).
        return vec![(groups.into_keys().next(), entries)];
    }
    groups.into_iter().map(|(f, e)| (Some(f), e)).collect()
}

/// A store's keys grouped by their namespace (`bike:101` and `bike:102`
/// are `bike` records), where two keys or more share one; the other keys
/// (`frames`, `shop:name`) are one group, unnamed.
fn by_namespace(entries: Vec<String>) -> Vec<(Option<String>, Vec<String>)> {
    let space = |e: &str| {
        let (ns, id) = e.rsplit_once(':')?;
        (!ns.is_empty() && !id.is_empty() && !e.contains(char::is_whitespace) && !e.contains('/'))
            .then(|| ns.to_owned())
    };
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut rest = Vec::new();
    for e in entries {
        match space(&e) {
            Some(ns) => groups.entry(ns).or_default().push(e),
            None => rest.push(e),
        }
    }
    let mut out = Vec::new();
    for (ns, keys) in groups {
        if keys.len() >= 2 {
            out.push((Some(ns), keys));
        } else {
            rest.extend(keys);
        }
    }
    if !rest.is_empty() {
        out.push((None, rest));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_read_that_only_speaks_of_the_name_it_was_given_is_no_record() {
        let not_found = holdings::entry_fields(
            r#"{"error": "Todo with ID 'shed' not found", "todo_id": "shed"}"#,
        )
        .expect("fields");
        assert_eq!(about_more_than(&not_found, "shed"), 0);
        // A record under its one key is that record.
        let todo = holdings::entry_fields(
            r#"{"todo": {"id": "1", "text": "Order seed catalogue", "priority": "B"}}"#,
        )
        .expect("fields");
        assert_eq!(todo.get("priority"), Some(&json!("B")));
        assert_eq!(about_more_than(&todo, "1"), 2);
        // A note's front matter, its link read as the name it links to.
        let note = holdings::entry_fields(
            "---\nrole: engineer\nlead: \"[[Ana Costa|Ana]]\"\n---\n# Harbour Wall\n",
        )
        .expect("fields");
        assert_eq!(note.get("lead"), Some(&json!("Ana Costa")));
        assert_eq!(
            by_folder(vec![
                "/people/Ana Costa.md".into(),
                "/projects/Ring Road.md".into()
            ])
            .len(),
            2
        );

        let spaces = by_folder(vec![
            "bike:101".into(),
            "shop:name".into(),
            "bike:102".into(),
            "frames".into(),
        ]);
        assert_eq!(
            spaces,
            vec![
                (
                    Some("bike".to_owned()),
                    vec!["bike:101".to_owned(), "bike:102".to_owned()]
                ),
                (None, vec!["frames".to_owned(), "shop:name".to_owned()]),
            ]
        );
    }
}
