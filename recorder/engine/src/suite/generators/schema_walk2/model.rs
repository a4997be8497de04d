//! The model of what the server holds, from what its listings said: a
//! listing that answered a list of records (every page of it, where it
//! has pages); a listing of entries each read by another tool is the
//! `entries` room's. A listing counts as whole only where that is shown:
//! it says how many it holds and that many were read, it was read to its
//! last page, it gave fewer than a limit asked for, or it takes no page
//! and no limit and gave no continuation. Filtered listings (a search, a listing under a
//! parent) are no kind of their own.

use std::collections::{BTreeMap, BTreeSet};

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::explore::Explorer;
use crate::model::types::PlannedCall;
use crate::suite::holdings::{self, MAX_RECORDS, Reach, ReadCalls, RecordKind};
use crate::suite::task::Origin;

/// Parameters that page or limit a listing.
const PAGING: &[&str] = &[
    "limit",
    "page",
    "pagesize",
    "perpage",
    "offset",
    "cursor",
    "after",
    "before",
    "max",
    "maxresults",
    "top",
    "first",
    "skip",
    "start",
    "size",
    "count",
    "num",
    "pagetoken",
    "nexttoken",
    "token",
    "pagenumber",
];
/// Keys that say a listing goes on past what it gave.
const CONTINUES: &[&str] = &[
    "next",
    "nextcursor",
    "cursor",
    "hasmore",
    "nextpage",
    "more",
    "truncated",
    "nexttoken",
    "continuation",
    "nextpagetoken",
];
/// Keys that say how many records a listing holds in all.
const TOTALS: &[&str] = &[
    "total",
    "count",
    "totalcount",
    "totalitems",
    "totalresults",
    "length",
];
/// Pages followed at most.
const MAX_PAGES: usize = 20;

/// A list a listing holds: the key it is under, the kind's name, its
/// records.
type Listed = (Option<String>, String, Vec<Map<String, Value>>);

/// A parameter or key name, its words run together, lower case.
fn squashed(name: &str) -> String {
    crate::access::words(name).concat()
}

pub(super) fn is_paging(name: &str) -> bool {
    PAGING.contains(&squashed(name).as_str())
}

