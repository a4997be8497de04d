//! How `fitness` ends when its reader goes away: output into a closed pipe
//! (`fitness ... | head`) is a normal end, exit 0, never a panic.

use std::io::Read as _;
use std::process::{Command, Stdio};

mod common;
use common::FITNESS;

/// Run `fitness args` with its stdout read end closed before it writes.
fn into_a_closed_pipe(args: &[&str]) -> std::process::Output {
    let mut child = Command::new(FITNESS)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fitness starts");
    drop(child.stdout.take());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("stderr reads");
    let status = child.wait().expect("fitness ends");
    std::process::Output {
        status,
        stdout: Vec::new(),
        stderr: stderr.into_bytes(),
    }
}

#[test]
fn output_into_a_closed_pipe_ends_the_command_normally() {
    let tmp = tempfile::tempdir().unwrap();
    let key = tmp.path().join("k.key");
    let tape = common::anchor_dir().join("traces");
    let tape = std::fs::read_dir(&tape)
        .unwrap()
        .map(|e| e.unwrap().path().join("mcp.jsonl"))
        .find(|p| p.is_file())
        .expect("an anchor wire tape");
    for args in [
        vec![],
        vec!["keygen", "--out", key.to_str().unwrap()],
        vec!["tape", "stats", tape.to_str().unwrap()],
    ] {
        let out = into_a_closed_pipe(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !stderr.contains("panicked"),
            "fitness {args:?}: {:?}\n{stderr}",
            out.status
        );
    }
}
