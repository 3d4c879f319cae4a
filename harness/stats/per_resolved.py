"""Cost per resolved item: total cost / resolved items over a set of trials, with its
interval.

**What is estimated.** Trial ``i`` costs ``y_i`` (USD or tokens) and resolves or not
(``x_i`` 1 or 0). The figure is the spend per resolved item, ``theta = mu / p`` (``mu`` the
mean cost of a trial, ``p`` the chance it resolves), estimated by the ratio of the totals
``sum(y) / sum(x) = mean(y) / (k/n)``: every trial's cost, the unresolved ones' too, over
the ``k`` resolved of ``n``. As ``p <= 1``, ``theta >= mu``: a resolved item never costs
less than an item.

**The interval** is MOVER (the method of variance estimates recovery; Zou & Donner 2008)
for ``log theta = log mu - log p``, recovered from two intervals the report already gives:

- ``mu``: the t(n-1) interval of the mean cost, on the log scale
  (``mean · exp(± t · sd / (mean · sqrt(n)))``, as the cost ratio is; positive, and skewed
  like costs are);
- ``p``: the resolved rate's boundary-modified Wilson interval (``strata.score_limits``,
  the interval the report prints beside the rate);

joined with ``r``, the sample correlation of cost and outcome, where it is negative::

    low  = log theta^ - sqrt(a² + b_up²   - 2 r a b_up)     a = log-scale half-width of mu
    high = log theta^ + sqrt(a² + b_down² - 2 r a b_down)   b_up = log p_hi - log p^,
                                                            b_down = log p^ - log p_lo

Why this interval: it is consistent with the figures beside it. Its lower limit is never
below the lower limit of the mean cost per item (``sqrt(a² + b² - 2rab) <= a + b`` and
``b_up <= -log p^``, so ``low >= log mu_lo``), and with everything resolved it *is* that
limit; its upper limit is finite whenever something resolved (Wilson's lower limit is then
above 0), 3 of 3 included; when every trial cost the same it is exactly the cost over the
rate's interval (``[c, c / 0.566]`` at 5 of 5: 5 of 5 does not prove a 100% rate, and the
report's rate interval, [57%, 100%], says the same).

Not chosen (``benchmarks/bench_cost_oc.py``, ``docs/concepts/statistics.md``):

- Fieller's interval with the rate's variance at Wilson's centre (this module's
  predecessor): its set is symmetric in the rate, as if the rate could exceed 1, so its
  lower limit fell below the cost of an item (at 5 of 5 resolved, 13,867 tokens per
  resolved item against 19,937 per item), and it had no upper limit at 3 trials;
- the delta method, or a percentile bootstrap of items: with every trial resolved the rate
  has no spread in the sample, so the interval is the mean cost's alone and ignores that
  the rate may be below 1 (at a true rate of 0.9, 5 of 5 turns up 59% of the time); at
  rates 0.7-0.95 and 3-10 trials they cover 90-92% and 70-90%;
- MOVER with a positive ``r`` as well: a correlation from a few trials is noisy, and
  narrowing the interval on it covered 88% (rate 0.7, 10 trials, cost CV 0.2, unresolved
  items at half the cost); ignoring it when positive only widens the interval.

Coverage, lognormal costs with CV 0.2-1.0, rates 0.1-1, 2-30 trials, unresolved items
costing half, as much as or twice resolved ones: 93% or more wherever the unresolved items
cost what resolved ones do or less. The one limit: with every trial resolved, no unresolved
trial was seen, and the upper limit assumes one would cost about what a resolved one did;
where they cost twice as much it covers 87.5% at worst (costs hardly varying, CV 0.2, at 3
trials and a rate of 0.5).

The figure of an agent x model over several fixtures pools the fixtures' items as one
sample: the spread between fixtures' costs counts as noise, which widens the cost part (so
it errs wide for a fixed suite), and the rate is the pooled one (the mean over fixtures
when every fixture ran as many trials).

Missing values: no trials, nothing resolved (no value), one trial or a cost of 0 on every
trial (a value, no interval) are said in ``reason``; callers pass scored trials only.

References: Zou & Donner (2008) Stat. Med. 27:1693-1702; Newcombe (2016) Stat. Methods
Med. Res. 25:1774-1778 (MOVER-R, ratios); Wilson (1927); Brown, Cai & DasGupta (2001).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy import special

from harness.model.summary import PerResolved
from harness.stats.cost import checked_costs
from harness.stats.rates import DEFAULT_CONFIDENCE
from harness.stats.strata import score_limits

#: What ``PerResolved.method`` records for this interval.
METHOD = "mover-log-wilson"


def per_resolved_arrays(
    mean: Any, sd: Any, resolved: Any, n: Any, corr: Any,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """MOVER limits ``(low, high)`` of ``mean / (resolved / n)`` (module doc) from the mean
    and sd (ddof=1) of ``n`` costs, ``resolved`` of the ``n`` trials and the sample
    correlation of cost and outcome (0 where either is constant). NaN where there is no
    interval: ``n < 2``, nothing resolved, or a mean cost of 0."""
    m, s, k, nn = (np.asarray(a, float) for a in (mean, sd, resolved, n))
    r = np.minimum(np.asarray(corr, float), 0.0)
    ok = (nn >= 2) & (k > 0) & (m > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = special.stdtrit(np.where(ok, nn - 1.0, 1.0), 0.5 + confidence / 2.0)
        a = np.where(ok, t * s / (m * np.sqrt(nn)), np.nan)
        rate = k / nn
        p_lo, p_hi = score_limits(np.where(ok, k, 1.0), np.where(ok, nn, 1.0), confidence)
        b_up = np.log(p_hi) - np.log(rate)
        b_down = np.log(rate) - np.log(p_lo)
        estimate = np.log(m) - np.log(rate)
        low = estimate - np.sqrt(np.maximum(a * a + b_up * b_up - 2.0 * r * a * b_up, 0.0))
        high = estimate + np.sqrt(np.maximum(a * a + b_down * b_down - 2.0 * r * a * b_down, 0.0))
    return np.where(ok, np.exp(low), np.nan), np.where(ok, np.exp(high), np.nan)


def per_resolved(
    costs: Sequence[float], resolved: Sequence[bool], confidence: float = DEFAULT_CONFIDENCE
) -> PerResolved:
    """Total cost per resolved item with its MOVER interval (module doc); ``costs[i]`` and
    ``resolved[i]`` are one trial."""
    ys = checked_costs(costs, "costs")
    xs = [1.0 if r else 0.0 for r in resolved]
    if len(xs) != len(ys):
        raise ValueError(f"{len(ys)} costs but {len(xs)} outcomes: they must be the same trials")
    n, k, total = len(ys), int(sum(xs)), math.fsum(ys)

    def entry(
        value: float | None, ci: tuple[float, float] | None, reason: str | None
    ) -> PerResolved:
        return PerResolved(n, k, total, value, ci, confidence, reason, METHOD)

    if n == 0:
        return entry(None, None, "no trials")
    if k == 0:
        return entry(None, None, "no resolved item")
    value = total / k
    if n < 2:
        return entry(value, None, "one trial: no spread")
    if total == 0.0:
        return entry(value, None, "every trial cost 0: no interval")
    mean = total / n
    # Equal costs have a spread of exactly 0 (no float residue): the rate's interval alone.
    same = min(ys) == max(ys)
    sd = 0.0 if same else math.sqrt(math.fsum((y - mean) ** 2 for y in ys) / (n - 1))
    corr = 0.0
    if not same and 0 < k < n:
        rate = k / n
        sxy = math.fsum((y - mean) * (x - rate) for x, y in zip(xs, ys, strict=True))
        corr = sxy / math.sqrt(math.fsum((y - mean) ** 2 for y in ys) * k * (1 - rate))
    low, high = (float(a) for a in per_resolved_arrays(mean, sd, k, n, corr, confidence))
    return entry(value, (low, high), None)


__all__ = ["METHOD", "per_resolved", "per_resolved_arrays"]
