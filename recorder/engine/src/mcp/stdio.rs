//! Stdio child processes, with a byte-exact tap.
//!
//! We spawn the child ourselves and hand rmcp its pipes wrapped in
//! [`TapReader`] / [`TapWriter`], which record each line as it crosses (the
//! original bytes: re-parsing would reorder keys) in the same task that reads
//! or writes it, so the tap adds no extra hop. Lines from the server that are
//! not JSON are recorded as events and not passed on, so a garbage-speaking
//! server cannot derail the client. The child gets a minimal environment plus
//! what the user passed; its stderr is kept apart. It runs in a process group
//! of its own, and the whole group is killed when the session closes, times
//! out or is interrupted, or the [`StdioChild`] is dropped: the grandchildren
//! a launcher such as `npx` starts go with it. (A grandchild that makes
//! itself a session leader with `setsid` has left the group and is beyond
//! reach.)

use std::io;
use std::pin::Pin;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use fitness_shared::tape::Direction;
use serde_json::json;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::task::JoinHandle;

use super::frames::{BoundedLines, Frame, MAX_LINE, Piece, classify, line_text};
use super::tap::Tap;
use super::tapped::SharedCorrId;
use super::unreachable::Unreachable;
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

    /// Is there a program to start? Said before a run starts, as the
    /// command line's fault: the same sentence a failed start would give.
    pub fn check_program(&self) -> Result<(), Unreachable> {
        let path = self
            .env
            .iter()
            .rev()
            .find(|(k, _)| k == "PATH")
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var("PATH").ok())
            .unwrap_or_default();
        let candidates: Vec<std::path::PathBuf> = if self.program.contains('/') {
            vec![self.program.clone().into()]
        } else {
            std::env::split_paths(&path)
                .map(|dir| dir.join(&self.program))
                .collect()
        };
        let mut found = io::ErrorKind::NotFound;
        for candidate in candidates {
            match std::fs::metadata(&candidate) {
                Ok(m) if m.is_file() && executable(&m) => return Ok(()),
                Ok(_) => found = io::ErrorKind::PermissionDenied,
                Err(_) => {}
            }
        }
        Err(Unreachable::not_started(
            &self.program,
            &io::Error::from(found),
        ))
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
        // Its own group: a terminal's Ctrl-C reaches the recorder, not the
        // server, and the recorder ends the whole group itself.
        #[cfg(unix)]
        cmd.process_group(0);
        cmd
    }
}

