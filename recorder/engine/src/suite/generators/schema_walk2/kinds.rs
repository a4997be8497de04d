//! What kind of thing a tool's parameter or a result is, read from words
//! alone (never a server's name): a parameter that takes SQL, a search, a
//! URI; a catalogue's answer (its tables, its columns), rows answered as
//! bare lists; a relative path, a local URI. Discovery's moves
//! ([`super::discover`]) decide with these what to try.

use std::collections::BTreeSet;

use rmcp::model::Tool;
use serde_json::Value;

/// Tables whose columns and rows are read at most.
pub(super) const TABLES_READ: usize = 8;

/// A SQL dialect's catalogue: how to list tables, a table's columns, and
/// its rows.
pub(crate) struct Dialect {
    pub name: &'static str,
    pub tables: &'static str,
    /// `{t}` is the table.
    pub columns: &'static str,
}

/// The dialects tried, in order: the standard catalogue first (PostgreSQL,
/// MySQL, MariaDB, DuckDB, SQL Server, ClickHouse have it), then SQLite's,
/// then the statements of the servers that have neither.
pub(crate) const DIALECTS: &[Dialect] = &[
    Dialect {
        name: "information_schema",
        tables: "SELECT table_name FROM information_schema.tables WHERE table_schema NOT IN ('information_schema', 'pg_catalog', 'mysql', 'performance_schema', 'sys') ORDER BY table_name",
        columns: "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = '{t}' ORDER BY ordinal_position",
    },
    Dialect {
        name: "sqlite_master",
        tables: "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name",
        columns: "SELECT name, type FROM pragma_table_info('{t}')",
    },
    Dialect {
        name: "SHOW TABLES",
        tables: "SHOW TABLES",
        columns: "SHOW COLUMNS FROM {t}",
    },
    Dialect {
        name: "duckdb_tables()",
        tables: "SELECT table_name FROM duckdb_tables() ORDER BY table_name",
        columns: "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = '{t}'",
    },
];

/// The tables a server named in its errors or a listing, with no
/// catalogue statement: their rows are read by name, their columns from
/// the rows.
pub(crate) const NAMED_TABLES: Dialect = Dialect {
    name: "tables its errors or a listing named",
    tables: "",
    columns: "",
};

/// Words of a tool's name that are no noun: verbs of listing and reading
/// and of setting up (`list_tasks` lists tasks, `register_project_tool`
/// gives a project).
const NOT_NOUNS: &[&str] = &[
    "list",
    "get",
    "all",
    "fetch",
    "read",
    "show",
    "find",
    "search",
    "query",
    "browse",
    "view",
    "retrieve",
    "load",
    "enumerate",
    "dump",
    "tool",
    "tools",
    "register",
    "select",
    "use",
    "set",
    "create",
    "add",
    "available",
    "my",
    "current",
    "new",
];

/// What a tool lists or gives, by its name: its words less the verbs
/// (`list_languages` is `languages`, `register_project_tool` is
/// `project`); `None` where nothing is left.
pub(crate) fn tool_noun(tool: &str) -> Option<String> {
    let words: Vec<String> = crate::access::words(tool)
        .into_iter()
        .filter(|w| !NOT_NOUNS.contains(&w.as_str()))
        .collect();
    (!words.is_empty()).then(|| words.join("_"))
}

/// Words that say a tool speaks SQL.
const SQL_WORDS: &[&str] = &[
    "sql",
    "select",
    "sqlite",
    "postgres",
    "postgresql",
    "mysql",
    "mariadb",
    "duckdb",
    "database",
    "table",
    "tables",
];
/// Parameter names that take a statement.
const STATEMENT_WORDS: &[&str] = &["query", "statement", "stmt", "sql", "command", "cmd"];
/// Parameter names that take a search.
pub(super) const SEARCH_WORDS: &[&str] = &[
    "query", "q", "pattern", "regex", "regexp", "filter", "search", "keyword", "keywords", "term",
    "terms", "glob",
];

