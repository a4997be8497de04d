//! Following what an error says: a failed call whose error names its value
//! and offers others (`Did you mean "harvests"?`, `Available sheets:
//! 'Expenses', 'Budget'`, `a|b|c`, a structured error's
//! `"available_vaults"`, a range `between 0.0 and 1.0`) is made again with
//! them.

use serde_json::{Map, Value};

use super::fit::{identifier, quoted_values, replace_token};
use super::text::Handle;
use crate::suite::predicate::contains_token;

/// Follow-up calls an error points to, at most `max`. For a string
/// argument whose value the error names (`Table with name kanoxvi does not
/// exist!`, `Path '/srv/books' must point to an Excel file`), the same call
/// with that value replaced by: the values the error offers that the walk
/// already knows (`Did you mean "harvests"?`), the choices it lists
/// (`Available sheets: 'Expenses', 'Budget'`, `a|b|c`) and its examples
/// (`such as 'B2'`). Nothing else: the values that merely fit the argument
/// are the walk's rounds' to try ([`handle_plans`]). In an expression (a
/// value with spaces: SQL, a search) only the word the error names is
/// replaced. For an argument the error names by its name (`mode
/// must be source|signature|doc`), its listed choices. An offered value
/// the walk has never seen and the error does not list as a choice is not
/// tried (`Did you mean "pg_constraint"?` names the engine's own tables, not
/// the operator's data).
pub(super) fn follow_error(
    said: &str,
    args: &Map<String, Value>,
    known: &[&Handle],
    max: usize,
) -> Vec<Map<String, Value>> {
    let offered = quoted_values(said);
    let choices = choice_lists(said);
    let mut out: Vec<Map<String, Value>> = Vec::new();
    let push_value = |out: &mut Vec<Map<String, Value>>, key: &str, value: Value| {
        if out.len() >= max || value.as_str() == Some("") {
            return;
        }
        let mut a = args.clone();
        a.insert(key.to_owned(), value);
        if a != *args && !out.contains(&a) {
            out.push(a);
        }
    };
    let push = |out: &mut Vec<Map<String, Value>>, key: &str, value: String| {
        push_value(out, key, Value::String(value));
    };
    let range = numeric_range(said);
    let literal = required_literal(said);
    let wants_date = DATE_FORMAT.is_match(said);
    for (key, value) in args {
        // A literal the error says the value must contain (`sql must
        // contain the literal placeholder '{file}'`), put where the value
        // names what it reads (the table after FROM).
        if let (Some(lit), Some(v)) = (&literal, value.as_str())
            && !v.contains(lit.as_str())
            && let Some(m) = FROM_NAME.captures(v).and_then(|c| c.get(1))
        {
            let fixed = format!("{}{lit}{}", &v[..m.start()], &v[m.end()..]);
            push(&mut out, key, fixed);
        }
        // A date the error asks for in a format (`expected YYYY-MM-DD`),
        // for the argument it names: a date the walk has read.
        if wants_date
            && value.is_string()
            && names_argument(said, key)
            && let Some(date) = known.iter().find(|h| ISO_DATE.is_match(&h.value))
        {
            push(&mut out, key, date.value.clone());
        }
        // A number, or a list of numbers, the error names by its argument's
        // name with the range it takes ("Quantiles must be between 0.0 and
        // 1.0"): a value inside it.
        if let Some((low, high)) = range
            && names_argument(said, key)
        {
            let middle = if low.fract() == 0.0 && high.fract() == 0.0 && high - low >= 2.0 {
                Value::from(((low + high) / 2.0).floor() as i64)
            } else {
                Value::from((low + high) / 2.0)
            };
            match value {
                Value::Number(_) => push_value(&mut out, key, middle),
                Value::Array(items) if items.iter().all(Value::is_number) => {
                    push_value(&mut out, key, Value::Array(vec![middle]));
                }
                _ => {}
            }
        }
        let Some(value) = value.as_str() else {
            continue;
        };
        let expression = value.trim().contains(char::is_whitespace);
        // What the error names of this argument: its whole value, or in an
        // expression one of its words.
        let named = if expression {
            crate::access::words(value)
                .into_iter()
                .filter(|w| w.chars().count() >= 3)
                .find(|w| contains_token(said, w) && !contains_token(key, w))
        } else {
            (value.chars().count() >= 2 && said.contains(value)).then(|| value.to_owned())
        };
        if let Some(word) = named {
            let offered_known = offered
                .iter()
                .filter(|o| known.iter().any(|h| h.value == **o))
                .cloned();
            let listed = choices.iter().flatten().cloned();
            let candidates = offered_known
                .chain(listed)
                .filter(|c| !c.eq_ignore_ascii_case(&word));
            for c in candidates {
                if expression {
                    if identifier(&c)
                        && let Some(fixed) = replace_token(value, &word, &c)
                    {
                        push(&mut out, key, fixed);
                    }
                } else {
                    push(&mut out, key, c);
                }
            }
        } else if contains_token(said, key) {
            // The argument the error names by its name: its listed choices.
            for c in choices.iter().flatten() {
                push(&mut out, key, c.clone());
            }
        }
    }
    out
}