#[cfg(unix)]
fn executable(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    m.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn executable(_: &std::fs::Metadata) -> bool {
    true
}

/// The client's ends of the child's pipes, tapped.
pub type TappedPipes = (TapReader<ChildStdout>, TapWriter<ChildStdin>);

/// A running child and the task that keeps its stderr.
pub struct StdioChild {
    child: Child,
    /// The child's process group (its pid), while it may have members.
    group: Option<u32>,
    stderr: Arc<Mutex<Vec<u8>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl StdioChild {
    /// Spawn `target`; returns its tapped pipes (an rmcp transport) and the child.
    pub fn spawn(
        target: &StdioTarget,
        tap: Tap,
        corr_id: Option<String>,
    ) -> anyhow::Result<(TappedPipes, StdioChild)> {
        Ok(Self::spawn_shared(
            target,
            tap,
            SharedCorrId::new(corr_id.as_deref()),
        )?)
    }

    /// As [`StdioChild::spawn`], with a corr_id the caller can change while
    /// the child runs.
    pub fn spawn_shared(
        target: &StdioTarget,
        tap: Tap,
        corr_id: SharedCorrId,
    ) -> Result<(TappedPipes, StdioChild), Unreachable> {
        let mut child = target
            .command()
            .spawn()
            .map_err(|e| Unreachable::not_started(&target.command_line().join(" "), &e))?;
        let group = child.id();
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(Unreachable::new(
                "the server's pipes were not opened".to_owned(),
                false,
            ));
        };
        let mut tasks = Vec::new();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        if let Some(err) = child.stderr.take() {
            let keep = stderr.clone();
            // Only the tail is kept, so stderr is read in chunks, never
            // as lines: a line of any length costs no more than the tail.
            tasks.push(tokio::spawn(async move {
                let mut err = err;
                let mut buf = vec![0u8; 8 * 1024];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    let mut kept = keep.lock().unwrap_or_else(|p| p.into_inner());
                    kept.extend_from_slice(&buf[..n]);
                    if kept.len() > STDERR_KEEP {
                        let cut = kept.len() - STDERR_KEEP;
                        kept.drain(..cut);
                    }
                }
            }));
        }
        let pipes = (
            TapReader::new(stdout, tap.clone(), corr_id.clone()),
            TapWriter::new(stdin, tap, corr_id),
        );
        Ok((
            pipes,
            StdioChild {
                child,
                group,
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

    /// Kill the child's whole process group and stop the stderr reader.
    pub async fn kill(&mut self) {
        self.kill_group();
        let _ = self.child.start_kill();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), self.child.wait()).await;
        for task in &self.tasks {
            task.abort();
        }
    }

    /// SIGKILL to every process in the child's group.
    fn kill_group(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .group
            .take()
            .and_then(|g| i32::try_from(g).ok())
            .filter(|g| *g > 1)
            .and_then(rustix::process::Pid::from_raw)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        self.kill_group();
        let _ = self.child.start_kill();
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// Reads server-to-client bytes, tapes each line as it arrives, and passes on
/// only lines that are JSON.
pub struct TapReader<R> {
    inner: R,
    tap: Tap,
    corr_id: SharedCorrId,
    lines: BoundedLines,
    /// Checked lines waiting to be read by the client.
    ready: Vec<u8>,
    ready_pos: usize,
    eof: bool,
}

impl<R> TapReader<R> {
    fn new(inner: R, tap: Tap, corr_id: SharedCorrId) -> Self {
        TapReader {
            inner,
            tap,
            corr_id,
            lines: BoundedLines::new(MAX_LINE),
            ready: Vec::new(),
            ready_pos: 0,
            eof: false,
        }
    }

    /// Tape one piece and queue it for the client when it is a frame.
    fn take(tap: &Tap, corr_id: &SharedCorrId, ready: &mut Vec<u8>, piece: Piece<'_>) {
        let line = match piece {
            Piece::Line(line) => line,
            Piece::TooLong => {
                tap.event(
                    "fitness.oversized_line",
                    json!({"limit": MAX_LINE}),
                    corr_id.get().as_deref(),
                );
                return;
            }
        };
        let text = line_text(line);
        match classify(&text) {
            Frame::Blank => {}
            Frame::Json(raw) => {
                tap.frame_raw(Direction::Out, raw, corr_id.get().as_deref());
                ready.extend_from_slice(text.as_bytes());
                ready.push(b'\n');
            }
            // Garbage stays on the tape as an event and goes no further.
            Frame::Garbage(text) => tap.frame(Direction::Out, text, corr_id.get().as_deref()),
        }
    }

    fn take_chunk(&mut self, chunk: &[u8]) {
        let (tap, corr_id, ready) = (&self.tap, &self.corr_id, &mut self.ready);
        self.lines
            .push(chunk, |piece| Self::take(tap, corr_id, ready, piece));
    }

    fn finish(&mut self) {
        let (tap, corr_id, ready) = (&self.tap, &self.corr_id, &mut self.ready);
        self.lines
            .finish(|piece| Self::take(tap, corr_id, ready, piece));
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for TapReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.ready_pos < this.ready.len() {
                let n = buf.remaining().min(this.ready.len() - this.ready_pos);
                buf.put_slice(&this.ready[this.ready_pos..this.ready_pos + n]);
                this.ready_pos += n;
                if this.ready_pos == this.ready.len() {
                    this.ready.clear();
                    this.ready_pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                return Poll::Ready(Ok(()));
            }
            let mut chunk = [0u8; 16 * 1024];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                this.eof = true;
                this.finish();
                this.tap.event(
                    "fitness.stdio_closed",
                    json!({"stream": "stdout"}),
                    this.corr_id.get().as_deref(),
                );
            } else {
                this.take_chunk(&chunk[..n]);
            }
        }
    }
}

/// Writes client-to-server bytes through, taping each complete line.
pub struct TapWriter<W> {
    inner: W,
    tap: Tap,
    corr_id: SharedCorrId,
    line: Vec<u8>,
    /// Bytes already taped but not yet accepted by the pipe: a frame is
    /// taped before it is written, so its answer can never be taped first
    /// (or under the next trial's corr_id).
    ahead: Vec<u8>,
}

impl<W> TapWriter<W> {
    fn new(inner: W, tap: Tap, corr_id: SharedCorrId) -> Self {
        TapWriter {
            inner,
            tap,
            corr_id,
            line: Vec::new(),
            ahead: Vec::new(),
        }
    }

    fn record(&mut self, written: &[u8]) {
        let mut rest = written;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.line.extend_from_slice(&rest[..i]);
            rest = &rest[i + 1..];
            let text = String::from_utf8_lossy(&self.line);
            let line = text.trim_end_matches('\r');
            if !line.trim().is_empty() {
                self.tap
                    .frame(Direction::In, line, self.corr_id.get().as_deref());
            }
            self.line.clear();
        }
        if self.line.len() + rest.len() <= MAX_LINE {
            self.line.extend_from_slice(rest);
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for TapWriter<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.tap.is_enabled() {
            // A retry after Pending or a partial write passes the unwritten
            // rest again: tape only what was not taped yet.
            let fresh = if buf.starts_with(&this.ahead) {
                &buf[this.ahead.len()..]
            } else {
                buf
            };
            this.record(fresh);
            this.ahead.clear();
            this.ahead.extend_from_slice(buf);
        }
        let n = ready!(Pin::new(&mut this.inner).poll_write(cx, buf))?;
        if this.tap.is_enabled() {
            this.ahead.drain(..n.min(this.ahead.len()));
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    fn tape() -> (tempfile::TempDir, std::path::PathBuf, Tap) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(fitness_shared::site::MCP_TAPE);
        let tap = Tap::create(&path, "test", vec![]).expect("tape");
        (dir, path, tap)
    }

    #[tokio::test]
    async fn reader_passes_json_lines_byte_exact_and_tapes_garbage_as_events() {
        let (_dir, path, tap) = tape();
        let input: &[u8] = b"{\"b\":1,  \"a\":2}\r\nnot json {\n\n\xff\xfe\n{\"id\":1}";
        let mut reader = TapReader::new(input, tap, SharedCorrId::new(Some("c")));
        let mut out = String::new();
        reader.read_to_string(&mut out).await.expect("read");
        assert_eq!(out, "{\"b\":1,  \"a\":2}\n{\"id\":1}\n");
        let text = std::fs::read_to_string(&path).expect("tape");
        assert!(
            text.contains(r#""raw":{"b":1,  "a":2},"corr_id":"c""#),
            "{text}"
        );
        assert_eq!(text.matches("fitness.unparsable").count(), 2, "{text}");
        assert!(text.contains("fitness.stdio_closed"));
    }

    #[tokio::test]
    async fn writer_tapes_each_line_once_however_it_is_split() {
        let (_dir, path, tap) = tape();
        let mut sink = Vec::new();
        let mut writer = TapWriter::new(&mut sink, tap, SharedCorrId::default());
        for piece in [&b"{\"id\":1,"[..], b"\"m\":\"x\"}\n{\"id\"", b":2}\n"] {
            writer.write_all(piece).await.expect("write");
        }
        writer.flush().await.expect("flush");
        assert_eq!(sink, b"{\"id\":1,\"m\":\"x\"}\n{\"id\":2}\n");
        let text = std::fs::read_to_string(&path).expect("tape");
        assert!(
            text.contains(r#""dir":"in","raw":{"id":1,"m":"x"}"#),
            "{text}"
        );
        assert!(text.contains(r#""dir":"in","raw":{"id":2}"#), "{text}");
    }

    /// Accepts three bytes per call and answers every other call Pending.
    struct Trickle {
        out: Vec<u8>,
        calls: usize,
    }

    impl AsyncWrite for Trickle {
        fn poll_write(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<io::Result<usize>> {
            self.calls += 1;
            if self.calls % 2 == 1 {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            let n = buf.len().min(3);
            self.out.extend_from_slice(&buf[..n]);
            Poll::Ready(Ok(n))
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            Poll::Ready(Ok(()))
        }
    }

    #[tokio::test]
    async fn a_frame_is_taped_once_before_the_pipe_takes_it_even_in_pieces() {
        let (_dir, path, tap) = tape();
        let mut sink = Trickle {
            out: Vec::new(),
            calls: 0,
        };
        let corr = SharedCorrId::new(Some("t1"));
        let mut writer = TapWriter::new(&mut sink, tap, corr.clone());
        // The first poll is Pending and nothing reached the pipe, yet the
        // frame is already on the tape under the trial that sent it.
        let frame = b"{\"id\":7,\"method\":\"tools/call\"}\n";
        let mut first = Box::pin(writer.write_all(frame));
        let polled = futures::poll!(first.as_mut());
        assert!(polled.is_pending());
        let text = std::fs::read_to_string(&path).expect("tape");
        assert!(
            text.contains(r#""raw":{"id":7,"method":"tools/call"},"corr_id":"t1""#),
            "{text}"
        );
        first.await.expect("write");
        // The trial ends; its frame keeps its corr_id and is not taped twice.
        corr.set(None);
        writer.write_all(b"{\"id\":8}\n").await.expect("write");
        drop(writer);
        assert_eq!(
            sink.out,
            b"{\"id\":7,\"method\":\"tools/call\"}\n{\"id\":8}\n"
        );
        let text = std::fs::read_to_string(&path).expect("tape");
        assert_eq!(text.matches(r#""id":7"#).count(), 1, "{text}");
        assert_eq!(text.matches(r#""id":8"#).count(), 1, "{text}");
    }
}
