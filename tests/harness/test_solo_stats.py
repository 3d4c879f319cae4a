"""The swarm-vs-solo statistics (:mod:`harness.stats.solo`): references, edge cases, and
(statistics tier) coverage by simulation.

References: statsmodels' cluster-robust WLS standard error for the ratio's variance, the
Bell-McCaffrey trace formula written as matrices for its degrees of freedom, and the
worked example of Fagerland, Lydersen & Laake (2017, ch. 8; Cavo et al. 2012) for the
paired rate difference. The simulations are seeded per cell (reproducible), run the array
functions the scalar ones call (checked equal here), and use 4,000 replicates per cell: a
correct 95% interval then sits 6 Monte Carlo standard errors above the 93% floor.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import special
from scipy import stats as sps

from harness.stats.solo import (
    CLUSTERED_DIFF_METHOD,
    DIFF_METHOD,
    design_effect_arrays,
    newcombe_paired_arrays,
    paired_rate_diff,
    paired_ratio,
    ratio_arrays,
)

SEED = 20261241
REPS = 4_000
FLOOR = 0.93

# --- simulation helpers ----------------------------------------------------------------------


def draw_pairs(
    rng: np.random.Generator,
    reps: int,
    fixtures: int,
    trials: int,
    ratio: float,
    rho: float,
    cv: float,
    dist: str,
    fixture_scale: float = 0.0,
    fixture_ratio: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(num, den)`` of shape (reps, fixtures, trials) with ``E[num] / E[den] = ratio``:
    lognormal or gamma values of coefficient of variation ``cv`` joined by a Gaussian copula
    of correlation ``rho``; each fixture scales both arms by ``e^(fixture_scale·z)`` and its
    own ratio by a mean-1 lognormal of log-sd ``fixture_ratio``."""
    shape = (reps, fixtures, trials)
    z1 = rng.standard_normal(shape)
    z2 = rho * z1 + math.sqrt(1 - rho * rho) * rng.standard_normal(shape)
    if dist == "lognormal":
        s = math.sqrt(math.log1p(cv * cv))
        x, y = np.exp(s * z1 - s * s / 2), np.exp(s * z2 - s * s / 2)
    else:
        k = 1 / (cv * cv)
        x = special.gammaincinv(k, special.ndtr(z1)) / k
        y = special.gammaincinv(k, special.ndtr(z2)) / k
    scale = np.exp(fixture_scale * rng.standard_normal((reps, fixtures, 1)))
    r = np.exp(fixture_ratio * rng.standard_normal((reps, fixtures, 1)) - fixture_ratio**2 / 2)
    return ratio * r * scale * x, scale * y


def ratio_coverage(num: np.ndarray, den: np.ndarray, ratio: float, clustered: bool) -> tuple:
    """(coverage where an interval exists, share without one, median log width)."""
    if clustered:
        x, y = num.sum(axis=-1), den.sum(axis=-1)
    else:
        x, y = num.reshape(len(num), -1), den.reshape(len(den), -1)
    _, low, high = ratio_arrays(x, y)
    ok = np.isfinite(low)
    covered = (low[ok] <= ratio) & (ratio <= high[ok])
    return float(covered.mean()), 1 - float(ok.mean()), float(np.median(np.log(high / low)[ok]))


def paired_outcomes(
    rng: np.random.Generator,
    reps: int,
    fixtures: int,
    trials: int,
    p_a: float,
    p_b: float,
    rho: float,
    tau: float = 0.0,
) -> tuple[np.ndarray, np.ndarray]:
    """Boolean (reps, fixtures, trials) outcomes with rates ``p_a``, ``p_b``: a latent
    Gaussian of correlation ``rho`` within a pair and a fixture difficulty of sd ``tau``
    shared by both arms and all trials of a fixture."""
    shape = (reps, fixtures, trials)
    u = tau * rng.standard_normal((reps, fixtures, 1))
    z1 = rng.standard_normal(shape)
    z2 = rho * z1 + math.sqrt(1 - rho * rho) * rng.standard_normal(shape)
    s = math.sqrt(1 + tau * tau)
    a = (u + z1) < special.ndtri(p_a) * s if p_a < 1 else np.ones(shape, bool)
    b = (u + z2) < special.ndtri(p_b) * s if p_b < 1 else np.ones(shape, bool)
    return a, b


