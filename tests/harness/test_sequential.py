"""Anytime-valid sequential trials (harness.stats.sequential) against direct implementations.

The mixtures are checked against the integrals that define them (exact rational arithmetic)
and against the martingale identity their validity rests on; the bisection bounds against
brute-force grids and scipy's brentq; the exact operating characteristics against every
outcome sequence. Properties (hypothesis): replay equals incremental updates, the running
interval only shrinks, a decided cell never flips, and more failures never give a better
answer. Heavy checks are marked slow; the property tests run a few examples in the fast
tier and many in the slow one. The simulated operating characteristics are in
``test_sequential_oc.py`` (statistics tier).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, special

from harness.stats import sequential as sq

#: Order of the answers of a compare cell, worst first.
RANK = {"regressed": 0, None: 1, "not-regressed": 2}

#: Hypothesis examples per property: a few in the fast tier, many in the slow one.
EXAMPLES = [
    pytest.param(25, id="fast"),
    pytest.param(300, id="thorough", marks=pytest.mark.slow),
]


# --- exact reference implementations -----------------------------------------------------------


def _integral(s: int, f: int, p: Fraction) -> Fraction:
    """``int_0^p q^s (1 - q)^f dq``, exactly: the binomial expansion of (1 - q)^f."""
    return sum(
        (
            Fraction(math.comb(f, k) * (-1) ** k) * p ** (s + k + 1) / (s + k + 1)
            for k in range(f + 1)
        ),
        Fraction(0),
    )


def _exact_mixture(s: int, n: int, p: Fraction, side: str) -> Fraction:
    """Robbins' uniform-prior mixture of likelihood ratios at null ``p``, exactly.

    ``upper``: the prior uniform on [0, p] (evidence the rate is below p), ``lower``: uniform
    on [p, 1], ``two``: uniform on [0, 1].
    """
    f = n - s
    likelihood = p**s * (1 - p) ** f
    whole = Fraction(math.factorial(s) * math.factorial(f), math.factorial(n + 1))
    if side == "upper":
        mixed = _integral(s, f, p) / p
    elif side == "lower":
        mixed = (whole - _integral(s, f, p)) / (1 - p)
    else:
        mixed = whole
    return mixed / likelihood


def _log(x: Fraction) -> float:
    return math.log(x.numerator) - math.log(x.denominator)


# --- edge cases and input validation -------------------------------------------------------------


def test_no_trials_is_the_whole_unit_interval() -> None:
    assert sq.rate_bounds(0, 0, 0.05) == (0.0, 1.0)
    assert sq.rate_cs(0, 0) == (0.0, 1.0)
    state = sq.start(sq.CellRule())
    assert (state.n, state.lower, state.upper, state.decision) == (0, 0.0, 1.0, None)
    state = sq.start(sq.CellRule(baseline=(9, 12)))
    assert (state.lower, state.upper) == sq.delta_bounds(9, 12, 0, 0, 0.05)
    assert -1.0 <= state.lower < -0.5 and 0.0 < state.upper < 0.7
    assert sq.status(state, sq.CellRule(baseline=(9, 12))) == "running"


@pytest.mark.parametrize("n", [1, 2, 5, 20, 60])
def test_all_successes_and_all_failures(n: int) -> None:
    low, high = sq.rate_bounds(n, n, 0.05)
    assert high == 1.0 and 0.0 < low < 1.0
    low, high = sq.rate_bounds(0, n, 0.05)
    assert low == 0.0 and 0.0 < high < 1.0
    # Symmetry: successes and failures swap the bounds.
    for s in range(n + 1):
        low, high = sq.rate_bounds(s, n, 0.05)
        mirror_low, mirror_high = sq.rate_bounds(n - s, n, 0.05)
        assert low == pytest.approx(1 - mirror_high, abs=1e-12)
        assert high == pytest.approx(1 - mirror_low, abs=1e-12)
    low, high = sq.delta_bounds(n, n, n, n, 0.05)
    assert -1.0 <= low <= 0.0 <= high <= 1.0


def test_all_failures_closed_form() -> None:
    """S = 0 with the uniform prior: M(p) = (1 - (1-p)^(t+1)) / ((t+1) p (1-p)^t); the upper
    bound solves M(p) = 1/alpha (brentq on the closed form)."""
    assert sq.PRIOR == (1.0, 1.0)
    for t, alpha in [(3, 0.05), (9, 0.0125), (40, 0.001)]:
        high = sq.rate_bounds(0, t, alpha)[1]

        def log_m(p: float, t: int = t) -> float:
            return math.log1p(-((1 - p) ** (t + 1))) - math.log((t + 1) * p) - t * math.log1p(-p)

        level = math.log(1 / alpha)
        root = optimize.brentq(lambda p, c=level: log_m(p) - c, 1e-9, 1 - 1e-12, xtol=1e-15)
        assert high == pytest.approx(root, abs=1e-12)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -0.1, 1.5, float("nan"), float("inf"), True, "0.05"])
def test_alpha_outside_the_open_unit_interval_raises(alpha: float) -> None:
    with pytest.raises(ValueError):
        sq.rate_bounds(1, 2, alpha)
    with pytest.raises(ValueError):
        sq.rate_cs(1, 2, alpha)
    with pytest.raises(ValueError):
        sq.delta_bounds(1, 2, 1, 2, alpha)
    with pytest.raises(ValueError):
        sq.CellRule(alpha=alpha)
    with pytest.raises(ValueError):
        sq.cell_alpha(alpha, 2)
    with pytest.raises(ValueError):
        sq.suite_rules([(1, 2)], alpha=alpha)


def test_alpha_near_the_bounds_is_fine() -> None:
    tight = sq.rate_bounds(5, 10, 1e-12)
    loose = sq.rate_bounds(5, 10, 1 - 1e-12)
    assert 0.0 < tight[0] < loose[0] <= 0.5 <= loose[1] < tight[1] < 1.0


@pytest.mark.parametrize("counts", [(-1, 3), (4, 3), (0, -1), (1.0, 3), (True, 3), (1, None)])
def test_impossible_counts_raise(counts: tuple[int, int]) -> None:
    with pytest.raises(ValueError):
        sq.rate_bounds(*counts, 0.05)
    with pytest.raises(ValueError):
        sq.delta_bounds(*counts, 1, 2, 0.05)
    with pytest.raises(ValueError):
        sq.delta_bounds(1, 2, *counts, 0.05)
    with pytest.raises(ValueError):
        sq.CellRule(baseline=counts)


def test_baseline_without_trials_raises() -> None:
    with pytest.raises(ValueError):
        sq.delta_bounds(0, 0, 1, 2, 0.05)
    with pytest.raises(ValueError):
        sq.delta_table(0, 0, 5, 0.05)
    with pytest.raises(ValueError):
        sq.CellRule(baseline=(0, 0))
    with pytest.raises(ValueError):
        sq.suite_rules([(0, 0)])


@pytest.mark.parametrize("outcome", [None, 0, 1, 0.0, 1.0, float("nan"), "fail", "True"])
def test_outcomes_must_be_bools(outcome: object) -> None:
    rule = sq.CellRule(baseline=(3, 4))
    with pytest.raises(ValueError):
        sq.update(sq.start(rule), outcome, rule)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        sq.replay([True, outcome], rule)  # type: ignore[list-item]
    # numpy bools (a simulation's outcomes) are bools.
    assert sq.update(sq.start(rule), np.bool_(True), rule).successes == 1  # type: ignore[arg-type]


def test_rule_validation() -> None:
    for bad in [
        {"min_trials": 0},
        {"min_trials": 5, "max_trials": 4},
        {"threshold": -0.1},
        {"threshold": 1.5},
        {"precision": 1.5},
        {"precision": float("inf")},
        {"margin": -0.01},
        {"margin": float("nan")},
        {"threshold": float("nan")},
    ]:
        with pytest.raises(ValueError):
            sq.CellRule(**bad)  # type: ignore[arg-type]
    assert sq.CellRule(threshold=0.1).regression_margin == 0.1
    assert sq.CellRule(threshold=0.1, margin=0.0).regression_margin == 0.0
    assert sq.CellRule(baseline=(3, 4), alpha=0.02).side_alpha == pytest.approx(0.02)
    assert sq.CellRule(alpha=0.02).side_alpha == pytest.approx(0.01)
    assert sq.CellRule(baseline=(3, 4)).compares and not sq.CellRule().compares


def test_other_entry_points_validate() -> None:
    rule = sq.CellRule(baseline=(3, 4))
    with pytest.raises(ValueError):
        sq.wants_more(sq.start(rule), rule, in_flight=-1)
    with pytest.raises(ValueError):
        sq.bounds_table(-1, 0.05)
    with pytest.raises(ValueError):
        sq.operating_characteristics(0.5, sq.CellRule())  # a rate cell: nothing to compare
    for rate in (-0.1, 1.1, float("nan")):
        with pytest.raises(ValueError):
            sq.operating_characteristics(rate, rule)
    with pytest.raises(ValueError):
        sq._log_mixture(1, 2, 0.5, "sideways")  # type: ignore[arg-type]


# --- the mixtures against their definitions -------------------------------------------------------


@pytest.mark.parametrize(
    "s,n,p",
    [
        (0, 1, "1/2"),
        (3, 10, "1/10"),
        (8, 10, "3/5"),
        (15, 20, "1/2"),
        (1, 30, "1/100"),
        (37, 40, "19/20"),
        (0, 40, "3/4"),
        (40, 40, "1/3"),
        (12, 25, "7/9"),
    ],
)
def test_mixture_equals_the_integral_it_defines(s: int, n: int, p: str) -> None:
    """log M(p) against the beta-binomial integral in exact rational arithmetic, each side."""
    q = Fraction(p)
    for side in ("upper", "lower", "two"):
        ours = float(sq._log_mixture(s, n, float(q), side))
        assert ours == pytest.approx(_log(_exact_mixture(s, n, q, side)), rel=1e-10, abs=1e-10)


def test_mixture_with_another_prior_equals_quadrature() -> None:
    """A non-uniform prior (the code takes any Beta(a, b)) against scipy's quad of the
    truncated prior density times the likelihood ratio."""
    for (a, b), s, n, p in [
        ((0.5, 0.5), 3, 10, 0.4),
        ((2.0, 1.0), 12, 20, 0.7),
        ((1.0, 3.0), 1, 8, 0.2),
    ]:
        f = n - s

        def ratio(q: float, s: int = s, f: int = f, p: float = p) -> float:
            return float((q / p) ** s * ((1 - q) / (1 - p)) ** f)

        def density(q: float, a: float = a, b: float = b) -> float:
            return float(q ** (a - 1) * (1 - q) ** (b - 1) / special.beta(a, b))

        below = integrate.quad(lambda q: ratio(q) * density(q), 0, p)[0] / special.betainc(a, b, p)
        above = integrate.quad(lambda q: ratio(q) * density(q), p, 1)[0] / special.betaincc(a, b, p)
        both = integrate.quad(lambda q: ratio(q) * density(q), 0, 1)[0]
        for side, expected in (("upper", below), ("lower", above), ("two", both)):
            ours = float(sq._log_mixture(s, n, p, side, (a, b)))  # type: ignore[arg-type]
            assert ours == pytest.approx(math.log(expected), abs=1e-8)


@pytest.mark.parametrize("p", [0.03, 0.3, 0.5, 0.77, 0.95])
def test_mixtures_are_martingales(p: float) -> None:
    """What validity rests on: M_0 = 1 and E_p[M_{n+1} | S_n] = M_n, for both one-sided
    mixtures, every count up to 40 trials."""
    for side in ("upper", "lower"):
        assert float(sq._log_mixture(0, 0, p, side)) == pytest.approx(0.0, abs=1e-14)
        for n in range(40):
            s = np.arange(n + 1)
            now = sq._log_mixture(s, n, p, side)
            win = sq._log_mixture(s + 1, n + 1, p, side)
            lose = sq._log_mixture(s, n + 1, p, side)
            expected = np.logaddexp(math.log(p) + win, math.log1p(-p) + lose)
            assert np.allclose(expected, now, atol=1e-9), (side, n)


def test_baseline_evidence_has_expectation_one() -> None:
    """The finished baseline enters as an e-value: its mixture averages to exactly 1 under
    its null rate, whatever n_b."""
    for n_b in (1, 12, 40):
        for p in (0.1, 0.5, 0.9):
            weights = (
                special.binom(n_b, np.arange(n_b + 1))
                * p ** np.arange(n_b + 1)
                * (1 - p) ** (n_b - np.arange(n_b + 1))
            )
            for side in ("upper", "lower"):
                values = np.exp(sq._log_mixture(np.arange(n_b + 1), n_b, p, side))
                assert float(np.sum(weights * values)) == pytest.approx(1.0, abs=1e-10)


def test_far_side_floor_is_a_lower_bound() -> None:
    """Below S/n the evidence M-(p) is replaced by log(a/(a+S)): below the exact value
    wherever that is computed stably (n <= 60)."""
    grid = np.linspace(0.0, 1.0, 401)[1:-1]
    for n in range(1, 61):
        s = np.arange(n + 1)[:, None]
        exact = sq._log_mixture(s, n, grid[None, :], "upper")
        floor = np.log(sq.PRIOR[0] / (sq.PRIOR[0] + s))
        far = grid[None, :] < s / n
        ok = np.isfinite(exact) & far
        assert np.all(exact[ok] >= np.broadcast_to(floor, exact.shape)[ok] - 1e-9), n


# --- the rate bounds -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "s,n,alpha", [(0, 6, "1/20"), (3, 10, "1/40"), (17, 20, "1/20"), (20, 20, "1/100")]
)
def test_rate_bounds_against_an_exact_brute_force_grid(s: int, n: int, alpha: str) -> None:
    """Every grid point p = j/1000 is in or out of the one-sided set {p : M(p) < 1/alpha}
    by exact rational arithmetic; the bounds separate the two to within the grid's step."""
    level = 1 / Fraction(alpha)
    low, high = sq.rate_bounds(s, n, float(Fraction(alpha)))
    for j in range(1, 1000):
        p = Fraction(j, 1000)
        kept_above = _exact_mixture(s, n, p, "upper") < level or p <= Fraction(s, n)
        kept_below = _exact_mixture(s, n, p, "lower") < level or p >= Fraction(s, n)
        if float(p) < high - 1e-12:
            assert kept_above, (j, high)
        elif float(p) > high + 1e-12:
            assert not kept_above, (j, high)
        if float(p) > low + 1e-12:
            assert kept_below, (j, low)
        elif float(p) < low - 1e-12:
            assert not kept_below, (j, low)


