"""harness.stats checked against independent implementations (statsmodels, scipy, brute force).

statsmodels is a dev-only dependency: it is imported here, never by harness/stats.py.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps
from scipy.special import comb
from statsmodels.stats.proportion import (
    proportion_confint,
)
from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

from harness.model.summary import DiffSummary, MeanSummary
from harness.stats.rates import (
    RateSummary,
    clustered_rate,
    mean_interval,
    paired_cluster_diff,
    pass_at_k,
    pass_hat_k,
    verdict,
    welch_interval,
    wilson_interval,
)

#: Agreement demanded of every statistic against its independent implementation.
TOL = 1e-9
#: Fixed seeds so the simulation figures are reproducible run to run.
COVERAGE_SEED = 20241101

COUNTS = [
    (0, 1),
    (1, 1),
    (0, 5),
    (5, 5),
    (3, 10),
    (1, 20),
    (17, 50),
    (0, 100),
    (99, 100),
    (250, 1000),
]
CONFIDENCES = [0.95, 0.90, 0.99]


def _sm_wilson(x: int, n: int, confidence: float) -> tuple[float, float]:
    low, high = proportion_confint(x, n, alpha=1 - confidence, method="wilson")
    return float(low), float(high)


# --- Wilson ----------------------------------------------------------------------------------


@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize(("x", "n"), COUNTS)
def test_wilson_matches_statsmodels(x: int, n: int, confidence: float) -> None:
    assert wilson_interval(x, n, confidence) == pytest.approx(_sm_wilson(x, n, confidence), abs=TOL)


def test_wilson_no_trials_is_the_whole_unit_interval() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_wilson_extremes_are_exact() -> None:
    assert wilson_interval(0, 7)[0] == 0.0
    assert wilson_interval(7, 7)[1] == 1.0


@pytest.mark.parametrize(
    ("x", "n", "confidence"),
    [
        pytest.param(-1, 5, 0.95, id="negative-successes"),
        pytest.param(6, 5, 0.95, id="more-successes-than-trials"),
        pytest.param(0, -1, 0.95, id="negative-n"),
        pytest.param(1, 5, 1.0, id="confidence-1"),
        pytest.param(1, 5, 0.0, id="confidence-0"),
    ],
)
def test_wilson_rejects_impossible_input(x: int, n: int, confidence: float) -> None:
    with pytest.raises(ValueError):
        wilson_interval(x, n, confidence)


@given(st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_contains_the_observed_rate(xn: tuple[int, int]) -> None:
    x, n = xn
    low, high = wilson_interval(x, n)
    assert 0.0 <= low <= x / n <= high <= 1.0


def test_wilson_coverage_simulation() -> None:
    """95% Wilson intervals cover the true rate 93-97% of the time (n=50, p from 0.15 to 0.85).

    Coverage of any binomial interval oscillates with p; averaged over a grid of rates at
    n=50 Wilson is close to nominal. The simulated figure is also checked against the exact
    coverage (binomial pmf summed over covering outcomes) to rule out a lucky seed.
    """
    rng = np.random.default_rng(COVERAGE_SEED)
    n, reps = 50, 20000
    rates = np.round(np.arange(0.15, 0.851, 0.05), 2)
    intervals = [wilson_interval(x, n) for x in range(n + 1)]
    simulated, exact = [], []
    for p in rates:
        draws = rng.binomial(n, p, size=reps)
        covers = np.array([low <= p <= high for low, high in intervals])
        simulated.append(covers[draws].mean())
        exact.append(sps.binom.pmf(np.arange(n + 1), n, p)[covers].sum())
    coverage = float(np.mean(simulated))
    se = math.sqrt(0.95 * 0.05 / (reps * len(rates)))
    print(f"Wilson coverage: simulated {coverage:.4f}, exact {np.mean(exact):.4f}")
    assert 0.93 <= coverage <= 0.97
    assert abs(coverage - np.mean(exact)) < 4 * se


# --- means -----------------------------------------------------------------------------------

SAMPLES = [
    [1.0, 2.0, 3.5],
    [10.0, 12.0],
    [1200.0, 1530.0, 980.0, 2210.0, 1750.0, 1640.0],
    list(np.random.default_rng(7).lognormal(8, 1, size=40)),
]


@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize("values", SAMPLES)
def test_mean_interval_matches_statsmodels_and_scipy(
    values: list[float], confidence: float
) -> None:
    s = mean_interval(values, confidence)
    ref = DescrStatsW(np.asarray(values))
    assert s.n == len(values)
    assert s.mean == pytest.approx(ref.mean, abs=TOL)
    assert s.sd == pytest.approx(np.std(values, ddof=1), rel=TOL)
    assert s.ci == pytest.approx(ref.tconfint_mean(alpha=1 - confidence), abs=TOL)
    scipy_ci = sps.t.interval(confidence, len(values) - 1, loc=ref.mean, scale=sps.sem(values))
    assert s.ci == pytest.approx(scipy_ci, abs=TOL)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param([], MeanSummary(0, None, None, None, 0.95), id="empty"),
        pytest.param([4.0], MeanSummary(1, 4.0, None, None, 0.95), id="single"),
        pytest.param([0.1, 0.1, 0.1], MeanSummary(3, 0.1, 0.0, None, 0.95), id="constant"),
    ],
)
def test_mean_interval_undefined_parts(values: list[float], expected: MeanSummary) -> None:
    s = mean_interval(values)
    assert s.n == expected.n and s.sd == expected.sd and s.ci == expected.ci
    assert s.mean == pytest.approx(expected.mean)


@pytest.mark.parametrize("bad", [None, math.nan, math.inf], ids=["none", "nan", "inf"])
def test_mean_interval_rejects_missing_values(bad: float) -> None:
    with pytest.raises(ValueError, match="exclude missing"):
        mean_interval([1.0, bad, 2.0])


# --- pass@k and pass^k -----------------------------------------------------------------------


def _brute_force(n: int, c: int, k: int) -> tuple[float, float]:
    """Enumerate every k-subset of n trials (c passing): share with any pass, share all pass."""
    outcomes = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(outcomes, k))
    return (
        sum(any(s) for s in subsets) / len(subsets),
        sum(all(s) for s in subsets) / len(subsets),
    )


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [(n, c, k) for n in range(1, 9) for c in range(n + 1) for k in range(1, n + 1)],
)
def test_pass_at_k_and_hat_k_match_enumeration(n: int, c: int, k: int) -> None:
    at_k, hat_k = _brute_force(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(at_k, abs=TOL)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k, abs=TOL)


@pytest.mark.parametrize(("n", "c", "k"), [(200, 37, 10), (200, 190, 50), (1000, 500, 100)])
def test_pass_at_k_large_n_matches_scipy_comb(n: int, c: int, k: int) -> None:
    total = comb(n, k, exact=True)
    assert pass_at_k(n, c, k) == pytest.approx(1 - comb(n - c, k, exact=True) / total, abs=TOL)
    assert pass_hat_k(n, c, k) == pytest.approx(comb(c, k, exact=True) / total, abs=TOL)


@pytest.mark.parametrize(
    ("n", "c", "k"),
    [
        pytest.param(5, 2, 0, id="k-zero"),
        pytest.param(5, 2, 6, id="k-above-n"),
        pytest.param(0, 0, 1, id="no-trials"),
        pytest.param(5, 6, 1, id="c-above-n"),
    ],
)
def test_pass_at_k_rejects_impossible_input(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n))))
def test_pass_at_k_orders(nc: tuple[int, int]) -> None:
    n, c = nc
    at = [pass_at_k(n, c, k) for k in range(1, n + 1)]
    hat = [pass_hat_k(n, c, k) for k in range(1, n + 1)]
    assert at[0] == pytest.approx(c / n) == pytest.approx(hat[0])
    assert all(a <= b + 1e-15 for a, b in itertools.pairwise(at))
    assert all(a + 1e-15 >= b for a, b in itertools.pairwise(hat))
    assert all(h <= a + 1e-15 for h, a in zip(hat, at, strict=True))


# --- clustered rate --------------------------------------------------------------------------

CLUSTERED = [
    {"a": [True, False, True], "b": [True, True, False], "c": [False, False, True]},
    {"a": [True] * 5, "b": [False] * 5, "c": [True, False, True, True, False]},
    {"a": [True, False], "b": [True], "c": [False, False, False, True], "d": [True] * 7},
    {
        f"f{i}": list(np.random.default_rng(i).random(int(3 + i % 4)) < 0.2 + 0.06 * i)
        for i in range(12)
    },
]


@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize("data", CLUSTERED)
def test_clustered_rate_matches_statsmodels_cluster_ols(
    data: dict[str, list[bool]], confidence: float
) -> None:
    """statsmodels' default cluster correction is G/(G-1)·(N-1)/(N-K); K=1 leaves G/(G-1)."""
    data = {k: [bool(x) for x in v] for k, v in data.items()}
    y = np.array([float(x) for v in data.values() for x in v])
    groups = np.array([i for i, v in enumerate(data.values()) for _ in v])
    fit = sm.OLS(y, np.ones_like(y)).fit(
        cov_type="cluster", cov_kwds={"groups": groups}, use_t=True
    )
    assert fit.df_resid_inference == len(data) - 1  # t(G-1), as harness.stats uses
    s = clustered_rate(data, confidence)
    assert (s.n, s.clusters) == (len(y), len(data))
    assert s.rate == pytest.approx(fit.params[0], abs=TOL)
    assert s.se == pytest.approx(fit.bse[0], abs=TOL)
    expected = np.clip(fit.conf_int(alpha=1 - confidence)[0], 0.0, 1.0)
    assert s.ci == pytest.approx(tuple(expected), abs=TOL)


