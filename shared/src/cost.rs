//! The run's dollar figure (R-COST), computed once, here: list prices times
//! normalised token counts, summed per role, and the rule that makes the
//! figure a `Total`, a `Floor` (with every reason named) or `None`.

use crate::record::Cost;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rates {
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
}

/// Normalised token counts: `input` excludes cache reads and writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// Dollars for `tokens` at `rates`.
pub fn usd(tokens: &Tokens, rates: &Rates) -> f64 {
    (tokens.input as f64 * rates.input
        + tokens.output as f64 * rates.output
        + tokens.cache_read as f64 * rates.cache_read
        + tokens.cache_write as f64 * rates.cache_write)
        / 1_000_000.0
}

/// Who spent the tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Spender {
    Runner,
    Judge,
}

impl Spender {
    pub fn as_str(self) -> &'static str {
        match self {
            Spender::Runner => "runner",
            Spender::Judge => "judge",
        }
    }
}

/// One role's calls to one model, with the model's rates when priced.
#[derive(Debug, Clone, PartialEq)]
pub struct SpendLine {
    pub role: Spender,
    pub model: String,
    pub tokens: Tokens,
    /// Calls that returned (with or without usage).
    pub calls: u64,
    pub calls_without_usage: u64,
    /// Calls that failed after their retries, so reported no usage.
    pub calls_that_threw: u64,
    pub rates: Option<Rates>,
}

/// The cost block: `Total` when every call is priced and reported usage,
/// `Floor` naming each reason the figure is a lower bound, `None` when no
/// priced usage supports a figure.
pub fn cost_block(lines: &[SpendLine]) -> Cost {
    let mut runner: Option<f64> = None;
    let mut judge: Option<f64> = None;
    let mut reasons = Vec::new();
    for l in lines {
        let role = l.role.as_str();
        match &l.rates {
            Some(r) => {
                let slot = match l.role {
                    Spender::Runner => &mut runner,
                    Spender::Judge => &mut judge,
                };
                *slot = Some(slot.unwrap_or(0.0) + usd(&l.tokens, r));
            }
            None if l.calls + l.calls_that_threw > 0 => reasons.push(format!(
                "unpriced model {} ({role}, {} call(s)): no price on file, not in the figure",
                l.model,
                l.calls + l.calls_that_threw
            )),
            None => {}
        }
        if l.calls_without_usage > 0 {
            reasons.push(format!(
                "{} {role} call(s) to {} without usage",
                l.calls_without_usage, l.model
            ));
        }
        if l.calls_that_threw > 0 {
            reasons.push(format!(
                "{} {role} call(s) to {} that threw",
                l.calls_that_threw, l.model
            ));
        }
    }
    let usd = match (runner, judge) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
    };
    match usd {
        None if lines.is_empty() => Cost::None {
            why: "no model calls were made".to_owned(),
        },
        None => Cost::None {
            why: format!("no priced model usage: {}", reasons.join("; ")),
        },
        Some(usd) if reasons.is_empty() => Cost::Total {
            usd,
            runner_usd: runner,
            judge_usd: judge,
        },
        Some(usd) => Cost::Floor {
            usd,
            runner_usd: runner,
            judge_usd: judge,
            reasons,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SONNET: Rates = Rates {
        input: 3.0,
        output: 15.0,
        cache_read: 0.3,
        cache_write: 3.75,
    };

    fn line(role: Spender, model: &str, rates: Option<Rates>) -> SpendLine {
        SpendLine {
            role,
            model: model.into(),
            tokens: Tokens {
                input: 1_000_000,
                output: 100_000,
                cache_read: 1_000_000,
                cache_write: 0,
            },
            calls: 4,
            calls_without_usage: 0,
            calls_that_threw: 0,
            rates,
        }
    }

    #[test]
    fn total_when_everything_is_priced_and_reported() {
        let c = cost_block(&[
            line(Spender::Runner, "anthropic/claude-sonnet-4-5", Some(SONNET)),
            line(Spender::Judge, "anthropic/claude-sonnet-4-5", Some(SONNET)),
        ]);
        let Cost::Total {
            usd,
            runner_usd,
            judge_usd,
        } = c
        else {
            panic!("{c:?}")
        };
        // 3 + 1.5 + 0.3 per role
        assert!((runner_usd.expect("runner") - 4.8).abs() < 1e-9);
        assert!((judge_usd.expect("judge") - 4.8).abs() < 1e-9);
        assert!((usd - 9.6).abs() < 1e-9);
    }

    #[test]
    fn floor_names_unpriced_models_missing_usage_and_throws() {
        let mut runner = line(Spender::Runner, "anthropic/claude-sonnet-4-5", Some(SONNET));
        runner.calls_without_usage = 2;
        runner.calls_that_threw = 1;
        let c = cost_block(&[runner, line(Spender::Judge, "openai/mystery", None)]);
        let Cost::Floor { usd, reasons, .. } = c else {
            panic!("{c:?}")
        };
        assert!((usd - 4.8).abs() < 1e-9);
        let all = reasons.join("\n");
        assert!(all.contains("unpriced model openai/mystery"), "{all}");
        assert!(
            all.contains("2 runner call(s) to anthropic/claude-sonnet-4-5 without usage"),
            "{all}"
        );
        assert!(
            all.contains("1 runner call(s) to anthropic/claude-sonnet-4-5 that threw"),
            "{all}"
        );
    }

    #[test]
    fn none_without_priced_usage() {
        let c = cost_block(&[line(Spender::Runner, "openai/mystery", None)]);
        let Cost::None { why } = c else {
            panic!("{c:?}")
        };
        assert!(why.contains("unpriced model openai/mystery"), "{why}");
        assert!(matches!(cost_block(&[]), Cost::None { .. }));
    }
}