def test_each_bound_sits_on_the_mixture_threshold() -> None:
    """Bisection result against scipy's brentq on the same log-mixture."""
    for s, n, alpha in [(1, 4, 0.05), (7, 20, 0.0125), (33, 40, 0.025), (150, 300, 0.01)]:
        low, high = sq.rate_bounds(s, n, alpha)
        level = math.log(1 / alpha)

        def up(p: float, s: int = s, n: int = n, level: float = level) -> float:
            return float(sq._log_mixture(s, n, p, "upper")) - level

        def down(p: float, s: int = s, n: int = n, level: float = level) -> float:
            return float(sq._log_mixture(s, n, p, "lower")) - level

        assert high == pytest.approx(optimize.brentq(up, s / n, 1 - 1e-13, xtol=1e-15), abs=1e-11)
        assert low == pytest.approx(optimize.brentq(down, 1e-13, s / n, xtol=1e-15), abs=1e-11)
        # Rounded outwards: the reported bound is never inside the set.
        assert up(high) >= 0 > up(high - 1e-9) and down(low) >= 0 > down(low + 1e-9)


def test_bounds_contain_the_empirical_rate_and_grow_with_successes() -> None:
    for alpha in (0.0125, 0.05, 0.3):
        lower, upper = sq.bounds_table(40, alpha)
        for n in range(1, 41):
            s = np.arange(n + 1)
            assert np.all(lower[n, s] <= s / n) and np.all(s / n <= upper[n, s])
            inner = s[(s > 0) & (s < n)]
            assert np.all(lower[n, inner] < inner / n) and np.all(inner / n < upper[n, inner])
            assert np.all(np.diff(lower[n, s]) > 0) and np.all(np.diff(upper[n, s]) > 0)
        assert np.isnan(lower[3, 4]) and np.isnan(upper[3, 4])


