"""How many trials the gate needs: exact power of the regression rule over a fixture suite.

The question is the one the verdict asks. With ``n`` trials per fixture in each run, true
baseline rates ``p_g`` and a true drop of ``threshold`` on every fixture, how often does the
stratified comparison (:mod:`harness.strata`) say "regressed"? The answer is computed
exactly, not by a normal approximation: with equal trials per fixture the stratified limits
depend only on each run's total successes ``S = sum_g x_g`` (a convolution of binomials), and
the upper limit rises with the candidate's total, so for every baseline total there is one
largest candidate total that still regresses.

Planning rates: the observed baseline rate of each fixture, raised to at least the threshold
(a drop of the threshold from a lower rate cannot happen, and a fixture observed at 0 may
well not be at 0). The candidate rate is that minus the threshold.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import special

from harness.stats.rates import DEFAULT_CONFIDENCE, DEFAULT_POWER, is_regressed
from harness.stats.strata import mover_limits, score_limits

#: Above this many trials per fixture the planner gives up (returns None): no eval budget
#: runs that many, and the exact computation grows with the square of it.
MAX_PLANNED_TRIALS = 20_000


def _binomial_pmf(n: int, p: float) -> np.ndarray:
    """P(X = k) for k = 0..n, from differences of scipy's regularised incomplete beta."""
    k = np.arange(n + 1, dtype=float)
    cdf = special.bdtr(k, n, p)
    return np.diff(cdf, prepend=0.0)


def _total_pmf(rates: Sequence[float], n: int) -> np.ndarray:
    """Distribution of the suite's total successes, ``n`` trials at each fixture's rate."""
    pmf = np.ones(1)
    for p in rates:
        pmf = np.convolve(pmf, _binomial_pmf(n, p))
    return np.clip(pmf, 0.0, None)


def regression_power(
    base_rates: Sequence[float],
    trials: int,
    threshold: float,
    confidence: float = DEFAULT_CONFIDENCE,
) -> float:
    """Chance that the stratified comparison says "regressed" at a true drop of ``threshold``.

    ``base_rates`` are the fixtures' true baseline rates (used as given), ``trials`` the trials
    per fixture in each run.
    """
    if trials < 1 or not base_rates:
        raise ValueError("need at least one fixture and one trial")
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold!r}")
    cand_rates = [max(0.0, p - threshold) for p in base_rates]
    total = trials * len(base_rates)
    base_pmf, cand_pmf = _total_pmf(base_rates, trials), _total_pmf(cand_rates, trials)
    cand_cdf = np.cumsum(cand_pmf)
    s = np.arange(total + 1, dtype=float)
    rates = s / total
    low, high = score_limits(s, float(total), confidence)

    def upper(sb: np.ndarray, sc: np.ndarray) -> np.ndarray:
        high_limit: np.ndarray = mover_limits(
            rates[sb], (low[sb], high[sb]), rates[sc], (low[sc], high[sc])
        )[1]
        return high_limit

    # For each baseline total, binary search the largest candidate total that regresses
    # (-1 when none does): the upper limit rises with the candidate total.
    sb = np.arange(total + 1)
    lo = np.full(total + 1, -1)
    hi = np.full(total + 1, total + 1)
    while np.any(hi - lo > 1):
        mid = (lo + hi) // 2
        active = hi - lo > 1
        probe = np.clip(mid, 0, total)
        regressed = is_regressed(upper(sb, probe)) & active
        lo = np.where(regressed, mid, lo)
        hi = np.where(active & ~regressed, mid, hi)
    reach = np.where(lo >= 0, cand_cdf[np.clip(lo, 0, total)], 0.0)
    return float(min(1.0, np.sum(base_pmf * reach)))


def planning_rates(observed: Sequence[float], threshold: float) -> list[float]:
    """Observed baseline rates, each raised to at least the threshold (see module doc)."""
    return [min(1.0, max(float(p), threshold)) for p in observed]


def _normal_guess(rates: Sequence[float], threshold: float, power: float, confidence: float) -> int:
    """Trials per fixture by the normal approximation of the stratified difference."""
    z_sum = float(special.ndtri(0.5 + confidence / 2.0) + special.ndtri(power))
    g = len(rates)
    var_one_trial = sum(p * (1 - p) + (p - threshold) * (1 - p + threshold) for p in rates) / g**2
    return max(1, int(np.ceil(z_sum**2 * var_one_trial / threshold**2)))


def trials_for_power(
    observed_base_rates: Sequence[float],
    threshold: float,
    power: float = DEFAULT_POWER,
    confidence: float = DEFAULT_CONFIDENCE,
) -> int | None:
    """Trials per fixture (in each run) at which a drop of ``threshold`` on every fixture
    is called "regressed" with at least ``power``; None when no threshold or beyond
    :data:`MAX_PLANNED_TRIALS`.

    Found by doubling, then bisection; the answer is a number of trials whose exact power
    reaches ``power`` (power is not perfectly monotone in the trials, being discrete, so a
    slightly smaller count may reach it too).
    """
    if not observed_base_rates or threshold <= 0.0:
        return None
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power!r}")
    rates = planning_rates(observed_base_rates, threshold)
    guess = _normal_guess(rates, threshold, power, confidence)
    if guess > 2 * MAX_PLANNED_TRIALS:
        return None

    def enough(n: int) -> bool:
        return regression_power(rates, n, threshold, confidence) >= power

    # Start below the normal-approximation answer; doubling then brackets the exact one.
    high = max(1, guess // 4)
    while not enough(high):
        if high >= MAX_PLANNED_TRIALS:
            return None
        high = min(2 * high, MAX_PLANNED_TRIALS)
    low = high // 2 if high > max(1, guess // 4) else 0  # known to fall short, or 0
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high
