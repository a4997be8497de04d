//! Planning numbers for comparisons: sample size to separate two rates, and
//! the tie rate of replicated binary outcomes.

use super::binomial::binom_pmf;
use super::normal::normal_quantile;

/// Trials per group for a two-sided two-proportion z-test at `alpha = 0.05`
/// to separate `p1` from `p2` with power 0.80. See [`separate_with`].
///
/// `separate(0.42, 0.58) == Some(153)`.
pub fn separate(p1: f64, p2: f64) -> Option<u64> {
    separate_with(p1, p2, 0.05, 0.80)
}

/// Trials per group to separate `p1` from `p2` (two-sided, level `alpha`,
/// given `power`), without continuity correction:
///
/// `n = ceil( (z_{1-alpha/2} sqrt(2 pbar (1-pbar)) + z_{power} sqrt(p1(1-p1) + p2(1-p2)))^2 / (p1-p2)^2 )`,
/// `pbar = (p1 + p2) / 2`.
///
/// `None` unless both rates are strictly inside `(0, 1)` and distinct, and
/// `alpha`, `power` are in `(0, 1)`.
///
/// Reference: J. L. Fleiss, B. Levin, M. C. Paik, *Statistical Methods for
/// Rates and Proportions*, 3rd ed. (2003), eq. 4.14 (without the continuity
/// correction); evalgate `power.py` `separate`.
pub fn separate_with(p1: f64, p2: f64, alpha: f64, power: f64) -> Option<u64> {
    let inside = |x: f64| x > 0.0 && x < 1.0;
    if !(inside(p1) && inside(p2) && inside(alpha) && inside(power)) || p1 == p2 {
        return None;
    }
    let za = normal_quantile(1.0 - alpha / 2.0);
    let zb = normal_quantile(power);
    let pbar = (p1 + p2) / 2.0;
    let root =
        za * (2.0 * pbar * (1.0 - pbar)).sqrt() + zb * (p1 * (1.0 - p1) + p2 * (1.0 - p2)).sqrt();
    let n = (root * root / ((p1 - p2) * (p1 - p2))).ceil();
    (n.is_finite() && n >= 0.0).then_some(n as u64)
}

/// Probability that two independent units, each `reps` Bernoulli(`base`)
/// trials, show the same number of successes:
///
/// `tie_rate(b, r) = sum_{k=0..r} pmf(k; r, b)^2`.
///
/// With binary outcomes and few replicates most units tie, and a test that
/// discards ties discards that fraction of the sample. NaN for `base`
/// outside `[0, 1]`. `tie_rate(0.854, 3) = 0.49295879911909`.
///
/// Reference: evalgate `power.py` `tie_rate`.
pub fn tie_rate(base: f64, reps: u64) -> f64 {
    if !(0.0..=1.0).contains(&base) {
        return f64::NAN;
    }
    (0..=reps)
        .map(|k| {
            let p = binom_pmf(k as i64, reps, base);
            p * p
        })
        .sum()
}

/// Nearest-rank percentile: sort the finite values ascending and return the
/// one at rank `max(1, ceil(pct/100 * len))`.
///
/// Non-finite values are dropped first; `None` when nothing is left or `pct`
/// is outside `[0, 100]`. `None` is load bearing: the null-baseline gate
/// reads it as "not measured", never as zero.
///
/// Reference: NIST/SEMATECH e-Handbook 7.2.5.2 (nearest-rank definition);
/// foil `stats.py` `percentile`.
pub fn percentile_nearest_rank(values: &[f64], pct: f64) -> Option<f64> {
    // pct * len / 100 rather than pct / 100 * len: exact for the integer
    // percentiles the gates use.
    nearest_rank_by(values, pct, |pct, len| (pct * len) / 100.0)
}

/// [`percentile_nearest_rank`] with the rank computed as the reference's
/// `mcp-tape.stats/1` does, `ceil(pct / 100 * len)` in floating point: the
/// division first rounds, so a few `(pct, len)` pairs land one rank higher
/// than the exact rule. The tape statistics use it, so that they agree with
/// the `trace_stats` blocks the reference stored in its records; a gate
/// never does.
pub fn percentile_nearest_rank_as_reference(values: &[f64], pct: f64) -> Option<f64> {
    nearest_rank_by(values, pct, |pct, len| (pct / 100.0) * len)
}

/// The one nearest-rank rule of both percentiles: `rank(pct, len)` is the
/// unrounded rank, which the two compute in a different order.
fn nearest_rank_by(values: &[f64], pct: f64, rank: fn(f64, f64) -> f64) -> Option<f64> {
    if !(0.0..=100.0).contains(&pct) {
        return None;
    }
    let mut finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return None;
    }
    finite.sort_by(f64::total_cmp);
    let len = finite.len();
    let at = rank(pct, len as f64).ceil().max(1.0) as usize;
    Some(finite[at.min(len) - 1])
}