def test_smaller_alpha_gives_wider_bounds() -> None:
    for s, n in [(0, 5), (3, 10), (17, 20), (40, 40)]:
        wide, narrow = sq.rate_bounds(s, n, 0.01), sq.rate_bounds(s, n, 0.1)
        assert wide[0] <= narrow[0] and narrow[1] <= wide[1]
        two = sq.rate_cs(s, n, 0.1)
        assert two == sq.rate_bounds(s, n, 0.05)


def test_table_equals_scalar_bounds() -> None:
    lower, upper = sq.bounds_table(30, 0.025)
    for n, s in [(1, 0), (7, 3), (30, 30), (30, 12)]:
        # Equal to the last bits (array and scalar numpy loops may differ by an ulp).
        assert (lower[n, s], upper[n, s]) == pytest.approx(sq.rate_bounds(s, n, 0.025), abs=1e-14)
    with pytest.raises(ValueError):
        lower[1, 0] = 0.5  # read-only: shared by every caller of the cache


@pytest.mark.slow
def test_confidence_sets_are_intervals_up_to_300_trials() -> None:
    """The bisection assumes each one-sided set {p : M(p) < 1/alpha} is an interval: the
    log-mixture rises on [S/n, 1) (upper) and falls on (0, S/n] (lower). Checked on a grid;
    the same monotonicity makes the delta bounds' cell-wise minima rigorous."""
    grid = np.linspace(0.0, 1.0, 151)[1:-1]
    for n in range(1, 301, 3):
        s = np.arange(n + 1)[:, None]
        phat = s / n
        for side, region in (("upper", grid[None, :] >= phat), ("lower", grid[None, :] <= phat)):
            values = sq._log_mixture(s, n, grid[None, :], side)  # type: ignore[arg-type]
            values = np.where(region, values, np.nan)
            steps = np.diff(values, axis=1)
            steps = steps[~np.isnan(steps)]
            if side == "upper":
                assert np.all(steps >= -1e-9), n
            else:
                assert np.all(steps <= 1e-9), n


