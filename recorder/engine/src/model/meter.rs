//! The run's spend cap, held before a call is sent: every model call of a
//! run (generation, screen, null arms, construct, drive, proposals) goes
//! through one [`SpendMeter`], which reserves the call first. A call past
//! the cap is never sent, whatever the concurrency, so a run makes at most
//! `--max-model-calls` calls. The meter also sums the waits the shared
//! rate budget imposed on those calls, whichever stage made them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;

use super::types::{ChatRequest, ChatResponse, LlmError, LlmErrorClass, ModelClient, ModelId};

/// Calls reserved so far against an optional cap.
#[derive(Debug, Default)]
pub struct SpendMeter {
    cap: Option<u64>,
    used: AtomicU64,
    refused: AtomicU64,
    /// Attempts held back by the shared rate budget, and the milliseconds.
    waits: AtomicU64,
    waited_ms: AtomicU64,
}

impl SpendMeter {
    pub fn new(cap: Option<u64>) -> Arc<SpendMeter> {
        Arc::new(SpendMeter {
            cap,
            ..SpendMeter::default()
        })
    }

    /// Reserve one call; false (and nothing reserved) at the cap.
    pub fn reserve(&self) -> bool {
        let reserved = self
            .used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                self.cap.is_none_or(|cap| used < cap).then_some(used + 1)
            })
            .is_ok();
        if !reserved {
            self.refused.fetch_add(1, Ordering::SeqCst);
        }
        reserved
    }

    /// Calls reserved (sent, or failed after being sent).
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::SeqCst)
    }

    /// The cap, once a call was refused by it.
    pub fn reached(&self) -> Option<u64> {
        (self.refused.load(Ordering::SeqCst) > 0)
            .then_some(self.cap)
            .flatten()
    }

    /// Is there room for another call?
    pub fn has_room(&self) -> bool {
        self.cap.is_none_or(|cap| self.used() < cap)
    }

    /// Attempts that waited on the rate budget, and the milliseconds waited
    /// in all, over every call of the run.
    pub fn rate_waits(&self) -> (u64, u64) {
        (
            self.waits.load(Ordering::SeqCst),
            self.waited_ms.load(Ordering::SeqCst),
        )
    }

    fn count_waits(&self, log: &[super::types::Attempt]) {
        for a in log.iter().filter(|a| a.rate_wait_ms > 0) {
            self.waits.fetch_add(1, Ordering::SeqCst);
            self.waited_ms.fetch_add(a.rate_wait_ms, Ordering::SeqCst);
        }
    }

    /// `model` with every call reserved on this meter first.
    pub fn wrap(self: &Arc<Self>, model: Arc<dyn ModelClient>) -> Arc<dyn ModelClient> {
        Arc::new(Metered {
            inner: model,
            meter: Arc::clone(self),
        })
    }
}

/// A client whose calls are reserved on the run's meter before they are sent.
struct Metered {
    inner: Arc<dyn ModelClient>,
    meter: Arc<SpendMeter>,
}

impl ModelClient for Metered {
    fn id(&self) -> &ModelId {
        self.inner.id()
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ChatResponse, LlmError>> {
        if self.meter.reserve() {
            return Box::pin(async move {
                let result = self.inner.complete(request).await;
                self.meter.count_waits(match &result {
                    Ok(r) => &r.log,
                    Err(e) => &e.log,
                });
                result
            });
        }
        let cap = self.meter.cap.unwrap_or_default();
        Box::pin(std::future::ready(Err(LlmError::local(
            LlmErrorClass::SpendCap,
            format!(
                "the run's spend cap of {cap} model calls is reached: this call was never sent"
            ),
        ))))
    }
}

#[cfg(test)]
mod tests {
    use super::SpendMeter;

    #[test]
    fn no_call_is_reserved_past_the_cap_from_many_threads() {
        let meter = SpendMeter::new(Some(37));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..20 {
                        meter.reserve();
                    }
                });
            }
        });
        assert_eq!(meter.used(), 37);
        assert_eq!(meter.reached(), Some(37));
        assert!(!meter.has_room());
    }

    #[test]
    fn an_uncapped_meter_only_counts() {
        let meter = SpendMeter::new(None);
        assert!((0..100).all(|_| meter.reserve()));
        assert_eq!(meter.used(), 100);
        assert_eq!(meter.reached(), None);
    }
}
