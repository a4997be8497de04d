//! A newcomer's first errors, as they meet them: each one sentence that
//! says what happened and what to do next, said once, with no Rust type
//! path (`::`) on the terminal. A run whose key or server program is not
//! there is the command line being wrong: exit 2, and nothing written.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::common;
use common::FITNESS;

const LIMIT: Duration = Duration::from_secs(60);

/// `fitness args` in `dir`, with the model keys and base URLs unset.
fn fitness_bare(dir: &Path, args: &[&str]) -> Output {
    let mut cmd = Command::new(FITNESS);
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
    ] {
        cmd.env_remove(var);
    }
    let child = cmd.spawn().expect("fitness starts");
    let (done, wait) = std::sync::mpsc::channel();
    std::thread::spawn(move || done.send(child.wait_with_output()));
    wait.recv_timeout(LIMIT)
        .expect("fitness ends in bounded time")
        .expect("output")
}

/// The one sentence on stderr, checked for what every such error keeps to.
fn one_sentence(out: &Output, names: &str, advice: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {stderr}");
    let line = lines[0];
    assert!(line.starts_with("error: "), "{line}");
    assert!(
        !line.contains("::"),
        "no type path reaches the terminal: {line}"
    );
    assert_eq!(line.matches(names).count(), 1, "said once: {line}");
    assert!(
        line.contains(advice),
        "says what to do next ({advice}): {line}"
    );
    line.to_owned()
}

#[test]
fn a_run_without_its_api_key_is_refused_before_it_starts_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = fitness_bare(
        dir.path(),
        &[
            "run",
            "--runner",
            "anthropic/claude-sonnet-4-5",
            "--judge",
            "anthropic/claude-sonnet-4-5",
            "--",
            FITNESS,
            "demo-server",
            "good",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    one_sentence(&out, "ANTHROPIC_API_KEY", "set ANTHROPIC_API_KEY");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing is written: no runs/ directory, no record"
    );
    // The OpenAI runner names its own key, and the local alternative.
    let out = fitness_bare(
        dir.path(),
        &[
            "run",
            "--runner",
            "openai/gpt-4.1",
            "--generator",
            "schema-walk/2",
            "--",
            FITNESS,
            "demo-server",
            "good",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    one_sentence(&out, "set OPENAI_API_KEY", "OPENAI_BASE_URL");
}

#[test]
fn a_missing_server_program_is_one_sentence_for_probe_and_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = fitness_bare(dir.path(), &["probe", "--", "/nonexistent/mcp-server"]);
    assert_eq!(out.status.code(), Some(1));
    one_sentence(&out, "/nonexistent/mcp-server", "is the server installed");
    let out = fitness_bare(
        dir.path(),
        &[
            "run",
            "--runner",
            "sim/diligent",
            "--",
            "no-such-mcp-server-on-path",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    let line = one_sentence(&out, "no-such-mcp-server-on-path", "on PATH");
    assert!(line.contains("no such program"), "{line}");
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn a_program_that_is_not_an_mcp_server_is_one_sentence() {
    let dir = tempfile::tempdir().unwrap();
    // `cat` starts, reads the handshake and echoes it: never an answer.
    let out = fitness_bare(dir.path(), &["probe", "--timeout", "2", "--", "cat"]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_sentence(
        &out,
        "did not answer the MCP handshake",
        "is it an MCP server",
    );
    assert!(line.contains("`cat`"), "{line}");
}

#[test]
fn a_refused_connection_is_one_sentence() {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let out = fitness_bare(dir.path(), &["probe", "--timeout", "5", &url]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_sentence(&out, &url, "is the server running");
    assert!(line.contains("connection refused"), "{line}");
}

/// A credential labelled anonymous is refused before anything runs, in
/// `run` and in `suite`: exit 2, one sentence, nothing written, the
/// credential's value nowhere.
#[test]
fn a_credential_labelled_anonymous_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let token = "sekrit-token-4fe2a9c1b7d3";
    for command in ["run", "suite"] {
        let mut args = vec![command];
        if command == "run" {
            args.extend(["--runner", "sim/diligent"]);
        } else {
            args.extend(["--generator", "schema-walk/2", "--out", "suite.json"]);
        }
        let header = format!("Authorization: Bearer {token}");
        args.extend([
            "--credential",
            "anonymous",
            "--header",
            &header,
            "http://127.0.0.1:9/mcp",
        ]);
        let out = fitness_bare(dir.path(), &args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{command}: {}",
            common::text(&out)
        );
        let line = one_sentence(&out, "--credential anonymous", "owner-key");
        assert!(line.contains("the header(s) Authorization"), "{line}");
        assert!(!common::text(&out).contains(token));
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "{command}: nothing is written"
        );
    }
}