impl Explorer<'_> {
    /// Where a call read a whole place the server named (a workbook's
    /// sheet, a collection): each argument pages, is the operator's, or
    /// is a name another listing gave that no record it answered holds (a
    /// value a record holds would filter them). The place is the last
    /// such name (`Sales` of `sales.xlsx`, `Sales`).
    fn place_of(&self, i: usize) -> Option<String> {
        let o = &self.ex.observations[i];
        // A tool that describes a place (`describe_table`,
        // `get_table_schema`) answers about it, not what it holds.
        const DESCRIBING: &[&str] = &[
            "describe",
            "description",
            "schema",
            "schemas",
            "column",
            "columns",
            "structure",
            "info",
            "metadata",
            "definition",
            "definitions",
            "stats",
            "statistics",
            "properties",
        ];
        if crate::access::words(&o.tool)
            .iter()
            .any(|w| DESCRIBING.contains(&w.as_str()))
        {
            return None;
        }
        let json = o.json.as_ref()?;
        let schema_like = holdings::lists(json, None).iter().any(|(_, rows)| {
            rows.first().is_some_and(|r| {
                r.keys().any(|k| {
                    let w = crate::access::words(k);
                    w.iter().any(|x| x == "nullable" || x == "column") || w == ["data", "type"]
                })
            })
        });
        if schema_like {
            return None;
        }
        let held: BTreeSet<String> = holdings::lists(json, None)
            .into_iter()
            .flat_map(|(_, rows)| rows)
            .flat_map(|r| r.into_values())
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        let mut place: Option<(bool, String)> = None;
        for (k, v) in &o.args {
            if is_paging(k) || self.lists_everything(&Map::from_iter([(k.clone(), v.clone())])) {
                continue;
            }
            // What a search was given filters; it names no place.
            if crate::access::words(k)
                .iter()
                .any(|w| super::kinds::SEARCH_WORDS.contains(&w.as_str()))
            {
                return None;
            }
            let v = v.as_str()?;
            let listed = self.ex.handles.iter().any(|h| {
                h.value == v
                    && h.from
                        .is_some_and(|f| f != i && !self.ex.observations[f].writes)
            });
            if !listed || held.contains(v) {
                return None;
            }
            // The place's name, not where it lies (a workbook's path, a
            // range of cells): a `sheet`, a `collection`, a `table`.
            let locates = crate::access::words(k).iter().any(|w| {
                matches!(
                    w.as_str(),
                    "path" | "file" | "filename" | "uri" | "url" | "range" | "dir" | "folder"
                )
            });
            if !locates || place.as_ref().is_none_or(|(l, _)| *l) {
                place = Some((locates, v.to_owned()));
            }
        }
        place.map(|(_, v)| v)
    }

    /// Does a call list everything, or only what a filter chose? Each of
    /// its arguments pages it, or is what the operator gave (the working
    /// folder) or a setup step set up (the project registered): none
    /// filters. A value discovery read (a resource's words) is no
    /// operator's: a search for it filters.
    pub(super) fn lists_everything(&self, args: &Map<String, Value>) -> bool {
        args.iter().all(|(k, v)| {
            is_paging(k)
                || v.as_str().is_some_and(matches_every_name)
                || v.as_str().is_some_and(|v| {
                    self.ex.handles.iter().enumerate().any(|(i, h)| {
                        h.value == v
                            && ((h.from.is_none() && !self.ex.discovered.contains(&i))
                                || h.from.is_some_and(|f| self.ex.observations[f].writes))
                    }) || self
                        .ex
                        .setup
                        .iter()
                        .any(|c| c.arguments.values().any(|x| x.as_str() == Some(v)))
                })
        })
    }

    /// Model every listing that answered with records: each a kind whose
    /// records are known to be whole (or noted why not); a kind of a name
    /// modelled already is left as it was.
    pub(super) async fn model_listings(&mut self, callable: &[&Tool]) {
        let mut found: BTreeMap<String, RecordKind> = BTreeMap::new();
        let n = self.ex.observations.len();
        for i in 0..n {
            let o = &self.ex.observations[i];
            // A listing, or an example the tool's description gives (its
            // records are the tool's own answer to its own call).
            let place = self.place_of(i);
            if o.writes
                || o.record.is_some()
                || !(self.lists_everything(&o.args)
                    || self.ex.examples.contains(&i)
                    || place.is_some())
            {
                continue;
            }
            let Some(tool) = callable.iter().find(|t| t.name == o.tool.as_str()) else {
                continue;
            };
            // A query language's tables are the catalogue's to read; its
            // own example's answer is a listing like any other.
            if super::kinds::sql_slot(tool).is_some() && !self.ex.examples.contains(&i) {
                continue;
            }
            let Some(json) = o.json.clone() else {
                continue;
            };
            let call = PlannedCall {
                tool: o.tool.clone(),
                arguments: o.args.clone(),
            };
            let listed: Vec<Listed> = holdings::lists(&json, None)
                .into_iter()
                .map(|(key, rows)| {
                    let name = place
                        .as_deref()
                        .map(|p| place_name(p, key.as_deref()))
                        .or_else(|| key.clone())
                        .or_else(|| labelled_by(&rows))
                        .unwrap_or_else(|| noun_of(&call.tool));
                    (key, name, rows)
                })
                .collect();
            let one_list = listed.len() == 1;
            for (key, name, records) in listed {
                let fields = shared_fields(&records);
                if records.len() < 3 || fields.len() < 2 {
                    continue;
                }
                // A listing of several lists is read whole as it stands (a
                // graph's entities and relations); one list may have pages.
                let kind = if one_list {
                    self.whole_listing(tool, call.clone(), &json, records, fields, name)
                        .await
                } else {
                    let complete = (continuation(&json).is_none()
                        && params(tool).iter().all(|p| !is_paging(p)))
                    .then(|| {
                        format!(
                            "`{}` takes no page and no limit and gave no continuation",
                            call.tool
                        )
                    });
                    RecordKind {
                        name,
                        fields,
                        records,
                        complete,
                        counted_otherwise: None,
                        reach: Reach::Calls(ReadCalls {
                            calls: vec![call.clone()],
                            per_entry: None,
                            list: key,
                        }),
                    }
                };
                let better = found
                    .get(&kind.name)
                    .is_none_or(|k| k.complete.is_none() && kind.complete.is_some());
                if better {
                    found.insert(kind.name.clone(), kind);
                }
            }
        }
        for (_, kind) in found {
            // Modelled already (listings are modelled again after the
            // entries are read: an entry's read may list records too).
            if self.ex.holdings.kinds.iter().any(|k| k.name == kind.name)
                || self
                    .ex
                    .holdings
                    .notes
                    .iter()
                    .any(|n| n.starts_with(&format!("{}: ", kind.name)))
            {
                continue;
            }
            if kind.complete.is_none() {
                self.ex.holdings.notes.push(format!(
                    "{}: listed by `{}`, not shown to be every record",
                    kind.name,
                    kind.tool()
                ));
            }
            self.ex.holdings.kinds.push(kind);
        }
    }

    /// The listing read whole where it can be: its total checked, its
    /// pages followed, or a limit asked that it stayed under.
    async fn whole_listing(
        &mut self,
        tool: &Tool,
        call: PlannedCall,
        json: &Value,
        mut records: Vec<Map<String, Value>>,
        fields: Vec<String>,
        name: String,
    ) -> RecordKind {
        let params = params(tool);
        let paging: Vec<&String> = params.iter().filter(|p| is_paging(p)).collect();
        let mut calls = vec![call.clone()];
        let continues = continuation(json);
        let complete = if let Some(total) = total(json).filter(|t| *t == records.len() as u64) {
            Some(format!(
                "`{}` says it holds {total}, and {total} were read",
                call.tool
            ))
        } else if continues.is_none() && paging.is_empty() {
            Some(format!(
                "`{}` takes no page and no limit and gave no continuation",
                call.tool
            ))
        } else if let Some(cursor) = continues {
            self.follow_pages(tool, &call, cursor, &params, &mut calls, &mut records)
                .await
        } else {
            self.under_a_limit(tool, &call, &params, &mut calls, &mut records)
                .await
        };
        RecordKind {
            name,
            fields,
            records,
            complete,
            counted_otherwise: None,
            reach: Reach::Calls(ReadCalls {
                calls,
                per_entry: None,
                list: None,
            }),
        }
    }

    /// Follow a listing's continuation (a cursor, a next page) to its
    /// last page; whole when it ends within the bounds.
    async fn follow_pages(
        &mut self,
        tool: &Tool,
        first: &PlannedCall,
        mut cursor: Value,
        params: &[String],
        calls: &mut Vec<PlannedCall>,
        records: &mut Vec<Map<String, Value>>,
    ) -> Option<String> {
        let slot = params.iter().find(|p| {
            let s = squashed(p);
            s.contains("cursor")
                || s.contains("token")
                || s == "after"
                || s == "page"
                || s == "pagenumber"
        })?;
        for _ in 0..MAX_PAGES {
            let mut args = first.arguments.clone();
            let value = match (&cursor, squashed(slot).as_str()) {
                // A page number: the next one.
                (Value::Bool(true), "page" | "pagenumber") => {
                    let at = args.get(slot).and_then(Value::as_u64).unwrap_or(1);
                    Value::from(at + 1)
                }
                (Value::Bool(_), _) => return None,
                (v, _) => v.clone(),
            };
            args.insert(slot.clone(), value);
            let i = self
                .made(&tool.name, args.clone(), Origin::Discovered, true)
                .await?;
            calls.push(PlannedCall {
                tool: tool.name.to_string(),
                arguments: args,
            });
            let o = &self.ex.observations[i];
            let page = o
                .json
                .as_ref()
                .and_then(|j| holdings::first_list(j, None))
                .map(|(_, rows)| rows)
                .unwrap_or_default();
            records.extend(page);
            if records.len() > MAX_RECORDS {
                return None;
            }
            match o.json.as_ref().and_then(continuation) {
                Some(next) => cursor = next,
                None => {
                    return Some(format!(
                        "`{}` read to its last page ({} pages, {} records)",
                        tool.name,
                        calls.len(),
                        records.len()
                    ));
                }
            }
        }
        None
    }

    /// Ask the listing for more than it gave, under its limit parameter:
    /// whole when it gives fewer than asked.
    async fn under_a_limit(
        &mut self,
        tool: &Tool,
        first: &PlannedCall,
        params: &[String],
        calls: &mut Vec<PlannedCall>,
        records: &mut Vec<Map<String, Value>>,
    ) -> Option<String> {
        let slot = params.iter().find(|p| {
            let s = squashed(p);
            [
                "limit",
                "max",
                "maxresults",
                "top",
                "first",
                "pagesize",
                "perpage",
                "size",
                "count",
                "num",
            ]
            .contains(&s.as_str())
        })?;
        let schema = tool
            .input_schema
            .get("properties")
            .and_then(|p| p.get(slot.as_str()));
        let most = schema
            .and_then(|s| s.get("maximum"))
            .and_then(Value::as_u64)
            .unwrap_or(MAX_RECORDS as u64 + 1)
            .min(MAX_RECORDS as u64 + 1);
        let mut args = first.arguments.clone();
        args.insert(slot.clone(), Value::from(most));
        let i = self
            .made(&tool.name, args.clone(), Origin::Discovered, true)
            .await?;
        let o = &self.ex.observations[i];
        let got: Vec<Map<String, Value>> = o
            .json
            .as_ref()
            .and_then(|j| holdings::first_list(j, None))
            .map(|(_, rows)| rows)
            .unwrap_or_default();
        if (got.len() as u64) >= most || got.len() < records.len() {
            return None;
        }
        let continues = o.json.as_ref().and_then(continuation).is_some();
        if continues {
            return None;
        }
        *records = got;
        *calls = vec![PlannedCall {
            tool: tool.name.to_string(),
            arguments: args,
        }];
        Some(format!(
            "`{}` asked for up to {most} gave {}",
            tool.name,
            records.len()
        ))
    }
}

