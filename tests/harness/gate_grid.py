"""Exact operating characteristics of the comparison gate on homogeneous fixture suites.

With equal trials per fixture, the stratified rate and difference depend on each run's
total successes only (``test_strata`` checks this), so the exact distribution of a verdict
is a sum over the two totals, each binomial(fixtures x trials, p). Every verdict here comes
from the real ``stratified_rate`` / ``stratified_diff`` / ``verdict``; totals whose
probability is below ``MASS_CUTOFF`` are skipped and their mass reported.

Used by the tests and by ``benchmarks/bench_stats.py`` (the README's tables).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from harness.stats.rates import verdict
from harness.stats.strata import stratified_diff, stratified_rate

#: Totals less likely than this are skipped (their summed mass is reported as ``skipped``).
MASS_CUTOFF = 1e-7


def split(total: int, fixtures: int, trials: int) -> list[tuple[int, int]]:
    """``total`` successes spread over the fixtures as evenly as possible."""
    base, extra = divmod(total, fixtures)
    return [(base + (1 if g < extra else 0), trials) for g in range(fixtures)]


@lru_cache(maxsize=256)
def _pmf(n: int, p: float) -> tuple[tuple[int, float], ...]:
    out = []
    for k in range(n + 1):
        mass = math.comb(n, k) * p**k * (1 - p) ** (n - k)
        if mass >= MASS_CUTOFF:
            out.append((k, mass))
    return tuple(out)


@dataclass(frozen=True)
class Characteristics:
    fixtures: int
    trials: int
    rate: float
    rate_coverage: float
    diff_coverage: float
    regressed: float  # share of "regressed" verdicts at the given drop (0: the A/A false alarm)
    skipped: float


def characteristics(
    fixtures: int, trials: int, rate: float, drop: float = 0.0, threshold: float = 0.05
) -> Characteristics:
    n = fixtures * trials
    base, cand = _pmf(n, rate), _pmf(n, max(0.0, rate - drop))
    rate_cov = 0.0
    for s, mass in base:
        low, high = stratified_rate(split(s, fixtures, trials)).ci
        rate_cov += mass * (low <= rate <= high)
    diff_cov = regressed = total = 0.0
    for sb, mb in base:
        strata_b = split(sb, fixtures, trials)
        for sc, mc in cand:
            mass = mb * mc
            d = stratified_diff(strata_b, split(sc, fixtures, trials))
            total += mass
            diff_cov += mass * (d.ci[0] <= -drop + 1e-12 and -drop - 1e-12 <= d.ci[1])
            regressed += mass * (verdict(d.ci, d.delta, threshold) == "regressed")
    return Characteristics(fixtures, trials, rate, rate_cov, diff_cov, regressed, 1.0 - total)
