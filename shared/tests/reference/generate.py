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

The paired reading: statsmodels mcnemar(exact=True) and exact rational
arithmetic (fractions.Fraction over binomial coefficients) for McNemar's
exact and mid-p values; Newcombe's paired interval written here from the
papers (Newcombe 1998 method 10, Fagerland, Lydersen and Laake 2014 for
the correlation psi) on statsmodels' Wilson intervals, not from the Rust;
Connor's (1987) paired sample size with scipy.stats.norm.ppf, and its
smallest detectable drop found by scipy.optimize.brentq on the same
equation (the Rust solves it in closed form). Published values (rounded as
printed) are kept apart under "paired_published", each with its source.
"""

import json
import math
import pathlib
import platform

import mpmath
import numpy
import scipy
import statsmodels
from fractions import Fraction

from scipy.optimize import brentq
from scipy.stats import binom, norm
from statsmodels.stats.contingency_tables import mcnemar
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


def mcnemar_cases():
    """(b, c) pairs: every small table, the published Cavo example, and a few large ones."""
    cases = {(b, c) for b in range(0, 13) for c in range(0, 13)}
    cases.update({(6, 16), (16, 6), (0, 30), (7, 30), (25, 35), (40, 60), (100, 130), (300, 330)})
    return sorted(cases)


def exact_tail(k, m):
    """P(X <= k) and P(X = k) for X ~ Binomial(m, 1/2), as exact fractions."""
    total = Fraction(1, 2 ** m)
    below = sum(math.comb(m, i) for i in range(k + 1)) * total
    return below, math.comb(m, k) * total


def mcnemar_values():
    out = []
    for b, c in mcnemar_cases():
        m, k = b + c, min(b, c)
        if m == 0:
            exact_fraction, midp_fraction = Fraction(1), Fraction(1)
        else:
            below, at = exact_tail(k, m)
            exact_fraction = min(Fraction(1), 2 * below)
            midp_fraction = min(Fraction(1), 2 * below - at)
        # statsmodels wants the full table; the diagonal does not enter.
        sm = float(mcnemar([[3, b], [c, 4]], exact=True).pvalue)
        out.append({"b": b, "c": c, "statsmodels_exact": sm,
                    "exact": float(exact_fraction), "midp": float(midp_fraction)})
    return out


def newcombe_paired(a, b, c, d, alpha):
    """Newcombe (1998) method 10 for p1 - p2, p1 = (a+b)/n, p2 = (a+c)/n,
    with Fagerland, Lydersen and Laake's (2014) psi, on statsmodels' Wilson."""
    n = a + b + c + d
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = proportion_confint(a + b, n, alpha=alpha, method="wilson")
    l2, u2 = proportion_confint(a + c, n, alpha=alpha, method="wilson")
    # statsmodels leaves ~1e-17 where the bound is exactly the rate (k = 0 or n).
    l1, u1, l2, u2 = min(l1, p1), max(u1, p1), min(l2, p2), max(u2, p2)
    margins = (a + b, c + d, a + c, b + d)
    if 0 in margins:
        psi = 0.0
    else:
        big = a * d - b * c
        root = math.sqrt(math.prod(margins))
        if big > n / 2:
            psi = (big - n / 2) / root
        elif big >= 0:
            psi = 0.0
        else:
            psi = big / root
    theta = p1 - p2
    low = theta - math.sqrt(max(0.0, (p1 - l1) ** 2 - 2 * psi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2))
    high = theta + math.sqrt(max(0.0, (p2 - l2) ** 2 - 2 * psi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2))
    return max(-1.0, low), min(1.0, high), psi


def paired_interval_cases():
    """Tables of every kind: each branch of psi, empty margins, all
    discordant, small and large n, the published examples."""
    cases = {(59, 6, 16, 80), (1, 1, 7, 12), (1, 0, 0, 1), (36, 12, 2, 0), (14, 5, 0, 22)}
    for n in (1, 2, 3, 5, 8):
        for a in range(n + 1):
            for b in range(n + 1 - a):
                for c in range(n + 1 - a - b):
                    cases.add((a, b, c, n - a - b - c))
    for a, b, c, d in [(10, 0, 0, 0), (0, 10, 0, 0), (0, 0, 10, 0), (0, 0, 0, 10), (0, 12, 12, 0),
                       (30, 3, 2, 1), (20, 1, 9, 6), (5, 10, 10, 5), (100, 20, 5, 75), (180, 12, 30, 138),
                       (33, 2, 0, 1), (34, 0, 2, 0), (24, 6, 2, 4), (18, 0, 0, 18), (0, 3, 3, 30)]:
        cases.add((a, b, c, d))
    return sorted(cases)


def paired_interval_values():
    out = []
    for a, b, c, d in paired_interval_cases():
        for alpha in (0.05, 0.01, 0.1):
            low, high, psi = newcombe_paired(a, b, c, d, alpha)
            out.append({"a": a, "b": b, "c": c, "d": d, "alpha": alpha,
                        "low": low, "high": high, "psi": psi})
    return out


# Published values, rounded as printed. Tables are (a, b, c, d): a both
# passed, b first only, c second only, d neither.
PAIRED_PUBLISHED = [
    {"a": 59, "b": 6, "c": 16, "d": 80, "alpha": 0.05,
     "low": -0.1186, "high": -0.0046, "exact_p": 0.052479, "midp_p": 0.034690, "digits": 4,
     "source": "Fagerland, Lydersen and Laake, Stat Med 33:2850 (2014) and Statistical Analysis of "
               "Contingency Tables (2017) ch. 8: complete response before and after consolidation "
               "therapy (Cavo et al. 2012); the values their R package contingencytables prints "
               "(Newcombe square-and-add -0.0621 (95% CI -0.1186 to -0.0046); McNemar exact "
               "conditional P = 0.052479, mid-P P = 0.034690)"},
    {"a": 1, "b": 0, "c": 0, "d": 1, "alpha": 0.05,
     "low": -0.5734, "high": 0.5734, "digits": 4,
     "source": "contingencytables (Fagerland, Lydersen and Laake) test suite: "
               "Newcombe square-and-add on the table [[1, 0], [0, 1]] prints 0.0000 (95% CI -0.5734 to 0.5734)"},
]


def connor_pairs(drop, q, alpha, power):
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    raw = (za * math.sqrt(q) + zb * math.sqrt(q - drop ** 2)) ** 2 / drop ** 2
    return math.ceil(raw), raw


def connor_drop(n, q, alpha, power):
    """The drop whose Connor size is exactly n, by root finding; None when
    even drop = q needs more than n pairs."""
    za, zb = norm.ppf(1 - alpha / 2), norm.ppf(power)
    f = lambda x: math.sqrt(n) * x - za * math.sqrt(q) - zb * math.sqrt(max(0.0, q - x * x))
    if f(q) < 0:
        return None
    return brentq(f, 1e-12, q, xtol=1e-15, rtol=4 * numpy.finfo(float).eps, maxiter=500)


def paired_plan_values():
    sizes, drops = [], []
    for alpha in (0.05, 0.01):
        for power in (0.8, 0.9):
            for q in (0.05, 0.1, 0.2, 0.3, 0.5, 1.0):
                for drop in (0.02, 0.05, 0.1, 0.2, 0.3, 0.5):
                    if drop <= q:
                        n, raw = connor_pairs(drop, q, alpha, power)
                        sizes.append({"drop": drop, "discordance": q, "alpha": alpha, "power": power,
                                      "n": n, "raw": raw})
                for n in (5, 12, 24, 36, 60, 100, 240, 1000):
                    drops.append({"n": n, "discordance": q, "alpha": alpha, "power": power,
                                  "drop": connor_drop(n, q, alpha, power)})
    return sizes, drops


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

    plan_sizes, plan_drops = paired_plan_values()

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
        "mcnemar": mcnemar_values(),
        "paired_interval": paired_interval_values(),
        "paired_published": PAIRED_PUBLISHED,
        "paired_pairs_for_drop": plan_sizes,
        "paired_detectable_drop": plan_drops,
    }
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    total = sum(len(v) for v in doc.values() if isinstance(v, list))
    print(f"wrote {OUT} with {total} values; scipy vs mpmath worst relative {worst_scipy_vs_exact:.3g}")


if __name__ == "__main__":
    main()
