"""harness.stats.per_resolved: total cost over resolved items and its MOVER interval.

The item-level cases are real runs of the simulated agent (their token counts), the ones
issue 38 found contradicting themselves; the limits are checked against an independent
computation (scipy's t quantile, statsmodels' Wilson interval), and by property
(hypothesis): never below the cost of an item, always bounded, scale-equivariant.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint

from harness.stats.per_resolved import METHOD, per_resolved
from harness.stats.rates import mean_interval
from harness.stats.strata import score_limits

#: Tokens of ``run --agent sim --trials 5 --fixture json-events``, all five resolved: the
#: Fieller interval put a resolved item at 13,867-51,857 tokens against 19,937-24,248 for
#: an item.
FIVE_OF_FIVE = [20733.0, 24653.0, 21333.0, 23093.0, 20653.0]
#: Tokens of ``run --agent sim --trials 3 --fixture tests/data/fixtures/tiny``, all three
#: resolved (tests/data/reports/v9.json): Fieller's interval had no upper limit.
THREE_OF_THREE = [12322.0, 8912.0, 12552.0]


def log_t_interval(costs: list[float]) -> tuple[float, float]:
    """The mean cost and the half-width ``a`` of its t interval on the log scale
    (independent of the module: plain arithmetic, scipy's quantile)."""
    n = len(costs)
    mean = sum(costs) / n
    sd = math.sqrt(sum((c - mean) ** 2 for c in costs) / (n - 1))
    a = float(sps.t.ppf(0.975, n - 1)) * sd / (mean * math.sqrt(n))
    return mean, a


def wilson(k: int, n: int) -> tuple[float, float]:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(low), float(high)


def test_five_of_five_is_never_cheaper_than_an_item() -> None:
    s = per_resolved(FIVE_OF_FIVE, [True] * 5)
    item = mean_interval(FIVE_OF_FIVE)
    assert item.ci is not None and item.mean is not None
    assert s.value == pytest.approx(22_093.0) and s.value == item.mean
    assert s.ci is not None and s.ci[1] is not None and s.reason is None
    low, high = s.ci
    # A resolved item costs at least an item: its lower limit is not below an item's.
    assert low >= item.ci[0]
    # Everything resolved: the lower limit is the mean cost's (log scale), the upper one
    # the mean cost's over the rate's lower limit, joined as MOVER joins them.
    mean, a = log_t_interval(FIVE_OF_FIVE)
    assert low == pytest.approx(mean * math.exp(-a), rel=1e-12)
    b = -math.log(wilson(5, 5)[0])
    assert high == pytest.approx(mean * math.exp(math.hypot(a, b)), rel=1e-12)
    assert (round(low), round(high)) == (20_039, 39_392)


@pytest.mark.parametrize("n", [3, 5, 10, 30])
def test_one_cost_every_trial_resolved_is_the_cost_over_the_rate_interval(n: int) -> None:
    """A deterministic run (every item the same cost, all resolved): the interval is the
    cost divided by the resolved rate's interval, its lower end the cost itself, not a bar
    on both sides of it."""
    s = per_resolved([2.5] * n, [True] * n)
    assert s.value == 2.5 and s.ci is not None
    assert s.ci[0] == pytest.approx(2.5, rel=1e-14)
    assert s.ci[1] == pytest.approx(2.5 / wilson(n, n)[0], rel=1e-12)
    # With some unresolved: still the cost over the rate's interval, the one the report
    # prints beside the rate (7 of 10: 3 failures, so Wilson's boundary-modified limits).
    s = per_resolved([1.0] * 10, [True] * 7 + [False] * 3)
    assert s.ci is not None and s.value == pytest.approx(10 / 7)
    p_lo, p_hi = (float(x) for x in score_limits(7, 10))
    assert s.ci == pytest.approx((1.0 / p_hi, 1.0 / p_lo), rel=1e-12)


def test_three_of_three_has_an_upper_limit() -> None:
    s = per_resolved(THREE_OF_THREE, [True] * 3)
    assert s.ci is not None and s.ci[1] is not None and math.isfinite(s.ci[1])
    item = mean_interval(THREE_OF_THREE)
    assert item.ci is not None and s.value is not None
    assert item.ci[0] <= s.ci[0] <= s.value <= s.ci[1]
    mean, a = log_t_interval(THREE_OF_THREE)
    assert s.ci[1] == pytest.approx(
        mean * math.exp(math.hypot(a, -math.log(wilson(3, 3)[0]))), rel=1e-12
    )


def test_unresolved_items_by_hand() -> None:
    """7 of 12 resolved (plain Wilson: more than 3 of each outcome), the unresolved items
    dearer (a negative correlation, which widens the interval)."""
    resolved = [True] * 7 + [False] * 5
    costs = [1.0, 1.2, 0.9, 1.1, 1.3, 0.8, 1.0, 2.0, 2.4, 1.8, 2.2, 2.1]
    s = per_resolved(costs, resolved)
    assert (s.n, s.resolved, s.total) == (12, 7, pytest.approx(sum(costs)))
    mean, a = log_t_interval(costs)
    rate = 7 / 12
    p_lo, p_hi = wilson(7, 12)
    r = float(sps.pearsonr(costs, [float(x) for x in resolved])[0])
    assert r < 0
    est = math.log(mean / rate)
    b_up, b_down = math.log(p_hi / rate), math.log(rate / p_lo)
    low = math.exp(est - math.sqrt(a * a + b_up * b_up - 2 * r * a * b_up))
    high = math.exp(est + math.sqrt(a * a + b_down * b_down - 2 * r * a * b_down))
    assert s.value == pytest.approx(sum(costs) / 7)
    assert s.ci == pytest.approx((low, high), rel=1e-12)
    # Cheaper unresolved items: a positive correlation is not used (it would narrow the
    # interval on a correlation a few trials cannot pin down).
    cheap = [1.0, 1.2, 0.9, 1.1, 1.3, 0.8, 1.0, 0.4, 0.5, 0.3, 0.45, 0.35]
    s = per_resolved(cheap, resolved)
    mean, a = log_t_interval(cheap)
    est = math.log(mean / rate)
    assert s.ci == pytest.approx(
        (
            math.exp(est - math.hypot(a, math.log(p_hi / rate))),
            math.exp(est + math.hypot(a, math.log(rate / p_lo))),
        ),
        rel=1e-12,
    )
    assert s.method == METHOD == "mover-log-wilson" and s.confidence == 0.95
    json.dumps(s.to_dict())


@pytest.mark.parametrize(
    ("costs", "resolved", "value", "reason"),
    [
        ([], [], None, "no trials"),
        ([1.0, 2.0], [False, False], None, "no resolved item"),
        ([1.5], [True], 1.5, "one trial"),
        ([0.0, 0.0, 0.0], [True, False, True], 0.0, "every trial cost 0"),
    ],
)
def test_per_resolved_without_an_interval(
    costs: list[float], resolved: list[bool], value: float | None, reason: str
) -> None:
    s = per_resolved(costs, resolved)
    assert s.value == value and s.ci is None
    assert s.reason is not None and reason in s.reason


def test_per_resolved_errors() -> None:
    with pytest.raises(ValueError, match="same trials"):
        per_resolved([1.0, 2.0], [True])
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        per_resolved([1.0, float("nan")], [True, True])
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        per_resolved([1.0, -1.0], [True, True])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.01, 1e4), st.booleans()), min_size=2, max_size=30),
    st.floats(0.01, 100.0),
)
def test_never_below_an_item_always_bounded_and_scale_equivariant(
    trials: list[tuple[float, bool]], scale: float
) -> None:
    costs = [c for c, _ in trials]
    resolved = [r for _, r in trials]
    assume(any(resolved))
    s = per_resolved(costs, resolved)
    assert s.value is not None and s.ci is not None
    low, high = s.ci
    assert high is not None and math.isfinite(high)
    tol = 1e-9 * s.value
    assert low - tol <= s.value <= high + tol
    item = mean_interval(costs)
    assert item.mean is not None
    # Never below the mean cost per item's lower limit (the mean itself where the cost
    # did not vary).
    floor = item.ci[0] if item.ci is not None else item.mean
    assert low >= floor - 1e-9 * item.mean
    if all(resolved):
        assert s.value == pytest.approx(item.mean, rel=1e-12)
    scaled = per_resolved([scale * c for c in costs], resolved)
    assert scaled.ci is not None and scaled.ci[1] is not None
    assert scaled.ci[0] == pytest.approx(scale * low, rel=1e-9)
    assert scaled.ci[1] == pytest.approx(scale * high, rel=1e-9)
