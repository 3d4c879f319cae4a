"""Statistics for repeated trials: rates, means, candidate-vs-baseline differences, verdicts.

Every function is pure. Distribution quantiles come from scipy; nothing here re-implements
them. Differences are always **candidate minus baseline**, and argument names say which is
which.

Missing and empty input, one rule for the whole module:

- A missing value (``None``, NaN, inf; or anything but a Python ``bool`` where outcomes
  are expected) raises :class:`ValueError`. Errored or unscored trials must be excluded,
  and recorded, by the caller; they are never scored as a failure or as zero here.
- A statistic the data cannot define (a mean of nothing, a spread from one value) is
  returned as ``None`` in its summary, never as 0. An interval is ``None`` whenever its
  standard error is undefined *or estimates to 0* (within float noise): a zero sample spread from a few
  trials is not evidence of zero uncertainty, so no zero-width interval is ever reported.
  :func:`verdict` treats a ``None`` interval as ``"inconclusive"``.
- Counts that are impossible (negative, successes > trials, k outside 1..n) raise.

References:
    Wilson (1927), "Probable inference, the law of succession, and statistical inference".
    Newcombe (1998), "Interval estimation for the difference between independent
        proportions: comparison of eleven methods", Stat. Med. 17:873-890 (method 10).
    Chen et al. (2021), "Evaluating Large Language Models Trained on Code" (pass@k).
    Yao et al. (2024), "tau-bench" (pass^k).
    Miller (2024), "Adding Error Bars to Evals: A Statistical Approach to Language Model
        Evaluations", arXiv:2411.00640 (clustered standard errors).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# scipy.special (not scipy.stats): the same quantile routines scipy.stats.norm and .t call,
# at a fraction of the import time (scipy.stats costs seconds at every CLI start).
from scipy import special as _special

from harness.model.comparison import DEFAULT_THRESHOLD, Verdict
from harness.model.record import Interval
from harness.model.summary import DiffSummary, MeanSummary

#: 95% is the convention readers expect next to an eval score; callers may ask for another.
DEFAULT_CONFIDENCE = 0.95
#: 80% power: Cohen's conventional default for planning how many trials to run.
DEFAULT_POWER = 0.80


# --- summaries -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RateSummary:
    """Overall rate of ``n`` outcomes in ``clusters`` clusters, with a cluster-robust SE."""

    n: int
    clusters: int
    rate: float | None
    se: float | None
    ci: Interval | None
    confidence: float


# --- validation and quantiles ----------------------------------------------------------------


def check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def check_counts(successes: int, n: int, what: str = "") -> None:
    label = f"{what} " if what else ""
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"{label}counts need 0 <= successes <= n, got {successes}/{n}")


def _finite_values(values: Iterable[float], what: str) -> list[float]:
    out: list[float] = []
    for v in values:
        if v is None or not math.isfinite(v):
            raise ValueError(f"{what} must be finite numbers; exclude missing values first: {v!r}")
        out.append(float(v))
    return out


@lru_cache(maxsize=64)
def z_value(confidence: float) -> float:
    """Two-sided standard-normal critical value."""
    return float(_special.ndtri(0.5 + confidence / 2.0))


@lru_cache(maxsize=1024)
def _t(confidence: float, df: float) -> float:
    """Two-sided Student-t critical value."""
    return float(_special.stdtrit(df, 0.5 + confidence / 2.0))


#: A standard error at or below this is a zero spread computed with float noise (equal
#: values whose residuals do not cancel exactly), not a measured uncertainty.
SE_NOISE = 1e-12


def _t_interval(centre: float, se: float, df: float, confidence: float) -> Interval | None:
    if se <= SE_NOISE:
        return None
    half = _t(confidence, df) * se
    return (centre - half, centre + half)


# --- single rates and means ------------------------------------------------------------------


def wilson_interval(successes: int, n: int, confidence: float = DEFAULT_CONFIDENCE) -> Interval:
    """Wilson (1927) score interval for a binomial rate.

    ``n == 0`` returns ``(0.0, 1.0)``: the formula written as centre
    ``(x + z²/2)/(n + z²)`` ± half-width ``z·sqrt(x(n-x)/n + z²/4)/(n + z²)`` tends to
    exactly that, and "no trials" honestly means "any rate".
    """
    check_confidence(confidence)
    check_counts(successes, n)
    if n == 0:
        return (0.0, 1.0)
    z = z_value(confidence)
    z2 = z * z
    centre = (successes + z2 / 2.0) / (n + z2)
    half = z * math.sqrt(successes * (n - successes) / n + z2 / 4.0) / (n + z2)
    low = 0.0 if successes == 0 else centre - half
    high = 1.0 if successes == n else centre + half
    return (max(0.0, low), min(1.0, high))


def mean_interval(values: Sequence[float], confidence: float = DEFAULT_CONFIDENCE) -> MeanSummary:
    """Mean, sd (ddof=1) and t(n-1) interval of ``values`` (tokens, turns, seconds...).

    n == 0: mean, sd and ci are None. n == 1: sd and ci are None. All values equal: sd is
    0.0 and ci is None (see module rules).
    """
    check_confidence(confidence)
    xs = _finite_values(values, "values")
    n = len(xs)
    if n == 0:
        return MeanSummary(0, None, None, None, confidence)
    mean = math.fsum(xs) / n
    if n == 1:
        return MeanSummary(1, mean, None, None, confidence)
    # Equal values get sd exactly 0: fsum(xs)/n can miss x by an ulp and fake a tiny spread.
    sd = 0.0 if min(xs) == max(xs) else math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    return MeanSummary(
        n, mean, sd, _t_interval(mean, sd / math.sqrt(n), n - 1, confidence), confidence
    )


# --- pass@k and pass^k -----------------------------------------------------------------------


def _check_k(n: int, c: int, k: int) -> None:
    check_counts(c, n)
    if not 1 <= k <= n:
        raise ValueError(f"k must satisfy 1 <= k <= n, got k={k}, n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``c`` successes in ``n`` trials: ``1 - C(n-c,k)/C(n,k)``.

    The chance that at least one of k trials drawn without replacement passes (Chen et
    al. 2021, eq. 1). Exact integer binomials; one rounding at the final division.
    """
    _check_k(n, c, k)
    total = math.comb(n, k)
    return (total - math.comb(n - c, k)) / total


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k from ``c`` successes in ``n`` trials: ``C(c,k)/C(n,k)``.

    The chance that all k trials drawn without replacement pass (Yao et al. 2024): the
    reliability counterpart of pass@k.
    """
    _check_k(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


# --- overall rate across fixtures --------------------------------------------------------------


def _outcomes(where: str, outcomes: Sequence[bool]) -> list[bool]:
    out: list[bool] = []
    for o in outcomes:
        # Strict: None, NaN or a stray 0.0 must never pass as "failed".
        if not isinstance(o, bool):
            raise ValueError(f"{where}: outcomes must be Python bools, got {o!r}")
        out.append(o)
    if not out:
        raise ValueError(f"{where} has no outcomes; exclude it (and record why)")
    return out


def clustered_rate(
    outcomes_by_cluster: Mapping[str, Sequence[bool]], confidence: float = DEFAULT_CONFIDENCE
) -> RateSummary:
    """Overall rate of all outcomes, with a cluster-robust SE and a t(G-1) interval.

    ``rate`` is the mean of all n outcomes (fixtures with more trials weigh more). With G
    clusters, cluster residual sums ``S_g = sum_{i in g}(x_i - rate)``::

        se = sqrt(G / (G - 1)) * sqrt(sum_g S_g²) / n

    i.e. Miller (2024)'s clustered SE times the small-sample factor G/(G-1), exactly the
    default of statsmodels' ``cov_type="cluster"`` for an intercept-only regression. The
    interval uses t(G-1), not the normal, because G (fixtures) is small; it is clipped to
    [0, 1]. Empty mapping: everything None. One cluster: se and ci None (the residual sum
    of a single cluster is 0 by construction). A cluster with no outcomes raises.
    """
    check_confidence(confidence)
    clusters = [_outcomes(f"cluster {name!r}", seq) for name, seq in outcomes_by_cluster.items()]
    g = len(clusters)
    n = sum(len(c) for c in clusters)
    if g == 0:
        return RateSummary(0, 0, None, None, None, confidence)
    rate = sum(sum(c) for c in clusters) / n
    if g == 1:
        return RateSummary(n, 1, rate, None, None, confidence)
    meat = math.fsum(math.fsum(x - rate for x in c) ** 2 for c in clusters)
    se = math.sqrt(g / (g - 1)) * math.sqrt(meat) / n
    ci = _t_interval(rate, se, g - 1, confidence)
    if ci is not None:
        ci = (max(0.0, ci[0]), min(1.0, ci[1]))
    return RateSummary(n, g, rate, se, ci, confidence)


# --- candidate minus baseline ----------------------------------------------------------------


def welch_interval(
    baseline: Sequence[float], candidate: Sequence[float], confidence: float = DEFAULT_CONFIDENCE
) -> DiffSummary:
    """Difference of means ``mean(candidate) - mean(baseline)``, Welch t interval.

    df is Welch-Satterthwaite. Either arm empty: delta, se, df, ci None. Either arm with a
    single value: delta only (no variance estimate). Both variances 0: se 0.0, df and ci
    None (the df formula is 0/0).
    """
    check_confidence(confidence)
    a, b = mean_interval(baseline, confidence), mean_interval(candidate, confidence)
    if a.mean is None or b.mean is None:
        return DiffSummary(a.n, b.n, None, None, None, None, confidence)
    delta = b.mean - a.mean
    if a.sd is None or b.sd is None:
        return DiffSummary(a.n, b.n, delta, None, None, None, confidence)
    va, vb = a.sd**2 / a.n, b.sd**2 / b.n
    se = math.sqrt(va + vb)
    if se == 0.0:
        return DiffSummary(a.n, b.n, delta, 0.0, None, None, confidence)
    df = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    return DiffSummary(a.n, b.n, delta, se, df, _t_interval(delta, se, df, confidence), confidence)


def paired_cluster_diff(
    per_cluster_deltas: Mapping[str, float], confidence: float = DEFAULT_CONFIDENCE
) -> DiffSummary:
    """Mean of per-fixture differences with a t(G-1) interval: fixtures as a random sample.

    This answers "would the change hold on *other* fixtures like these?", which needs many
    fixtures; the gate asks about the fixed suite (:mod:`harness.strata`). The interval is
    clipped to [-1, 1]. No fixtures: all None. One fixture, or all differences equal: no
    interval (a zero spread between a few fixtures is not zero uncertainty).
    """
    s = mean_interval(_finite_values(per_cluster_deltas.values(), "deltas"), confidence)
    se = None if s.sd is None else s.sd / math.sqrt(s.n)
    df = None if s.n < 2 else float(s.n - 1)
    ci = None if s.ci is None else (max(-1.0, s.ci[0]), min(1.0, s.ci[1]))
    return DiffSummary(s.n, s.n, s.mean, se, df, ci, confidence)


#: Interval ends within this distance of 0 or of the threshold are read as lying on it.
#: Rates are ratios of small integers, so a limit that "is" 0 or the threshold can come out
#: an ulp either side depending on summation order; no verdict may hang on that.
VERDICT_TOLERANCE = 1e-9


def is_regressed(high: Any) -> Any:
    """The regression rule on an interval's upper limit (floats or numpy arrays)."""
    return high < -VERDICT_TOLERANCE