def _first_passage_miss(upper: np.ndarray, p: float, horizon: int, line: float) -> float:
    """P_p(upper[n, S_n] < line for some n <= horizon), exactly (dynamic programme)."""
    mass, missed = np.zeros(horizon + 1), 0.0
    mass[0] = 1.0
    for n in range(1, horizon + 1):
        mass = mass * (1 - p) + np.concatenate(([0.0], mass[:-1])) * p
        miss = upper[n, : n + 1] < line
        missed += mass[: n + 1][miss].sum()
        mass[: n + 1][miss] = 0.0
    return float(missed)


@pytest.mark.parametrize(
    "p,horizon",
    [
        (0.1, 60),
        (0.5, 60),
        (0.9, 60),
        pytest.param(0.02, 200, marks=pytest.mark.slow),
        pytest.param(0.3, 200, marks=pytest.mark.slow),
        pytest.param(0.77, 200, marks=pytest.mark.slow),
        pytest.param(0.97, 200, marks=pytest.mark.slow),
    ],
)
def test_rate_bound_time_uniform_error_exact(p: float, horizon: int) -> None:
    """Ville in numbers: P_p(U_n < p for some n <= horizon) <= alpha, exactly, and the
    lower bound by symmetry."""
    alpha = 0.05
    _, upper = sq.bounds_table(horizon, alpha)
    assert _first_passage_miss(upper, p, horizon, p) <= alpha
    assert _first_passage_miss(upper, 1 - p, horizon, 1 - p) <= alpha  # = the lower bound's


# --- the rate difference ---------------------------------------------------------------------------


