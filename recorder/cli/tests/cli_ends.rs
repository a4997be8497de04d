//! How `fitness` ends when its reader goes away: output into a closed pipe
//! (`fitness ... | head`) is a normal end, exit 0, never a panic; and when
//! it is asked to stop with SIGTERM, as `kill PID`, a service manager or a
//! container runtime asks.

use std::io::{BufRead as _, Read as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;
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

/// The demo's runs install the process's Ctrl-C and SIGTERM handlers, so
/// from then on SIGTERM ends nothing by itself: the server the demo starts
/// afterwards must hear it too, and end cleanly.
#[test]
fn the_demo_board_server_ends_cleanly_on_sigterm() {
    let tmp = tempfile::tempdir().unwrap();
    let path = |p: &str| tmp.path().join(p).to_str().unwrap().to_owned();
    let mut child = Command::new(FITNESS)
        .args(["demo", "--only", "thin", "--addr", "127.0.0.1:0"])
        .args(["--out", &path("runs"), "--site", &path("site")])
        .args(["--viewer", &path("no-viewer")])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("fitness starts");
    let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let serving = stdout
        .lines()
        .map_while(Result::ok)
        .any(|line| line.starts_with("serving "));
    assert!(serving, "the demo never served its board");
    let pid = rustix::process::Pid::from_raw(child.id() as i32).expect("a pid");
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).expect("SIGTERM sent");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the demo's server was still running 10 s after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "ended with {status:?}");
}