/// A format an error asks a date in.
static DATE_FORMAT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"(?i)\bYYYY-MM-DD\b|\bISO[ -]?8601\b")
        .expect("the date format pattern compiles")
});
/// A date as ISO 8601 writes it.
static ISO_DATE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"^\d{4}-\d{2}-\d{2}").expect("the date pattern compiles")
});
/// The name a statement reads from: `FROM orders`.
static FROM_NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"(?i)\bfrom\s+([\w."`\[\]]+)"#).expect("the from pattern compiles")
});

/// The literal an error says a value must contain: `must contain the
/// literal placeholder '{file}'`, `must include "{table}"`.
fn required_literal(said: &str) -> Option<String> {
    static MUST: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r#"(?i)\bmust\s+(?:contain|include|use|reference)\b[^'"`\n]{0,40}['"`]([^'"`\n]{1,40})['"`]"#)
            .expect("the literal pattern compiles")
    });
    MUST.captures(said).map(|c| c[1].to_owned())
}

/// The closed range an error says a value must be in: `between 0.0 and
/// 1.0`, `from 1 to 100`, `in [0, 1]`, `in the range 1-12`.
fn numeric_range(said: &str) -> Option<(f64, f64)> {
    static RANGE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)(?:between|from|range(?: of)?)\s+(-?\d+(?:\.\d+)?)\s*(?:and|to|-|–)\s*(-?\d+(?:\.\d+)?)|\bin\s+\[\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*\]",
        )
        .expect("the range pattern compiles")
    });
    let c = RANGE.captures(said)?;
    let low: f64 = c.get(1).or_else(|| c.get(3))?.as_str().parse().ok()?;
    let high: f64 = c.get(2).or_else(|| c.get(4))?.as_str().parse().ok()?;
    (low.is_finite() && high.is_finite() && low < high).then_some((low, high))
}

/// Does an error name this argument by its name's words (`Quantiles` for
/// `quantiles`, `n rows` for `n_rows`)?
fn names_argument(said: &str, key: &str) -> bool {
    let said = crate::access::words(said).join(" ");
    let key = crate::access::words(key).join(" ");
    !key.is_empty()
        && (contains_token(&said, &key)
            || key
                .strip_suffix('s')
                .is_some_and(|k| k.len() >= 3 && contains_token(&said, k)))
}

/// Lists of strings under keys that name choices (`available`, `valid`,
/// `allowed`, `options`, `choices`, `supported`, `expected`, `suggestions`)
/// anywhere in a structured error.
fn listed_choices(v: &Value, depth: usize, lists: &mut Vec<Vec<String>>) {
    const CHOICE_WORDS: &[&str] = &[
        "available",
        "valid",
        "allowed",
        "options",
        "choices",
        "supported",
        "expected",
        "suggestions",
        "candidates",
    ];
    let Some(o) = v.as_object().filter(|_| depth < 8) else {
        return;
    };
    for (k, v) in o {
        let named = crate::access::words(k)
            .iter()
            .any(|w| CHOICE_WORDS.contains(&w.as_str()));
        match v {
            Value::Array(items) if named => {
                let strings: Vec<String> = items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .take(16)
                    .collect();
                if !strings.is_empty() && lists.len() < 8 {
                    lists.push(strings);
                }
            }
            Value::Object(_) => listed_choices(v, depth + 1, lists),
            _ => {}
        }
    }
}