def test_delta_bounds_are_outward_roundings_of_the_fine_infimum() -> None:
    """U against a brute-force infimum of the product over p_c - p_b >= d on a 20x finer
    grid (not rigorous, but close): every difference above U is excluded, and U is at most
    two grid steps wider than needed. L by the mirror image."""
    fine = np.linspace(0.0, 1.0, 40_001)[1:-1]
    a, b = sq.PRIOR
    for base, base_n, s, n, alpha in [
        (11, 12, 0, 5, 0.025),
        (15, 20, 8, 20, 0.05),
        (6, 12, 6, 12, 0.01),
        (40, 40, 30, 40, 0.05),
        (3, 12, 0, 0, 0.05),
    ]:
        low, high = sq.delta_bounds(base, base_n, s, n, alpha)
        level = math.log(1 / alpha)
        # Exact evidence where it is finite; where the far side underflows, its floor.
        e_base = sq._log_mixture(base, base_n, fine, "lower")  # evidence p_b is higher
        e_base = np.where(np.isfinite(e_base), e_base, math.log(b / (b + base_n - base)))

        def rejected(
            d: float, s: int = s, n: int = n, e_base: np.ndarray = e_base, level: float = level
        ) -> bool:
            keep = fine + d <= 1.0
            p_c = np.clip(fine + d, 1e-12, 1.0)
            e_cand = sq._log_mixture(s, n, p_c, "upper")
            e_cand = np.where(np.isfinite(e_cand), e_cand, math.log(a / (a + s)))
            total = np.where(keep, e_base + e_cand, np.inf)
            return bool(np.min(total) >= level)

        assert high >= 1.0 or rejected(high + 1e-9)  # valid: beyond U all is excluded
        assert not rejected(high - 2 / sq.GRID)  # tight: within two grid steps
        assert low <= high
        assert sq.delta_bounds(base_n - base, base_n, n - s, n, alpha) == pytest.approx(
            (-high, -low)
        )


def test_delta_bounds_monotone_and_on_the_grid() -> None:
    for base, base_n in [(0, 5), (9, 12), (12, 12)]:
        lower, upper = sq.delta_table(base, base_n, 15, 0.025)
        for n in range(16):
            s = np.arange(n + 1)
            assert np.all(np.diff(lower[n, s]) >= 0) and np.all(np.diff(upper[n, s]) >= 0)
            assert np.all(lower[n, s] <= upper[n, s])
            assert np.allclose(np.round(upper[n, s] * sq.GRID), upper[n, s] * sq.GRID)
            assert np.allclose(np.round(lower[n, s] * sq.GRID), lower[n, s] * sq.GRID)
            assert np.all(lower[n, s] >= -1.0) and np.all(upper[n, s] <= 1.0)
            assert (lower[n, n], upper[n, n]) == sq.delta_bounds(base, base_n, n, n, 0.025)
        # A better baseline lowers both bounds on p_c - p_b.
        better = sq.delta_table(min(base + 1, base_n), base_n, 15, 0.025)
        assert np.all(np.nan_to_num(better[0]) <= np.nan_to_num(lower) + 1e-12)
        assert np.all(np.nan_to_num(better[1]) <= np.nan_to_num(upper) + 1e-12)
        with pytest.raises(ValueError):
            upper[1, 0] = 0.0  # read-only: cached


@pytest.mark.parametrize(
    "p,base_n,horizon",
    [
        (0.8, 5, 15),
        pytest.param(0.05, 12, 60, marks=pytest.mark.slow),
        pytest.param(0.3, 12, 60, marks=pytest.mark.slow),
        pytest.param(0.5, 12, 60, marks=pytest.mark.slow),
        pytest.param(0.8, 12, 60, marks=pytest.mark.slow),
        pytest.param(0.95, 12, 60, marks=pytest.mark.slow),
    ],
)
def test_difference_time_uniform_error_exact(p: float, base_n: int, horizon: int) -> None:
    """A/A, exactly: P(U_delta < 0 at some n <= horizon) <= alpha, averaged over the
    baseline's binomial count, by a dynamic programme over the candidate's successes."""
    alpha = 0.05
    weights = np.diff(special.bdtr(np.arange(base_n + 1), base_n, p), prepend=0.0)
    total = 0.0
    for base, w in enumerate(weights):
        _, upper = sq.delta_table(base, base_n, horizon, alpha)
        total += w * _first_passage_miss(upper, p, horizon, 0.0)
    assert total <= alpha


# --- one cell: properties ---------------------------------------------------------------------------

ALPHAS = st.sampled_from([0.02, 0.1, 0.5])  # few values, so the bound cache is reused


@st.composite
def rules(draw: st.DrawFn) -> sq.CellRule:
    n_b = draw(st.integers(1, 30))
    x_b = draw(st.integers(0, n_b))
    return sq.CellRule(
        baseline=(x_b, n_b),
        threshold=draw(st.sampled_from([0.0, 0.05, 0.2, 0.5])),
        margin=draw(st.sampled_from([None, 0.0, 0.1, 0.3])),
        alpha=draw(ALPHAS),
        min_trials=draw(st.integers(1, 4)),
        max_trials=draw(st.integers(4, 30)),
    )


outcome_lists = st.lists(st.booleans(), max_size=30)
#: Trials that finish after the cell has stopped launching: a few.
in_flight_lists = st.lists(st.booleans(), max_size=10)


