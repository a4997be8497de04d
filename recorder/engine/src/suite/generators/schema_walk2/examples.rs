//! Examples are calls to try. A tool's description often shows a call: a
//! query in its own language (`SELECT sum(position), account WHERE
//! date>=2024-01-01 GROUP BY account`), a statement over a placeholder
//! (`SELECT region, sum(revenue) FROM {file}`), a JSON object of its
//! arguments. Each is read by its structure, in any language: the code
//! spans and fenced blocks of the description that are no tool's or
//! parameter's name. Each is tried first, as it is (the server may fill
//! its own placeholders) and with its placeholders filled by the names
//! the walk has found (a file for `{file}`, a table for `<table>`). A
//! result's records are the tool's own listing: the model reads them.

use fitness_shared::record::DiscoveryMove;
use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::explore::Explorer;
use super::kinds::{search_slot, sql_slot, string_params};
use crate::suite::task::Origin;

/// Examples tried per tool at most.
const PER_TOOL: usize = 4;

/// The code spans and fenced blocks of a description, in order.
fn code_in(description: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = description;
    while let Some(i) = rest.find("```") {
        let after = &rest[i + 3..];
        let Some(j) = after.find("```") else { break };
        // A fence's first line may name its language.
        let block = after[..j].trim();
        let block = match block.split_once('\n') {
            Some((first, body)) if !first.contains(' ') && first.len() <= 12 => body,
            _ => block,
        };
        out.push(block.trim().to_owned());
        rest = &after[j + 3..];
    }
    let unfenced = description.replace("```", "\u{0}");
    let spans = unfenced.split('\u{0}').step_by(2).flat_map(|part| {
        part.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_owned)
            .collect::<Vec<_>>()
    });
    out.extend(spans);
    out.retain(|c| !c.trim().is_empty());
    out
}

/// The placeholders an example leaves for the caller: `{file}`,
/// `{{table}}`, `<table>`, `$FILE`, with the word each names.
fn placeholders(example: &str) -> Vec<(String, String)> {
    static HOLE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\{\{\s*([A-Za-z_]\w{0,30})\s*\}\}|\{([A-Za-z_]\w{0,30})\}|<([A-Za-z_][\w ]{0,30})>|\$([A-Z][A-Z_]{1,30})\b")
            .expect("the placeholder pattern compiles")
    });
    HOLE.captures_iter(example)
        .filter_map(|c| {
            let whole = c.get(0)?.as_str().to_owned();
            let word = (1..=4)
                .find_map(|i| c.get(i))?
                .as_str()
                .trim()
                .to_lowercase();
            Some((whole, word))
        })
        .collect()
}

impl Explorer<'_> {
    /// Try every example a tool's description gives, before any guess.
    pub(super) async fn examples(&mut self, callable: &[&Tool]) {
        let names: Vec<String> = callable.iter().map(|t| t.name.to_string()).collect();
        for tool in callable {
            if self.writers.contains(tool.name.as_ref()) {
                continue;
            }
            let description = tool.description.as_deref().unwrap_or("");
            let params: Vec<String> = tool
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            let slot = sql_slot(tool).or_else(|| search_slot(tool)).or_else(|| {
                let strings = string_params(tool);
                let required =
                    super::fit::required_of(&Value::Object((*tool.input_schema).clone()));
                let req: Vec<&String> = strings
                    .iter()
                    .map(|(k, _)| k)
                    .filter(|k| required.contains(k))
                    .collect();
                match req.as_slice() {
                    [one] => Some((*one).clone()),
                    _ => None,
                }
            });
            let mut tried = Vec::new();
            let mut answered = 0;
            for code in code_in(description) {
                if tried.len() >= PER_TOOL {
                    break;
                }
                let code = code.trim().to_owned();
                // A tool's or a parameter's name is no example of a call.
                if names.contains(&code) || params.contains(&code) || code.chars().count() < 4 {
                    continue;
                }
                let mut sets: Vec<Map<String, Value>> = Vec::new();
                if let Ok(Value::Object(args)) = serde_json::from_str::<Value>(&code) {
                    if !args.is_empty() && args.keys().all(|k| params.contains(k)) {
                        sets.push(args);
                    }
                } else if let Some(slot) = &slot
                    && (code.contains(char::is_whitespace)
                        || code.contains(['(', '=', '*', '{', '<']))
                {
                    for value in self.filled(&code) {
                        if let Some(args) = self.with_slot(tool, slot, &value) {
                            sets.push(args);
                        }
                    }
                }
                for args in sets {
                    tried.push(Value::Object(args.clone()).to_string());
                    if let Some(i) = self.made(&tool.name, args, Origin::Discovered, false).await {
                        answered += 1;
                        self.ex.examples.insert(i);
                        self.ex.observations[i].broad = true;
                    }
                }
            }
            if !tried.is_empty() {
                self.stats.discovery.push(DiscoveryMove {
                    name: "examples".into(),
                    tool: Some(tool.name.to_string()),
                    tried: format!(
                        "the {} example call(s) its description gives, first as written",
                        tried.len()
                    ),
                    found: format!("{answered} answered"),
                    worked: answered > 0,
                });
            }
        }
    }

    /// An example as written, then with its placeholders filled by the
    /// best names the walk has found for each (an operator's file for
    /// `{file}`, a table for `<table>`).
    fn filled(&self, example: &str) -> Vec<String> {
        let mut out = vec![example.to_owned()];
        let holes = placeholders(example);
        if holes.is_empty() {
            return out;
        }
        let mut filled = example.to_owned();
        for (whole, word) in &holes {
            let best = self
                .ex
                .handles
                .iter()
                .filter_map(|h| super::fit::affinity(word, h).map(|a| (a, h)))
                .filter(|(a, _)| *a >= 2)
                .max_by_key(|(a, _)| *a);
            if let Some((_, h)) = best {
                filled = filled.replace(whole, &h.value);
            }
        }
        if filled != example {
            out.push(filled);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_read_by_their_structure_in_any_language() {
        // German and Japanese descriptions: the code is the example,
        // whatever the words around it.
        let de = "Führt eine SQL-Abfrage aus. Beispiel: `SELECT region, sum(umsatz) FROM {datei} GROUP BY region`";
        assert_eq!(
            code_in(de),
            ["SELECT region, sum(umsatz) FROM {datei} GROUP BY region"]
        );
        assert_eq!(
            placeholders(&code_in(de)[0]),
            [("{datei}".to_owned(), "datei".to_owned())]
        );
        let ja =
            "帳簿に問い合わせます。例:\n```\nSELECT account, sum(position) GROUP BY account\n```";
        assert_eq!(
            code_in(ja),
            ["SELECT account, sum(position) GROUP BY account"]
        );
    }

    #[test]
    fn a_descriptions_examples_are_its_code_and_their_placeholders_are_named() {
        let d = "Execute a BQL query. You can call tool `accounts` first.\n    Example: `SELECT sum(position), account WHERE date>=2024-01-01 GROUP BY account`\n```sql\nSELECT region, sum(revenue) FROM {file} GROUP BY region\n```";
        let code = code_in(d);
        assert_eq!(
            code,
            [
                "SELECT region, sum(revenue) FROM {file} GROUP BY region",
                "accounts",
                "SELECT sum(position), account WHERE date>=2024-01-01 GROUP BY account"
            ]
        );
        assert_eq!(
            placeholders("SELECT * FROM {file} JOIN <other table> ON $KEY"),
            [
                ("{file}".to_owned(), "file".to_owned()),
                ("<other table>".to_owned(), "other table".to_owned()),
                ("$KEY".to_owned(), "key".to_owned())
            ]
        );
    }
}