/// Words of a catalogue's answer that are never a table.
const CATALOGUE_WORDS: &[&str] = &[
    "table_name",
    "table_schema",
    "table_type",
    "tables",
    "table",
    "name",
    "names",
    "type",
    "view",
    "base",
    "rows",
    "row",
    "columns",
    "column",
    "result",
    "results",
    "count",
    "true",
    "false",
    "null",
    "none",
    "public",
    "main",
    "dbo",
    "temp",
    "information_schema",
    "pg_catalog",
    "tables_in",
    "select",
    "from",
    "where",
    "query",
    "success",
    "data",
    "json",
    "text",
];
/// Column types, never a column's name.
const TYPE_WORDS: &[&str] = &[
    "integer",
    "int",
    "bigint",
    "smallint",
    "text",
    "varchar",
    "character",
    "varying",
    "char",
    "real",
    "double",
    "precision",
    "float",
    "numeric",
    "decimal",
    "boolean",
    "bool",
    "date",
    "timestamp",
    "time",
    "blob",
    "bytea",
    "json",
    "jsonb",
    "uuid",
    "with",
    "without",
    "zone",
    "column_name",
    "data_type",
    "field",
    "null",
    "key",
    "default",
    "extra",
    "yes",
    "no",
    "pri",
    "notnull",
    "dflt_value",
    "cid",
    "pk",
    "name",
    "type",
    "ordinal_position",
];

/// Name words of a tool that searches for keywords.
const SEARCH_TOOL_WORDS: &[&str] = &["search", "find", "lookup", "grep", "match"];

/// The words of a tool: its name and description.
fn tool_words(t: &Tool) -> Vec<String> {
    let mut words = crate::access::words(&t.name);
    words.extend(crate::access::words(t.description.as_deref().unwrap_or("")));
    words
}

/// Free string parameters of a tool, with their schemas.
pub(super) fn string_params(t: &Tool) -> Vec<(String, Value)> {
    t.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, p)| {
            let s = of_type(p, "string")?;
            (s.get("enum").is_none() && s.get("const").is_none()).then(|| (k.clone(), s.clone()))
        })
        .collect()
}

/// The branch of a property that has JSON type `ty`: the property itself
/// (`"type": "string"`, or `["string", "null"]`), else its first `anyOf` /
/// `oneOf` branch of that type (an optional Python `str | None` is
/// `anyOf: [{string}, {null}]`, a `str | list[str]` two branches). The
/// branch keeps the property's own description.
pub(super) fn of_type(p: &Value, ty: &str) -> Option<Value> {
    let has = |v: &Value| match v.get("type") {
        Some(Value::String(t)) => t == ty,
        Some(Value::Array(ts)) => ts.iter().any(|t| t.as_str() == Some(ty)),
        _ => false,
    };
    if has(p) {
        let mut own = p.clone();
        if let Some(o) = own.as_object_mut() {
            o.insert("type".into(), Value::String(ty.to_owned()));
        }
        return Some(own);
    }
    let branch = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| p.get(*k).and_then(Value::as_array))
        .flatten()
        .find(|b| has(b))?;
    let mut own = branch.clone();
    if let (Some(o), Some(d)) = (own.as_object_mut(), p.get("description")) {
        o.entry("description").or_insert_with(|| d.clone());
    }
    Some(own)
}

/// The parameter a tool takes SQL in: one named `sql`, or one named for a
/// statement (`query`, `statement`…) where the tool or the parameter says
/// SQL, a database or a table.
pub(crate) fn sql_slot(t: &Tool) -> Option<String> {
    let tool = tool_words(t);
    string_params(t)
        .into_iter()
        .find_map(|(k, p)| {
            let name = crate::access::words(&k);
            let mut said =
                crate::access::words(p.get("description").and_then(Value::as_str).unwrap_or(""));
            said.extend(tool.iter().cloned());
            let sql_named = name.iter().any(|w| w == "sql");
            let statement = name.iter().any(|w| STATEMENT_WORDS.contains(&w.as_str()));
            let says_sql = said.iter().any(|w| SQL_WORDS.contains(&w.as_str()));
            // A search over tables and columns (`search_databases(query)`)
            // takes keywords, not SQL, unless the parameter says SQL.
            let param_says_sql =
                crate::access::words(p.get("description").and_then(Value::as_str).unwrap_or(""))
                    .iter()
                    .any(|w| w == "sql" || w == "select" || w == "statement");
            let a_search = crate::access::words(&t.name)
                .iter()
                .any(|w| SEARCH_TOOL_WORDS.contains(&w.as_str()));
            (sql_named || (statement && says_sql && (param_says_sql || !a_search))).then_some(k)
        })
        // A tool that plans, checks or rewrites a statement answers no rows:
        // its answer to a catalogue is a plan, never the tables.
        .filter(|_| {
            !crate::access::words(&t.name)
                .iter()
                .any(|w| STATEMENT_ONLY_WORDS.contains(&w.as_str()))
        })
}