@pytest.mark.parametrize("examples", EXAMPLES)
def test_replay_equals_incremental_updates(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(rule=rules(), outcomes=outcome_lists)
    def check(rule: sq.CellRule, outcomes: list[bool]) -> None:
        state = sq.start(rule)
        for outcome in outcomes:
            state = sq.update(state, outcome, rule)
        assert sq.replay(outcomes, rule) == state
        assert sq.replay(iter(outcomes), rule) == state  # any iterable
        assert state.n == len(outcomes) and state.successes == sum(outcomes)
        # Resume: replay a prefix, then update with the rest.
        half = len(outcomes) // 2
        resumed = sq.replay(outcomes[:half], rule)
        for outcome in outcomes[half:]:
            resumed = sq.update(resumed, outcome, rule)
        assert resumed == state

    check()


@pytest.mark.parametrize("examples", EXAMPLES)
def test_running_intersection_is_nested(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(rule=rules(), outcomes=outcome_lists)
    def check(rule: sq.CellRule, outcomes: list[bool]) -> None:
        state = sq.start(rule)
        for outcome in outcomes:
            nxt = sq.update(state, outcome, rule)
            assert nxt.lower >= state.lower and nxt.upper <= state.upper
            low, high = sq._interval(nxt.successes, nxt.n, rule)
            assert nxt.lower >= low and nxt.upper <= high
            state = nxt

    check()


@pytest.mark.parametrize("examples", EXAMPLES)
def test_a_decided_cell_never_flips(examples: int) -> None:
    """Once decided, later trials (in-flight items finishing) change the counts and the
    interval, never the decision nor when it was made, and no more trials are launched."""

    @settings(max_examples=examples, deadline=None)
    @given(rule=rules(), outcomes=outcome_lists, more=in_flight_lists)
    def check(rule: sq.CellRule, outcomes: list[bool], more: list[bool]) -> None:
        state = sq.replay(outcomes, rule)
        later = sq.replay(outcomes + more, rule)
        if state.decision is not None:
            assert (later.decision, later.decided_at) == (state.decision, state.decided_at)
            assert sq.status(later, rule) == state.decision
            assert not sq.wants_more(later, rule) and not sq.wants_more(state, rule)
        if later.decision is not None:
            # It was decided at decided_at and not a trial before.
            assert later.decided_at is not None and rule.min_trials <= later.decided_at
            prefix = (outcomes + more)[: later.decided_at]
            assert sq.replay(prefix, rule).decision == later.decision
            assert sq.replay(prefix[:-1], rule).decision is None

    check()


@pytest.mark.parametrize("examples", EXAMPLES)
def test_more_successes_never_give_a_worse_answer(examples: int) -> None:
    """Flip some failures to successes (same history): the answer is never worse
    (regressed < undecided < not-regressed) and the bounds never lower. Equivalently, more
    failures never make "not-regressed" more likely and never un-regress a cell."""

    @settings(max_examples=examples, deadline=None)
    @given(rule=rules(), outcomes=outcome_lists, data=st.data())
    def check(rule: sq.CellRule, outcomes: list[bool], data: st.DataObject) -> None:
        flips = data.draw(st.lists(st.booleans(), min_size=len(outcomes), max_size=len(outcomes)))
        better = [o or f for o, f in zip(outcomes, flips, strict=True)]
        worse_state, better_state = sq.replay(outcomes, rule), sq.replay(better, rule)
        assert RANK[better_state.decision] >= RANK[worse_state.decision]
        assert better_state.lower >= worse_state.lower
        assert better_state.upper >= worse_state.upper

    check()


@pytest.mark.parametrize("examples", EXAMPLES)
def test_a_failure_never_helps(examples: int) -> None:
    @settings(max_examples=examples, deadline=None)
    @given(rule=rules(), outcomes=outcome_lists)
    def check(rule: sq.CellRule, outcomes: list[bool]) -> None:
        state = sq.replay(outcomes, rule)
        after_fail, after_win = sq.update(state, False, rule), sq.update(state, True, rule)
        assert RANK[after_fail.decision] <= RANK[after_win.decision]
        if state.decision == "regressed":  # never un-regressed
            assert after_fail.decision == after_win.decision == "regressed"
        if after_win.decision == "regressed":
            assert after_fail.decision == "regressed"
        if after_fail.decision == "not-regressed":
            assert after_win.decision == "not-regressed"

    check()


# --- one cell: examples -------------------------------------------------------------------------------


def test_outcome_order_does_not_change_the_bounds_at_a_count() -> None:
    rule = sq.CellRule(baseline=(10, 12), alpha=0.025)
    expected = sq._interval(3, 8, rule)
    for perm in [[True] * 3 + [False] * 5, [False] * 5 + [True] * 3]:
        state = sq.replay(perm, rule)
        assert (state.n, state.successes) == (8, 3)
        assert sq._interval(state.successes, state.n, rule) == expected


def test_min_trials_delays_decisions() -> None:
    rule = sq.CellRule(baseline=(12, 12), alpha=0.5, min_trials=6)
    assert sq.replay([False] * 5, rule).decision is None
    early = sq.replay([False] * 5, sq.CellRule(baseline=(12, 12), alpha=0.5, min_trials=1))
    assert early.decision == "regressed" and early.decided_at is not None and early.decided_at < 6
    assert sq.replay([False] * 6, rule).decided_at == 6


def test_collapse_is_flagged_early_and_stays_flagged() -> None:
    rule = sq.CellRule(baseline=(11, 12), alpha=sq.cell_alpha(0.05, 2))
    state = sq.replay([False] * 5, rule)
    assert state.decision == "regressed" and state.decided_at is not None
    assert state.decided_at <= 5 and not sq.wants_more(state, rule)
    # Items that were in flight finish as successes: counts and bounds move, the
    # decision and its trial count do not.
    later = sq.replay([False] * 5 + [True] * 10, rule)
    assert (later.n, later.successes) == (15, 10)
    assert (later.decision, later.decided_at) == ("regressed", state.decided_at)
    assert later.lower >= state.lower and later.upper <= state.upper


def test_not_regressed_when_the_threshold_is_wide() -> None:
    rule = sq.CellRule(baseline=(6, 12), threshold=0.6, alpha=0.05, max_trials=20)
    state = sq.replay([True] * 20, rule)
    assert state.decision == "not-regressed" and sq.status(state, rule) == "not-regressed"
    assert state.lower > -0.6


def test_precision_mode() -> None:
    rule = sq.CellRule(precision=0.1, max_trials=60)
    state = sq.replay([True] * 60, rule)
    assert state.decision == "precise" and state.decided_at is not None
    low, high = sq.rate_cs(state.decided_at, state.decided_at, rule.alpha)
    assert (high - low) / 2 <= 0.1
    low, high = sq.rate_cs(state.decided_at - 1, state.decided_at - 1, rule.alpha)
    assert (high - low) / 2 > 0.1
    half = sq.replay([True, False] * 10, rule)
    assert half.decision is None and sq.status(half, sq.CellRule(max_trials=20)) == "cap"
    assert sq.status(half, rule) == "running" and sq.wants_more(half, rule)
    assert not sq.wants_more(half, rule, in_flight=40)


def test_status_and_in_flight_trials() -> None:
    rule = sq.CellRule(baseline=(11, 12), max_trials=10, alpha=0.025)
    state = sq.replay([True] * 8, rule)
    assert sq.status(state, rule) == "running"
    assert sq.wants_more(state, rule, in_flight=1) and not sq.wants_more(state, rule, in_flight=2)
    capped = sq.replay([True] * 10, rule)
    assert sq.status(capped, rule) == "cap" and not sq.wants_more(capped, rule)
    extra = sq.update(sq.update(capped, True, rule), True, rule)  # in-flight items still count
    assert extra.n == 12 and extra.upper <= capped.upper and sq.status(extra, rule) == "cap"


def test_drifting_rate_can_empty_the_interval() -> None:
    """A rate cell whose agent changes mid-run: all successes, then all failures. The running
    intersection becomes empty, which ``empty`` reports and which is never "precise"."""
    rule = sq.CellRule(precision=0.0, max_trials=400)
    state = sq.replay([True] * 20 + [False] * 80, rule)
    assert state.empty and state.decision is None


# --- exact operating characteristics ----------------------------------------------------------------


def _enumerate(rule: sq.CellRule, p: float) -> tuple[dict[str | None, float], float]:
    """Chances of each decision and the mean trials over every outcome sequence (replay)."""
    cap = rule.max_trials
    totals: dict[str | None, float] = {"regressed": 0.0, "not-regressed": 0.0, None: 0.0}
    trials = 0.0
    for seq in itertools.product([False, True], repeat=cap):
        weight = p ** sum(seq) * (1 - p) ** (cap - sum(seq))
        state = sq.replay(list(seq), rule)
        totals[state.decision] += weight
        trials += weight * (state.decided_at or cap)
    return totals, trials


@pytest.mark.parametrize(
    "rule,p",
    [
        (sq.CellRule(baseline=(11, 12), alpha=0.4, max_trials=10), 0.3),
        (
            sq.CellRule(
                baseline=(6, 8), alpha=0.9, threshold=0.3, margin=0.0, min_trials=3, max_trials=9
            ),
            0.5,
        ),
        (sq.CellRule(baseline=(20, 20), alpha=0.6, threshold=0.1, min_trials=1, max_trials=8), 0.9),
        (sq.CellRule(baseline=(9, 12), alpha=0.5, threshold=0.3, margin=0.1, max_trials=10), 0.6),
    ],
)
def test_operating_characteristics_equal_enumeration(rule: sq.CellRule, p: float) -> None:
    """The dynamic programme against every one of the 2**cap outcome sequences."""
    totals, trials = _enumerate(rule, p)
    oc = sq.operating_characteristics(p, rule)
    assert oc.p_regressed == pytest.approx(totals["regressed"], abs=1e-12)
    assert oc.p_not_regressed == pytest.approx(totals["not-regressed"], abs=1e-12)
    assert oc.p_cap == pytest.approx(totals[None], abs=1e-12)
    assert oc.expected_trials == pytest.approx(trials, abs=1e-9)
    assert oc.p_regressed + oc.p_not_regressed + oc.p_cap == pytest.approx(1.0, abs=1e-12)
    assert totals["regressed"] + totals["not-regressed"] > 0.01  # the test exercises decisions


def test_operating_characteristics_include_the_baseline_alone() -> None:
    rule = sq.CellRule(baseline=(0, 100), min_trials=1, max_trials=6)
    assert sq.start(rule).lower > -rule.threshold  # the baseline alone already excludes it
    totals, trials = _enumerate(rule, 0.5)
    assert totals["not-regressed"] == 1.0 and trials == 1.0  # replay decides at the first trial
    oc = sq.operating_characteristics(0.5, rule)
    assert oc.p_not_regressed == pytest.approx(1.0)  # the programme says 0.984375
    assert oc.expected_trials == pytest.approx(1.0)  # and 1.96875


def test_decisions_are_monotone_in_the_rates() -> None:
    """Exact: a better candidate is never more often "regressed" nor less often
    "not-regressed"; a better baseline makes "regressed" more likely."""
    rule = sq.CellRule(baseline=(6, 8), alpha=0.05, threshold=0.3, margin=0.1, max_trials=12)
    ocs = [sq.operating_characteristics(p, rule) for p in np.linspace(0.0, 1.0, 11)]
    regressed = [oc.p_regressed for oc in ocs]
    not_regressed = [oc.p_not_regressed for oc in ocs]
    assert all(a >= b - 1e-12 for a, b in itertools.pairwise(regressed))
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(not_regressed))
    assert regressed[0] > 0.99 and not_regressed[-1] > 0.99
    by_baseline = [
        sq.operating_characteristics(0.3, sq.CellRule(baseline=(x, 8), max_trials=12)).p_regressed
        for x in range(9)
    ]
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(by_baseline))
    assert by_baseline[0] == 0.0 and by_baseline[-1] > 0.5


