//! Which response answers which request on a wire tape: the one pairing the
//! stats, the replay timeline, the rewrite findings and the construct gate's
//! tape reading share.
//!
//! A caller hands over its request and response frames in tape order, each
//! with a key built from what must agree for a response to answer a request:
//! always the JSON-RPC id, and as the caller needs, the tape (or file), the
//! `source`, the direction and the corr_id. It gets back a [`Paired`]: for
//! each request its [`RequestFate`], for each response the request it
//! answers.
//!
//! The rules:
//! - A notification (no id) has no key and is never handed over; only
//!   frames with an id pair.
//! - A response answers an open request with the same key. Which requests a
//!   response may reach, what a second request with a key already open does,
//!   and whether an answered request takes further answers are the three
//!   [`Rules`] options; each caller's choice is named where it builds them.
//! - A request no response answers is [`RequestFate::Unanswered`]: a real
//!   call whose answer is unknown, never dropped.
//! - A response that answers no request (its request is not on the tape, or
//!   was already answered) is an orphan: its entry in
//!   [`Paired::responses`] is `None`.

use std::collections::{HashMap, VecDeque};
use std::hash::Hash;

/// Which requests a response may answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Anywhere on the tape, before or after it: every request is open
    /// first, then the responses answer in tape order.
    WholeTape,
    /// In tape order: a response answers a request already seen. With
    /// `early_answers: Some(n)`, a response no request was open for waits,
    /// and a request that accepts early answers taped at most `n` positions
    /// after it takes it (the latest such response of its key).
    InOrder { early_answers: Option<u64> },
}

/// What a request does when a request with its key is already open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// It replaces the open one, which is forgotten
    /// ([`RequestFate::Replaced`]) and whose place in
    /// [`Paired::unanswered`] it takes, as `Map.set` does.
    Replace,
    /// Both stay open: each response answers the earliest open request of
    /// its key.
    Queue,
    /// It takes the key; the open one stays as it is and no later response
    /// reaches it.
    Shadow,
}

/// Whether an answered request takes further responses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAnswer {
    /// The first response closes it; a second one is an orphan.
    Close,
    /// It stays open: every later response with its key answers it too.
    StayOpen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub reach: Reach,
    pub repeat: Repeat,
    pub after_answer: AfterAnswer,
}

/// What became of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestFate {
    /// Answered; the number of its first response.
    Answered(usize),
    /// No response answered it.
    Unanswered,
    /// A later request with its key replaced it ([`Repeat::Replace`]).
    Replaced,
}

enum Frame<K> {
    Request { key: K, at: u64, early: bool },
    Response { key: K, at: u64 },
}

/// Frames collected in tape order; [`finish`](Self::finish) pairs them.
pub struct Pairing<K> {
    rules: Rules,
    frames: Vec<Frame<K>>,
    requests: usize,
    responses: usize,
}

/// The pairing's answer. Requests and responses are numbered apart, each
/// from 0 in the order they were handed over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paired {
    pub requests: Vec<RequestFate>,
    /// For each response, the request it answers.
    pub responses: Vec<Option<usize>>,
    /// For each request, its place among the unanswered.
    place: Vec<usize>,
}

impl Paired {
    /// The unanswered requests, in the order they were handed over (a
    /// replacing request standing where the one it replaced stood).
    pub fn unanswered(&self) -> impl Iterator<Item = usize> + '_ {
        let mut open: Vec<usize> = (0..self.requests.len())
            .filter(|&q| self.requests[q] == RequestFate::Unanswered)
            .collect();
        open.sort_by_key(|&q| self.place[q]);
        open.into_iter()
    }
}

impl<K: Hash + Eq> Pairing<K> {
    pub fn new(rules: Rules) -> Self {
        Pairing {
            rules,
            frames: Vec::new(),
            requests: 0,
            responses: 0,
        }
    }

    /// A request with `key` at tape position `at`; returns its number.
    pub fn request(&mut self, key: K, at: u64) -> usize {
        self.push_request(key, at, true)
    }

    /// A request that never takes an answer taped before it, even within
    /// [`Reach::InOrder`]'s early window.
    pub fn request_without_early_answers(&mut self, key: K, at: u64) -> usize {
        self.push_request(key, at, false)
    }

    fn push_request(&mut self, key: K, at: u64, early: bool) -> usize {
        self.frames.push(Frame::Request { key, at, early });
        self.requests += 1;
        self.requests - 1
    }

    /// A response with `key` at tape position `at`; returns its number.
    pub fn response(&mut self, key: K, at: u64) -> usize {
        self.frames.push(Frame::Response { key, at });
        self.responses += 1;
        self.responses - 1
    }

    pub fn finish(self) -> Paired {
        let mut state = State {
            rules: self.rules,
            open: HashMap::new(),
            early: HashMap::new(),
            paired: Paired {
                requests: vec![RequestFate::Unanswered; self.requests],
                responses: vec![None; self.responses],
                place: (0..self.requests).collect(),
            },
        };
        let (mut q, mut r) = (0, 0);
        match self.rules.reach {
            Reach::WholeTape => {
                let mut responses = Vec::with_capacity(self.responses);
                for frame in self.frames {
                    match frame {
                        Frame::Request { key, .. } => {
                            state.open_request(key, q);
                            q += 1;
                        }
                        Frame::Response { key, .. } => responses.push(key),
                    }
                }
                for key in responses {
                    state.answer(key, r);
                    r += 1;
                }
            }
            Reach::InOrder { early_answers } => {
                for frame in self.frames {
                    match frame {
                        Frame::Request { key, at, early } => {
                            let taken = early_answers
                                .filter(|_| early)
                                .and_then(|window| state.take_early(&key, at, window));
                            match taken {
                                Some(answer) => {
                                    state.paired.requests[q] = RequestFate::Answered(answer);
                                    state.paired.responses[answer] = Some(q);
                                    if state.rules.after_answer == AfterAnswer::StayOpen {
                                        state.open_request(key, q);
                                    }
                                }
                                None => state.open_request(key, q),
                            }
                            q += 1;
                        }
                        Frame::Response { key, at } => {
                            if let Some(key) = state.answer(key, r)
                                && let Some(window) = early_answers
                            {
                                state
                                    .early
                                    .retain(|_, (t, _)| at.saturating_sub(*t) <= window);
                                state.early.insert(key, (at, r));
                            }
                            r += 1;
                        }
                    }
                }
            }
        }
        state.paired
    }
}

