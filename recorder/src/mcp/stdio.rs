//! Stdio child processes, with a byte-exact tap.
//!
//! We spawn the child ourselves and hand rmcp one end of a `tokio::io::duplex`;
//! two tasks copy lines between the duplex and the child's pipes and log each
//! line as it crossed (the original string: re-parsing would reorder keys).
//! Lines that are not JSON are recorded as events and not forwarded, so a
//! garbage-speaking server cannot derail the client. The child gets a minimal
//! environment plus what the user passed; its stderr is kept apart, and it is
//! killed when the [`StdioChild`] is dropped.

use std::process::Stdio;
use std::sync::{Arc, Mutex};

use fitness_shared::tape::Direction;
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use super::tap::Tap;

/// The longest line we accept from a child; longer lines are dropped.
const MAX_LINE: usize = 16 * 1024 * 1024;
/// How much of the child's stderr we keep (the tail).
const STDERR_KEEP: usize = 64 * 1024;

/// Environment variables passed through to every child; all else is cleared.
const PASS_ENV: &[&str] = &[
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "TMPDIR",
    "USER",
    "SYSTEMROOT",
];

/// What to run.
#[derive(Debug, Clone)]
pub struct StdioTarget {
    pub program: String,
    pub args: Vec<String>,
    /// Extra environment (auth tokens go here); never written to a tape.
    pub env: Vec<(String, String)>,
}

impl StdioTarget {
    pub fn command_line(&self) -> Vec<String> {
        std::iter::once(self.program.clone())
            .chain(self.args.iter().cloned())
            .collect()
    }

    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).env_clear();
        for key in PASS_ENV {
            if let Ok(value) = std::env::var(key) {
                cmd.env(key, value);
            }
        }
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }
}

/// A running child and the tasks that move its bytes.
pub struct StdioChild {
    child: Child,
    stderr: Arc<Mutex<Vec<u8>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl StdioChild {
    /// Spawn `target`; returns the client end of the pipe and the child.
    pub fn spawn(
        target: &StdioTarget,
        tap: Tap,
        corr_id: Option<String>,
    ) -> anyhow::Result<(DuplexStream, StdioChild)> {
        let mut child = target.command().spawn().map_err(|e| {
            anyhow::anyhow!("failed to start `{}`: {e}", target.command_line().join(" "))
        })?;
        let (client_end, bridge_end) = tokio::io::duplex(1 << 20);
        let (bridge_read, bridge_write) = tokio::io::split(bridge_end);
        let mut tasks = Vec::new();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) {
            tasks.push(tokio::spawn(pump(
                stdout,
                bridge_write,
                Direction::Out,
                tap.clone(),
                corr_id.clone(),
            )));
            tasks.push(tokio::spawn(pump(
                bridge_read,
                stdin,
                Direction::In,
                tap,
                corr_id,
            )));
        }
        if let Some(err) = child.stderr.take() {
            let keep = stderr.clone();
            tasks.push(tokio::spawn(async move {
                let mut reader = BufReader::new(err);
                let mut buf = Vec::new();
                while let Ok(n) = reader.read_until(b'\n', &mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut kept = keep.lock().unwrap_or_else(|p| p.into_inner());
                    kept.extend_from_slice(&buf);
                    if kept.len() > STDERR_KEEP {
                        let cut = kept.len() - STDERR_KEEP;
                        kept.drain(..cut);
                    }
                    buf.clear();
                }
            }));
        }
        Ok((
            client_end,
            StdioChild {
                child,
                stderr,
                tasks,
            },
        ))
    }

    /// The tail of what the child wrote on stderr.
    pub fn stderr_tail(&self) -> String {
        let kept = self.stderr.lock().unwrap_or_else(|p| p.into_inner());
        String::from_utf8_lossy(&kept).into_owned()
    }

    /// Kill the child and stop the pumps.
    pub async fn kill(&mut self) {
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.child.wait()).await;
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Copy lines from `from` to `to`, recording each as it crossed.
async fn pump<R, W>(from: R, mut to: W, dir: Direction, tap: Tap, corr_id: Option<String>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(from);
    let mut buf = Vec::with_capacity(4096);
    loop {
        buf.clear();
        match read_line_capped(&mut reader, &mut buf).await {
            Ok(LineRead::Eof) | Err(_) => break,
            Ok(LineRead::TooLong) => {
                tap.event(
                    "fitness.oversized_line",
                    json!({"limit": MAX_LINE}),
                    corr_id.as_deref(),
                );
                continue;
            }
            Ok(LineRead::Line) => {}
        }
        let text = String::from_utf8_lossy(&buf);
        let line = text.trim_end_matches(['\r', '\n']);
        if line.trim().is_empty() {
            continue;
        }
        tap.frame(dir, line, corr_id.as_deref());
        // Only JSON goes on to rmcp; garbage stays on the tape as an event.
        let forward = serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok();
        if forward
            && (to.write_all(line.as_bytes()).await.is_err()
                || to.write_all(b"\n").await.is_err()
                || to.flush().await.is_err())
        {
            break;
        }
    }
    if dir == Direction::Out {
        tap.event(
            "fitness.stdio_closed",
            json!({"stream": "stdout"}),
            corr_id.as_deref(),
        );
    }
    let _ = to.shutdown().await;
}

enum LineRead {
    Line,
    TooLong,
    Eof,
}

async fn read_line_capped<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
    buf: &mut Vec<u8>,
) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() && !too_long {
                LineRead::Eof
            } else if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
        let (chunk, done) = match memchr_newline(available) {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let used = chunk.len();
        if !too_long {
            if buf.len() + used > MAX_LINE {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if done {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}
