//! The three-outcome rule, its exact binomial p-value, and the sample-size
//! planner with the power a given n actually achieves.
//!
//! Ported from evalgate `gates.py` (via the reference implementation's
//! `src/gates/gates.ts`); the rule is exact, not a normal approximation.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use super::outcome::{GateError, GateOutcome, check_detectable, check_open_unit, check_threshold};
use crate::stats::{Binomial, binom_cdf, normal_quantile};

/// Largest n [`plan`] scans (the statistics are tested to n = 10,000).
pub const MAX_PLAN_N: u64 = 10_000;

/// The three-outcome rule applied to observed counts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// PASS, FAIL or EXTEND.
    pub outcome: GateOutcome,
    /// Successes.
    pub k: u64,
    /// Trials.
    pub n: u64,
    /// The rate the gate requires.
    pub threshold: f64,
    /// Significance level of the FAIL test.
    pub alpha: f64,
    /// `P(X <= k | n, threshold)`: the exact one-sided p-value of H0: rate >= threshold.
    pub p_value: f64,
}

/// The three-outcome rule:
///
/// * PASS if `k / n >= threshold`;
/// * else FAIL if `P(X <= k | n, threshold) < alpha` (an exact binomial test
///   rejects H0: rate >= threshold);
/// * else EXTEND (below the line, without evidence of being below it).
///
/// Errors for `n = 0`, `k > n`, `threshold` outside `(0, 1]` or `alpha`
/// outside `(0, 1)`.
///
/// Reference: evalgate `gates.py` `verdict`; the exact test is
/// Clopper-Pearson's one-sided binomial test.
pub fn verdict(k: u64, n: u64, threshold: f64, alpha: f64) -> Result<Verdict, GateError> {
    if n == 0 {
        return Err(GateError::EmptySample);
    }
    if k > n {
        return Err(GateError::CountsExceedTrials { k, n });
    }
    check_threshold(threshold)?;
    check_open_unit("alpha", alpha)?;
    let p_value = binom_cdf(k as i64, n, threshold);
    let outcome = if k as f64 / n as f64 >= threshold {
        GateOutcome::Pass
    } else if p_value < alpha {
        GateOutcome::Fail
    } else {
        GateOutcome::Extend
    };
    Ok(Verdict {
        outcome,
        k,
        n,
        threshold,
        alpha,
        p_value,
    })
}

/// A gate design: the smallest n whose exact test detects `detectable`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// Trials.
    pub n: u64,
    /// Largest k that FAILs at this n: `P(X <= critical_k | n, threshold) < alpha`.
    pub critical_k: u64,
    /// Power achieved at this n: `P(X <= critical_k | n, detectable)`.
    pub power: f64,
    /// The rate the gate requires.
    pub threshold: f64,
    /// The true rate the design must FAIL.
    pub detectable: f64,
    /// Significance level.
    pub alpha: f64,
    /// The power asked for.
    pub target_power: f64,
}

/// Smallest `n <= MAX_PLAN_N` at which a true rate of `detectable` FAILs the
/// exact test with probability at least `power`. `plan(0.90, 0.80, 0.05, 0.80)`
/// gives n = 78 (power 0.8082, FAIL at k <= 65). See [`plan_within`].
pub fn plan(threshold: f64, detectable: f64, alpha: f64, power: f64) -> Result<Plan, GateError> {
    plan_within(threshold, detectable, alpha, power, MAX_PLAN_N)
}

/// [`plan`], remembered: `published_verdict` and the plan-power gate ask for
/// the same few designs over and over, and a design far from reachable
/// costs a full scan to `MAX_PLAN_N`. The result is a pure function of the
/// arguments, so remembering it changes no output.
pub(crate) fn plan_remembered(
    threshold: f64,
    detectable: f64,
    alpha: f64,
    power: f64,
) -> Result<Plan, GateError> {
    type Key = [u64; 4];
    /// A handful of designs per process; beyond that, the oldest is dropped.
    const CAPACITY: usize = 32;
    static MEMO: Mutex<Vec<(Key, Result<Plan, GateError>)>> = Mutex::new(Vec::new());
    let key = [
        threshold.to_bits(),
        detectable.to_bits(),
        alpha.to_bits(),
        power.to_bits(),
    ];
    // A poisoned lock only means another caller panicked mid-push; the
    // entries are still whole values, so keep using them.
    let mut memo = MEMO
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, hit)) = memo.iter().find(|(k, _)| *k == key) {
        return hit.clone();
    }
    let result = plan(threshold, detectable, alpha, power);
    if memo.len() == CAPACITY {
        let _oldest = memo.remove(0);
    }
    memo.push((key, result.clone()));
    result
}