/// A tool's parameter names.
pub(super) fn params(tool: &Tool) -> Vec<String> {
    tool.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// The fields most of the records have (four in five), in the order the
/// first gives them.
pub(super) fn shared_fields(records: &[Map<String, Value>]) -> Vec<String> {
    let Some(first) = records.first() else {
        return Vec::new();
    };
    first
        .keys()
        .filter(|k| records.iter().filter(|r| r.contains_key(*k)).count() * 5 >= records.len() * 4)
        .cloned()
        .collect()
}

/// What a listing says about a next page: its cursor or token, `true`
/// for a `has_more` flag, `None` when it says none follows.
pub(super) fn continuation(v: &Value) -> Option<Value> {
    let o = v.as_object()?;
    o.iter().find_map(|(k, x)| {
        CONTINUES.contains(&squashed(k).as_str()).then_some(())?;
        match x {
            Value::Null | Value::Bool(false) => None,
            Value::String(s) if s.is_empty() => None,
            other => Some(other.clone()),
        }
    })
}

impl Explorer<'_> {
    /// Counts the server states of each kind elsewhere: a call that took
    /// no argument (a summary, statistics) giving a whole number under a
    /// label of the kind's noun and a total (`total_todos`), or the noun
    /// alone, other than the records read. A question over all of them
    /// then has two right answers ([`RecordKind::counted_otherwise`]).
    pub(super) fn counted_otherwise(&mut self) {
        let ex = &mut self.ex;
        for kind in ex.holdings.kinds.iter_mut() {
            let Some(noun) = crate::access::words(&kind.name).pop() else {
                continue;
            };
            let one = noun.strip_suffix('s').unwrap_or(&noun).to_owned();
            let forms = [one.clone(), format!("{one}s")];
            let n = kind.records.len() as f64;
            let said = ex
                .observations
                .iter()
                .filter(|o| o.args.is_empty() && !o.writes)
                .find_map(|o| {
                    super::text::facts(&o.text, o.json.as_ref())
                        .into_iter()
                        .filter(|f| f.subject.is_none())
                        .find(|f| {
                            let words = crate::access::words(&f.label);
                            let names = words.iter().any(|w| forms.contains(w));
                            let totals = words.iter().all(|w| {
                                forms.contains(w)
                                    || ["total", "count", "number", "all", "of"]
                                        .contains(&w.as_str())
                            });
                            names
                                && totals
                                && f.number
                                    .is_some_and(|x| x.fract() == 0.0 && x >= 0.0 && x != n)
                        })
                        .map(|f| (o.tool.clone(), f))
                });
            if let Some((tool, f)) = said {
                let why = format!(
                    "`{tool}` gives `{}` {}, where {} {} were read",
                    f.label,
                    f.value,
                    kind.records.len(),
                    kind.name
                );
                let note = format!("{}: {why}", kind.name);
                if !ex.holdings.notes.contains(&note) {
                    ex.holdings.notes.push(note);
                }
                kind.counted_otherwise = Some(why);
            }
        }
    }
}

