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
use serde_json::{Map, Value, json};

use super::tap::Tap;
use super::tapped::SharedCorrId;

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

    fn count(&self, f: impl FnOnce(&mut InputCounts)) {
        f(&mut self.counts.lock().unwrap_or_else(PoisonError::into_inner));
    }
}

/// The action of an elicitation answer (`accept`, `decline`, `cancel`).
pub fn elicit_action(answer: &Value) -> &str {
    answer.get("action").and_then(Value::as_str).unwrap_or("")
}

/// How a session answers a request for input, whichever form it came in
/// (a request on the session, an `InputRequiredResult`, a task waiting
/// for input): the desk's answerer for the trial in flight, counted, and a
/// `fitness.input` event on the wire tape saying who answered.
#[derive(Clone)]
pub struct Answering {
    pub desk: InputDesk,
    pub tap: Tap,
    /// The trial whose call is in flight.
    pub corr_id: SharedCorrId,
}

/// The answer to a request the client does not serve, as its error.
pub const NOT_SERVED: &str = "the client serves no such request in this stage";

impl Answering {
    fn tape(&self, kind: &str, by: &str, outcome: &str) {
        let corr = self.corr_id.get();
        self.tap.event(
            "fitness.input",
            json!({"kind": kind, "answered_by": by, "outcome": outcome}),
            corr.as_deref(),
        );
    }

    /// A `sampling/createMessage`'s params: the `CreateMessageResult` as
    /// JSON, or why it was not answered.
    pub async fn sample(&self, params: &Value) -> Result<Value, String> {
        self.desk.count(|c| c.sampling += 1);
        let answers = self.desk.answers().filter(|_| self.desk.serves().sampling);
        let Some(answers) = answers else {
            self.tape(
                "sampling",
                "nobody",
                "refused: no model answers in this stage",
            );
            return Err(NOT_SERVED.into());
        };
        let corr = self.corr_id.get();
        let by = answers.sampler();
        match answers.sample(corr.as_deref(), params).await {
            Ok(answer) => {
                self.desk.count(|c| c.sampling_answered += 1);
                self.tape("sampling", &by, "answered");
                Ok(answer)
            }
            Err(why) => {
                self.tape("sampling", &by, "failed");
                Err(why)
            }
        }
    }

    /// An `elicitation/create`'s params: the `ElicitResult` as JSON (a
    /// decline where nobody answers).
    pub async fn elicit(&self, params: &Value) -> Value {
        self.desk.count(|c| c.elicitation += 1);
        let answers = self
            .desk
            .answers()
            .filter(|_| self.desk.serves().elicitation);
        let corr = self.corr_id.get();
        let (answer, by) = match answers {
            Some(a) => (a.elicit(corr.as_deref(), params).await, a.policy()),
            None => (json!({"action": "decline"}), "nobody".to_owned()),
        };
        let action = elicit_action(&answer).to_owned();
        self.desk.count(|c| {
            if action == "accept" {
                c.elicitation_accepted += 1;
            } else {
                c.elicitation_declined += 1;
            }
        });
        self.tape("elicitation", &by, &action);
        answer
    }

    /// The answers to a map of input requests (`{"key": {"method": ...,
    /// "params": ...}}`), by the same keys: a request that is not served
    /// is answered with an error object, which the server reads as a
    /// refusal.
    pub async fn fulfil(&self, requests: &Map<String, Value>) -> Map<String, Value> {
        let mut out = Map::new();
        for (key, request) in requests.iter().take(16) {
            let params = request.get("params").cloned().unwrap_or_default();
            let answer = match request.get("method").and_then(Value::as_str) {
                Some("sampling/createMessage") => match self.sample(&params).await {
                    Ok(a) => a,
                    Err(why) => json!({"error": {"code": -32601, "message": why}}),
                },
                Some("elicitation/create") => self.elicit(&params).await,
                Some("roots/list") => json!({"roots": []}),
                _ => json!({"error": {"code": -32601, "message": NOT_SERVED}}),
            };
            out.insert(key.clone(), answer);
        }
        out
    }
}