def verdict(
    ci: Interval | None, delta: float | None, threshold: float = DEFAULT_THRESHOLD
) -> Verdict:
    """Classify a candidate-minus-baseline difference; the first rule that holds wins.

    Comparisons allow :data:`VERDICT_TOLERANCE`, so float noise never decides.

    1. ``ci`` or ``delta`` None -> "inconclusive".
    2. ``low > 0`` and ``delta >= threshold`` -> "improved" (clear *and* big enough).
    3. ``high < 0`` -> "regressed", at any size: a clear drop is always worth a look.
    4. ``-threshold <= low`` and ``high <= threshold`` -> "equivalent".
    5. otherwise "inconclusive".

    Every rule is monotone in the limits and ``delta``: a difference whose interval and
    estimate are no higher never gets a better verdict.
    """
    if threshold < 0 or not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number >= 0, got {threshold!r}")
    if ci is None or delta is None:
        return "inconclusive"
    low, high = ci
    if not (math.isfinite(low) and math.isfinite(high) and math.isfinite(delta)) or low > high:
        raise ValueError(f"invalid interval {ci!r} or delta {delta!r}")
    tol = VERDICT_TOLERANCE
    if low > tol and delta >= threshold - tol:
        return "improved"
    if is_regressed(high):
        return "regressed"
    if -threshold - tol <= low and high <= threshold + tol:
        return "equivalent"
    return "inconclusive"