/// Name words of a tool that takes SQL but answers about the statement
/// (its plan, its form, its cost), never its rows.
const STATEMENT_ONLY_WORDS: &[&str] = &[
    "explain",
    "plan",
    "analyze",
    "analyse",
    "optimize",
    "optimise",
    "lint",
    "format",
    "validate",
    "parse",
    "estimate",
    "tune",
    "rewrite",
    "translate",
    "convert",
    "export",
];

/// The parameter a tool takes a search in, when it has one that is not
/// SQL.
pub(crate) fn search_slot(t: &Tool) -> Option<String> {
    if sql_slot(t).is_some() {
        return None;
    }
    string_params(t).into_iter().find_map(|(k, _)| {
        let name = crate::access::words(&k);
        (name.len() <= 2 && name.iter().any(|w| SEARCH_WORDS.contains(&w.as_str()))).then_some(k)
    })
}

/// Values that match much, the ones the tool's own words suggest first.
pub(super) fn broad_values(t: &Tool, slot: &str) -> Vec<&'static str> {
    let mut said = tool_words(t);
    said.extend(crate::access::words(slot));
    if let Some(d) = t
        .input_schema
        .get("properties")
        .and_then(|p| p.get(slot))
        .and_then(|p| p.get("description"))
        .and_then(Value::as_str)
    {
        said.extend(crate::access::words(d));
    }
    let has = |ws: &[&str]| said.iter().any(|w| ws.contains(&w.as_str()));
    let mut first: Vec<&'static str> = Vec::new();
    if has(&["like"]) {
        first.push("%");
    }
    if has(&["regex", "regexp", "regular", "expression"]) {
        first.push(".");
    }
    if has(&["glob", "wildcard", "wildcards", "pattern", "fnmatch"]) {
        first.push("*");
    }
    // The empty string, then the commonest word (a search over words
    // finds no `e`), then letters for a search over characters.
    for v in ["", "the", "e", "a", ".", "*", "%"] {
        if !first.contains(&v) {
            first.push(v);
        }
    }
    first
}

/// Each value of a tool's first enumerated argument other than `slot` (at
/// most eight), as (argument, value).
pub(super) fn first_enum(t: &Tool, slot: &str) -> Vec<(String, Value)> {
    t.input_schema
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|props| {
            props.iter().find_map(|(k, p)| {
                (k != slot)
                    .then(|| p.get("enum").and_then(Value::as_array))
                    .flatten()
                    .filter(|e| e.len() > 1)
                    .map(|e| e.iter().take(8).map(|v| (k.clone(), v.clone())).collect())
            })
        })
        .unwrap_or_default()
}

/// Does a parameter take a URI?
pub(super) fn wants_uri(words: &[String]) -> bool {
    words.iter().any(|w| w == "uri" || w == "url")
}

/// A URI a walk may give a URI parameter: one whose scheme reaches
/// nothing beyond the server (never `http(s)`, `ws(s)` or `ftp`).
pub(super) fn local_uri(value: &str) -> bool {
    match value.split_once("://") {
        Some((scheme, rest)) => {
            !rest.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                && !["http", "https", "ws", "wss", "ftp"]
                    .contains(&scheme.to_ascii_lowercase().as_str())
        }
        None => false,
    }
}

