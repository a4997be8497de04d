//! Paired binary outcomes: the same trials read before and after a change.
//!
//! A 2x2 table of pairs: `a` passed both times, `b` passed before only,
//! `c` passed after only, `d` failed both times (`n = a + b + c + d`). Only
//! the discordant pairs `b` and `c` carry evidence of a change, which is why
//! a paired reading of one suite separates far sooner than two independent
//! intervals do.
//!
//! * [`mcnemar_exact`], [`mcnemar_midp`]: McNemar's conditional test over
//!   the discordant pairs, exact and mid-p.
//! * [`paired_difference_interval`]: Newcombe's square-and-add interval for
//!   `p_before - p_after` (method 10) with Fagerland, Lydersen and Laake's
//!   correlation estimate.
//! * [`paired_detectable_drop`], [`paired_pairs_for_drop`]: planning sizes
//!   for the paired design (Connor 1987).

use super::binomial::{binom_cdf, binom_pmf};
use super::interval::wilson;
use super::normal::normal_quantile;

/// The exact conditional two-sided McNemar p-value over the discordant
/// pairs (`b` passed before only, `c` after only):
///
/// `min(1, 2 P(X <= min(b, c)))`, `X ~ Binomial(b + c, 1/2)`; 1 when
/// `b + c = 0` (no pair changed, so nothing argues for a change).
///
/// Reference: Q. McNemar, Psychometrika 12:153-157 (1947), in its exact
/// conditional form; statsmodels `mcnemar(table, exact=True)`.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let Some(m) = b.checked_add(c).filter(|&m| m > 0) else {
        return 1.0;
    };
    (2.0 * binom_cdf(b.min(c) as i64, m, 0.5)).min(1.0)
}

/// The mid-p version of [`mcnemar_exact`]: the observed table's own
/// probability counted half,
///
/// `min(1, 2 P(X <= k) - P(X = k))`, `k = min(b, c)`; 1 when `b + c = 0`.
///
/// The exact test is conservative because a discrete tail rarely holds
/// exactly alpha; the mid-p test keeps close to the nominal level and is
/// the one Fagerland, Lydersen and Laake recommend for paired binomial data.
///
/// Reference: M. W. Fagerland, S. Lydersen, P. Laake, "The McNemar test
/// for binary matched-pairs data: mid-p and asymptotic are better than
/// exact conditional", BMC Med Res Methodol 13:91 (2013).
pub fn mcnemar_midp(b: u64, c: u64) -> f64 {
    let Some(m) = b.checked_add(c).filter(|&m| m > 0) else {
        return 1.0;
    };
    let k = b.min(c) as i64;
    (2.0 * binom_cdf(k, m, 0.5) - binom_pmf(k, m, 0.5)).clamp(0.0, 1.0)
}

/// Newcombe's square-and-add interval for the difference of paired
/// proportions `p_before - p_after = (b - c) / n`, at two-sided confidence
/// `1 - alpha` (Newcombe 1998, method 10).
///
/// With `p1 = (a + b) / n` and `p2 = (a + c) / n`, `(l1, u1)` and `(l2, u2)`
/// their Wilson intervals ([`wilson`]) and `theta = p1 - p2`:
///
/// `L = theta - sqrt((p1 - l1)^2 - 2 psi (p1 - l1)(u2 - p2) + (u2 - p2)^2)`
/// `U = theta + sqrt((p2 - l2)^2 - 2 psi (p2 - l2)(u1 - p1) + (u1 - p1)^2)`
///
/// where `psi` estimates the correlation of the two margins as Fagerland,
/// Lydersen and Laake define it, with `A = ad - bc` and `M` the product of
/// the four margins `(a+b)(c+d)(a+c)(b+d)`: 0 when a margin is empty;
/// `(A - n/2) / sqrt(M)` when `A > n/2`; 0 when `0 <= A <= n/2`;
/// `A / sqrt(M)` when `A < 0`.
///
/// `n = 0`, or `alpha` outside `(0, 1)`, gives NaN bounds.
///
/// References: R. G. Newcombe, "Improved confidence intervals for the
/// difference between binomial proportions based on paired data", Stat Med
/// 17:2635-2650 (1998); M. W. Fagerland, S. Lydersen, P. Laake,
/// "Recommended tests and confidence intervals for paired binomial
/// proportions", Stat Med 33:2850-2875 (2014), and *Statistical Analysis
/// of Contingency Tables* (2017), chapter 8.
pub fn paired_difference_interval(a: u64, b: u64, c: u64, d: u64, alpha: f64) -> (f64, f64) {
    let n = a + b + c + d;
    if n == 0 || !(alpha > 0.0 && alpha < 1.0) {
        return (f64::NAN, f64::NAN);
    }
    let nf = n as f64;
    let confidence = 1.0 - alpha;
    let before = wilson(a + b, n, confidence);
    let after = wilson(a + c, n, confidence);
    let (p1, p2) = (before.rate, after.rate);
    let psi = margin_correlation(a, b, c, d);
    let theta = (b as f64 - c as f64) / nf;
    let (down1, up1) = (p1 - before.low, before.high - p1);
    let (down2, up2) = (p2 - after.low, after.high - p2);
    // Rounding can leave a radicand a hair below zero when the two terms
    // cancel; the distance is then zero.
    let root = |x: f64, y: f64| (x * x - 2.0 * psi * x * y + y * y).max(0.0).sqrt();
    let low = theta - root(down1, up2);
    let high = theta + root(down2, up1);
    (low.clamp(-1.0, theta), high.clamp(theta, 1.0))
}

