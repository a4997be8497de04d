#!/usr/bin/env python3
"""Independent reference values for fitness-shared's statistics.

Writes values.json beside this file. CI never runs this; it runs the Rust
tests that read the committed JSON. Re-run by hand after changing what is
covered:

    python3 -m venv /tmp/ref && /tmp/ref/bin/pip install scipy statsmodels mpmath
    /tmp/ref/bin/python shared/tests/reference/generate.py

Sources: scipy.stats.binom (cdf, sf, pmf), scipy.stats.norm.ppf,
statsmodels proportion_confint(method="wilson"), exact power and plan built
from scipy.stats.binom.cdf, the Fleiss sample-size formula with
scipy.stats.norm.ppf, and mpmath (50 digits, exact in p as given) as a check
on scipy's binomial tails.
"""

import json
import math
import pathlib
import platform

import mpmath
import numpy
import scipy
import statsmodels
from scipy.stats import binom, norm
from statsmodels.stats.proportion import proportion_confint

mpmath.mp.dps = 50
OUT = pathlib.Path(__file__).with_name("values.json")
TINY = 1e-290  # below this a double has lost relative precision; not compared


def exact_cdf(k, n, p):
    """P(X <= k) = I_{1-p}(n-k, k+1), regularised incomplete beta, 50 digits."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    q = mpmath.mpf(1) - mpmath.mpf(p)
    return float(mpmath.betainc(n - k, k + 1, 0, q, regularized=True))


def exact_sf(k, n, p):
    """P(X >= k) = I_p(k, n-k+1)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return float(mpmath.betainc(k, n - k + 1, 0, mpmath.mpf(p), regularized=True))


def binomial_cases():
    ns = [1, 2, 5, 10, 20, 36, 59, 60, 61, 72, 78, 100, 270, 500, 1000, 2000, 5000, 10000]
    ps = [0.001, 0.01, 0.05, 0.1, 0.25, 0.3, 0.5, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99, 0.999]
    cases = set()
    for n in ns:
        for p in ps:
            mean = n * p
            sd = math.sqrt(n * p * (1 - p))
            for c in (-8, -3, -1, 0, 1, 3, 8):
                k = int(math.floor(mean + c * sd))
                if 0 <= k <= n:
                    cases.add((k, n, p))
            cases.add((0, n, p))
            cases.add((n - 1, n, p) if n > 1 else (0, n, p))
    cases.update({(4, 10, 0.5), (500, 1000, 0.5), (1900, 2000, 0.99), (65, 78, 0.9), (65, 78, 0.8)})
    return sorted(cases)


def main():
    cdf, sf, pmf = [], [], []
    worst_scipy_vs_exact = 0.0
    for k, n, p in binomial_cases():
        c = float(binom.cdf(k, n, p))
        s = float(binom.sf(k - 1, n, p))  # P(X >= k)
        ce, se = exact_cdf(k, n, p), exact_sf(k, n, p)
        for got, ex, out in ((c, ce, cdf), (s, se, sf)):
            if got > TINY and ex > TINY:
                rel = abs(got - ex) / ex
                worst_scipy_vs_exact = max(worst_scipy_vs_exact, rel)
                out.append({"k": k, "n": n, "p": p, "scipy": got, "exact": ex})
        m = float(binom.pmf(k, n, p))
        if m > TINY:
            pmf.append({"k": k, "n": n, "p": p, "scipy": m})

    quantiles = []
    grid = [10.0 ** -e for e in range(1, 13)] + [2e-12, 5e-7, 0.001, 0.0125, 0.02425, 0.025, 0.05, 0.075, 0.1, 0.2, 0.3, 0.4, 0.45, 0.49, 0.5]
    for p in sorted(set(grid)):
        for x in {p, 1.0 - p}:
            quantiles.append({"p": x, "scipy": float(norm.ppf(x))})
    for i in range(1, 100):
        quantiles.append({"p": i / 100, "scipy": float(norm.ppf(i / 100))})

    wilson = []
    for conf in (0.95, 0.90, 0.99):
        for n in (1, 2, 5, 10, 12, 20, 36, 50, 72, 78, 100, 1000, 10000):
            for k in sorted({0, 1, n // 4, n // 2, (9 * n) // 10, n - 1, n}):
                if 0 <= k <= n:
                    lo, hi = proportion_confint(k, n, alpha=1 - conf, method="wilson")
                    wilson.append({"k": k, "n": n, "confidence": conf, "low": float(lo), "high": float(hi)})

    def critical_k(n, t, alpha):
        crit = None
        for k in range(n):
            if binom.cdf(k, n, t) < alpha:
                crit = k
            else:
                break
        return crit

    power = []
    designs = [(0.9, 0.8, 0.05), (0.8, 0.7, 0.05), (0.95, 0.85, 0.05), (0.9, 0.75, 0.01)]
    for t, d, a in designs:
        for n in range(1, 121):
            c = critical_k(n, t, a)
            pw = 0.0 if c is None else float(binom.cdf(c, n, d))
            power.append({"n": n, "threshold": t, "detectable": d, "alpha": a, "critical_k": c, "power": pw})

    plans = []
    for t, d, a, target in [(0.9, 0.8, 0.05, 0.8), (0.9, 0.85, 0.05, 0.8), (0.9, 0.75, 0.05, 0.8),
                            (0.8, 0.7, 0.05, 0.8), (0.95, 0.85, 0.05, 0.9), (0.9, 0.8, 0.01, 0.8)]:
        for n in range(1, 2001):
            c = critical_k(n, t, a)
            if c is None:
                continue
            pw = float(binom.cdf(c, n, d))
            if pw >= target:
                plans.append({"threshold": t, "detectable": d, "alpha": a, "power": target,
                              "n": n, "critical_k": c, "achieved": pw})
                break

    separate = []
    for p1, p2 in [(0.42, 0.58), (0.3, 0.6), (0.42, 0.83), (0.1, 0.2), (0.5, 0.55), (0.05, 0.95), (0.9, 0.8), (0.7, 0.72)]:
        za, zb = norm.ppf(1 - 0.05 / 2), norm.ppf(0.8)
        pbar = (p1 + p2) / 2
        num = (za * math.sqrt(2 * pbar * (1 - pbar)) + zb * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))) ** 2
        raw = num / (p1 - p2) ** 2
        separate.append({"p1": p1, "p2": p2, "n": math.ceil(raw), "raw": raw})

    ties = []
    for base in (0.0, 0.1, 0.5, 0.854, 0.9, 1.0):
        for reps in (1, 2, 3, 5, 10):
            ties.append({"base": base, "reps": reps,
                         "scipy": float(sum(binom.pmf(k, reps, base) ** 2 for k in range(reps + 1)))})

    doc = {
        "generated_by": "shared/tests/reference/generate.py",
        "versions": {
            "python": platform.python_version(),
            "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__,
            "numpy": numpy.__version__,
            "mpmath": mpmath.__version__,
        },
        "tolerances": {"relative": 1e-12, "quantile_relative": 1e-9},
        "worst_scipy_vs_exact_relative": worst_scipy_vs_exact,
        "binom_cdf": cdf,
        "binom_sf": sf,
        "binom_pmf": pmf,
        "normal_quantile": quantiles,
        "wilson": wilson,
        "achieved_power": power,
        "plan": plans,
        "separate": separate,
        "tie_rate": ties,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    total = sum(len(v) for v in doc.values() if isinstance(v, list))
    print(f"wrote {OUT} with {total} values; scipy vs mpmath worst relative {worst_scipy_vs_exact:.3g}")


if __name__ == "__main__":
    main()