/// A relative path a listing gave (`notes/todo.md`, `memo.html`): no root,
/// no scheme, no space.
pub(super) fn relative_path(value: &str) -> bool {
    static FILE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[\w.\-]+(/[\w.\-]+)*\.[A-Za-z0-9]{1,6}$|^[\w.\-]+(/[\w.\-]+)+/?$")
            .expect("the relative path pattern compiles")
    });
    !value.starts_with('/')
        && !value.starts_with('.')
        && !value.contains("://")
        && value.chars().count() <= 200
        && FILE.is_match(value)
}

/// The table names a catalogue's answer names: its identifiers less the
/// catalogue's own words and the statement's.
pub(super) fn table_names(text: &str, statement: &str) -> Vec<String> {
    // Rows wrapped with their count and field list (`{"rows": [...],
    // "rowCount": 4, "fields": [...]}`) name their tables by their values:
    // the wrapper's keys are no tables (`SELECT * FROM rowCount` had
    // aborted mcp-postgres-full-access's transaction for every later
    // call).
    if let Some(rows) = super::text::structured(text).as_ref().and_then(row_list) {
        let names: Vec<String> = rows
            .iter()
            .filter_map(|r| match r {
                Value::String(s) => Some(s.as_str()),
                Value::Array(a) => a.first().and_then(Value::as_str),
                Value::Object(o) => {
                    let key = |want: &dyn Fn(&str) -> bool| {
                        o.iter()
                            .find(|(k, v)| v.is_string() && want(&k.to_lowercase()))
                            .and_then(|(_, v)| v.as_str())
                    };
                    // `tablename` before `schemaname`, then any name.
                    key(&|k| k.contains("table") && k.contains("name"))
                        .or_else(|| key(&|k| k == "name"))
                        .or_else(|| key(&|k| k.contains("name")))
                        .or_else(|| key(&|_| true))
                }
                _ => None,
            })
            .filter(|n| {
                let lower = n.to_lowercase();
                !CATALOGUE_WORDS.contains(&lower.as_str()) && !lower.starts_with("tables_in_")
            })
            .map(str::to_owned)
            .collect();
        if !names.is_empty() {
            let mut unique = Vec::new();
            for n in names {
                if !unique.contains(&n) {
                    unique.push(n);
                }
            }
            return unique.into_iter().take(TABLES_READ * 3).collect();
        }
    }
    // Unstructured, an answer names tables only as a list does, a few
    // words a line: prose (a search's "no match for ...") names none.
    let listing = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .all(|l| l.split_whitespace().count() <= 3);
    if !listing {
        return Vec::new();
    }
    identifiers(text, statement, CATALOGUE_WORDS)
        .into_iter()
        .take(TABLES_READ * 3)
        .collect()
}

/// The rows of an answer: the answer itself where it is a list, else the
/// list its wrapper holds them in (`rows`, `data`, `results`…: the first
/// non-empty list of records).
fn row_list(v: &Value) -> Option<&Vec<Value>> {
    match v {
        Value::Array(a) if !a.is_empty() => Some(a),
        Value::Object(o) => {
            const ROWS: &[&str] = &[
                "rows", "data", "results", "result", "records", "items", "tables",
            ];
            ROWS.iter()
                .filter_map(|k| o.get(*k))
                .chain(o.values())
                .find_map(|x| x.as_array().filter(|a| !a.is_empty()))
        }
        _ => None,
    }
}

/// The column names a columns answer names, in order: the first field of
/// each row where it answers rows as lists, the `column_name` (`name`,
/// `Field`) of each where it answers objects, else the identifiers it says.
pub(super) fn column_names(text: &str, statement: &str, table: &str) -> Vec<String> {
    let parsed = super::text::structured(text);
    if let Some(Value::Array(rows)) = &parsed {
        let names: Vec<String> = rows
            .iter()
            .filter_map(|r| match r {
                Value::Array(a) => a.first().and_then(Value::as_str).map(str::to_owned),
                Value::Object(o) => ["column_name", "name", "Field", "field", "column"]
                    .iter()
                    .find_map(|k| o.get(*k))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                _ => None,
            })
            .take(64)
            .collect();
        if !names.is_empty() {
            return names;
        }
    }
    identifiers(text, statement, TYPE_WORDS)
        .into_iter()
        .filter(|c| c != table)
        .take(24)
        .collect()
}

