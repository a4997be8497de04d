//! `fitness rewrite-proxy --rewrites FILE -- CMD ARGS...`: a stdio MCP
//! server that is the real server with the proposed descriptions
//! substituted. It spawns the server, passes every line through unchanged in
//! both directions, except the responses to `tools/list` requests, whose
//! `result.tools` get the proposals applied (descriptions, parameter
//! descriptions, annotations). The server's stderr is inherited.
//!
//! The rewrites file is JSON: `{"proposals": [Proposal, ...]}` (the
//! record's proposals).

use std::collections::HashSet;
use std::io::{BufRead as _, BufReader, BufWriter, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use clap::Args;
use fitness_shared::record::Proposal;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::proposals::apply_all;

#[derive(Debug, Args)]
pub struct RewriteProxyArgs {
    /// The proposals to substitute (`{"proposals": [...]}`).
    #[arg(long, value_name = "FILE")]
    pub rewrites: PathBuf,
    /// The server command line.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

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

pub fn run(args: RewriteProxyArgs) -> anyhow::Result<()> {
    let rewrites = Rewrites::load(&args.rewrites)?;
    let (program, rest) = args
        .command
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

    let to_server = {
        let pending = Arc::clone(&pending);
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut reader = stdin.lock();
            let mut line = String::new();
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        note_request(&line, &pending);
                        if child_in
                            .write_all(line.as_bytes())
                            .and_then(|()| child_in.flush())
                            .is_err()
                        {
                            break;
                        }
                    }
                }
            }
            // Dropping the pipe closes the server's stdin.
        })
    };

    let mut reader = BufReader::new(child_out);
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let written = match rewrite_line(&line, &pending, &rewrites.proposals) {
                    Some(new) => out
                        .write_all(new.as_bytes())
                        .and_then(|()| out.write_all(b"\n")),
                    None => out.write_all(line.as_bytes()),
                };
                if written.and_then(|()| out.flush()).is_err() {
                    break;
                }
            }
        }
    }
    drop(out);
    let status = child.wait().context("the server did not exit cleanly")?;
    // The stdin thread ends when our stdin closes; do not wait for it.
    drop(to_server);
    if !status.success() {
        std::process::exit(status.code().unwrap_or(1));
    }
    Ok(())
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
}