/// Fagerland, Lydersen and Laake's estimate of the correlation between the
/// two margins of a paired table (see [`paired_difference_interval`]).
fn margin_correlation(a: u64, b: u64, c: u64, d: u64) -> f64 {
    let margins = [a + b, c + d, a + c, b + d];
    if margins.contains(&0) {
        return 0.0;
    }
    let n = (a + b + c + d) as f64;
    // In floating point: a product of four margins overflows u64 long
    // before a trial count would.
    let scale = margins.iter().map(|&m| m as f64).product::<f64>().sqrt();
    let agreement = a as f64 * d as f64 - b as f64 * c as f64;
    if agreement > n / 2.0 {
        (agreement - n / 2.0) / scale
    } else if agreement >= 0.0 {
        0.0
    } else {
        agreement / scale
    }
}

/// Pairs needed for a two-sided McNemar test at level `alpha` to detect a
/// drop `drop = p_before - p_after` with the given `power`, when a share
/// `discordance` of the pairs disagree (`p10 + p01`):
///
/// `n = ceil( (z_{1-alpha/2} sqrt(q) + z_{power} sqrt(q - drop^2))^2 / drop^2 )`,
/// `q = discordance`.
///
/// `None` unless `0 < drop <= discordance <= 1` and `alpha`, `power` are in
/// `(0, 1)`: a drop is made of discordant pairs, so it cannot exceed them.
///
/// Reference: R. J. Connor, "Sample size for testing differences in
/// proportions for the paired-sample design", Biometrics 43:207-211 (1987).
pub fn paired_pairs_for_drop(drop: f64, discordance: f64, alpha: f64, power: f64) -> Option<u64> {
    let (za, zb) = planning_quantiles(discordance, alpha, power)?;
    if !(drop > 0.0 && drop <= discordance) {
        return None;
    }
    let q = discordance;
    let root = za * q.sqrt() + zb * (q - drop * drop).max(0.0).sqrt();
    let n = (root * root / (drop * drop)).ceil();
    (n.is_finite() && n >= 1.0).then_some(n as u64)
}