def diff_limits(a: np.ndarray, b: np.ndarray, clustered: bool) -> tuple[np.ndarray, np.ndarray]:
    """The limits paired_rate_diff gives, replicate by replicate, through the arrays."""
    axes = (1, 2)
    counts = [(a & b).sum(axes), (a & ~b).sum(axes), (~a & b).sum(axes), (~a & ~b).sum(axes)]
    cells = np.stack(counts).astype(float)
    if clustered:
        sums = (a.astype(float) - b.astype(float)).sum(axis=2)
        sizes = np.full(a.shape[1], a.shape[2], float)
        cells = cells / design_effect_arrays(sums, sizes, cells[1] + cells[2])
    _, low, high = newcombe_paired_arrays(*cells)
    return low, high


# --- references ------------------------------------------------------------------------------


def test_rate_diff_is_the_textbook_example() -> None:
    """Fagerland, Lydersen & Laake (2017), Statistical Analysis of Contingency Tables, ch. 8,
    Cavo et al. (2012): table [[59, 6], [16, 80]], Newcombe's square-and-add interval
    -0.0621 (-0.1186 to -0.0046)."""
    a = [True] * 59 + [True] * 6 + [False] * 16 + [False] * 80
    b = [True] * 59 + [False] * 6 + [True] * 16 + [False] * 80
    est = paired_rate_diff(a, b)
    assert est.value == pytest.approx(-0.0621, abs=5e-5)
    assert est.ci == pytest.approx((-0.1186, -0.0046), abs=5e-5)
    assert est.method == DIFF_METHOD and est.pairs == 161


@pytest.mark.parametrize("clustered", [False, True], ids=["pairs", "fixtures"])
def test_ratio_variance_is_statsmodels_cluster_robust_wls(clustered: bool) -> None:
    """``R`` is the WLS fit of ``num_i / den_i`` on a constant with weights ``den_i``;
    statsmodels' CR1 standard error of it, times ``sqrt(S / tr(B) · (G - 1) / G)`` (the
    working-model rescaling), and t at ``tr(B)² / tr(B²)`` computed as G x G matrices, give
    the interval on the log scale."""
    rng = np.random.default_rng(SEED)
    num, den = (v.ravel() for v in draw_pairs(rng, 1, 5, 4, 2.0, 0.5, 0.5, "lognormal", 0.6, 0.3))
    groups = np.repeat(np.arange(5), 4) if clustered else np.arange(20)
    fit = sm.WLS(num / den, np.ones(len(num)), weights=den).fit(
        cov_type="cluster", cov_kwds={"groups": groups}
    )
    ratio = num.sum() / den.sum()
    assert fit.params[0] == pytest.approx(ratio, rel=1e-12)
    y = np.bincount(groups, weights=den)
    g, w = len(y), y / y.sum()
    s = float(w @ w)
    b = (w * w)[:, None] * (np.eye(g) - w[:, None] - w[None, :] + s)
    tr_b, tr_b2 = np.trace(b), np.trace(b @ b)
    se = fit.bse[0] * math.sqrt(s / tr_b * (g - 1) / g)
    half = sps.t.ppf(0.975, tr_b**2 / tr_b2) * se / ratio
    est = paired_ratio(num.tolist(), den.tolist(), groups.tolist() if clustered else None)
    assert est.value == pytest.approx(ratio, rel=1e-12)
    assert est.ci == pytest.approx((ratio * math.exp(-half), ratio * math.exp(half)), rel=1e-9)
    assert (est.pairs, est.clusters) == (20, g)


def test_equal_units_reduce_to_the_paired_delta_method() -> None:
    """Equal denominators: the CR1 variance and t(n - 1), i.e. the textbook delta method for
    ``log(mean x / mean y)`` with the sample covariance."""
    x, y = np.array([3.0, 5.0, 4.0, 7.0, 6.0]), np.array([2.0, 2.0, 2.0, 2.0, 2.0])
    n, r = len(x), x.mean() / y.mean()
    var = x.var(ddof=1) / (n * x.mean() ** 2)  # y has no spread, so no covariance term
    half = sps.t.ppf(0.975, n - 1) * math.sqrt(var)
    est = paired_ratio(x.tolist(), y.tolist())
    assert est.ci == pytest.approx((r * math.exp(-half), r * math.exp(half)), rel=1e-9)


# --- properties and edge cases ---------------------------------------------------------------


