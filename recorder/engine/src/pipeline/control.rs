//! Stopping a run short and watching it: the cancel signal, why a run
//! stopped before its registered size, and the progress observer the CLI
//! draws its bars from.

/// A request to stop the run early (Ctrl-C, SIGTERM).
#[derive(Clone)]
pub struct Cancel(tokio::sync::watch::Receiver<bool>);

impl Cancel {
    pub fn new() -> (tokio::sync::watch::Sender<bool>, Cancel) {
        let (tx, rx) = tokio::sync::watch::channel(false);
        (tx, Cancel(rx))
    }

    pub fn is_cancelled(&self) -> bool {
        *self.0.borrow()
    }

    /// Resolves when cancelled; never, if the sender is gone uncancelled.
    pub async fn cancelled(&mut self) {
        loop {
            if *self.0.borrow() {
                return;
            }
            if self.0.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}

/// Why the run stopped short of its registered size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Interruption {
    Cancelled,
    SpendCap {
        calls: u64,
    },
    /// A tape reached its registered size cap (the server flooded it).
    TapeCap {
        tape: &'static str,
        limit: u64,
    },
    Failed(String),
}

impl Interruption {
    /// Why the run stopped, in a sentence (the record's note).
    pub fn note(&self) -> String {
        match self {
            Interruption::Cancelled => "The run was interrupted by the operator before it completed its registered size; nothing is scored or refused.".to_owned(),
            Interruption::SpendCap { calls } => format!("The run reached its spend cap of {calls} model calls before it completed its registered size; nothing is scored or refused."),
            Interruption::TapeCap { tape, limit } => format!("The {tape} tape reached its registered cap of {limit} bytes before the run completed its registered size (the server sent more than a run can record); the run stopped there and nothing is scored or refused."),
            Interruption::Failed(why) => format!("The run could not complete its registered size: {why}"),
        }
    }

    pub fn reason(&self) -> &'static str {
        match self {
            Interruption::Cancelled => "interrupted",
            Interruption::SpendCap { .. } => "spend_cap",
            Interruption::TapeCap { .. } => "tape_cap",
            Interruption::Failed(_) => "failed",
        }
    }
}

/// Observers of a run's progress (the CLI draws bars from these).
pub trait Progress: Send + Sync {
    fn phase(&self, _name: &str, _total: u64) {}
    fn advance(&self) {}
    fn finish_phase(&self, _summary: &str) {}
    /// A line the operator must see before the run goes on (what it may do
    /// to the server).
    fn note(&self, _text: &str) {}
}

/// No progress output.
pub struct Quiet;

impl Progress for Quiet {}
