//! Trace context on the calls a run makes (W3C `traceparent` in each
//! `tools/call`'s `_meta`, as the 2026-07-28 revision carries it): one
//! trace per trial (its corr_id), one span per call, so a maintainer finds
//! our trial in their own server's traces. The ids are derived from the
//! run's id and the trial, so a run's tapes and record name the same ones;
//! the spans are kept for the record and for an export
//! (`pipeline::traces`).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

/// One call's span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSpan {
    /// The trial it belongs to.
    pub corr_id: String,
    /// 32 and 16 lowercase hex digits.
    pub trace_id: String,
    pub span_id: String,
    /// `tools/call <tool>`.
    pub name: String,
    pub start: SystemTime,
    pub end: SystemTime,
    /// The call answered (not an error of the protocol or of the tool).
    pub ok: bool,
}

#[derive(Default)]
struct Spans {
    /// Calls made so far in each trial.
    made: BTreeMap<String, u64>,
    done: Vec<CallSpan>,
}

/// The run's trace context, shared by its sessions.
#[derive(Clone)]
pub struct Tracer {
    key: String,
    spans: Arc<Mutex<Spans>>,
}

/// A call's span, open until [`Tracer::finish`].
#[derive(Debug)]
pub struct OpenSpan {
    corr_id: String,
    trace_id: String,
    span_id: String,
    name: String,
    start: SystemTime,
}

impl OpenSpan {
    /// The `traceparent` the call carries: version 00, sampled.
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", self.trace_id, self.span_id)
    }
}

/// Spans kept at most: a run's record stays bounded whatever it calls.
const MAX_SPANS: usize = 100_000;

/// The first `bytes` bytes of the sha256 of `parts`, as hex.
fn hex_of(parts: &[&str], bytes: usize) -> String {
    let joined = parts.join("\u{0}");
    let mut hex = fitness_shared::integrity::sha256_hex(joined.as_bytes());
    hex.truncate(bytes * 2);
    hex
}

impl Tracer {
    /// The trace context of the run `key` (its id).
    pub fn new(key: &str) -> Tracer {
        Tracer {
            key: key.to_owned(),
            spans: Arc::default(),
        }
    }

    /// The trace id of the trial `corr_id`.
    pub fn trace_id(&self, corr_id: &str) -> String {
        hex_of(&[&self.key, corr_id], 16)
    }

    /// A span for the next call of `corr_id`.
    pub fn open(&self, corr_id: &str, name: &str) -> OpenSpan {
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = spans.made.entry(corr_id.to_owned()).or_default();
        *seq += 1;
        OpenSpan {
            corr_id: corr_id.to_owned(),
            trace_id: self.trace_id(corr_id),
            span_id: hex_of(&[&self.key, corr_id, &seq.to_string()], 8),
            name: name.to_owned(),
            start: SystemTime::now(),
        }
    }

    /// The call of `span` ended.
    pub fn finish(&self, span: OpenSpan, ok: bool) {
        let mut spans = self.spans.lock().unwrap_or_else(PoisonError::into_inner);
        if spans.done.len() < MAX_SPANS {
            spans.done.push(CallSpan {
                corr_id: span.corr_id,
                trace_id: span.trace_id,
                span_id: span.span_id,
                name: span.name,
                start: span.start,
                end: SystemTime::now(),
                ok,
            });
        }
    }

    /// Every span ended so far, in the order they ended.
    pub fn spans(&self) -> Vec<CallSpan> {
        self.spans
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .done
            .clone()
    }

    /// Each trial's trace id, by corr_id.
    pub fn traces(&self) -> BTreeMap<String, String> {
        self.spans()
            .into_iter()
            .map(|s| (s.corr_id, s.trace_id))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_trace_a_trial_and_a_span_a_call() {
        let tracer = Tracer::new("run-1");
        let a = tracer.open("t1", "tools/call echo");
        let b = tracer.open("t1", "tools/call add");
        let c = tracer.open("t2", "tools/call echo");
        assert_eq!(a.trace_id, b.trace_id);
        assert_ne!(a.trace_id, c.trace_id);
        assert_ne!(a.span_id, b.span_id);
        let tp = a.traceparent();
        assert!(
            regex::Regex::new("^00-[0-9a-f]{32}-[0-9a-f]{16}-01$")
                .expect("pattern")
                .is_match(&tp),
            "{tp}"
        );
        tracer.finish(a, true);
        tracer.finish(b, false);
        tracer.finish(c, true);
        let traces = tracer.traces();
        assert_eq!(traces.len(), 2);
        assert_eq!(traces["t1"], tracer.trace_id("t1"));
        // Another run's ids differ.
        assert_ne!(Tracer::new("run-2").trace_id("t1"), traces["t1"]);
    }
}