def test_operating_characteristics_count_in_flight_trials() -> None:
    """Raising max_trials by the trials in flight only adds chances to decide."""
    rule = sq.CellRule(baseline=(10, 12), max_trials=10)
    wider = sq.CellRule(baseline=(10, 12), max_trials=12)
    for p in (0.3, 0.8):
        now, later = sq.operating_characteristics(p, rule), sq.operating_characteristics(p, wider)
        assert later.p_regressed >= now.p_regressed - 1e-15
        assert later.p_not_regressed >= now.p_not_regressed - 1e-15
        assert now.expected_trials <= later.expected_trials <= now.expected_trials + 2


# --- the suite -----------------------------------------------------------------------------------------


def test_cell_alpha_and_suite_rules() -> None:
    assert sq.cell_alpha(0.05, 5) == pytest.approx(0.01)
    with pytest.raises(ValueError):
        sq.cell_alpha(0.05, 0)
    rules_ = sq.suite_rules([(10, 12), None, (3, 4)], alpha=0.05, max_trials=40, margin=0.0)
    assert [r.alpha for r in rules_] == pytest.approx([0.025, 0.05, 0.025])
    assert all(r.max_trials == 40 and r.regression_margin == 0.0 for r in rules_)
    assert [r.baseline for r in rules_] == [(10, 12), None, (3, 4)]
    assert [r.alpha for r in sq.suite_rules([None, None])] == [0.05, 0.05]
    assert sq.suite_rules([]) == ()


