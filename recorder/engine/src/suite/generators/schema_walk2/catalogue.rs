//! The catalogue move: a tool that takes a query language is asked for its
//! tables in each dialect until one answers (or, where a guard refuses
//! every catalogue, the tables its errors or a listing name), then for each
//! table's columns and first rows; the walk and the judge then use real
//! table and column names.

use fitness_shared::record::DiscoveryMove;
use fitness_shared::tape::timeline::excerpt;
use rmcp::model::Tool;

use super::explore::Explorer;
use super::kinds::{
    DIALECTS, Dialect, NAMED_TABLES, TABLES_READ, column_names, labelled_rows, sql_slot,
    table_names,
};
use super::text::{Handle, harvest};
use crate::suite::task::Origin;

/// Rows asked of each table.
const ROWS_PER_TABLE: usize = 10;

impl Explorer<'_> {
    /// Ask a SQL tool for its tables in each dialect until one answers,
    /// then for each table's columns and first rows.
    pub(super) async fn catalogue(&mut self, tool: &Tool, slot: &str) {
        let name = tool.name.to_string();
        let mut tried = Vec::new();
        let mut found: Option<(&Dialect, Vec<String>)> = None;
        // What the refused catalogues said (`Unknown table 'sqlite_master'.
        // Available tables: marshals, races`).
        let mut said = Vec::new();
        for d in DIALECTS {
            let Some(args) = self.with_slot(tool, slot, d.tables) else {
                break;
            };
            tried.push(d.name);
            self.last_said = None;
            let Some(i) = self.made(&name, args, Origin::Discovered, true).await else {
                said.extend(self.last_said.clone());
                continue;
            };
            let names = table_names(&self.ex.observations[i].text, d.tables);
            if !names.is_empty() {
                found = Some((d, names));
                break;
            }
        }
        // A server whose guard refuses every catalogue still names its
        // tables: in what it said refusing them, or through a tool that
        // lists them. Their rows are read by name.
        if found.is_none() {
            let named = self.tables_named(&said);
            if !named.is_empty() {
                found = Some((&NAMED_TABLES, named));
            }
        }
        let tried = format!(
            "its tables in {} dialects ({})",
            tried.len(),
            tried.join(", ")
        );
        let Some((dialect, names)) = found else {
            self.stats.discovery.push(DiscoveryMove {
                name: "catalogue".into(),
                tool: Some(name),
                tried,
                found: format!(
                    "none answered{}",
                    self.last_said
                        .as_deref()
                        .map(|w| format!("; it last said: {}", excerpt(w, 160)))
                        .unwrap_or_default()
                ),
                worked: false,
            });
            return;
        };
        let mut tables = Vec::new();
        let mut lines = Vec::new();
        for t in &names {
            if tables.len() >= TABLES_READ {
                break;
            }
            let statement = dialect.columns.replace("{t}", t);
            let columns = match self.with_slot(tool, slot, &statement) {
                Some(args) if !statement.is_empty() => {
                    match self.made(&name, args, Origin::Discovered, true).await {
                        Some(i) => column_names(&self.ex.observations[i].text, &statement, t),
                        None => Vec::new(),
                    }
                }
                _ => Vec::new(),
            };
            let rows = format!("SELECT * FROM {t} LIMIT {ROWS_PER_TABLE}");
            let Some(args) = self.with_slot(tool, slot, &rows) else {
                break;
            };
            // A name that is no table gives no rows, and is dropped.
            let Some(i) = self.made(&name, args, Origin::Discovered, false).await else {
                continue;
            };
            // Rows answered as bare lists are labelled by their columns,
            // so each value is a fact with its column's name.
            // A table's rows are a read of everything: a task from them
            // names a record, never the statement.
            self.ex.observations[i].record = Some(t.clone());
            self.ex.observations[i].broad = true;
            let o = &self.ex.observations[i];
            if let Some(labelled) = labelled_rows(o.json.as_ref(), &o.text, &columns) {
                let handles = harvest(&o.text, Some(&labelled), i);
                self.ex.observations[i].json = Some(labelled);
                for h in handles {
                    self.ex.add_handle(h);
                }
            }
            tables.push(t.clone());
            self.model_table(tool, slot, t, &columns).await;
            if let Some(h) = self.ex.add_handle(Handle::unlinked(t.as_str(), "table")) {
                self.ex.discovered.insert(h);
            }
            lines.push(format!("{t}({})", columns.join(", ")));
        }
        // The catalogue stands for the walk's own guesses at this tool: an
        // invented word or a harvested name is no statement.
        if !tables.is_empty() {
            self.covered.insert(name.clone());
        }
        // How the tables were named: a dialect's catalogue, or what the
        // server said without one.
        let by = if dialect.tables.is_empty() {
            dialect.name.to_owned()
        } else {
            format!("the {} dialect", dialect.name)
        };
        if !lines.is_empty() {
            self.ex.about.push_str(&format!(
                "Tables (through `{name}`, {by}): {}\n",
                lines.join("; ")
            ));
        }
        self.stats.discovery.push(DiscoveryMove {
            name: "catalogue".into(),
            tool: Some(name),
            tried,
            found: if tables.is_empty() {
                format!("{by} named {} but none gave rows", names.join(", "))
            } else {
                format!(
                    "{} tables by {by} ({}), their columns and first rows read",
                    tables.len(),
                    tables.join(", ")
                )
            },
            worked: !tables.is_empty(),
        });
    }

    /// A query tool whose catalogue found nothing before the walk is asked
    /// again after it, where an argument its first try had to invent is
    /// now one the server named (a `connection` a listing gave as
    /// `Connection: shop`). The second try's move replaces the first's
    /// where it found tables.
    pub(super) async fn catalogue_again(&mut self, callable: &[&Tool]) {
        for tool in callable {
            let name = tool.name.to_string();
            if self.writers.contains(&name) || self.covered.contains(&name) {
                continue;
            }
            let Some(slot) = sql_slot(tool) else {
                continue;
            };
            let Some(first) = self.stats.discovery.iter().position(|m| {
                m.name == "catalogue" && m.tool.as_deref() == Some(&name) && !m.worked
            }) else {
                continue;
            };
            let schema = serde_json::Value::Object((*tool.input_schema).clone());
            let named: Vec<String> = super::fit::required_of(&schema)
                .into_iter()
                .filter(|k| *k != slot)
                .filter_map(|k| self.listed_as(&k).map(|v| format!("{k} = {v:?}")))
                .collect();
            if named.is_empty() {
                continue;
            }
            let at = self.stats.discovery.len();
            self.catalogue(tool, &slot).await;
            if let Some(m) = self.stats.discovery.get_mut(at)
                && m.worked
            {
                m.tried = format!(
                    "{}, again with {} as the server named it",
                    m.tried,
                    named.join(", ")
                );
                self.stats.discovery.remove(first);
            }
        }
    }

    /// Read a table whole into the model of what the server holds: its
    /// rows counted (`COUNT(*)`), then every row read, the two compared.
    /// A table too large to read whole, or whose rows do not parse or do
    /// not match the count, is noted and not modelled.
    async fn model_table(&mut self, tool: &Tool, slot: &str, table: &str, columns: &[String]) {
        use crate::suite::holdings::{MAX_RECORDS, QueryTool, Reach, RecordKind};
        let name = tool.name.to_string();
        let Some(ident) = crate::suite::compose::sql_ident(table) else {
            self.ex.holdings.notes.push(format!(
                "{table}: its name needs quoting, so no question is asked of it"
            ));
            return;
        };
        let count = format!("SELECT COUNT(*) AS answer FROM {ident}");
        let Some(args) = self.with_slot(tool, slot, &count) else {
            return;
        };
        let Some(i) = self
            .made(&name, args.clone(), Origin::Discovered, true)
            .await
        else {
            self.ex
                .holdings
                .notes
                .push(format!("{table}: its rows could not be counted"));
            return;
        };
        let Some(n) = crate::suite::compose::prove::answer_number(&self.ex.observations[i].text)
        else {
            self.ex
                .holdings
                .notes
                .push(format!("{table}: its count did not read as one number"));
            return;
        };
        if n > MAX_RECORDS as f64 {
            self.ex.holdings.notes.push(format!(
                "{table}: {n} rows, over the {MAX_RECORDS} read whole, so no answer over them is proved"
            ));
            return;
        }
        let all = format!("SELECT * FROM {ident}");
        let Some(args) = self.with_slot(tool, slot, &all) else {
            return;
        };
        let Some(i) = self
            .made(&name, args.clone(), Origin::Discovered, true)
            .await
        else {
            self.ex
                .holdings
                .notes
                .push(format!("{table}: its rows could not be read whole"));
            return;
        };
        let o = &self.ex.observations[i];
        let records: Vec<serde_json::Map<String, serde_json::Value>> =
            labelled_rows(o.json.as_ref(), &o.text, columns)
                .and_then(|v| v.as_array().cloned())
                .map(|rows| {
                    rows.into_iter()
                        .filter_map(|r| r.as_object().cloned())
                        .collect()
                })
                .or_else(|| crate::suite::holdings::listed(&o.text, None))
                .unwrap_or_default();
        if records.len() as f64 != n {
            self.ex.holdings.notes.push(format!(
                "{table}: COUNT(*) gave {n}, but {} rows were read, so its rows are not known to be all of them",
                records.len()
            ));
            return;
        }
        let mut fields: Vec<String> = columns.to_vec();
        if fields.is_empty()
            || !records
                .iter()
                .all(|r| fields.iter().all(|f| r.contains_key(f)))
        {
            fields = records
                .first()
                .map(|r| r.keys().cloned().collect())
                .unwrap_or_default();
        }
        let mut fixed = args;
        fixed.remove(slot);
        self.ex.holdings.kinds.push(RecordKind {
            name: table.to_owned(),
            fields,
            complete: Some(format!(
                "COUNT(*) gave {n}, and {} rows were read",
                records.len()
            )),
            records,
            counted_otherwise: None,
            reach: Reach::Query(QueryTool {
                tool: name,
                slot: slot.to_owned(),
                fixed,
                table: ident,
            }),
        });
    }

    /// The tables a server named without a catalogue: the choices its
    /// errors listed, then the values a listing gave under a table's key
    /// (`{"table": "marshals"}`).
    fn tables_named(&self, said: &[String]) -> Vec<String> {
        let mut named: Vec<String> = said
            .iter()
            .flat_map(|s| super::follow::choice_lists(s))
            .flatten()
            .collect();
        for h in &self.ex.handles {
            let key = crate::access::words(&h.key);
            let a_table = key
                .iter()
                .any(|w| w == "table" || w == "tables" || w == "tablename");
            if h.from.is_some() && a_table && super::fit::identifier(&h.value) {
                named.push(h.value.clone());
            }
        }
        let mut unique = Vec::new();
        for n in named {
            if !unique.contains(&n) {
                unique.push(n);
            }
        }
        unique.truncate(TABLES_READ * 3);
        unique
    }
}
