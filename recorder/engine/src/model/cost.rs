//! The run's spend, per role and model, and its cost block. The arithmetic
//! and the Total / Floor / None rule are `fitness_shared::cost`; this only
//! accumulates calls and attaches prices.

use std::collections::BTreeMap;

use fitness_shared::cost::{SpendLine, Tokens, cost_block};
use fitness_shared::record::Cost;

use super::price::PriceTable;
use super::types::{ModelId, Usage};

pub use fitness_shared::cost::Spender as Role;

/// One role's calls to one model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Spend {
    pub usage: Usage,
    /// Calls that returned a response (with or without usage).
    pub calls: u64,
    pub calls_without_usage: u64,
    pub calls_that_threw: u64,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CostLedger {
    pub lines: BTreeMap<(Role, String), (ModelId, Spend)>,
}

impl CostLedger {
    pub fn new() -> Self {
        Self::default()
    }

    /// Record one model call: `usage` as reported (`None` when the provider
    /// sent none), `threw` when it failed after its retries.
    pub fn add_call(&mut self, role: Role, model: &ModelId, usage: Option<&Usage>, threw: bool) {
        let (_, spend) = self
            .lines
            .entry((role, model.to_string()))
            .or_insert_with(|| (model.clone(), Spend::default()));
        if threw {
            spend.calls_that_threw += 1;
            return;
        }
        spend.calls += 1;
        match usage {
            Some(u) => spend.usage.add(u),
            None => spend.calls_without_usage += 1,
        }
    }

    /// Record a trial's model calls at once: `usage` summed over the calls
    /// that reported it, plus the counts of calls without usage and of
    /// calls that threw (e.g. from a `TrialOutcome`).
    pub fn add_calls(
        &mut self,
        role: Role,
        model: &ModelId,
        usage: &Usage,
        calls: u64,
        calls_without_usage: u64,
        calls_that_threw: u64,
    ) {
        let mut one = CostLedger::new();
        one.lines.insert(
            (role, model.to_string()),
            (
                model.clone(),
                Spend {
                    usage: *usage,
                    calls,
                    calls_without_usage,
                    calls_that_threw,
                },
            ),
        );
        self.absorb(&one);
    }

    /// Merge another ledger (e.g. one per trial) into this one.
    pub fn absorb(&mut self, other: &CostLedger) {
        for ((role, _), (model, spend)) in &other.lines {
            let (_, s) = self
                .lines
                .entry((*role, model.to_string()))
                .or_insert_with(|| (model.clone(), Spend::default()));
            s.usage.add(&spend.usage);
            s.calls = s.calls.saturating_add(spend.calls);
            s.calls_without_usage = s
                .calls_without_usage
                .saturating_add(spend.calls_without_usage);
            s.calls_that_threw = s.calls_that_threw.saturating_add(spend.calls_that_threw);
        }
    }

    /// The lines as the shared cost rule reads them, priced from `prices`.
    pub fn spend_lines(&self, prices: &PriceTable) -> Vec<SpendLine> {
        self.lines
            .iter()
            .map(|((role, name), (model, s))| SpendLine {
                role: *role,
                model: name.clone(),
                tokens: Tokens {
                    input: s.usage.input_tokens,
                    output: s.usage.output_tokens,
                    cache_read: s.usage.cache_read_input_tokens,
                    cache_write: s.usage.cache_creation_input_tokens,
                },
                calls: s.calls,
                calls_without_usage: s.calls_without_usage,
                calls_that_threw: s.calls_that_threw,
                rates: prices.price_for(model).map(|p| p.rates()),
            })
            .collect()
    }

    /// Total, Floor{reasons} or None{why}.
    pub fn cost(&self, prices: &PriceTable) -> Cost {
        cost_block(&self.spend_lines(prices))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> ModelId {
        s.parse().expect("model id")
    }

    fn usage(input: u64, output: u64, cache_read: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            cache_read_input_tokens: cache_read,
            ..Usage::default()
        }
    }

    #[test]
    fn priced_calls_with_usage_are_a_total() {
        let prices = PriceTable::bundled();
        let mut l = CostLedger::new();
        let sonnet = id("anthropic/claude-sonnet-4-5");
        l.add_call(Role::Runner, &sonnet, Some(&usage(1_000_000, 0, 0)), false);
        l.add_call(
            Role::Runner,
            &sonnet,
            Some(&usage(0, 100_000, 1_000_000)),
            false,
        );
        l.add_call(
            Role::Judge,
            &id("sim/reference"),
            Some(&usage(5, 5, 0)),
            false,
        );
        match l.cost(&prices) {
            Cost::Total {
                usd,
                runner_usd,
                judge_usd,
            } => {
                assert!((usd - 4.8).abs() < 1e-9, "{usd}");
                assert_eq!(judge_usd, Some(0.0));
                assert!((runner_usd.expect("runner") - 4.8).abs() < 1e-9);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn missing_usage_throws_and_unpriced_models_make_a_floor() {
        let prices = PriceTable::bundled();
        let mut l = CostLedger::new();
        let gpt = id("openai/gpt-4o");
        l.add_call(Role::Runner, &gpt, Some(&usage(1_000_000, 0, 0)), false);
        l.add_call(Role::Runner, &gpt, None, false);
        l.add_call(Role::Runner, &gpt, None, true);
        l.add_call(
            Role::Judge,
            &id("openai/llama3.1:8b"),
            Some(&usage(10, 10, 0)),
            false,
        );
        match l.cost(&prices) {
            Cost::Floor { usd, reasons, .. } => {
                assert!((usd - 2.5).abs() < 1e-9, "{usd}");
                let all = reasons.join("\n");
                assert!(all.contains("unpriced model openai/llama3.1:8b"), "{all}");
                assert!(
                    all.contains("1 runner call(s) to openai/gpt-4o without usage"),
                    "{all}"
                );
                assert!(
                    all.contains("1 runner call(s) to openai/gpt-4o that threw"),
                    "{all}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn only_unpriced_usage_is_none() {
        let mut l = CostLedger::new();
        l.add_call(
            Role::Runner,
            &id("openai/llama3.1:8b"),
            Some(&usage(10, 10, 0)),
            false,
        );
        assert!(matches!(l.cost(&PriceTable::bundled()), Cost::None { .. }));
        assert!(matches!(
            CostLedger::new().cost(&PriceTable::bundled()),
            Cost::None { .. }
        ));
    }
}