def test_ratio_is_scale_equivariant() -> None:
    num, den = [10.0, 14.0, 9.0, 20.0], [4.0, 5.0, 5.0, 6.0]
    base = paired_ratio(num, den)
    scaled = paired_ratio([3 * v for v in num], den)
    assert base.ci is not None and scaled.ci is not None and base.value is not None
    assert scaled.value == pytest.approx(3 * base.value, rel=1e-12)
    assert scaled.ci == pytest.approx((3 * base.ci[0], 3 * base.ci[1]), rel=1e-12)


def test_each_pair_its_own_cluster_is_the_unclustered_figure() -> None:
    num, den = [10.0, 14.0, 9.0, 20.0, 3.0], [4.0, 5.0, 5.0, 6.0, 2.0]
    assert paired_ratio(num, den, list("abcde")).ci == paired_ratio(num, den).ci
    a, b = [True, True, False, True, False], [False, True, False, False, True]
    assert paired_rate_diff(a, b, list("abcde")).ci == pytest.approx(paired_rate_diff(a, b).ci)


@pytest.mark.parametrize(
    ("num", "den", "clusters", "value", "why"),
    [
        pytest.param([], [], None, None, "no pairs", id="no-pairs"),
        pytest.param([1.0, 2.0], [0.0, 0.0], None, None, "denominator is 0", id="zero-den"),
        pytest.param([3.0], [2.0], None, 1.5, "one pair", id="one-pair"),
        pytest.param([3.0, 5.0], [2.0, 4.0], ["f", "f"], 8 / 6, "one fixture", id="one-fixture"),
        pytest.param([2.0, 4.0], [1.0, 2.0], None, 2.0, "same ratio", id="no-spread"),
        pytest.param([0.0, 0.0], [1.0, 2.0], None, 0.0, "numerator is 0", id="zero-num"),
        pytest.param([1.0, 2.0], [3.0, 0.0], None, 1.0, "one unit", id="den-in-one-unit"),
    ],
)
def test_ratio_without_an_interval_says_why(
    num: list[float], den: list[float], clusters: list[str] | None, value: float | None, why: str
) -> None:
    est = paired_ratio(num, den, clusters)
    assert est.ci is None and est.value == value
    assert est.reason is not None and why in est.reason


@pytest.mark.parametrize(
    ("num", "den"),
    [([1.0], [1.0, 2.0]), ([math.nan], [1.0]), ([-1.0], [1.0]), ([True], [1.0]), ([None], [1.0])],
)
def test_ratio_refuses_bad_input(num: list, den: list) -> None:
    with pytest.raises(ValueError):
        paired_ratio(num, den)


def test_ratio_refuses_a_cluster_label_count_that_is_not_one_per_pair() -> None:
    with pytest.raises(ValueError, match="one per pair"):
        paired_ratio([1.0, 2.0], [1.0, 2.0], ["a"])


@pytest.mark.parametrize(
    ("a", "b"), [([1, 0], [True, False]), ([True], [True, False]), ([None], [True])]
)
def test_rate_diff_refuses_bad_input(a: list, b: list) -> None:
    with pytest.raises(ValueError):
        paired_rate_diff(a, b)


@pytest.mark.parametrize("clusters", [None, list("aabbcc")], ids=["pairs", "fixtures"])
@pytest.mark.parametrize(
    ("a", "b"),
    [([True] * 6, [True] * 6), ([False] * 6, [False] * 6), ([True] * 6, [False] * 6)],
    ids=["all-resolved", "none-resolved", "swarm-only"],
)
def test_rate_diff_at_the_boundary_has_a_real_interval(
    a: list[bool], b: list[bool], clusters: list[str] | None
) -> None:
    est = paired_rate_diff(a, b, clusters)
    assert est.ci is not None and est.value is not None
    low, high = est.ci
    assert -1.0 <= low <= est.value <= high <= 1.0 and high - low > 0.05


def test_rate_diff_clusters_widen_and_one_fixture_has_no_interval() -> None:
    a = [True, True, True, False, False, False, True, True, True]
    b = [False, False, False, False, False, False, True, True, False]
    plain = paired_rate_diff(a, b)
    clustered = paired_rate_diff(a, b, list("fffggghhh"))
    assert plain.ci is not None and clustered.ci is not None
    assert clustered.ci[0] <= plain.ci[0] and clustered.ci[1] >= plain.ci[1]
    assert clustered.method == CLUSTERED_DIFF_METHOD
    one = paired_rate_diff(a, b, ["f"] * 9)
    assert one.ci is None and one.value == pytest.approx(4 / 9)
    assert one.reason is not None and "one fixture" in one.reason


