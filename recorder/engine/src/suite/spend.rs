//! What generation spent on models, phase by phase (the judge's synthesis
//! and labels, the runner's screen).

use serde::{Deserialize, Serialize};

use crate::model::types::Usage;

/// Model spend of one phase. Each call is counted once: in `calls` when
/// it returned, in `calls_that_threw` when it failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpend {
    /// `synthesis`, `screen` or `destructiveness`.
    pub phase: String,
    pub model: String,
    /// Calls that returned (with or without usage).
    pub calls: u64,
    pub calls_without_usage: u64,
    /// Calls that failed after their retries (their usage is unknown).
    pub calls_that_threw: u64,
    pub usage: Usage,
}

impl PhaseSpend {
    pub fn new(phase: &str, model: &str) -> Self {
        PhaseSpend {
            phase: phase.into(),
            model: model.into(),
            calls: 0,
            calls_without_usage: 0,
            calls_that_threw: 0,
            usage: Usage::default(),
        }
    }

    /// One call that returned.
    pub fn count(&mut self, usage: Option<&Usage>) {
        self.calls += 1;
        match usage {
            Some(u) => self.usage.add(u),
            None => self.calls_without_usage += 1,
        }
    }

    /// One call that threw (its usage is unknown).
    pub fn threw(&mut self) {
        self.calls_that_threw += 1;
    }

    /// Another count of the same phase and model added to this one.
    pub fn absorb(&mut self, other: &PhaseSpend) {
        self.calls += other.calls;
        self.calls_without_usage += other.calls_without_usage;
        self.calls_that_threw += other.calls_that_threw;
        self.usage.add(&other.usage);
    }

    /// Every call made, returned or failed.
    pub fn made(&self) -> u64 {
        self.calls + self.calls_that_threw
    }
}