/// The total a listing says it holds, where it says one.
fn total(v: &Value) -> Option<u64> {
    let o = v.as_object()?;
    o.iter()
        .find(|(k, _)| TOTALS.contains(&squashed(k).as_str()))
        .and_then(|(_, x)| x.as_u64())
}

/// A kind named by the field its records are named by, where that field
/// names a thing (`account` for a ledger's balances by account), never a
/// bare `name` or `id`: its plural.
fn labelled_by(rows: &[Map<String, Value>]) -> Option<String> {
    let first = rows.first()?;
    first.keys().find_map(|k| {
        let words = crate::access::words(k);
        let thing = words.len() == 1
            && words[0].chars().all(char::is_alphabetic)
            && !["name", "title", "id", "key", "label", "value", "type"]
                .contains(&words[0].as_str());
        let mut seen = std::collections::BTreeSet::new();
        let unique_texts = rows.iter().all(|r| {
            r.get(k)
                .and_then(Value::as_str)
                .is_some_and(|v| seen.insert(v.to_owned()))
        });
        (thing && unique_texts).then(|| {
            if words[0].ends_with('s') {
                words[0].clone()
            } else {
                format!("{}s", words[0])
            }
        })
    })
}

/// A kind named by the place it was listed from: a folder's path by its
/// last part (`/home/ana/notes/meetings` lists the entries in
/// `meetings`), with the key the list is under where there is one (the
/// `functions` in `stats.rs`); any other place as it is (a sheet, a
/// collection).
fn place_name(place: &str, key: Option<&str>) -> String {
    let t = place.trim_end_matches('/');
    let what = key.unwrap_or("entries");
    match t.rsplit_once('/') {
        Some((_, last)) if !last.is_empty() => format!("{what} in {last}"),
        _ if key.is_some() => format!("{what} in {place}"),
        _ => place.to_owned(),
    }
}