def test_rate_diff_is_antisymmetric() -> None:
    a = [True, True, False, True, False, True, True]
    b = [False, True, False, False, True, False, True]
    ab, ba = paired_rate_diff(a, b), paired_rate_diff(b, a)
    assert ab.ci is not None and ba.ci is not None and ab.value is not None
    assert ba.value == pytest.approx(-ab.value)
    assert ba.ci == pytest.approx((-ab.ci[1], -ab.ci[0]))


def test_simulations_run_the_scalar_rules() -> None:
    """The array paths the statistics tier simulates give, replicate by replicate, what
    paired_ratio and paired_rate_diff give."""
    rng = np.random.default_rng(SEED + 1)
    num, den = draw_pairs(rng, 40, 4, 3, 2.0, 0.5, 0.6, "gamma", 0.8, 0.3)
    labels = np.repeat(np.arange(4), 3).tolist()
    _, low, high = ratio_arrays(num.sum(axis=-1), den.sum(axis=-1))
    a, b = paired_outcomes(rng, 40, 4, 3, 0.6, 0.4, 0.5, 0.5)
    d_low, d_high = diff_limits(a, b, clustered=True)
    for r in range(40):
        est = paired_ratio(num[r].ravel().tolist(), den[r].ravel().tolist(), labels)
        assert est.ci == pytest.approx((low[r], high[r]), rel=1e-9)
        diff = paired_rate_diff(a[r].ravel().tolist(), b[r].ravel().tolist(), labels)
        assert diff.ci == pytest.approx((d_low[r], d_high[r]), abs=1e-12)


# --- statistics tier: coverage by simulation --------------------------------------------------

RATIOS = (0.5, 1.0, 3.0)
RHOS = (0.0, 0.5, 0.9)
#: Fixture effects of the clustered grid: (log-sd of a fixture's scale, shared by both arms;
#: log-sd of its own ratio). e^±0.8 is a suite whose fixtures differ 5x in size.
FIXTURE_EFFECTS = ((0.8, 0.25), (0.5, 0.5))


@pytest.mark.statistics
@pytest.mark.slow
@pytest.mark.parametrize("dist", ["lognormal", "gamma"])
@pytest.mark.parametrize("cv", [0.3, 0.6, 1.0])
@pytest.mark.parametrize("n", [5, 10, 30])
def test_ratio_coverage_over_pairs(n: int, cv: float, dist: str) -> None:
    """At least 93% in every cell; the interval always exists (positive values); it narrows
    with more pairs (checked across n in the next test)."""
    for i, (ratio, rho) in enumerate(itertools.product(RATIOS, RHOS)):
        rng = np.random.default_rng([SEED, n, int(cv * 10), i, dist == "gamma"])
        num, den = draw_pairs(rng, REPS, n, 1, ratio, rho, cv, dist)
        coverage, missing, _ = ratio_coverage(num, den, ratio, clustered=False)
        assert coverage >= FLOOR, (ratio, rho, coverage)
        assert missing == 0.0


@pytest.mark.statistics
@pytest.mark.slow
@pytest.mark.parametrize(("fixture_scale", "fixture_ratio"), FIXTURE_EFFECTS)
@pytest.mark.parametrize("trials", [3, 5])
@pytest.mark.parametrize("fixtures", [3, 5, 8])
def test_ratio_coverage_over_fixtures(
    fixtures: int, trials: int, fixture_scale: float, fixture_ratio: float
) -> None:
    """Fixtures as clusters: at least 93% in every cell, always an interval; treating the
    same pairs as independent is over-narrow (the reason ``clusters`` exists)."""
    naive = []
    for i, (ratio, rho) in enumerate(itertools.product(RATIOS, RHOS)):
        rng = np.random.default_rng([SEED, fixtures, trials, int(fixture_ratio * 100), i])
        num, den = draw_pairs(
            rng, REPS, fixtures, trials, ratio, rho, 0.5, "lognormal", fixture_scale, fixture_ratio
        )
        coverage, missing, _ = ratio_coverage(num, den, ratio, clustered=True)
        assert coverage >= FLOOR, (ratio, rho, coverage)
        assert missing == 0.0
        naive.append(ratio_coverage(num, den, ratio, clustered=False)[0])
    assert min(naive) < 0.90