/// The smallest drop `p_before - p_after` that `pairs` pairs detect with
/// the given `power` in a two-sided McNemar test at level `alpha`, when a
/// share `discordance` of the pairs disagree: the `drop` that solves
/// Connor's equation (see [`paired_pairs_for_drop`]) at `n = pairs`,
///
/// `drop = sqrt(q) (z_a sqrt(n) + z_b sqrt(n + z_b^2 - z_a^2)) / (n + z_b^2)`,
///
/// its larger root for `power > 1/2`. `None` when no drop up to
/// `discordance` is detected at this size (even every discordant pair
/// falling one way is too few), or for inputs out of domain (as above;
/// `power` must exceed 1/2).
pub fn paired_detectable_drop(pairs: u64, discordance: f64, alpha: f64, power: f64) -> Option<f64> {
    let (za, zb) = planning_quantiles(discordance, alpha, power)?;
    if pairs == 0 || zb <= 0.0 {
        return None;
    }
    let n = pairs as f64;
    let spread = n + zb * zb - za * za;
    if spread < 0.0 {
        return None;
    }
    let drop = discordance.sqrt() * (za * n.sqrt() + zb * spread.sqrt()) / (n + zb * zb);
    // Squaring the equation admits a root where `sqrt(n) drop` falls short
    // of `z_a sqrt(q)`: no drop solves it there, so none is detected.
    let solves = n.sqrt() * drop >= za * discordance.sqrt() * (1.0 - 1e-12);
    (solves && drop.is_finite() && drop > 0.0 && drop <= discordance).then_some(drop)
}

/// `z_{1-alpha/2}` and `z_{power}` for a plan with a discordance in
/// `(0, 1]`; `None` when an input is out of its domain.
fn planning_quantiles(discordance: f64, alpha: f64, power: f64) -> Option<(f64, f64)> {
    let inside = |x: f64| x > 0.0 && x < 1.0;
    if !(inside(alpha) && inside(power) && discordance > 0.0 && discordance <= 1.0) {
        return None;
    }
    Some((normal_quantile(1.0 - alpha / 2.0), normal_quantile(power)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_discordant_pair_is_no_evidence() {
        assert_eq!(mcnemar_exact(0, 0), 1.0);
        assert_eq!(mcnemar_midp(0, 0), 1.0);
        // A tie of the discordant pairs is no evidence either way.
        assert_eq!(mcnemar_exact(4, 4), 1.0);
        assert!((mcnemar_midp(4, 4) - 1.0).abs() < 1e-15);
    }

    #[test]
    fn mcnemar_is_symmetric_and_mid_p_is_below_exact() {
        for (b, c) in [(0, 5), (3, 9), (10, 2), (1, 1), (20, 31)] {
            assert_eq!(mcnemar_exact(b, c), mcnemar_exact(c, b));
            assert_eq!(mcnemar_midp(b, c), mcnemar_midp(c, b));
            assert!(mcnemar_midp(b, c) <= mcnemar_exact(b, c));
        }
        // Five discordant pairs all one way: 2 / 32 exactly.
        assert_eq!(mcnemar_exact(5, 0), 0.0625);
        assert_eq!(mcnemar_midp(5, 0), 0.03125);
    }

    #[test]
    fn the_interval_contains_the_difference_and_mirrors() {
        for (a, b, c, d) in [(59, 6, 16, 80), (1, 1, 7, 12), (0, 4, 0, 0), (3, 0, 0, 9)] {
            let (low, high) = paired_difference_interval(a, b, c, d, 0.05);
            let theta = (b as f64 - c as f64) / (a + b + c + d) as f64;
            assert!(-1.0 <= low && low <= theta && theta <= high && high <= 1.0);
            // Swapping before and after mirrors the interval.
            let (l2, h2) = paired_difference_interval(a, c, b, d, 0.05);
            assert!((l2 + high).abs() < 1e-12 && (h2 + low).abs() < 1e-12);
        }
        assert!(paired_difference_interval(0, 0, 0, 0, 0.05).0.is_nan());
        assert!(paired_difference_interval(1, 2, 3, 4, 0.0).1.is_nan());
    }

    #[test]
    fn the_plan_inverts_itself() {
        let n = paired_pairs_for_drop(0.1, 0.2, 0.05, 0.8).expect("a size");
        let drop = paired_detectable_drop(n, 0.2, 0.05, 0.8).expect("a drop");
        assert!(drop <= 0.1 + 1e-12, "{n} pairs detect {drop}");
        let fewer = paired_detectable_drop(n - 1, 0.2, 0.05, 0.8).expect("a drop");
        assert!(fewer > 0.1, "{} pairs detect {fewer}", n - 1);
        assert_eq!(paired_pairs_for_drop(0.3, 0.2, 0.05, 0.8), None);
        assert_eq!(paired_detectable_drop(2, 0.2, 0.05, 0.8), None);
    }
}