def test_clustered_rate_matches_miller_formula() -> None:
    data = CLUSTERED[2]
    xs = [x for v in data.values() for x in v]
    n, g, mean = len(xs), len(data), sum(xs) / len(xs)
    miller = math.sqrt(sum(sum(x - mean for x in v) ** 2 for v in data.values())) / n
    assert clustered_rate(data).se == pytest.approx(miller * math.sqrt(g / (g - 1)), abs=TOL)


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param({}, RateSummary(0, 0, None, None, None, 0.95), id="empty"),
        pytest.param(
            {"a": [True, False, True]}, RateSummary(3, 1, 2 / 3, None, None, 0.95), id="one-cluster"
        ),
        pytest.param(
            {"a": [True] * 3, "b": [True] * 2},
            RateSummary(5, 2, 1.0, 0.0, None, 0.95),
            id="all-pass",
        ),
        pytest.param(
            {"a": [False] * 3, "b": [False]}, RateSummary(4, 2, 0.0, 0.0, None, 0.95), id="all-fail"
        ),
    ],
)
def test_clustered_rate_undefined_parts(data: dict[str, list[bool]], expected: RateSummary) -> None:
    assert clustered_rate(data) == expected


@pytest.mark.parametrize(
    "data",
    [
        pytest.param({"a": [True], "b": []}, id="empty-cluster"),
        pytest.param({"a": [True, None]}, id="none-outcome"),
        pytest.param({"a": [True, 0]}, id="int-outcome"),
        pytest.param({"a": [True, math.nan]}, id="nan-outcome"),
    ],
)
def test_clustered_rate_rejects_missing(data: dict[str, list[object]]) -> None:
    with pytest.raises(ValueError):
        clustered_rate(data)  # type: ignore[arg-type]  # deliberately bad input