/// A search pattern that matches every name: a regular expression's `.`
/// or `.*`, a glob's `*`, SQL's `%`.
fn matches_every_name(v: &str) -> bool {
    matches!(v, "." | ".*" | "*" | "%" | "**" | "**/*")
}

/// A listing tool's noun: its name less the verbs (`list_tasks` is
/// `tasks`).
pub(super) fn noun_of(tool: &str) -> String {
    super::kinds::tool_noun(tool).unwrap_or_else(|| "records".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listing_says_whether_it_goes_on_and_how_many_it_holds() {
        assert_eq!(
            continuation(&json!({"items": [], "next_cursor": "abc"})),
            Some(json!("abc"))
        );
        assert_eq!(continuation(&json!({"items": [], "hasMore": false})), None);
        assert_eq!(
            continuation(&json!({"items": [], "has_more": true})),
            Some(json!(true))
        );
        assert_eq!(total(&json!({"tasks": [], "totalCount": 12})), Some(12));
        assert_eq!(noun_of("list_tasks"), "tasks");
        assert_eq!(noun_of("getAllOpenInvoices"), "open_invoices");
        assert!(is_paging("page_size") && is_paging("nextToken") && !is_paging("project"));
        assert_eq!(
            place_name("/home/ana/notes/meetings/", None),
            "entries in meetings"
        );
        assert_eq!(
            place_name("src/stats/binomial.rs", Some("functions")),
            "functions in binomial.rs"
        );
        assert!(matches_every_name(".") && !matches_every_name("e"));
    }
}
