//! A walk's call: [`crate::suite::call::call`], with what gave nothing to
//! read counted.

use std::time::Duration;

use serde_json::{Map, Value};

use super::stats::WalkStats;
use crate::mcp::connect::Session;
use crate::suite::call::{Called, call};

/// What one exploring call gave the walk.
pub enum Taken {
    /// Text to read.
    Text(String),
    /// Nothing to read (an error, an empty result, a failed call): counted,
    /// with what the server said when it said why.
    Skip(Option<String>),
    /// The call timed out: the tool is not called again.
    Dead,
}

/// [`call`], with a result that gives nothing to read counted in `stats`.
pub async fn call_counted(
    session: &Session,
    tool: &str,
    args: &Map<String, Value>,
    timeout: Duration,
    stats: &mut WalkStats,
) -> Taken {
    match call(session, tool, args, timeout).await {
        Called::Text(t) => Taken::Text(t),
        Called::Error(said) => {
            stats.error_results += 1;
            Taken::Skip(Some(said))
        }
        Called::Empty => {
            stats.empty_results += 1;
            Taken::Skip(None)
        }
        Called::Failed => {
            stats.call_failures += 1;
            Taken::Skip(None)
        }
        Called::TimedOut => {
            stats.timeouts += 1;
            Taken::Dead
        }
    }
}
