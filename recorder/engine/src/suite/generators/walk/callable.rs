//! Which tools the walk may call: not destructive, not open-world, and
//! not named for the environment or credentials.

use rmcp::model::Tool;
use serde_json::json;

use super::stats::WalkStats;
use crate::suite::destructive::{self, ToolDestructiveness};
use crate::suite::reading::exposes_secrets;

pub fn read_only(tool: &Tool) -> bool {
    tool.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}

/// The tools the walk may call, sorted by name, also named in
/// `stats.callable_tools`; the others are recorded in `stats.not_called`
/// with why.
pub fn callable_tools<'t>(
    tools: &'t [Tool],
    labels: &[ToolDestructiveness],
    stats: &mut WalkStats,
) -> Vec<&'t Tool> {
    let mut sorted: Vec<&Tool> = tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut callable = Vec::new();
    for t in sorted {
        let label = labels.iter().find(|l| l.tool == t.name.as_ref());
        let why = if label.is_none_or(destructive::labelled_destructive) {
            Some("destructive".to_owned())
        } else if destructive::open_world(t) {
            Some("openWorldHint: reaches beyond the server".to_owned())
        } else {
            exposes_secrets(t).map(|w| {
                format!("its name says `{w}`: it may return secrets, which must reach neither the tape nor the suite")
            })
        };
        match why {
            Some(why) => stats.not_called.push(json!({"tool": t.name, "why": why})),
            None => callable.push(t),
        }
    }
    stats.callable_tools = callable.iter().map(|t| t.name.to_string()).collect();
    callable
}
