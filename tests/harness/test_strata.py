"""The fixed-suite statistics behind the gate: stratified rate, difference, verdict, power.

Cross-checked against statsmodels/scipy where a reference exists (plain Wilson, Newcombe,
the chi-square quantile of the Poisson limit); the rest by its defining properties and by
exact operating characteristics (``gate_grid``).
"""

from __future__ import annotations

import numpy as np
import pytest
from gate_grid import characteristics, split
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from harness.stats.power import regression_power, trials_for_power
from harness.stats.rates import verdict
from harness.stats.strata import BOUNDARY_COUNTS, score_limits, stratified_diff, stratified_rate

TOL = 1e-9
#: Fixed seed: the Monte-Carlo checks are reproducible run to run.
SEED = 20261201

# --- limits -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("x", "n"), [(4, 10), (17, 50), (250, 1000), (5, 9), (40, 44)])
def test_limits_are_wilson_away_from_the_boundary(x: int, n: int) -> None:
    low, high = score_limits(x, n)
    ref = proportion_confint(x, n, alpha=0.05, method="wilson")
    assert (float(low), float(high)) == pytest.approx(ref, abs=TOL)


@pytest.mark.parametrize(("x", "n"), [(1, 3), (2, 10), (3, 30), (1, 100)])
def test_boundary_low_limit_is_the_poisson_limit_where_that_is_lower(x: int, n: int) -> None:
    low, _ = score_limits(x, n)
    poisson = 0.5 * sps.chi2.ppf(0.025, 2 * x) / n
    wilson = proportion_confint(x, n, alpha=0.05, method="wilson")[0]
    assert float(low) == pytest.approx(min(poisson, wilson), abs=TOL)
    # Mirror image at the other end.
    _, high = score_limits(n - x, n)
    assert float(high) == pytest.approx(1 - min(poisson, wilson), abs=TOL)


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_limits_are_ordered_inside_the_unit_interval_and_never_zero_width(
    xn: tuple[int, int],
) -> None:
    x, n = xn
    low, high = (float(v) for v in score_limits(x, n))
    assert 0.0 <= low <= x / n <= high <= 1.0
    assert high - low > 0.0


@given(st.integers(1, 200))
def test_limits_rise_with_the_successes(n: int) -> None:
    lows, highs = score_limits(np.arange(n + 1), float(n))
    assert np.all(np.diff(lows) >= 0) and np.all(np.diff(highs) >= 0)


def test_boundary_widening_is_named() -> None:
    assert BOUNDARY_COUNTS == 3


# --- stratified rate and difference -----------------------------------------------------------


def test_one_fixture_rate_is_wilson() -> None:
    r = stratified_rate([(7, 12)])
    assert r.ci == pytest.approx(proportion_confint(7, 12, method="wilson"), abs=TOL)


def test_equal_trials_rate_is_wilson_of_the_pooled_counts() -> None:
    """Yan & Su's effective size with equal weights and trials is all the trials."""
    r = stratified_rate([(4, 10), (7, 10), (9, 10)])
    assert r.rate == pytest.approx(20 / 30)
    assert r.n_effective == pytest.approx(30)
    assert r.ci == pytest.approx(proportion_confint(20, 30, method="wilson"), abs=TOL)


def test_unequal_trials_weigh_fixtures_equally() -> None:
    r = stratified_rate([(1, 2), (10, 10)])
    assert r.rate == pytest.approx(0.75)
    assert r.n_effective == pytest.approx(4 / (1 / 2 + 1 / 10))


@pytest.mark.parametrize(("xb", "nb", "xc", "nc"), [(9, 20, 14, 20), (30, 50, 22, 45)])
def test_one_fixture_difference_is_newcombe(xb: int, nb: int, xc: int, nc: int) -> None:
    d = stratified_diff([(xb, nb)], [(xc, nc)])
    ref = confint_proportions_2indep(xc, nc, xb, nb, method="newcomb", compare="diff")
    assert d.ci == pytest.approx(ref, abs=TOL)
    assert d.delta == pytest.approx(xc / nc - xb / nb)


def test_difference_is_candidate_minus_baseline() -> None:
    low, high = stratified_diff([(1, 20)], [(19, 20)]).ci
    assert 0 < low < 0.9 < high


@given(
    st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 200).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
)
def test_one_fixture_interval_contains_the_observed_difference(
    base: tuple[int, int], cand: tuple[int, int]
) -> None:
    low, high = stratified_diff([base], [cand]).ci
    d = cand[0] / cand[1] - base[0] / base[1]
    assert -1.0 <= low <= d + 1e-12 and d - 1e-12 <= high <= 1.0


