"""Operating characteristics of ``--trials auto`` (statistics tier).

Exact figures come from ``harness.stats.sequential.operating_characteristics`` (a dynamic
programme on the bound tables ``update`` reads), averaged over the baseline's binomial count
by ``benchmarks/bench_sequential.py``'s helpers; the simulation feeds seeded outcomes one by
one through ``start``/``update``/``wants_more`` (the real decision functions, not the
programme) and must agree with it within 4 Monte Carlo standard errors.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from benchkit import load_benchmark

from harness.stats import sequential as sq

pytestmark = [pytest.mark.statistics, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
ALPHA = sq.DEFAULT_ALPHA
#: Trials launched before the cell stopped that finish after the cap and may still decide.
IN_FLIGHT = 2
#: Simulated suites per case. With the check at 4 standard errors, a real discrepancy between
#: update() and the programme of DETECTABLE is caught with >= 95% probability at any share
#: (the worst, 0.5, included): see test_the_simulation_resolves_what_it_must.
RUNS = 10_000
DETECTABLE = 0.03
SEED = 20240611


bench = load_benchmark("bench_sequential")


def _within(simulated: float, exact: float, se: float, what: str) -> None:
    assert abs(simulated - exact) <= 4 * se, f"{what}: simulated {simulated}, exact {exact}"


# --- validity, exactly ---------------------------------------------------------------------


#: Exact, so no Monte Carlo error to size: the grid is sized by where the worst case lies.
#: Every Bonferroni split (1, 2, 3, 5 fixtures) at the caps 10 and 20; at cap 40, whose bound
#: tables cost about 20 s a split here, the two that come closest to alpha. Measured over the
#: whole 4 x 3 grid (the suite's worst false "regressed"): cap 40 gave 0.01293, 0.01295,
#: 0.00996, 0.01022 for 1, 2, 3, 5 fixtures (the split lowers each cell's alpha faster than
#: the union bound adds them up), caps 10 and 20 at most 0.01292.
AA_GRID = [*itertools.product((1, 2, 3, 5), (10, 20)), (1, 40), (2, 40)]


@pytest.mark.parametrize(("fixtures", "cap"), AA_GRID)
def test_aa_false_regressed_at_most_alpha_with_in_flight_trials(fixtures: int, cap: int) -> None:
    """Candidate = baseline: the suite ever says "regressed" with probability <= alpha,
    exactly, even when 2 trials still in flight after the cap may decide (the programme runs
    to cap + 2). Baselines of cap trials and of 12; the default margin and margin 0."""
    worst = 0.0
    for rate in (0.5, 0.8, 0.95):
        for base_trials in sorted({cap, 12}):
            for margin in (None, 0.0):
                cell = bench.exact_cell(rate, rate, base_trials, fixtures, cap, margin, IN_FLIGHT)
                suite = bench.suite_probability(cell.p_regressed, fixtures)
                assert suite <= ALPHA, (rate, base_trials, margin, suite)
                worst = max(worst, suite)
    # The construction spends far less than alpha (worst measured 0.01295, 2 fixtures at
    # cap 40): a regression guard.
    assert worst <= 0.02


@pytest.mark.parametrize(("cap", "rate"), list(itertools.product((20, 40), (0.5, 0.8, 0.95))))
def test_each_decision_at_most_alpha_on_the_null_boundary(cap: int, rate: float) -> None:
    """The worst case of each null: a candidate exactly ``margin`` worse is called
    "regressed", and one exactly ``threshold`` worse "not-regressed", each with probability
    <= the cell's alpha (one fixture; baseline of cap trials; +2 in flight)."""
    for margin in (None, 0.0, 0.1):
        rule = sq.CellRule(margin=margin)
        oc = bench.exact_cell(rate - rule.regression_margin, rate, cap, 1, cap, margin, IN_FLIGHT)
        assert oc.p_regressed <= ALPHA, (margin, oc)
    oc = bench.exact_cell(rate - sq.DEFAULT_THRESHOLD, rate, cap, 1, cap, None, IN_FLIGHT)
    assert oc.p_not_regressed <= ALPHA, oc


# --- the simulation through update() agrees with the programme ---------------------------------