struct State<K> {
    rules: Rules,
    open: HashMap<K, VecDeque<usize>>,
    /// Responses no request was open for, waiting: key -> (position, number).
    early: HashMap<K, (u64, usize)>,
    paired: Paired,
}

impl<K: Hash + Eq> State<K> {
    fn open_request(&mut self, key: K, q: usize) {
        let list = self.open.entry(key).or_default();
        match self.rules.repeat {
            Repeat::Replace => {
                if let Some(old) = list.pop_back() {
                    self.paired.requests[old] = RequestFate::Replaced;
                    self.paired.place[q] = self.paired.place[old];
                }
            }
            Repeat::Shadow => list.clear(),
            Repeat::Queue => {}
        }
        list.push_back(q);
    }

    /// Response `r` answers the open request of its key; without one, the
    /// key is handed back.
    fn answer(&mut self, key: K, r: usize) -> Option<K> {
        let Some(list) = self.open.get_mut(&key).filter(|l| !l.is_empty()) else {
            return Some(key);
        };
        let q = match self.rules.after_answer {
            AfterAnswer::Close => list.pop_front()?,
            AfterAnswer::StayOpen => *list.front()?,
        };
        self.paired.responses[r] = Some(q);
        if self.paired.requests[q] == RequestFate::Unanswered {
            self.paired.requests[q] = RequestFate::Answered(r);
        }
        None
    }

    fn take_early(&mut self, key: &K, at: u64, window: u64) -> Option<usize> {
        let (t, r) = self.early.remove(key)?;
        (at.saturating_sub(t) <= window).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(reach: Reach, repeat: Repeat, after_answer: AfterAnswer) -> Rules {
        Rules {
            reach,
            repeat,
            after_answer,
        }
    }

    #[test]
    fn whole_tape_queue_answers_the_earliest_open_request() {
        let mut p = Pairing::new(rules(Reach::WholeTape, Repeat::Queue, AfterAnswer::Close));
        p.response("a", 0); // taped before its request
        p.request("a", 1);
        p.request("a", 2);
        p.response("a", 3);
        p.response("a", 4); // nothing left open
        let paired = p.finish();
        assert_eq!(
            paired.requests,
            [RequestFate::Answered(0), RequestFate::Answered(1)]
        );
        assert_eq!(paired.responses, [Some(0), Some(1), None]);
    }

    #[test]
    fn replace_forgets_the_earlier_request_and_takes_its_place() {
        let mut p = Pairing::new(rules(Reach::WholeTape, Repeat::Replace, AfterAnswer::Close));
        p.request("a", 0);
        p.request("b", 1);
        p.request("a", 2);
        let paired = p.finish();
        assert_eq!(paired.requests[0], RequestFate::Replaced);
        assert_eq!(paired.unanswered().collect::<Vec<_>>(), [2, 1]);
    }

    #[test]
    fn in_order_early_answers_within_the_window_only() {
        let early = Reach::InOrder {
            early_answers: Some(2),
        };
        let mut p = Pairing::new(rules(early, Repeat::Shadow, AfterAnswer::Close));
        p.response("a", 1);
        p.request("a", 3); // two positions on: takes it
        p.response("b", 4);
        p.request("b", 9); // too far
        p.response("c", 10);
        p.request_without_early_answers("c", 11);
        let paired = p.finish();
        assert_eq!(
            paired.requests,
            [
                RequestFate::Answered(0),
                RequestFate::Unanswered,
                RequestFate::Unanswered
            ]
        );
        assert_eq!(paired.responses, [Some(0), None, None]);
    }

    #[test]
    fn shadow_keeps_the_earlier_request_unanswered() {
        let in_order = Reach::InOrder {
            early_answers: None,
        };
        let mut p = Pairing::new(rules(in_order, Repeat::Shadow, AfterAnswer::Close));
        p.request("a", 0);
        p.request("a", 1);
        p.response("a", 2);
        let paired = p.finish();
        assert_eq!(
            paired.requests,
            [RequestFate::Unanswered, RequestFate::Answered(0)]
        );
    }

    #[test]
    fn stay_open_takes_every_later_answer() {
        let in_order = Reach::InOrder {
            early_answers: None,
        };
        let mut p = Pairing::new(rules(in_order, Repeat::Replace, AfterAnswer::StayOpen));
        p.response("a", 0); // before any request: an orphan
        p.request("a", 1);
        p.response("a", 2);
        p.response("a", 3);
        p.request("a", 4); // replaces the answered one
        let paired = p.finish();
        assert_eq!(
            paired.requests,
            [RequestFate::Replaced, RequestFate::Unanswered]
        );
        assert_eq!(paired.responses, [None, Some(0), Some(0)]);
    }
}