/// [`plan`] with an explicit scan limit.
///
/// For n = 1, 2, ..., max_n: `c(n)` = [`critical_k`]`(n, threshold, alpha)`,
/// power(n) = `P(X <= c(n) | n, detectable)`; the first n with
/// power(n) >= `power` is returned. The scan starts at n = 1 (the reference
/// starts at 5; no n below 5 reaches 0.8 power unless `detectable` is far
/// below `threshold`, and "smallest n" then means the smallest).
///
/// Requires `0 < detectable < threshold <= 1`, `alpha, power` in `(0, 1)`.
/// Reference: evalgate `gates.py` `plan`.
pub fn plan_within(
    threshold: f64,
    detectable: f64,
    alpha: f64,
    power: f64,
    max_n: u64,
) -> Result<Plan, GateError> {
    check_threshold(threshold)?;
    check_detectable(detectable, threshold)?;
    check_open_unit("alpha", alpha)?;
    check_open_unit("power", power)?;
    let mut hint = None;
    for n in 1..=max_n {
        let Some(c) = critical_k_from(n, threshold, alpha, hint) else {
            continue;
        };
        hint = Some(c);
        let achieved = binom_cdf(c as i64, n, detectable);
        if achieved >= power {
            return Ok(Plan {
                n,
                critical_k: c,
                power: achieved,
                threshold,
                detectable,
                alpha,
                target_power: power,
            });
        }
    }
    Err(GateError::PlanUnreachable { max_n, power })
}

/// The power a gate of exactly `n` trials has against a true rate
/// `detectable`: `P(X <= c(n) | n, detectable)` with `c(n)` the critical k.
///
/// Exact binomial power is sawtoothed in n (78 -> 0.8082, 79 -> 0.8225,
/// 80 -> 0.7530), so a run's own n is what must be tested, never "n >= plan n".
/// 0 when no k can FAIL at this n (including n = 0); NaN when `threshold`,
/// `detectable` or `alpha` is outside its domain.
///
/// Reference: evalgate `gates.py`; the sawtooth of exact power is described
/// in Chernick & Liu, "The saw-toothed behavior of power versus sample size
/// and software solutions", The American Statistician 56(2):149-155 (2002).
pub fn achieved_power(n: u64, threshold: f64, detectable: f64, alpha: f64) -> f64 {
    let valid = check_threshold(threshold).is_ok()
        && (0.0..=1.0).contains(&detectable)
        && check_open_unit("alpha", alpha).is_ok();
    if !valid {
        return f64::NAN;
    }
    match critical_k(n, threshold, alpha) {
        Some(c) => binom_cdf(c as i64, n, detectable),
        None => 0.0,
    }
}

/// Largest `k < n` with `P(X <= k | n, threshold) < alpha`: every k at or
/// below it FAILs. `None` when even k = 0 does not (or n = 0). Uses the
/// same `binom_cdf` as [`verdict`], so `verdict(c, n, ..)` is FAIL and
/// `verdict(c + 1, n, ..)` is not.
pub fn critical_k(n: u64, threshold: f64, alpha: f64) -> Option<u64> {
    critical_k_from(n, threshold, alpha, None)
}

/// [`critical_k`] starting its search at `hint` (or a normal-approximation
/// guess), stepping up or down to the exact boundary.
fn critical_k_from(n: u64, threshold: f64, alpha: f64, hint: Option<u64>) -> Option<u64> {
    if n == 0 || !(threshold > 0.0 && threshold <= 1.0) {
        return None;
    }
    let dist = Binomial::new(n, threshold);
    let rejects = |k: u64| k < n && dist.cdf(k) < alpha;
    let start = hint.unwrap_or_else(|| {
        let nf = n as f64;
        let sd = (nf * threshold * (1.0 - threshold)).sqrt();
        let guess = nf * threshold + normal_quantile(alpha) * sd;
        if guess.is_finite() {
            guess.max(0.0) as u64
        } else {
            0
        }
    });
    let mut k = start.min(n - 1);
    if rejects(k) {
        while rejects(k + 1) {
            k += 1;
        }
        Some(k)
    } else {
        while k > 0 {
            k -= 1;
            if rejects(k) {
                return Some(k);
            }
        }
        None
    }
}