/// Rows a server answered as lists (`[(1, 'Ada', 'London')]`, or
/// `{"columns": [...], "rows": [[...]]}`), labelled by their columns (the
/// answer's own where it names them, else the catalogue's): each row an
/// object, so its values are facts with their column's name. `None` where
/// the rows are not lists of that width.
pub(super) fn labelled_rows(json: Option<&Value>, text: &str, columns: &[String]) -> Option<Value> {
    let parsed = json.cloned().or_else(|| super::text::structured(text))?;
    let (rows, names) = match parsed {
        Value::Array(rows) => (rows, columns.to_vec()),
        Value::Object(o) => {
            let rows = o
                .values()
                .find_map(|v| {
                    v.as_array()
                        .filter(|a| !a.is_empty() && a.iter().all(Value::is_array))
                })?
                .clone();
            let width = rows[0].as_array().map_or(0, Vec::len);
            let own = o
                .iter()
                .filter(|(k, _)| !k.to_lowercase().contains("type"))
                .filter_map(|(_, v)| v.as_array())
                .find(|a| a.len() == width && a.iter().all(Value::is_string))
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                });
            (rows, own.unwrap_or_else(|| columns.to_vec()))
        }
        _ => return None,
    };
    if names.is_empty() || rows.is_empty() {
        return None;
    }
    rows.iter()
        .map(|r| match r {
            Value::Array(a) if a.len() == names.len() => Some(Value::Object(
                names.iter().cloned().zip(a.iter().cloned()).collect(),
            )),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()
        .map(Value::Array)
}

fn identifiers(text: &str, statement: &str, skip: &[&str]) -> Vec<String> {
    static IDENT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"[A-Za-z_][A-Za-z0-9_]{1,62}").expect("the identifier pattern compiles")
    });
    let said: BTreeSet<String> = crate::access::words(statement).into_iter().collect();
    let mut out: Vec<String> = Vec::new();
    for m in IDENT.find_iter(text) {
        let w = m.as_str();
        let lower = w.to_lowercase();
        if skip.contains(&lower.as_str())
            || said.contains(&lower)
            || lower.starts_with("tables_in_")
            || out.iter().any(|o| o == w)
        {
            continue;
        }
        out.push(w.to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optional_or_either_typed_parameter_has_its_string_branch() {
        let p = serde_json::json!({"anyOf": [{"type": "string"}, {"items": {"type": "string"}, "type": "array"}], "title": "Paths"});
        assert_eq!(
            of_type(&p, "string"),
            Some(serde_json::json!({"type": "string"}))
        );
        assert!(of_type(&p, "array").is_some_and(|a| a["items"]["type"] == "string"));
        let optional = serde_json::json!({"type": ["string", "null"], "description": "a file"});
        assert_eq!(
            of_type(&optional, "string").map(|s| s["type"].clone()),
            Some("string".into())
        );
        assert_eq!(
            of_type(&serde_json::json!({"type": "integer"}), "string"),
            None
        );
    }
    use serde_json::json;

    fn tool(name: &str, description: &str, schema: Value) -> Tool {
        Tool::new(
            name.to_owned(),
            description.to_owned(),
            std::sync::Arc::new(schema.as_object().cloned().unwrap_or_default()),
        )
    }

    #[test]
    fn a_query_language_is_known_by_its_words_not_its_server() {
        let duck = tool(
            "query",
            "Execute a query on the DuckDB database",
            json!({"type": "object", "properties": {"query": {"type": "string", "description": "SQL query to execute"}}}),
        );
        assert_eq!(sql_slot(&duck).as_deref(), Some("query"));
        let sql = tool(
            "run",
            "",
            json!({"properties": {"sql": {"type": "string"}}}),
        );
        assert_eq!(sql_slot(&sql).as_deref(), Some("sql"));
        let notes = tool(
            "search_notes",
            "Search notes; queries can also be a valid regex",
            json!({"properties": {"query": {"type": "string"}}}),
        );
        assert_eq!(sql_slot(&notes), None);
        assert_eq!(search_slot(&notes).as_deref(), Some("query"));
        assert_eq!(broad_values(&notes, "query")[0], ".");
        let glob = tool(
            "search_files",
            "Find files matching a glob pattern",
            json!({"properties": {"pattern": {"type": "string"}, "path": {"type": "string"}}}),
        );
        assert_eq!(search_slot(&glob).as_deref(), Some("pattern"));
        assert_eq!(broad_values(&glob, "pattern")[0], "*");
        assert_eq!(search_slot(&duck), None, "SQL is a catalogue, not a search");
        // sqlite-mcp-server 0.1.7: a keyword search over tables and columns
        // is a search; its SQL tool is the one that says SELECT.
        let keywords = tool(
            "search_databases",
            "Search for tables and columns matching a keyword in the database",
            json!({"properties": {"query": {"type": "string", "description": "Keyword to look for"},
                                  "path": {"type": "string"}}}),
        );
        assert_eq!(sql_slot(&keywords), None);
        assert_eq!(search_slot(&keywords).as_deref(), Some("query"));
        let select = tool(
            "execute_query",
            "Execute a SELECT query on a database",
            json!({"properties": {"query": {"type": "string"}, "db_path": {"type": "string"}}}),
        );
        assert_eq!(sql_slot(&select).as_deref(), Some("query"));
    }

    #[test]
    fn a_catalogue_answer_names_its_tables_in_any_shape() {
        let statement = DIALECTS[0].tables;
        for answer in [
            r#"[{"table_name": "books"}, {"table_name": "loans"}]"#,
            "[('books',), ('loans',)]",
            "| table_name |\n|---|\n| books |\n| loans |",
            "table_name\nbooks\nloans",
        ] {
            assert_eq!(
                table_names(answer, statement),
                vec!["books", "loans"],
                "{answer}"
            );
        }
        assert_eq!(
            table_names("Tables_in_library\nmembers", "SHOW TABLES"),
            vec!["members"]
        );
        // Rows wrapped with their count and fields: the values, never the
        // wrapper's keys.
        let wrapped = r#"{"rows": [{"table_name": "berths"}, {"table_name": "vessels"}], "rowCount": 2, "fields": [{"name": "table_name", "dataTypeID": 19}]}"#;
        assert_eq!(table_names(wrapped, statement), vec!["berths", "vessels"]);
        let columns = "[{'name': 'id', 'type': 'INTEGER'}, {'name': 'title', 'type': 'TEXT'}]";
        assert_eq!(
            column_names(columns, DIALECTS[1].columns, "books"),
            vec!["id", "title"]
        );
    }

    #[test]
    fn rows_answered_as_lists_are_labelled_by_their_columns() {
        let tuples = "[(1, 'Ada', 'London'), (2, 'Grace', 'New York')]";
        let columns = vec!["id".to_owned(), "name".to_owned(), "city".to_owned()];
        let labelled = labelled_rows(None, tuples, &columns).expect("labelled");
        assert_eq!(labelled[1]["city"], "New York");
        let own = serde_json::json!({"success": true, "columns": ["household_id", "street"],
            "columnTypes": ["INTEGER", "VARCHAR"], "rows": [[1, "12 Elm Row"], [2, "4 Quarry Close"]]});
        let labelled = labelled_rows(Some(&own), "", &[]).expect("labelled by its own columns");
        assert_eq!(labelled[0]["street"], "12 Elm Row");
        assert_eq!(
            labelled_rows(None, "[(1, 'Ada')]", &columns),
            None,
            "a row of another width"
        );
    }

    #[test]
    fn uris_and_relative_paths_are_told_apart() {
        assert!(local_uri("file:///srv/docs/memo.html"));
        assert!(local_uri("postgres://db/books/schema"));
        assert!(!local_uri("https://example.com/x"));
        assert!(!local_uri("/srv/docs"));
        assert!(relative_path("notes/todo.md"));
        assert!(relative_path("memo.html"));
        assert!(relative_path("projects/harbor/"));
        assert!(!relative_path("/srv/docs/memo.html"));
        assert!(!relative_path("two words.md"));
        assert!(!relative_path("Kindred"));
    }
}
