//! What the construct gate's reference trials put on the wire, in words.
//! The seed: a server that advertises tools and then rejects every call
//! before a response exists produces requests with no responses, and that
//! is a finding about the server, stated from the recorded counts. The
//! finding follows the reference trials' own reading of the tape, never
//! the whole tape, whose other arms may have been answered.

use super::words::plural;
use crate::record::{RunRecord, TapeReading};

/// The counts, as the record page and the record's note print them.
pub fn counts_text(t: &TapeReading) -> String {
    format!(
        "Read from the tape: {} recorded for the reference trials, {} answered with an error, {} never answered.",
        plural(
            t.calls_recorded,
            "tools/call request",
            "tools/call requests"
        ),
        t.call_errors,
        t.no_response
    )
}

/// What the counts say about the server, when they say something.
pub fn finding(t: &TapeReading) -> Option<String> {
    let calls = t.calls_recorded;
    let stated =
        "That is a finding about the server, not about the agent, stated from the recorded counts.";
    match (t.no_response, t.call_errors) {
        _ if calls == 0 => Some(
            "The reference trials made no tools/call request, so their tape holds nothing to read about the server.".to_owned(),
        ),
        (n, _) if n == calls => Some(format!(
            "Every one of the {calls} tools/call requests the reference trials made went unanswered: the server listed its tools and then sent no protocol response to any call. {stated}"
        )),
        (n, _) if n > 0 => Some(format!(
            "{n} of the {calls} tools/call requests the reference trials made never got a protocol response. {stated}"
        )),
        (_, e) if e == calls => Some(format!(
            "Every one of the {calls} tools/call requests the reference trials made, handed the answer key, came back as an error."
        )),
        _ => None,
    }
}

/// Calls, errors and requests with no response over the whole MCP tape,
/// every arm of the run, from the record's tape statistics
/// (`planes.mcp.tools[]`); `None` when the record carries none.
pub fn whole_tape(record: &RunRecord) -> Option<TapeReading> {
    let tools = record
        .trace_stats
        .as_ref()?
        .pointer("/planes/mcp/tools")?
        .as_array()?;
    let sum = |key: &str| -> u64 {
        tools
            .iter()
            .filter_map(|t| t.get(key).and_then(serde_json::Value::as_u64))
            .sum()
    };
    Some(TapeReading {
        calls_recorded: sum("calls"),
        call_errors: sum("errors"),
        no_response: sum("pending"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reading(calls: u64, errors: u64, none: u64) -> TapeReading {
        TapeReading {
            calls_recorded: calls,
            call_errors: errors,
            no_response: none,
        }
    }

    #[test]
    fn requests_without_a_response_are_stated_as_the_servers_whether_all_or_some() {
        let all = finding(&reading(36, 0, 36)).expect("a finding");
        assert!(all.starts_with("Every one of the 36"), "{all}");
        assert!(all.contains("a finding about the server"), "{all}");
        let some = finding(&reading(36, 0, 12)).expect("a finding");
        assert!(some.starts_with("12 of the 36"), "{some}");
        assert!(some.contains("a finding about the server"), "{some}");
        assert_eq!(
            finding(&reading(36, 4, 0)),
            None,
            "answered calls say nothing more"
        );
        let errors = finding(&reading(5, 5, 0)).expect("every call an error");
        assert!(!errors.contains("finding about the server"), "{errors}");
    }
}
