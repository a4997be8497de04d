//! How long the gate maths takes. Goal (issue 3): `plan(0.90, 0.80)` under
//! 1 ms (the reference scans n = 5..2000 with a cdf per step).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use fitness_shared::gates::{plan, published_verdict, verdict};
use fitness_shared::stats::binom_cdf;

fn bench_plan(c: &mut Criterion) {
    c.bench_function("plan(0.90, 0.80, 0.05, 0.80)", |b| {
        b.iter(|| {
            plan(
                black_box(0.90),
                black_box(0.80),
                black_box(0.05),
                black_box(0.80),
            )
        })
    });
    c.bench_function("plan(0.90, 0.85, 0.05, 0.80) [n = 270]", |b| {
        b.iter(|| {
            plan(
                black_box(0.90),
                black_box(0.85),
                black_box(0.05),
                black_box(0.80),
            )
        })
    });
}

/// 10,000 (k, n) pairs: n = 1..=140 with every k, truncated at 10,000.
fn sweep() -> Vec<(u64, u64)> {
    (1..=140u64)
        .flat_map(|n| (0..=n).map(move |k| (k, n)))
        .take(10_000)
        .collect()
}

fn bench_verdicts(c: &mut Criterion) {
    let pairs = sweep();
    assert_eq!(pairs.len(), 10_000);
    c.bench_function("10,000 verdicts", |b| {
        b.iter(|| {
            pairs
                .iter()
                .filter(|&&(k, n)| verdict(k, n, black_box(0.9), 0.05).is_ok())
                .count()
        })
    });
    // Each published verdict carries its design's required_n; the plan is
    // remembered after the first call, so this measures the rest.
    c.bench_function("1,000 published verdicts", |b| {
        b.iter(|| {
            pairs
                .iter()
                .step_by(10)
                .filter(|&&(k, n)| published_verdict(k, n, black_box(0.9), 0.05, 0.8, 0.8).is_ok())
                .count()
        })
    });
    c.bench_function("binom_cdf(8950, 10000, 0.9)", |b| {
        b.iter(|| binom_cdf(black_box(8950), black_box(10_000), black_box(0.9)))
    });
}

criterion_group!(benches, bench_plan, bench_verdicts);
criterion_main!(benches);