# --- Welch -----------------------------------------------------------------------------------

WELCH = [
    ([1.0, 2.0, 3.0], [2.0, 4.0, 7.0]),
    ([1200.0, 1530.0, 980.0, 2210.0], [900.0, 1010.0, 1120.0, 870.0, 1300.0, 990.0]),
    ([5.0, 5.0, 5.0], [4.0, 6.0, 9.0, 3.0]),
    (
        list(np.random.default_rng(3).normal(30, 5, 25)),
        list(np.random.default_rng(4).normal(27, 11, 9)),
    ),
]


# scipy warns about the constant arm ([5, 5, 5]); that arm is the point of the case.
@pytest.mark.filterwarnings("ignore:Precision loss occurred:RuntimeWarning")
@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize(("base", "cand"), WELCH)
def test_welch_matches_statsmodels(base: list[float], cand: list[float], confidence: float) -> None:
    s = welch_interval(base, cand, confidence)
    cm = CompareMeans(DescrStatsW(np.asarray(cand)), DescrStatsW(np.asarray(base)))
    _, _, df = cm.ttest_ind(usevar="unequal")
    assert (s.n_base, s.n_cand) == (len(base), len(cand))
    assert s.delta == pytest.approx(np.mean(cand) - np.mean(base), abs=TOL)
    assert s.se == pytest.approx(cm.std_meandiff_separatevar, rel=TOL)
    assert s.df == pytest.approx(df, rel=TOL)
    assert s.ci == pytest.approx(cm.tconfint_diff(alpha=1 - confidence, usevar="unequal"), abs=TOL)
    scipy_ci = sps.ttest_ind(cand, base, equal_var=False).confidence_interval(confidence)
    assert s.ci == pytest.approx((scipy_ci.low, scipy_ci.high), abs=TOL)


