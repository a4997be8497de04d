//! judge-walk/1's part in a change: the judge is shown the tool that makes
//! it, the fresh word to write, the tools that read and the values seen,
//! and proposes the change's arguments and the read that will show it.
//! The harness then makes the change and reads exactly as it does for its
//! own arguments: the same admission rules decide, never the judge.

use rmcp::model::Tool;
use serde_json::{Map, Value};

use super::args::each_leaf;
use crate::model::types::PlannedCall;
use crate::suite::generators::judge_walk::{Judge, argument_object, output_cap, tool_line};

/// The system prompt (registered in the suite's generator config).
pub const SYSTEM: &str = "You plan one change a user would ask of an MCP server; it is made \
in a sandbox copy, so nothing real is touched. You are shown the tool that makes the change, \
a word to write, the tools that read, and values seen on the server. Write the change's \
arguments so that the given word is written as a name, title or content, with realistic \
values elsewhere, using only names, ids and paths seen so far where the tool needs an existing \
one. Then name one of the reading tools, with its arguments, whose answer will show the word \
after the change. Reply with one JSON object only: \
{\"arguments\": {...}, \"read\": {\"tool\": \"<a reading tool>\", \"arguments\": {...}}}.";

/// Output tokens a proposal may take.
const TOKENS: usize = 160;
/// Values seen shown to the judge, at most.
const SEEN: usize = 30;

/// The judge asked for one change at a time.
pub(crate) struct ChangeJudge<'a> {
    pub judge: Judge<'a>,
    /// Values seen on the server (the questions' arguments), shown.
    pub seen: Vec<String>,
    /// The operator's words for the judge.
    pub context: Option<String>,
    /// Changes the judge proposed with the word in them.
    pub proposed: u64,
}

/// What the judge proposed: the change's arguments, and the read it says
/// shows it (`None` when it named no reading tool it was shown).
pub(crate) struct Proposal {
    pub arguments: Map<String, Value>,
    pub read: Option<PlannedCall>,
}

impl ChangeJudge<'_> {
    /// Ask for a change of `tool` that writes `marker`; `None` when the
    /// judge answered nothing usable or its arguments do not carry the
    /// word (a change that cannot be found again is never made).
    pub async fn propose(
        &mut self,
        tool: &Tool,
        marker: &str,
        readers: &[&Tool],
    ) -> Option<Proposal> {
        let mut user = format!(
            "The change: {}\nThe word to write: `{marker}`\nTools that read:\n",
            tool_line(tool)
        );
        for r in readers {
            user.push_str(&tool_line(r));
            user.push('\n');
        }
        if !self.seen.is_empty() {
            let seen: Vec<String> = self
                .seen
                .iter()
                .take(SEEN)
                .map(|v| format!("`{v}`"))
                .collect();
            user.push_str(&format!("Values seen so far: {}\n", seen.join(", ")));
        }
        if let Some(c) = self.context.as_deref().filter(|c| !c.trim().is_empty()) {
            user.push_str(&format!("The operator says: {c}\n"));
        }
        let answer = self
            .judge
            .ask("act", SYSTEM, user, output_cap(1, TOKENS))
            .await?;
        let proposal = read_proposal(&answer, marker, readers)?;
        self.proposed += 1;
        Some(proposal)
    }
}

/// The proposal in a judge's answer: arguments that carry `marker`, and a
/// read of one of `readers` (arguments an object, or none).
pub(crate) fn read_proposal(answer: &Value, marker: &str, readers: &[&Tool]) -> Option<Proposal> {
    let arguments = argument_object(answer.get("arguments")?)?;
    let mut carries = false;
    let all = Value::Object(arguments.clone());
    each_leaf(&all, None, &mut |_, leaf| {
        carries |= leaf.as_str().is_some_and(|s| s.contains(marker));
    });
    if !carries {
        return None;
    }
    let read = answer.get("read").and_then(|r| {
        let name = r.get("tool")?.as_str()?;
        let tool = readers.iter().find(|t| t.name == name)?;
        let arguments = argument_object(r.get("arguments").unwrap_or(&Value::Null))?;
        Some(PlannedCall {
            tool: tool.name.to_string(),
            arguments,
        })
    });
    Some(Proposal { arguments, read })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn tool(name: &str) -> Tool {
        Tool::new(name.to_owned(), String::new(), Arc::new(Map::new()))
    }

    #[test]
    fn a_proposal_is_kept_only_with_the_word_and_a_read_it_was_shown() {
        let search = tool("search_nodes");
        let readers = [&search];
        let answer = json!({
            "arguments": {"entities": [{"name": "kaso_tor", "entityType": "project"}]},
            "read": {"tool": "search_nodes", "arguments": "{\"query\": \"kaso_tor\"}"}
        });
        let p = read_proposal(&answer, "kaso_tor", &readers).expect("a proposal");
        assert_eq!(p.arguments["entities"][0]["name"], "kaso_tor");
        let read = p.read.expect("a read");
        assert_eq!(read.tool, "search_nodes");
        assert_eq!(read.arguments["query"], "kaso_tor");
        // A read of a tool it was not shown is dropped, the change kept.
        let other = json!({"arguments": {"name": "kaso_tor"}, "read": {"tool": "delete_all"}});
        let p = read_proposal(&other, "kaso_tor", &readers).expect("a proposal");
        assert!(p.read.is_none());
        // Without the word the change could not be found again: none.
        let without = json!({"arguments": {"name": "Harbor Bridge"}});
        assert!(read_proposal(&without, "kaso_tor", &readers).is_none());
        assert!(read_proposal(&json!({"read": {}}), "kaso_tor", &readers).is_none());
    }
}
