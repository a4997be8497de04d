//! Where a gate stands, read the same way from a record's gate and from a
//! `fitness.gate` event on a tape: passed, failed, or not yet decided.

/// The reason a gate gives while it waits for a number that does not
/// exist yet: the null baseline, decided again once the agent's rate
/// exists (`DEFERRED`). A run that stops before the drive leaves it so.
pub const AWAITING_AGENT_RATE: &str = "awaiting_agent_rate";

/// Where a gate stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GateState {
    /// It let the run through.
    Passed,
    /// It stopped the run.
    Failed,
    /// It did not stop the run, and it has not decided either: it waits
    /// for a number a later stage measures.
    Undecided,
}

impl GateState {
    /// From a gate's `ok` and its reason string. A gate that did not stop
    /// the run but is still waiting reads undecided, never passed.
    pub fn of(ok: bool, reason: &str) -> GateState {
        match (ok, reason) {
            (true, AWAITING_AGENT_RATE) => GateState::Undecided,
            (true, _) => GateState::Passed,
            (false, _) => GateState::Failed,
        }
    }

    /// `passed`, `failed`, `undecided`: the ledger's word, and the class a
    /// page colours it by.
    pub fn word(self) -> &'static str {
        match self {
            GateState::Passed => "passed",
            GateState::Failed => "failed",
            GateState::Undecided => "undecided",
        }
    }

    /// The word on the replay's strip, where a failed gate refused the run.
    pub fn verdict_word(self) -> &'static str {
        match self {
            GateState::Failed => "refused",
            other => other.word(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gate_waiting_for_the_agents_rate_is_undecided_not_passed() {
        assert_eq!(
            GateState::of(true, AWAITING_AGENT_RATE),
            GateState::Undecided
        );
        assert_eq!(GateState::of(true, "ok"), GateState::Passed);
        assert_eq!(GateState::of(false, "below_threshold"), GateState::Failed);
        assert_eq!(GateState::Failed.verdict_word(), "refused");
        assert_eq!(GateState::Undecided.verdict_word(), "undecided");
    }
}