@pytest.mark.parametrize(
    ("base", "cand", "expected"),
    [
        pytest.param([], [1.0, 2.0], DiffSummary(0, 2, None, None, None, None, 0.95), id="empty"),
        pytest.param([1.0], [2.0, 4.0], DiffSummary(1, 2, 2.0, None, None, None, 0.95), id="n1"),
        pytest.param(
            [3.0, 3.0],
            [5.0, 5.0, 5.0],
            DiffSummary(2, 3, 2.0, 0.0, None, None, 0.95),
            id="zero-var",
        ),
    ],
)
def test_welch_degenerate_cases(
    base: list[float], cand: list[float], expected: DiffSummary
) -> None:
    assert welch_interval(base, cand) == expected


# --- paired cluster difference ---------------------------------------------------------------

DELTAS = [
    {"a": 0.1, "b": -0.2, "c": 0.3},
    {"a": 0.2, "b": 0.4},
    {f"f{i}": d for i, d in enumerate(np.random.default_rng(11).normal(0.05, 0.2, 15))},
]


@pytest.mark.parametrize("confidence", CONFIDENCES)
@pytest.mark.parametrize("deltas", DELTAS)
def test_paired_cluster_diff_matches_paired_t(deltas: dict[str, float], confidence: float) -> None:
    d = np.array(list(deltas.values()))
    s = paired_cluster_diff(deltas, confidence)
    ref = sps.ttest_1samp(d, 0.0).confidence_interval(confidence)
    assert (s.n_base, s.n_cand, s.df) == (len(d), len(d), len(d) - 1)
    assert s.delta == pytest.approx(d.mean(), abs=TOL)
    assert s.se == pytest.approx(sps.sem(d), rel=TOL)
    clipped = (max(-1.0, ref.low), min(1.0, ref.high))  # a rate difference lies in [-1, 1]
    assert s.ci == pytest.approx(clipped, abs=TOL)
    sm_low, sm_high = DescrStatsW(d).tconfint_mean(1 - confidence)
    assert s.ci == pytest.approx((max(-1.0, sm_low), min(1.0, sm_high)), abs=TOL)


@pytest.mark.parametrize(
    ("deltas", "expected"),
    [
        pytest.param({}, DiffSummary(0, 0, None, None, None, None, 0.95), id="empty"),
        pytest.param({"a": 0.3}, DiffSummary(1, 1, 0.3, None, None, None, 0.95), id="one-cluster"),
        pytest.param(
            {"a": 0.0, "b": 0.0}, DiffSummary(2, 2, 0.0, 0.0, 1.0, None, 0.95), id="all-equal"
        ),
    ],
)
def test_paired_cluster_diff_undefined_parts(
    deltas: dict[str, float], expected: DiffSummary
) -> None:
    s = paired_cluster_diff(deltas)
    assert s == expected
    assert verdict(s.ci, s.delta) == "inconclusive"


