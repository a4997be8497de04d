//! The proxy behind `fitness rewrite-proxy --rewrites FILE -- CMD ARGS...`: a stdio MCP
//! server that is the real server with the proposed descriptions
//! substituted. It spawns the server, passes every line through unchanged in
//! both directions, except the responses to `tools/list` requests, whose
//! `result.tools` get the proposals applied (descriptions, parameter
//! descriptions, annotations). The server's stderr is inherited. Lines are
//! read within [`MAX_LINE`]: a longer one is dropped (with a note on stderr),
//! never held whole.
//!
//! The rewrites file is JSON: `{"proposals": [Proposal, ...]}` (the
//! record's proposals).

use std::collections::HashSet;
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use fitness_shared::record::Proposal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::proposals::apply_all;
use crate::mcp::frames::{BoundedLines, MAX_LINE, Piece};

/// The rewrites file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Rewrites {
    pub proposals: Vec<Proposal>,
}

impl Rewrites {
    pub fn load(path: &Path) -> anyhow::Result<Rewrites> {
        let bytes = std::fs::read(path)
            .with_context(|| format!("failed to read the rewrites {}", path.display()))?;
        serde_json::from_slice(&bytes)
            .with_context(|| format!("{} is not a rewrites file", path.display()))
    }
}

/// Rewrite one server-to-client line when it answers a pending `tools/list`;
/// otherwise return `None` (the line passes through byte for byte).
pub fn rewrite_line(
    line: &str,
    pending: &Mutex<HashSet<String>>,
    proposals: &[Proposal],
) -> Option<String> {
    let mut value: Value = serde_json::from_str(line.trim_end()).ok()?;
    let id = value.get("id").filter(|v| !v.is_null())?.to_string();
    {
        let mut pending = pending.lock().unwrap_or_else(|p| p.into_inner());
        if !pending.remove(&id) {
            return None;
        }
    }
    let tools = value.get_mut("result")?.get_mut("tools")?.as_array_mut()?;
    apply_all(tools, proposals);
    serde_json::to_string(&value).ok()
}

/// Note a client-to-server line that asks for `tools/list`.
pub fn note_request(line: &str, pending: &Mutex<HashSet<String>>) {
    let Ok(value) = serde_json::from_str::<Value>(line.trim_end()) else {
        return;
    };
    if value.get("method").and_then(Value::as_str) == Some("tools/list")
        && let Some(id) = value.get("id").filter(|v| !v.is_null())
    {
        pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id.to_string());
    }
}

/// Run the server `command` behind the proxy on this process's stdin and
/// stdout until the server exits; its exit code (1 when a signal ended
/// it), for the proxy to end as its server did.
/// How the proxy ended: its server's exit code, and the lines it dropped
/// as longer than [`MAX_LINE`] (the caller says so; the engine prints
/// nothing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyEnd {
    pub code: i32,
    pub dropped: u64,
}

pub fn proxy(rewrites: &Path, command: &[String]) -> anyhow::Result<ProxyEnd> {
    let rewrites = Rewrites::load(rewrites)?;
    let (program, rest) = command
        .split_first()
        .context("rewrite-proxy needs a server command after --")?;
    let mut child = Command::new(program)
        .args(rest)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("failed to start the server {program}"))?;
    let mut child_in = child.stdin.take().context("no server stdin")?;
    let child_out = child.stdout.take().context("no server stdout")?;
    let pending = Arc::new(Mutex::new(HashSet::new()));
    let dropped_in = Arc::new(std::sync::atomic::AtomicU64::new(0));

    let to_server = {
        let pending = Arc::clone(&pending);
        let dropped_in = Arc::clone(&dropped_in);
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let n = relay(stdin.lock(), &mut child_in, |line, to| {
                note_request(&String::from_utf8_lossy(line), &pending);
                to.write_all(line)?;
                to.write_all(b"\n")
            });
            dropped_in.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        })
    };

    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let dropped_out = relay(child_out, &mut out, |line, to| {
        match rewrite_line(
            &String::from_utf8_lossy(line),
            &pending,
            &rewrites.proposals,
        ) {
            Some(new) => to.write_all(new.as_bytes())?,
            None => to.write_all(line)?,
        }
        to.write_all(b"\n")
    });
    drop(out);
    let status = child.wait().context("the server did not exit cleanly")?;
    // The stdin thread ends when our stdin closes; do not wait for it.
    drop(to_server);
    Ok(ProxyEnd {
        code: status.code().unwrap_or(1),
        dropped: dropped_out + dropped_in.load(std::sync::atomic::Ordering::Relaxed),
    })
}

/// Copy `from` to `to` line by line through `each` (which writes the line,
/// changed or not), flushing after every chunk; stops at the end of `from`
/// or the first failed write. A line over [`MAX_LINE`] is dropped; the
/// lines dropped are counted.
fn relay(
    mut from: impl Read,
    to: &mut impl Write,
    mut each: impl FnMut(&[u8], &mut dyn Write) -> std::io::Result<()>,
) -> u64 {
    let mut dropped = 0;
    let mut lines = BoundedLines::new(MAX_LINE);
    let mut buf = vec![0u8; 64 * 1024];
    let mut written = Ok(());
    let mut take = |piece: Piece<'_>, to: &mut dyn Write, written: &mut std::io::Result<()>| {
        if written.is_err() {
            return;
        }
        *written = match piece {
            Piece::Line(line) => each(line, to),
            Piece::TooLong => {
                dropped += 1;
                Ok(())
            }
        };
    };
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        lines.push(&buf[..n], |piece| take(piece, to, &mut written));
        if written.is_err() || to.flush().is_err() {
            return dropped;
        }
    }
    lines.finish(|piece| take(piece, to, &mut written));
    let _ = to.flush();
    dropped
}

#[cfg(test)]
mod tests {
    use fitness_shared::record::ToolChange;
    use serde_json::json;

    use super::*;

    #[test]
    fn only_answers_to_tools_list_are_rewritten() {
        let pending = Mutex::new(HashSet::new());
        let mut change = ToolChange::default();
        change
            .annotations
            .insert("destructiveHint".into(), json!(true));
        let proposals = vec![Proposal {
            id: "p1".into(),
            tool: "purge_cache".into(),
            answers: vec!["f1".into()],
            change,
            rationale: String::new(),
            source: "rules/1".into(),
            evidence: vec![],
        }];
        let answer = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[{"name":"purge_cache","inputSchema":{"type":"object"}}]}}"#;
        assert_eq!(rewrite_line(answer, &pending, &proposals), None);
        note_request(
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            &pending,
        );
        let new = rewrite_line(answer, &pending, &proposals).expect("rewritten");
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(
            v["result"]["tools"][0]["annotations"]["destructiveHint"],
            true
        );
        // Answered once: a repeat of the id passes through.
        assert_eq!(rewrite_line(answer, &pending, &proposals), None);
    }

    #[test]
    fn relay_passes_lines_byte_for_byte_and_drops_only_an_oversized_one() {
        let mut input = b"{\"a\":1}\r\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', MAX_LINE + 1));
        input.extend_from_slice(b"\n{\"b\":2}");
        let mut out = Vec::new();
        let dropped = relay(input.as_slice(), &mut out, |line, to| {
            to.write_all(line)?;
            to.write_all(b"\n")
        });
        assert_eq!(out, b"{\"a\":1}\r\n{\"b\":2}\n");
        assert_eq!(dropped, 1);
    }
}