def test_overall_decision() -> None:
    base = sq.CellRule(baseline=(12, 12), alpha=0.025, max_trials=10)
    rate = sq.CellRule(max_trials=10)
    regressed = sq.replay([False] * 10, base)
    running = sq.replay([True] * 3, base)
    capped = sq.replay([True] * 10, base)
    assert regressed.decision == "regressed"
    assert sq.overall_decision([(regressed, base), (running, base)]) == "regressed"
    assert sq.overall_decision([(capped, base), (running, base)]) == "running"
    assert sq.overall_decision([(capped, base), (capped, base)]) == "cap"
    easy = sq.CellRule(baseline=(1, 2), threshold=1.0, alpha=0.025, max_trials=10)
    fine = sq.replay([True] * 2, easy)
    assert fine.decision == "not-regressed"
    assert sq.overall_decision([(fine, easy), (fine, easy)]) == "not-regressed"
    assert sq.overall_decision([(fine, easy), (capped, base)]) == "cap"
    assert sq.overall_decision([(fine, easy), (regressed, base)]) == "regressed"
    # Rate cells do not vote when compare cells exist.
    assert (
        sq.overall_decision([(fine, easy), (sq.replay([True, False], rate), rate)])
        == "not-regressed"
    )
    wide = sq.CellRule(precision=0.5, max_trials=10)
    precise = sq.replay([True] * 10, wide)
    assert precise.decision == "precise"
    assert sq.overall_decision([(precise, wide)]) == "precise"
    assert sq.overall_decision([(precise, wide), (sq.replay([True], wide), wide)]) == "running"
    assert sq.overall_decision([(precise, wide), (sq.replay([True] * 10, rate), rate)]) == "cap"
    with pytest.raises(ValueError):
        sq.overall_decision([])


def test_fixed_trials_for_same_power() -> None:
    assert sq.fixed_trials_for_same_power(0.5, lambda n: min(1.0, n / 100)) == 50
    assert sq.fixed_trials_for_same_power(0.9, lambda n: 0.1, max_n=64) is None
    assert sq.fixed_trials_for_same_power(0.01, lambda n: 1.0) == 1
    for bad in (0.0, -0.5, 1.5):
        with pytest.raises(ValueError):
            sq.fixed_trials_for_same_power(bad, lambda n: 1.0)