def test_paired_cluster_diff_stays_inside_minus_one_to_one() -> None:
    s = paired_cluster_diff({"a": -1.0, "b": -0.6})
    assert s.ci is not None and s.ci[0] == -1.0 and s.ci[1] <= 1.0


def test_clustered_rate_equal_clusters_have_no_interval() -> None:
    """Two fixtures at 3/5: the residuals cancel only up to float noise; no [60, 60]."""
    s = clustered_rate(
        {"a": [True, True, True, False, False], "b": [True, False, True, False, True]}
    )
    assert s.rate == pytest.approx(0.6) and s.ci is None


def test_paired_cluster_diff_rejects_missing() -> None:
    with pytest.raises(ValueError, match="exclude missing"):
        paired_cluster_diff({"a": 0.1, "b": math.nan})


# --- verdict ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ci", "delta", "expected"),
    [
        pytest.param(None, 0.2, "inconclusive", id="no-interval"),
        pytest.param((0.1, 0.2), None, "inconclusive", id="no-delta"),
        pytest.param((0.02, 0.3), 0.16, "improved", id="clear-and-big"),
        pytest.param((0.05, 0.05), 0.05, "improved", id="delta-at-threshold"),
        pytest.param((0.01, 0.07), 0.04, "inconclusive", id="clear-but-small-wide"),
        pytest.param((0.01, 0.04), 0.03, "equivalent", id="clear-but-negligible"),
        pytest.param((-0.3, -0.01), -0.15, "regressed", id="clear-drop"),
        pytest.param((-0.03, -0.01), -0.02, "regressed", id="small-drop-beats-equivalent"),
        pytest.param((-0.04, 0.03), 0.0, "equivalent", id="tight-around-zero"),
        pytest.param((-0.05, 0.05), 0.0, "equivalent", id="equivalence-bounds-inclusive"),
        pytest.param((-0.2, 0.3), 0.05, "inconclusive", id="wide"),
        pytest.param((0.0, 0.3), 0.15, "inconclusive", id="touches-zero"),
    ],
)
def test_verdict_rules(ci: tuple[float, float] | None, delta: float | None, expected: str) -> None:
    assert verdict(ci, delta) == expected


@pytest.mark.parametrize(
    ("ci", "delta", "threshold"),
    [
        pytest.param((0.2, 0.1), 0.15, 0.05, id="low-above-high"),
        pytest.param((0.0, math.nan), 0.1, 0.05, id="nan-bound"),
        pytest.param((0.0, 0.2), 0.1, -0.01, id="negative-threshold"),
    ],
)
def test_verdict_rejects_bad_input(ci: tuple[float, float], delta: float, threshold: float) -> None:
    with pytest.raises(ValueError):
        verdict(ci, delta, threshold)


@pytest.mark.parametrize(
    ("ci", "delta", "expected"),
    [
        pytest.param((-0.5, -1e-17), -0.4, "inconclusive", id="upper-limit-an-ulp-below-zero"),
        pytest.param((-0.5, -1e-6), -0.4, "regressed", id="upper-limit-clearly-below-zero"),
        pytest.param((0.01, 0.2), 0.05 - 1e-17, "improved", id="delta-an-ulp-below-threshold"),
        pytest.param((-0.05 - 1e-17, 0.01), 0.0, "equivalent", id="low-an-ulp-past-threshold"),
    ],
)
def test_verdict_is_not_decided_by_float_noise(
    ci: tuple[float, float], delta: float, expected: str
) -> None:
    assert verdict(ci, delta) == expected


@pytest.mark.parametrize(
    "summary",
    [
        mean_interval([1.0, 2.0, 4.0]),
        mean_interval([]),
        welch_interval(*WELCH[0]),
        paired_cluster_diff({"a": 0.3}),
    ],
    ids=["mean", "mean-empty", "welch", "paired-one"],
)
def test_summaries_round_trip_through_json(summary: MeanSummary | DiffSummary) -> None:
    data = json.loads(json.dumps(summary.to_dict()))
    assert type(summary).from_dict(data) == summary
