"""Rates and rate differences over a fixed suite of fixtures, the fixtures as strata.

The question a gate asks is "did the agent get worse on *these* fixtures?", so the suite is
fixed and each fixture is a stratum with equal weight (a fixture with more trials is not
more important, it is only measured more precisely). The overall rate is the mean of the
per-fixture rates; the overall change is the mean of the per-fixture changes.

Intervals:

- **Rate**: the stratified Wilson score interval of Yan & Su (2010): Wilson's interval for
  the weighted rate with the effective sample size ``n_eff = 1 / sum(w_g² / n_g)`` (with
  equal weights and equal trials, simply all trials). It stays inside [0, 1], never has zero
  width, and is exactly Wilson's interval for a single fixture.
- **Boundary counts**: Wilson's interval under-covers when only a few successes (or
  failures) were seen (Brown, Cai & DasGupta 2001, §4.1.1: at 3 trials and a true rate of
  5%, plain Wilson covers 86%). For effective counts of at most ``BOUNDARY_COUNTS`` the
  limit on that side is widened to the one-sided Poisson limit, as they propose.
- **Difference**: the MOVER construction (Zou & Donner 2008) from the two stratified
  limits, i.e. Newcombe's hybrid score interval (his method 10) applied to the stratified
  rates; for one fixture it is Newcombe's interval with the boundary-modified limits. It
  stays inside [-1, 1].

Why not MOVER over per-fixture Wilson limits (one term per fixture)? Wilson's limits at a few
trials are pulled towards 1/2; a single interval makes up for it by its shifted centre, but a
sum of many such terms keeps only the narrowing: at 10 fixtures x 3 trials and a true rate of
1/2, that interval covers 84% and an A/A comparison says "regressed" 8% of the time, against
95% and 3% here (``benchmarks/bench_stats.py``).

Every function accepts numpy arrays as well as floats, so the power planner
(:mod:`harness.power`) evaluates exactly the rule the verdict uses.

References:
    Wilson (1927); Newcombe (1998), Stat. Med. 17:873-890; Zou & Donner (2008), Stat. Med.
    27:1693-1702; Yan & Su (2010), Biometrical Journal 52:6; Brown, Cai & DasGupta (2001),
    Statistical Science 16:101-133.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special

from harness.model.record import Interval
from harness.stats.rates import DEFAULT_CONFIDENCE, check_confidence, check_counts, z_value

#: Effective counts (successes or failures) up to which Wilson's limit on that side is
#: widened to the one-sided Poisson limit. Brown, Cai & DasGupta use 2 below 50 trials and 3
#: up to 100; 3 everywhere keeps coverage at 93% or more on the whole grid the README
#: reports (with 2, Wilson's dip gives 92.7% at 2 fixtures x 10 trials and a 5% rate).
BOUNDARY_COUNTS = 3

Strata = Sequence[tuple[int, int]]


@dataclass(frozen=True)
class StratifiedRate:
    """The equal-weight mean of ``strata`` per-fixture rates and its interval."""

    strata: int
    n: int
    n_effective: float
    rate: float
    ci: Interval
    confidence: float


@dataclass(frozen=True)
class StratifiedDiff:
    """Candidate minus baseline over the same strata, with its MOVER interval."""

    strata: int
    baseline_rate: float
    candidate_rate: float
    delta: float
    ci: Interval
    confidence: float


def score_limits(successes: Any, n: Any, confidence: float = DEFAULT_CONFIDENCE) -> Any:
    """Wilson limits for (possibly fractional, effective) counts, boundary-modified.

    ``successes`` and ``n`` are floats or numpy arrays (``n > 0``); returns ``(low, high)``
    of the same shape. At ``successes == 0`` the low limit is exactly 0, at ``n`` the high
    limit exactly 1.
    """
    x = np.asarray(successes, dtype=float)
    m = np.asarray(n, dtype=float)
    z = z_value(confidence)
    z2 = z * z
    centre = (x + z2 / 2.0) / (m + z2)
    half = z * np.sqrt(np.maximum(x * (m - x) / m, 0.0) + z2 / 4.0) / (m + z2)
    low = np.where(x <= 0.0, 0.0, centre - half)
    high = np.where(x >= m, 1.0, centre + half)
    # One-sided Poisson limits at the (1+confidence)/2 level: 0.5 * chi2 quantile / n.
    tail = 0.5 + confidence / 2.0
    failures = m - x
    with np.errstate(divide="ignore", invalid="ignore"):
        poisson_low = 0.5 * special.chdtri(2.0 * x, tail) / m
        poisson_high = 1.0 - 0.5 * special.chdtri(2.0 * failures, tail) / m
    near_zero = (x > 0.0) & (x <= BOUNDARY_COUNTS) & (x < m)
    near_one = (failures > 0.0) & (failures <= BOUNDARY_COUNTS) & (x > 0.0)
    low = np.where(near_zero, np.fmin(low, poisson_low), low)
    high = np.where(near_one, np.fmax(high, poisson_high), high)
    return np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)


def mover_limits(
    base_rate: Any, base_limits: Any, cand_rate: Any, cand_limits: Any
) -> tuple[Any, Any]:
    """MOVER (Newcombe method 10) limits of ``cand_rate - base_rate``, clipped to [-1, 1]."""
    (lb, ub), (lc, uc) = base_limits, cand_limits
    delta = np.asarray(cand_rate, dtype=float) - np.asarray(base_rate, dtype=float)
    low = delta - np.hypot(cand_rate - lc, ub - base_rate)
    high = delta + np.hypot(uc - cand_rate, base_rate - lb)
    return np.clip(low, -1.0, 1.0), np.clip(high, -1.0, 1.0)


def _checked(strata: Strata, what: str) -> list[tuple[int, int]]:
    out = []
    for successes, n in strata:
        check_counts(successes, n, what)
        if n == 0:
            raise ValueError(f"{what}: a fixture has no scored trials; exclude it (and say so)")
        out.append((int(successes), int(n)))
    if not out:
        raise ValueError(f"{what}: no fixtures")
    return out


def _mean_rate(strata: list[tuple[int, int]]) -> tuple[Fraction, float]:
    """Equal-weight mean rate (exact rational, so no verdict hangs on summation order) and
    the effective sample size ``1 / sum(w² / n_g)``."""
    g = len(strata)
    rate = sum((Fraction(x, n) for x, n in strata), Fraction(0)) / g
    n_eff = Fraction(g * g) / sum((Fraction(1, n) for _, n in strata), Fraction(0))
    return rate, float(n_eff)


def stratified_rate(strata: Strata, confidence: float = DEFAULT_CONFIDENCE) -> StratifiedRate:
    """Rate over fixtures ``[(successes, trials), ...]`` with the stratified Wilson interval."""
    check_confidence(confidence)
    counts = _checked(strata, "rate")
    exact, n_eff = _mean_rate(counts)
    rate = float(exact)
    low, high = score_limits(rate * n_eff, n_eff, confidence)
    return StratifiedRate(
        len(counts), sum(n for _, n in counts), n_eff, rate, (float(low), float(high)), confidence
    )


def stratified_diff(
    baseline: Strata, candidate: Strata, confidence: float = DEFAULT_CONFIDENCE
) -> StratifiedDiff:
    """Candidate minus baseline over the same fixtures, in the same order.

    ``baseline[g]`` and ``candidate[g]`` are one fixture's ``(successes, trials)`` in each
    run; both runs are independent samples (no trial is paired with another).
    """
    check_confidence(confidence)
    base, cand = _checked(baseline, "baseline"), _checked(candidate, "candidate")
    if len(base) != len(cand):
        raise ValueError(f"baseline has {len(base)} fixtures, candidate {len(cand)}")
    exact_b, nb = _mean_rate(base)
    exact_c, nc = _mean_rate(cand)
    pb, pc = float(exact_b), float(exact_c)
    # Both arms' limits in one call: the same code, half the numpy overhead.
    low_arms, high_arms = score_limits(np.array([pb * nb, pc * nc]), np.array([nb, nc]), confidence)
    low, high = mover_limits(pb, (low_arms[0], high_arms[0]), pc, (low_arms[1], high_arms[1]))
    delta = float(exact_c - exact_b)  # exact: the mean of per-fixture differences
    return StratifiedDiff(len(base), pb, pc, delta, (float(low), float(high)), confidence)