@pytest.mark.parametrize(
    ("base", "cand"),
    [
        pytest.param([(3, 3), (3, 3)], [(0, 3), (0, 3)], id="two-fixtures-x3-total-collapse"),
        pytest.param([(3, 3)], [(0, 3)], id="one-fixture-x3-total-collapse"),
        pytest.param([(5, 5)] * 3, [(0, 5)] * 3, id="three-fixtures-all-zero"),
        pytest.param([(5, 5)] * 3, [(1, 5), (0, 5), (0, 5)], id="three-fixtures-one-success"),
        pytest.param([(6, 6), (6, 6)], [(0, 6), (0, 6)], id="issue-example-6-of-6-to-0"),
    ],
)
def test_total_collapse_is_regressed(
    base: list[tuple[int, int]], cand: list[tuple[int, int]]
) -> None:
    d = stratified_diff(base, cand)
    assert verdict(d.ci, d.delta) == "regressed"
    assert -1.0 <= d.ci[0] < d.ci[1] <= 1.0


def test_float_noise_does_not_change_the_delta() -> None:
    """Per-fixture deltas -0.4 and 0.2 - 0.6 (= -0.39999999999999997 in floats) decided the
    old verdict; the stratified delta is computed exactly and does not depend on order."""
    a = stratified_diff([(5, 5), (3, 5)], [(3, 5), (1, 5)])
    b = stratified_diff([(3, 5), (5, 5)], [(1, 5), (3, 5)])
    assert a.delta == b.delta == -0.4
    assert a.ci == b.ci
    assert verdict(a.ci, a.delta) == verdict(b.ci, b.delta)


def test_two_fixtures_at_three_of_five_have_a_real_interval() -> None:
    r = stratified_rate([(3, 5), (3, 5)])
    assert r.ci[0] < 0.6 < r.ci[1]


strata_pairs = st.integers(1, 6).flatmap(
    lambda g: st.lists(
        st.integers(1, 30).flatmap(
            lambda n: st.tuples(st.integers(0, n), st.integers(0, n), st.just(n))
        ),
        min_size=g,
        max_size=g,
    )
)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(strata_pairs, st.data())
def test_verdict_is_monotone_in_the_candidate(
    fixtures: list[tuple[int, int, int]], data: st.DataObject
) -> None:
    """A candidate at least as bad on every fixture never gets a milder verdict."""
    base = [(xb, n) for xb, _, n in fixtures]
    cand = [(xc, n) for _, xc, n in fixtures]
    worse = [(data.draw(st.integers(0, xc)), n) for xc, n in cand]
    good, bad = stratified_diff(base, cand), stratified_diff(base, worse)
    assert bad.ci[0] <= good.ci[0] + TOL and bad.ci[1] <= good.ci[1] + TOL
    assert bad.delta <= good.delta
    rank = {"regressed": 0, "inconclusive": 1, "equivalent": 1, "improved": 2}
    for threshold in (0.0, 0.05, 0.2):
        assert (
            rank[verdict(bad.ci, bad.delta, threshold)]
            <= rank[verdict(good.ci, good.delta, threshold)]
        )


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(strata_pairs)
def test_intervals_stay_in_range_and_never_collapse(fixtures: list[tuple[int, int, int]]) -> None:
    base = [(xb, n) for xb, _, n in fixtures]
    cand = [(xc, n) for _, xc, n in fixtures]
    d = stratified_diff(base, cand)
    assert -1.0 <= d.ci[0] <= d.delta <= d.ci[1] <= 1.0 and d.ci[1] > d.ci[0]
    r = stratified_rate(base)
    assert 0.0 <= r.ci[0] <= r.rate <= r.ci[1] <= 1.0 and r.ci[1] > r.ci[0]


@given(
    st.integers(1, 6),
    st.integers(1, 20),
    st.data(),
)
def test_equal_trials_depend_on_the_totals_only(g: int, n: int, data: st.DataObject) -> None:
    """What lets ``gate_grid`` enumerate totals instead of every per-fixture split."""
    counts = [data.draw(st.integers(0, n)) for _ in range(g)]
    other = [data.draw(st.integers(0, n)) for _ in range(g)]
    even = split(sum(counts), g, n)
    assert stratified_rate([(x, n) for x in counts]).ci == pytest.approx(
        stratified_rate(even).ci, abs=1e-12
    )
    pairs = [(x, n) for x in other]
    assert stratified_diff([(x, n) for x in counts], pairs).ci == pytest.approx(
        stratified_diff(even, pairs).ci, abs=1e-12
    )


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param(([], []), id="no-fixtures"),
        pytest.param(([(1, 0)], [(1, 2)]), id="impossible-count"),
        pytest.param(([(0, 0)], [(1, 2)]), id="fixture-without-trials"),
        pytest.param(([(1, 2)], [(1, 2), (1, 2)]), id="different-suites"),
    ],
)
def test_bad_strata_raise(bad: tuple[list[tuple[int, int]], list[tuple[int, int]]]) -> None:
    with pytest.raises(ValueError):
        stratified_diff(*bad)


