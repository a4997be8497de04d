//! Statistics every published number rests on: exact binomial tails, the
//! normal quantile, Wilson intervals, percentiles and planning sizes, and
//! the paired reading of one suite run twice (McNemar's test, Newcombe's
//! paired interval, the paired design's planning sizes).
//!
//! Pure functions of plain numbers. Out-of-domain inputs return NaN (or
//! `None` where the type allows) rather than panicking, like `f64::ln`.
//! Every function names its formula and reference; `shared/tests/` checks
//! them against the reference implementation's golden vectors and against
//! scipy / statsmodels values recorded by `shared/tests/reference/generate.py`.

mod binomial;
mod interval;
mod normal;
mod paired;
mod sizing;

pub(crate) use binomial::Binomial;
pub use binomial::{binom_cdf, binom_pmf, binom_sf};
pub use interval::{Interval, separated, wilson};
pub use normal::normal_quantile;
pub use paired::{
    mcnemar_exact, mcnemar_midp, paired_detectable_drop, paired_difference_interval,
    paired_pairs_for_drop,
};
pub use sizing::{
    percentile_nearest_rank, percentile_nearest_rank_as_reference, separate, separate_with,
    tie_rate,
};

/// The two-sided confidence the board draws every interval at.
pub const BOARD_CONFIDENCE: f64 = 0.95;
