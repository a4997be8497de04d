//! Which tools generation may call: none that may write unless the run
//! lets generation write (a sandbox), never a destructive one (though,
//! where generation may write, one whose name only adds: `create_entities`),
//! never an open-world one, and none named for the environment or
//! credentials.

use rmcp::model::Tool;
use serde_json::json;

use super::stats::WalkStats;
use crate::suite::destructive::{self, ToolDestructiveness};
use crate::suite::options::GenerateOptions;
use crate::suite::reading::exposes_secrets;

/// What decides which tools generation may call: the tools, their labels,
/// the tools that may write, and the run's options.
pub struct Surface<'t> {
    pub tools: &'t [Tool],
    pub labels: &'t [ToolDestructiveness],
    pub writers: &'t std::collections::BTreeSet<String>,
    pub opts: &'t GenerateOptions,
}

/// The tools generation may call, sorted by name, also named in
/// `stats.callable_tools`; the others are recorded in `stats.not_called`
/// with why.
pub fn callable_tools<'t>(input: &Surface<'t>, stats: &mut WalkStats) -> Vec<&'t Tool> {
    let mut sorted: Vec<&Tool> = input.tools.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut callable = Vec::new();
    for t in sorted {
        let label = input.labels.iter().find(|l| l.tool == t.name.as_ref());
        let why = if !input.opts.writes && input.writers.contains(t.name.as_ref()) {
            Some(match input.opts.access {
                crate::access::AccessMode::ReadOnly => {
                    "it may write, and the run is read-only".to_owned()
                }
                crate::access::AccessMode::Sandbox => {
                    "it may write, and generation does not: the sandbox is reset before every trial"
                        .to_owned()
                }
            })
        } else if label.is_none_or(destructive::labelled_destructive)
            // Where generation may write (a sandbox whose trials start from
            // what it left), a tool that only adds is how the state the
            // tasks read is made: an empty knowledge graph gets entities.
            && !(input.opts.writes && crate::access::only_adds(t))
        {
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