# --- operating characteristics (exact) --------------------------------------------------------

GRID = [(g, n, p) for g in (1, 2, 3, 5, 10) for n in (3, 5, 10, 30) for p in (0.05, 0.5, 0.9)]


@pytest.mark.statistics
@pytest.mark.parametrize(("fixtures", "trials", "rate"), GRID)
def test_gate_operating_characteristics(fixtures: int, trials: int, rate: float) -> None:
    """A/A: "regressed" at most 5%; both intervals cover at least 93% (exact, not sampled)."""
    c = characteristics(fixtures, trials, rate)
    assert c.skipped < 1e-5
    assert c.regressed <= 0.05
    assert c.rate_coverage >= 0.93
    assert c.diff_coverage >= 0.93


@pytest.mark.statistics
def test_heterogeneous_suite_aa_by_simulation() -> None:
    """Fixtures with different true rates and unequal trials: A/A false alarms stay low."""
    rng = np.random.default_rng(SEED)
    rates = np.array([0.1, 0.35, 0.6, 0.8, 0.95])
    trials = np.array([3, 5, 5, 10, 7])
    reps, regressed, covered = 3000, 0, 0
    for _ in range(reps):
        xb, xc = rng.binomial(trials, rates), rng.binomial(trials, rates)
        base = list(zip(xb.tolist(), trials.tolist(), strict=True))
        cand = list(zip(xc.tolist(), trials.tolist(), strict=True))
        d = stratified_diff(base, cand)
        regressed += verdict(d.ci, d.delta) == "regressed"
        r = stratified_rate(base)
        covered += r.ci[0] <= rates.mean() <= r.ci[1]
    assert regressed / reps <= 0.05
    assert covered / reps >= 0.93


# --- power ------------------------------------------------------------------------------------


def _simulated_power(rates: list[float], trials: int, drop: float, reps: int) -> float:
    rng = np.random.default_rng(SEED)
    p = np.array(rates)
    hits = 0
    for _ in range(reps):
        xb = rng.binomial(trials, p).tolist()
        xc = rng.binomial(trials, np.maximum(p - drop, 0.0)).tolist()
        d = stratified_diff([(x, trials) for x in xb], [(x, trials) for x in xc])
        hits += verdict(d.ci, d.delta, drop) == "regressed"
    return hits / reps


@pytest.mark.parametrize(
    ("rates", "trials", "drop"),
    [([0.9], 20, 0.4), ([0.8, 0.6], 15, 0.2), ([0.7, 0.9, 0.5], 10, 0.3)],
    ids=["one-fixture", "two-fixtures", "three-fixtures"],
)
def test_regression_power_is_exact(rates: list[float], trials: int, drop: float) -> None:
    exact = regression_power(rates, trials, drop)
    reps = 3000
    simulated = _simulated_power(rates, trials, drop, reps)
    assert abs(exact - simulated) <= 4 * np.sqrt(exact * (1 - exact) / reps) + 1e-9


@pytest.mark.parametrize(
    ("observed", "threshold"),
    [([0.9], 0.2), ([1.0, 1.0], 0.2), ([0.8, 0.5, 0.9], 0.2), ([0.5], 0.4)],
    ids=["one-fixture", "two-at-100", "three-mixed", "big-drop"],
)
def test_trials_for_power_reaches_the_power_it_promises(
    observed: list[float], threshold: float
) -> None:
    """At the suggested trials, a true drop of the threshold is called "regressed" >= 80%."""
    n = trials_for_power(observed, threshold)
    assert n is not None
    assert regression_power(observed, n, threshold) >= 0.8
    reps = 2000
    assert _simulated_power(observed, n, threshold, reps) >= 0.8 - 3 * np.sqrt(0.16 / reps)
    if n > 1:
        # And it is not wildly generous: half the trials fall short.
        assert regression_power(observed, max(1, n // 2), threshold) < 0.8


def test_trials_for_power_edge_cases() -> None:
    assert trials_for_power([], 0.05) is None
    assert trials_for_power([0.5], 0.0) is None
    assert trials_for_power([0.5], 1e-6) is None  # beyond any eval budget
    assert trials_for_power([0.0], 0.1) == trials_for_power([0.1], 0.1)  # planned at >= threshold
