//! The Wilson score interval and the separation test the board uses.

use serde::{Deserialize, Serialize};

use super::normal::normal_quantile;

/// A binomial rate with its confidence interval, as stored in a record
/// (`record::Interval` is this type).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    /// Point estimate `k / n` (0 when `n = 0`).
    pub rate: f64,
    /// Lower bound, in `[0, rate]`.
    pub low: f64,
    /// Upper bound, in `[rate, 1]`.
    pub high: f64,
    /// Successes.
    pub k: u64,
    /// Trials.
    pub n: u64,
}

impl Interval {
    /// The interval in words, as every page and command prints it:
    /// `91.7% (95% CI 74.2% to 97.7%), 22 of 24`.
    pub fn text(&self) -> String {
        format!(
            "{:.1}% (95% CI {:.1}% to {:.1}%), {} of {}",
            self.rate * 100.0,
            self.low * 100.0,
            self.high * 100.0,
            self.k,
            self.n
        )
    }
}

/// Wilson score interval for `k` successes in `n` trials at two-sided
/// `confidence` (0.95 for the board).
///
/// With `z = normal_quantile((1 + confidence) / 2)` (the exact quantile,
/// `1.959963984540054` at 95%, not the rounded 1.96), `p = k/n`, `a = 1 + z^2/n`:
///
/// `centre = (p + z^2/2n) / a`, `half = z sqrt(p(1-p)/n + z^2/4n^2) / a`,
/// bounds `centre -/+ half`.
///
/// Each bound is evaluated as the *larger* root of its own quadratic and the
/// other through the product of roots (`low * high = p^2 / a`), so `k = 0`
/// gives `low = 0` and `k = n` gives `high = 1` exactly, with no cancellation.
/// `n = 0` gives the uninformative `[0, 1]` with rate 0. Inputs it cannot
/// describe (`k > n`, confidence outside `(0, 1)`) give NaN bounds.
///
/// Reference: E. B. Wilson, "Probable inference, the law of succession, and
/// statistical inference", JASA 22:209-212 (1927); statsmodels
/// `proportion_confint(method="wilson")`.
pub fn wilson(k: u64, n: u64, confidence: f64) -> Interval {
    if n == 0 {
        return Interval {
            rate: 0.0,
            low: 0.0,
            high: 1.0,
            k,
            n,
        };
    }
    let z = normal_quantile((1.0 + confidence) / 2.0);
    if k > n || z.is_nan() {
        let nan = f64::NAN;
        return Interval {
            rate: nan,
            low: nan,
            high: nan,
            k,
            n,
        };
    }
    let nf = n as f64;
    let p = k as f64 / nf;
    let fail = (n - k) as f64 / nf;
    let zz = z * z;
    let a = 1.0 + zz / nf;
    let half = z * (p * fail / nf + zz / (4.0 * nf * nf)).sqrt() / a;
    let upper_root = (p + zz / (2.0 * nf)) / a + half;
    let mirrored_upper_root = (fail + zz / (2.0 * nf)) / a + half;
    let low = p * p / (a * upper_root);
    let high = 1.0 - fail * fail / (a * mirrored_upper_root);
    Interval {
        rate: p,
        low: low.clamp(0.0, p),
        high: high.clamp(p, 1.0),
        k,
        n,
    }
}

/// True when one interval lies entirely above the other (`a.low > b.high` or
/// `b.low > a.high`). Touching intervals are not separated. This is the only
/// ordering the board may print: overlapping intervals are never ranked.
pub fn separated(a: &Interval, b: &Interval) -> bool {
    a.low > b.high || b.low > a.high
}
