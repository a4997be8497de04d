//! Where the process meets its surroundings, for every command: lines on
//! stdout (a closed pipe, as under `| head`, is a normal end, never a
//! panic), the exit code a command ends with (decided in `main` from
//! [`Exit`]), the async runtime, Ctrl-C and SIGTERM, and the progress shown
//! on stderr.

use std::io::Write as _;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};

use fitness_recorder::pipeline::{Cancel, Progress};

/// A command's end other than success (0) or an error (1, printed as
/// `error: ...`): `main` exits with `code`, printing `message` (redacted)
/// on stderr when there is one. Returned as an error, so a command that
/// ends this way still unwinds (locks released, tapes closed) first.
#[derive(Debug, thiserror::Error)]
#[error("{}", message.as_deref().unwrap_or("exit"))]
pub struct Exit {
    pub code: u8,
    pub message: Option<String>,
}

impl Exit {
    /// A command that did not complete its work (a VOID run, a sweep slot
    /// that did not complete): its output says why.
    pub const INCOMPLETE: u8 = 1;
    /// Interrupted by Ctrl-C or SIGTERM (128 + SIGINT).
    pub const INTERRUPTED: u8 = 130;

    /// End with `code`, having printed what there is to say already.
    pub fn code(code: u8) -> Self {
        Exit {
            code,
            message: None,
        }
    }

    /// End with `code` and print `message` on stderr.
    pub fn with_message(code: u8, message: &str) -> Self {
        Exit {
            code,
            message: Some(message.to_owned()),
        }
    }
}

/// Write `text` to stdout as it is. A reader that has gone (a closed pipe)
/// ends the output, not the command: that is not an error.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(anyhow::Error::new(e).context("failed to write to stdout"))
        }
        _ => Ok(()),
    }
}

/// [`print`] `text` and a newline.
pub fn print_line(text: &str) -> anyhow::Result<()> {
    print(&format!("{text}\n"))
}

/// Progress bars on stderr, one per phase (hidden when stderr is not a terminal).
pub struct Bars {
    bar: Mutex<Option<ProgressBar>>,
    hidden: bool,
}

impl Bars {
    pub fn new(hidden: bool) -> Self {
        Bars {
            bar: Mutex::new(None),
            hidden,
        }
    }
}

impl Progress for Bars {
    fn phase(&self, name: &str, total: u64) {
        let bar = if self.hidden {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(total)
        };
        bar.set_style(
            ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(fitness_recorder::secrets::redact(name));
        let mut slot = self.bar.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = slot.take() {
            old.finish();
        }
        *slot = Some(bar);
    }

    fn advance(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            bar.inc(1);
        }
    }

    fn finish_phase(&self, summary: &str) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|p| p.into_inner()).take() {
            // A summary can quote the server (its protocol version, a count).
            bar.finish_with_message(fitness_recorder::secrets::redact(summary));
        }
    }

    fn note(&self, text: &str) {
        let text = fitness_recorder::secrets::redact(text);
        match self.bar.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
            Some(bar) if !self.hidden => bar.println(text),
            _ => eprintln!("{text}"),
        }
    }
}

/// Lines a supervised `fitness run` prints on stderr to report its phase.
pub const PROGRESS_PREFIX: &str = "fitness-progress ";

/// Phases as lines on stderr, for a supervisor (`fitness sweep`) to read.
pub struct PhaseLines;

impl Progress for PhaseLines {
    fn phase(&self, name: &str, total: u64) {
        eprintln!(
            "{}{}",
            PROGRESS_PREFIX,
            serde_json::json!({"phase": name, "total": total})
        );
    }

    fn note(&self, text: &str) {
        eprintln!("{}", fitness_recorder::secrets::redact(text));
    }
}

/// The runtime and signal handling shared by `fitness run` and `fitness demo`.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

/// Cancel on Ctrl-C or SIGTERM.
pub fn cancel_on_signals() -> Cancel {
    cancel_on(Cancel::new())
}

/// Cancel on Ctrl-C, SIGTERM, or when stdin reaches its end: a supervised
/// run stops when its supervisor closes the pipe (or dies).
pub fn cancel_on_signals_or_stdin_end() -> Cancel {
    let (tx, cancel) = Cancel::new();
    let stdin_tx = tx.clone();
    std::thread::spawn(move || {
        let mut sink = [0u8; 256];
        let mut stdin = std::io::stdin().lock();
        while matches!(std::io::Read::read(&mut stdin, &mut sink), Ok(n) if n > 0) {}
        let _ = stdin_tx.send(true);
    });
    cancel_on((tx, cancel))
}

fn cancel_on((tx, cancel): (tokio::sync::watch::Sender<bool>, Cancel)) -> Cancel {
    tokio::spawn(async move {
        stop_requested().await;
        let _ = tx.send(true);
    });
    cancel
}

/// Ctrl-C or SIGTERM, whichever comes first: the one way every command
/// hears that it is asked to stop. Once a handler is installed the signal no
/// longer ends the process by itself, so whatever waits on the process
/// afterwards (a run, a sweep, `serve` after the demo's runs) waits here.
/// The listeners are installed when this is called, inside the runtime,
/// not when the future is first polled: a signal that arrives in between
/// (`serve` prints its address, then starts) is heard. Never resolves when
/// no handler can be installed.
pub fn stop_requested() -> impl Future<Output = ()> + Send + 'static {
    #[cfg(unix)]
    let listeners = {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) {
            (Ok(term), Ok(int)) => Some((term, int)),
            _ => None,
        }
    };
    async move {
        #[cfg(unix)]
        if let Some((mut term, mut int)) = listeners {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            return;
        }
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// `work` to its end, or `None` when Ctrl-C or SIGTERM comes first: the
/// future is then dropped, which ends any stdio server it started (its whole
/// process group). For the commands that have no VOID record to write.
pub async fn until_interrupted<T>(work: impl Future<Output = T>) -> Option<T> {
    let mut cancel = cancel_on_signals();
    tokio::select! {
        biased;
        done = work => Some(done),
        () = cancel.cancelled() => None,
    }
}

/// After [`until_interrupted`] returned `None`: close the tapes; the
/// error that ends the process with [`Exit::INTERRUPTED`].
pub fn interrupted(taps: &[&fitness_recorder::mcp::tap::Tap]) -> anyhow::Error {
    for tap in taps {
        tap.end("interrupted");
    }
    Exit::with_message(Exit::INTERRUPTED, "interrupted").into()
}

/// Print a line on stdout, redacted, in a function that returns an
/// `anyhow::Result` ([`print_line`]: a closed pipe ends the output, not the
/// command).
macro_rules! outln {
    () => {
        $crate::process::print_line("")?
    };
    ($($arg:tt)*) => {
        $crate::process::print_line(&fitness_recorder::secrets::redact(&format!($($arg)*)))?
    };
}

/// Print a line on stderr, redacted.
macro_rules! errln {
    ($($arg:tt)*) => {
        eprintln!("{}", fitness_recorder::secrets::redact(&format!($($arg)*)))
    };
}

pub(crate) use {errln, outln};