def test_the_simulation_resolves_what_it_must() -> None:
    """RUNS is what the agreement check needs, and no more: at the worst share (0.5) a
    discrepancy of DETECTABLE exceeds the 4-SE tolerance plus a one-sided 95% margin; with a
    quarter of the runs it would not (the margin grows as 1/sqrt(RUNS))."""
    z95 = 1.6449
    worst_se = math.sqrt(0.25 / RUNS)
    assert (4 + z95) * worst_se <= DETECTABLE
    assert (4 + z95) * math.sqrt(0.25 / (RUNS // 4)) > DETECTABLE


@pytest.mark.parametrize(
    ("cand_rate", "base_rate", "fixtures", "cap", "margin"),
    [
        (0.8, 0.8, 1, 20, 0.0),  # A/A, the worst margin
        (0.5, 0.5, 2, 10, None),  # A/A, two fixtures, default margin
        (0.4, 0.8, 1, 20, None),  # a 40-point drop: power ~0.38
        (0.55, 0.95, 3, 20, 0.0),  # a 40-point drop, three fixtures
    ],
)
def test_simulation_through_update_agrees_with_the_exact_programme(
    cand_rate: float, base_rate: float, fixtures: int, cap: int, margin: float | None
) -> None:
    rng = np.random.default_rng([SEED, int(cand_rate * 100), int(base_rate * 100), fixtures, cap])
    sim = bench.simulate_cell(
        rng, cand_rate, base_rate, cap, fixtures, cap, RUNS, margin, in_flight=IN_FLIGHT
    )
    exact = bench.exact_cell(cand_rate, base_rate, cap, fixtures, cap, margin)
    late = bench.exact_cell(cand_rate, base_rate, cap, fixtures, cap, margin, IN_FLIGHT)

    def check(simulated: np.ndarray, p: float, what: str) -> None:
        share = float(simulated.mean())
        # The standard error at the exact share, at least that of one run in RUNS.
        se = math.sqrt(max(p * (1 - p), 1.0 / RUNS) / RUNS)
        _within(share, p, se, what)

    check(sim.regressed, exact.p_regressed, "regressed at stop")
    check(sim.not_regressed, exact.p_not_regressed, "not-regressed at stop")
    check(sim.regressed_late, late.p_regressed, f"regressed after {IN_FLIGHT} in flight")
    trials_se = float(sim.trials.std(ddof=1)) / math.sqrt(RUNS)
    _within(float(sim.trials.mean()), exact.expected_trials, max(trials_se, 1e-3), "mean trials")
    assert np.all(sim.regressed <= sim.regressed_late)  # in-flight trials never un-regress


# --- power -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixtures", "cap", "base_rate"), list(itertools.product((1, 3), (20, 40), (0.8, 0.95)))
)
def test_power_is_monotone_in_the_drop(fixtures: int, cap: int, base_rate: float) -> None:
    drops = (0.0, 0.1, 0.2, 0.3, 0.4, 0.6, base_rate)
    for margin in (None, 0.0):
        powers, trials = [], []
        for drop in drops:
            oc = bench.exact_cell(base_rate - drop, base_rate, cap, fixtures, cap, margin)
            powers.append(bench.suite_probability(oc.p_regressed, fixtures))
            trials.append(oc.expected_trials)
        pairs = list(itertools.pairwise(powers))
        assert all(a <= b for a, b in pairs), (margin, powers)
        assert all(a < b for a, b in pairs if a < 0.999), (margin, powers)
        assert powers[0] <= ALPHA and powers[-1] >= 0.999, (margin, powers)
        # A collapse stops early; an unchanged agent runs (nearly) to the cap.
        assert trials[-1] <= 8 and trials[0] >= 0.9 * cap, (margin, trials)


def test_power_grows_with_the_cap() -> None:
    for base_rate, drop in ((0.8, 0.4), (0.95, 0.2)):
        powers = [
            bench.exact_cell(base_rate - drop, base_rate, cap, 1, cap).p_regressed
            for cap in (10, 20, 40)
        ]
        assert all(a < b for a, b in itertools.pairwise(powers)), powers


# --- the end-to-end case ----------------------------------------------------------------------


def test_end_to_end_collapse_is_flagged_early() -> None:
    """Baseline 12 trials at 0.9 per fixture, candidate 0.05, cap 20, 2 fixtures: the suite
    says "regressed" with probability >= 0.99 after <= 8 trials per fixture on average;
    an unchanged candidate (0.9) is flagged with probability <= alpha."""
    fixtures, base_trials, base_rate, cap = 2, 12, 0.9, 20
    oc = bench.exact_cell(0.05, base_rate, base_trials, fixtures, cap)
    assert bench.suite_probability(oc.p_regressed, fixtures) >= 0.99
    assert oc.expected_trials <= 8
    # The typical observed baseline, 11 of 12, as the harness would hold it.
    rule = bench.cell_rule(11, base_trials, fixtures, cap)
    typical = sq.operating_characteristics(0.05, rule)
    assert bench.suite_probability(typical.p_regressed, fixtures) >= 0.99
    assert typical.expected_trials <= 8
    for margin in (None, 0.0):
        aa = bench.exact_cell(base_rate, base_rate, base_trials, fixtures, cap, margin, IN_FLIGHT)
        assert bench.suite_probability(aa.p_regressed, fixtures) <= ALPHA
    # And through update(): a seeded suite simulation agrees.
    rng = np.random.default_rng([SEED, 2])
    sim = bench.simulate_cell(rng, 0.05, base_rate, base_trials, fixtures, cap, RUNS)
    suite = sim.regressed.reshape(-1, fixtures).any(axis=1)
    assert suite.mean() >= 0.99 and sim.trials.mean() <= 8
