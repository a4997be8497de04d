//! Requests a server makes of its client in the middle of a call: a
//! `sampling/createMessage` (the server asks the client's model to write
//! something) and an `elicitation/create` (the server asks the user for
//! values). In the 2025-11-25 revision they arrive as requests on the
//! session; in 2026-07-28 a call answers `InputRequiredResult` and the
//! client retries it with the answers (rmcp drives both through the same
//! handler, see [`super::connect::FitnessClient`]).
//!
//! The session only declares what a run serves ([`Serves`]); who answers
//! is set per stage ([`InputDesk::set`]): the runner model for a trial's
//! sampling, a registered policy for elicitation. Every request, its
//! answer and who answered are on the wire tape (the frames) and as a
//! `fitness.input` event, and counted ([`InputCounts`]).

use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use serde_json::Value;

/// What a session declares it serves (its client capabilities).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Serves {
    pub sampling: bool,
    pub elicitation: bool,
}

/// Who answers a server's requests for input, for the call in flight
/// under a trial's corr_id.
pub trait InputAnswers: Send + Sync {
    /// A `sampling/createMessage`, its params as sent: the
    /// `CreateMessageResult` as JSON, or why it was not answered.
    fn sample<'a>(
        &'a self,
        corr_id: Option<&'a str>,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, String>>;

    /// An `elicitation/create`, its params as sent: the `ElicitResult`
    /// as JSON (`{"action": "decline"}`, or `accept` with its content).
    fn elicit<'a>(&'a self, corr_id: Option<&'a str>, params: &'a Value) -> BoxFuture<'a, Value>;

    /// Who answers sampling, as the tape says it (`openai/gpt-x`).
    fn sampler(&self) -> String;

    /// The elicitation policy, as the tape says it (`decline`).
    fn policy(&self) -> String;
}

/// Requests for input a session saw, and how they were answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct InputCounts {
    pub sampling: u64,
    pub sampling_answered: u64,
    pub elicitation: u64,
    pub elicitation_accepted: u64,
    pub elicitation_declined: u64,
}

impl InputCounts {
    pub fn any(&self) -> bool {
        self.sampling + self.elicitation > 0
    }
}

/// The session's desk for requests for input: what it declared it serves,
/// who answers now, and the counts.
#[derive(Clone, Default)]
pub struct InputDesk {
    serves: Serves,
    answers: Arc<Mutex<Option<Arc<dyn InputAnswers>>>>,
    counts: Arc<Mutex<InputCounts>>,
}

impl InputDesk {
    pub fn new(serves: Serves) -> InputDesk {
        InputDesk {
            serves,
            ..InputDesk::default()
        }
    }

    pub fn serves(&self) -> Serves {
        self.serves
    }

    /// Who answers from now on (`None`: nobody, the stages that have no
    /// model of the run's to answer with: generation, the null arms).
    pub fn set(&self, answers: Option<Arc<dyn InputAnswers>>) {
        *self.answers.lock().unwrap_or_else(PoisonError::into_inner) = answers;
    }

    pub fn answers(&self) -> Option<Arc<dyn InputAnswers>> {
        self.answers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn counts(&self) -> InputCounts {
        *self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn count(&self, f: impl FnOnce(&mut InputCounts)) {
        f(&mut self.counts.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// The action of an elicitation answer (`accept`, `decline`, `cancel`).
pub fn elicit_action(answer: &Value) -> &str {
    answer.get("action").and_then(Value::as_str).unwrap_or("")
}