/// A list of names after a colon, unquoted (`Available tables: marshals,
/// races, results.`): two or more identifiers split by commas.
fn unquoted_list(sentence: &str) -> Option<Vec<String>> {
    let (_, after) = sentence.split_once(':')?;
    let items: Vec<String> = after
        .trim()
        .trim_end_matches('.')
        .split(',')
        .map(|i| i.trim().to_owned())
        .collect();
    (items.len() >= 2 && items.len() <= 40 && items.iter().all(|i| identifier(i))).then_some(items)
}

/// The choices an error lists: `a|b|c`, or the quoted values after `one
/// of`, `must be`, `valid … are`, `expected`, `such as`, `e.g.`, `for
/// example`, `available`, `supported` in the same sentence.
pub(super) fn choice_lists(said: &str) -> Vec<Vec<String>> {
    static PIPES: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\b[A-Za-z_][\w.-]{0,40}(?:\|[A-Za-z_][\w.-]{0,40})+\b")
            .expect("the pipes pattern compiles")
    });
    static CUE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"(?i)\b(one of|must be|valid\b[^.:;]{0,30}\b(?:are|is)|expected|such as|e\.g\.|for example|available|supported)\b",
        )
        .expect("the cue pattern compiles")
    });
    let mut lists: Vec<Vec<String>> = PIPES
        .find_iter(said)
        .map(|m| m.as_str().split('|').map(str::to_owned).collect())
        .take(4)
        .collect();
    // A structured error's lists of choices (`"available_vaults":
    // ["home"]`), the whole error or a line of its own.
    let whole = said.trim_start().starts_with('{').then_some(said);
    for text in whole
        .into_iter()
        .chain(said.lines().filter(|l| l.trim_start().starts_with('{')))
    {
        if let Ok(v) = serde_json::from_str::<Value>(text.trim()) {
            listed_choices(&v, 0, &mut lists);
        }
    }
    for cue in CUE.find_iter(said).take(4) {
        let rest = &said[cue.end()..];
        let sentence = rest.split_terminator(['\n', ';']).next().unwrap_or(rest);
        let sentence = sentence.split(". ").next().unwrap_or(sentence);
        let quoted = quoted_values(sentence);
        if !quoted.is_empty() {
            lists.push(quoted);
        } else if let Some(listed) = unquoted_list(sentence) {
            lists.push(listed);
        }
    }
    lists
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_that_states_a_literal_or_a_format_is_met() {
        let args = |k: &str, v: &str| -> Map<String, Value> {
            Map::from_iter([(k.to_owned(), Value::String(v.to_owned()))])
        };
        // An in-process engine over files: the statement must name its
        // file by a placeholder the server fills.
        let said = "Error: sql must contain the literal placeholder '{file}'";
        assert_eq!(
            follow_error(said, &args("sql", "SELECT * FROM orders LIMIT 5"), &[], 3),
            [args("sql", "SELECT * FROM {file} LIMIT 5")]
        );
        // A value that has it already is not made again.
        assert!(follow_error(said, &args("sql", "SELECT * FROM {file}"), &[], 3).is_empty());
        // A date in the format the error names, one the walk has read.
        let date = Handle {
            value: "2024-02-05".into(),
            key: "date".into(),
            from: Some(0),
            alias: None,
            parent: None,
            noun: None,
        };
        let said = "Invalid since: expected YYYY-MM-DD";
        assert_eq!(
            follow_error(said, &args("since", "last week"), &[&date], 3),
            [args("since", "2024-02-05")]
        );
        // With no date read, none is invented.
        assert!(follow_error(said, &args("since", "last week"), &[], 3).is_empty());
    }

    #[test]
    fn an_error_that_names_the_value_is_followed_with_what_it_offers() {
        let args = |pairs: &[(&str, &str)]| -> Map<String, Value> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), Value::String((*v).to_owned())))
                .collect()
        };
        let handle = |value: &str| Handle {
            value: value.to_owned(),
            from: Some(0),
            key: "table_name".to_owned(),
            alias: None,
            parent: None,
            noun: None,
        };
        let (orchards, harvests, memo) = (
            handle("orchards"),
            handle("harvests"),
            handle("budget_2024.xlsx"),
        );
        // duckdb-mcp-server: the refused name, a known table offered; known
        // values the error does not name are the rounds' to try.
        let said = "Table: kanoxvi\nError executing query: Catalog Error: Table with name kanoxvi does not exist!\nDid you mean \"harvests\"?";
        let known = [&orchards, &harvests, &memo];
        assert_eq!(
            follow_error(said, &args(&[("file_path", "kanoxvi")]), &known, 3),
            vec![args(&[("file_path", "harvests")])]
        );
        // An offered name the walk never saw is not tried.
        let said =
            "Catalog Error: Table with name saso does not exist!\nDid you mean \"pg_constraint\"?";
        assert!(follow_error(said, &args(&[("table", "saso")]), &[], 3).is_empty());
        // A word inside SQL is replaced whole.
        let said = "no such table: kanoxvi. Did you mean 'orchards'?";
        assert_eq!(
            follow_error(said, &args(&[("sql", "SELECT * FROM kanoxvi")]), &known, 3),
            vec![args(&[("sql", "SELECT * FROM orchards")])]
        );
        // An error that offers nothing is not followed.
        let said = "Path '/srv/books' must point to an Excel file (.xlsm, .xlsx).";
        assert!(follow_error(said, &args(&[("path", "/srv/books")]), &known, 3).is_empty());
        // The choices an error lists, for the value it refused.
        let said = "Sheet 'values' not found. Available sheets: 'Expenses', 'Budget'.";
        assert_eq!(
            follow_error(
                said,
                &args(&[("path", "b.xlsx"), ("sheet", "values")]),
                &[],
                3
            ),
            vec![
                args(&[("path", "b.xlsx"), ("sheet", "Expenses")]),
                args(&[("path", "b.xlsx"), ("sheet", "Budget")]),
            ]
        );
        // The argument named by its name gets the choices listed.
        let said = "error: mode must be source|signature|doc";
        assert_eq!(
            follow_error(said, &args(&[("mode", "zzz"), ("symbol", "parse")]), &[], 5),
            vec![
                args(&[("mode", "source"), ("symbol", "parse")]),
                args(&[("mode", "signature"), ("symbol", "parse")]),
                args(&[("mode", "doc"), ("symbol", "parse")]),
            ]
        );
        // obsidian-mcp 2.0.1: the choices are in the structured error only.
        let said = "VAULT_NOT_FOUND: Vault 'kanoxvi' is not configured.\n{\"ok\":false,\"error\":{\"code\":\"VAULT_NOT_FOUND\",\"details\":{\"available_vaults\":[\"home\"]}}}";
        assert_eq!(
            follow_error(
                said,
                &args(&[("vault", "kanoxvi"), ("path", "torka")]),
                &[],
                3
            ),
            vec![args(&[("vault", "home"), ("path", "torka")])]
        );
        // An example the error gives, for the value it refused.
        let said = "Invalid cell reference 'vequi'. Use A1 notation such as 'B2'.";
        assert_eq!(
            follow_error(said, &args(&[("cell", "vequi")]), &[], 3),
            vec![args(&[("cell", "B2")])]
        );
        // An error that names nothing of the call points nowhere.
        assert!(follow_error("internal error", &args(&[("q", "kanoxvi")]), &known, 3).is_empty());
        // A number outside the range the error states: one inside it.
        let said = "Error executing tool: Quantiles must be between 0.0 and 1.0, got: [50.0, 72.0]";
        let mut a = Map::new();
        a.insert("quantiles".into(), serde_json::json!([50, 72]));
        a.insert("column".into(), serde_json::json!("kenvi"));
        let fixed = follow_error(said, &a, &[], 3);
        assert_eq!(fixed.len(), 1);
        assert_eq!(fixed[0]["quantiles"], serde_json::json!([0.5]));
        let mut a = Map::new();
        a.insert("month".into(), serde_json::json!(40));
        assert_eq!(
            follow_error("month must be in the range 1-12", &a, &[], 3)[0]["month"],
            serde_json::json!(6)
        );
        assert!(follow_error("limit must be between 1 and 5", &a, &[], 3).is_empty());
    }
}