@pytest.mark.statistics
@pytest.mark.slow
def test_ratio_narrows_with_more_pairs_and_rises_with_the_true_ratio() -> None:
    for rho, cv in itertools.product(RHOS, (0.3, 1.0)):
        widths = []
        for n in (5, 10, 30):
            rng = np.random.default_rng([SEED, 7, n, int(rho * 10), int(cv * 10)])
            num, den = draw_pairs(rng, REPS, n, 1, 1.0, rho, cv, "lognormal")
            widths.append(ratio_coverage(num, den, 1.0, clustered=False)[2])
        assert widths[0] > widths[1] > widths[2], (rho, cv, widths)
    # The same draws at a larger true ratio: every estimate and limit larger, so in
    # expectation too.
    rng = np.random.default_rng([SEED, 8])
    num, den = draw_pairs(rng, REPS, 4, 3, 1.0, 0.5, 0.6, "gamma", 0.8, 0.25)
    runs = [ratio_arrays(r * num.sum(axis=-1), den.sum(axis=-1)) for r in RATIOS]
    for lower, higher in itertools.pairwise(runs):
        assert all(np.all(h > lo) for lo, h in zip(lower, higher, strict=True))
        assert higher[0].mean() > lower[0].mean()


RATES = (0.1, 0.5, 0.9)


@pytest.mark.statistics
@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 10, 30])
def test_rate_diff_coverage_over_pairs(n: int) -> None:
    for i, (p_a, p_b, rho) in enumerate(itertools.product(RATES, RATES, RHOS)):
        rng = np.random.default_rng([SEED, 11, n, i])
        a, b = paired_outcomes(rng, REPS, n, 1, p_a, p_b, rho)
        low, high = diff_limits(a, b, clustered=False)
        truth = p_a - p_b
        coverage = float(np.mean((low <= truth + 1e-12) & (truth - 1e-12 <= high)))
        assert coverage >= FLOOR, (p_a, p_b, rho, coverage)


@pytest.mark.statistics
@pytest.mark.slow
@pytest.mark.parametrize("n", [5, 10])
def test_rate_diff_weak_corner_is_as_documented(n: int) -> None:
    """One arm always resolving, the other at 10%: 91-93% (the module doc's weak corner)."""
    rng = np.random.default_rng([SEED, 12, n])
    a, b = paired_outcomes(rng, REPS, n, 1, 1.0, 0.1, 0.5)
    low, high = diff_limits(a, b, clustered=False)
    coverage = float(np.mean((low <= 0.9 + 1e-12) & (high >= 0.9 - 1e-12)))
    assert coverage >= 0.90, coverage


@pytest.mark.statistics
@pytest.mark.slow
@pytest.mark.parametrize("trials", [3, 5])
@pytest.mark.parametrize("fixtures", [3, 5, 8])
def test_rate_diff_coverage_over_fixtures(fixtures: int, trials: int) -> None:
    """A fixture difficulty shared by both arms (sd 0.5 on the latent scale): at least 93%
    with the design effect."""
    for i, (p_a, p_b, rho) in enumerate(itertools.product((0.2, 0.5, 0.8), (0.2, 0.5, 0.8), RHOS)):
        rng = np.random.default_rng([SEED, 13, fixtures, trials, i])
        a, b = paired_outcomes(rng, REPS, fixtures, trials, p_a, p_b, rho, tau=0.5)
        truth = p_a - p_b
        low, high = diff_limits(a, b, clustered=True)
        coverage = float(np.mean((low <= truth + 1e-12) & (truth - 1e-12 <= high)))
        assert coverage >= FLOOR, (p_a, p_b, rho, coverage)


@pytest.mark.statistics
@pytest.mark.slow
def test_rate_diff_narrows_with_more_pairs() -> None:
    for p_a, p_b in ((0.5, 0.5), (0.9, 0.5), (0.1, 0.1)):
        widths = []
        for n in (5, 10, 30):
            rng = np.random.default_rng([SEED, 14, n])
            a, b = paired_outcomes(rng, REPS, n, 1, p_a, p_b, 0.5)
            low, high = diff_limits(a, b, clustered=False)
            widths.append(float(np.median(high - low)))
        assert widths[0] > widths[1] > widths[2], (p_a, p_b, widths)
