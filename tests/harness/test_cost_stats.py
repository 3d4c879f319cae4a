"""harness.stats.cost: the cost ratio, its verdict, the suite and the comparison of two runs'
items (the cost per resolved item: test_per_resolved.py).

Checked against hand computation (scipy for the t quantiles) and properties (hypothesis): a
dearer candidate never gets a milder verdict, and swapping the runs inverts the ratio.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from model_builders import make_item
from scipy import stats as sps

from harness.model.comparison import COST_VERDICTS, DEFAULT_COST_THRESHOLD, CostRatio
from harness.model.item import ItemCost, ItemResult
from harness.stats.cost import (
    SE_NOISE,
    classify,
    compare_costs,
    cost_ratio,
    cost_verdict,
    suite_cost_ratio,
)
from scorers.tokens import TokenUsage
from scorers.verdict import UsageSummary

T975 = {n: float(sps.t.ppf(0.975, n)) for n in (2, 4)}


def ratio(base: Sequence[float], cand: Sequence[float], **kwargs: float) -> CostRatio:
    return cost_ratio("fx", "p/m", base, cand, **kwargs)


def ci_of(r: CostRatio) -> tuple[float, float]:
    assert r.ci is not None, r.reason
    return r.ci


# --- per fixture ------------------------------------------------------------------------------


def test_cost_ratio_by_hand() -> None:
    # Means 2 and 4, variances 1 and 4: each term s²/(n m²) = 1/12, se² = 1/6; Welch df =
    # (1/6)² / ((1/12)²/2 + (1/12)²/2) = 4.
    r = ratio([1, 2, 3], [2, 4, 6])
    assert (r.fixture, r.model, r.n_base, r.n_cand) == ("fx", "p/m", 3, 3)
    assert (r.mean_base, r.mean_cand) == (2.0, 4.0)
    assert r.ratio == pytest.approx(2.0, rel=1e-15)
    assert r.se_log == pytest.approx(math.sqrt(1 / 6), rel=1e-14)
    assert r.df == pytest.approx(4.0, rel=1e-12)
    half = T975[4] * math.sqrt(1 / 6)
    assert ci_of(r) == pytest.approx((2 * math.exp(-half), 2 * math.exp(half)), rel=1e-12)
    assert ci_of(r) == pytest.approx((0.64382, 6.21289), abs=1e-5)
    assert r.reason is None and r.confidence == 0.95
    assert r.method == "log-ratio-delta-welch"
    assert r.verdict == "inconclusive"  # the interval spans 1 and leaves the band
    json.dumps(r.to_dict())


def test_one_run_without_spread() -> None:
    # The baseline constant: se² = 4/(3·16) = 1/12 from the candidate alone, df = n_c - 1.
    r = ratio([2, 2, 2], [2, 4, 6])
    assert r.ratio == pytest.approx(2.0)
    assert r.df == pytest.approx(2.0)
    half = T975[2] * math.sqrt(1 / 12)
    assert ci_of(r) == pytest.approx((2 * math.exp(-half), 2 * math.exp(half)), rel=1e-12)


def test_confidence_changes_the_width() -> None:
    wide, narrow = ratio([1, 2, 3], [2, 4, 6]), ratio([1, 2, 3], [2, 4, 6], confidence=0.5)
    half = float(sps.t.ppf(0.75, 4)) * math.sqrt(1 / 6)
    assert ci_of(narrow) == pytest.approx((2 * math.exp(-half), 2 * math.exp(half)), rel=1e-12)
    assert ci_of(wide)[0] < ci_of(narrow)[0] < ci_of(narrow)[1] < ci_of(wide)[1]


def test_scale_equivariance() -> None:
    base, cand = [0.8, 1.3, 2.2, 0.9], [1.1, 0.7, 3.0]
    r1 = ratio(base, cand)
    r3 = ratio(base, [3 * c for c in cand])
    assert r3.ratio == pytest.approx(3 * (r1.ratio or 0), rel=1e-13)
    assert ci_of(r3) == pytest.approx((3 * ci_of(r1)[0], 3 * ci_of(r1)[1]), rel=1e-13)
    assert (r3.se_log, r3.df) == pytest.approx((r1.se_log, r1.df), rel=1e-12)
    # Both runs in cents rather than dollars: nothing changes.
    cents = ratio([100 * b for b in base], [100 * c for c in cand])
    assert cents.ratio == pytest.approx(r1.ratio, rel=1e-13)
    assert ci_of(cents) == pytest.approx(ci_of(r1), rel=1e-13)


@pytest.mark.parametrize(
    ("base", "cand", "expected_ratio", "reason"),
    [
        ([], [1, 2], None, "no costs in the baseline"),
        ([1, 2], [], None, "no costs in the candidate"),
        ([0, 0, 0], [1, 2], None, "the baseline's mean cost is 0"),
        ([1, 2], [0, 0], 0.0, "the candidate's mean cost is 0"),
        ([1], [1, 2], 1.5, "fewer than 2 items in a run"),
        ([1, 2], [3], 2.0, "fewer than 2 items in a run"),
        ([2, 2, 2], [3, 3], 1.5, "no spread in either run: no interval"),
    ],
)
def test_no_interval(
    base: list[float], cand: list[float], expected_ratio: float | None, reason: str
) -> None:
    r = ratio(base, cand)
    assert r.ratio == (None if expected_ratio is None else pytest.approx(expected_ratio))
    assert r.ci is None and r.df is None
    assert r.reason is not None and reason in r.reason
    assert r.verdict == "inconclusive"


def test_zero_spread_is_not_zero_uncertainty() -> None:
    """Three identical costs in each run, far apart: still no interval, so inconclusive,
    never a confident "costlier"."""
    r = ratio([1.0, 1.0, 1.0], [5.0, 5.0, 5.0])
    assert r.ratio == 5.0 and r.ci is None and r.verdict == "inconclusive"
    assert r.se_log == 0.0


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -0.01, True, None])
def test_bad_costs_raise(bad: object) -> None:
    with pytest.raises(ValueError, match="finite numbers >= 0"):
        ratio([1.0, 2.0], [1.0, bad])  # type: ignore[list-item]


# --- the verdict ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ci", "estimate", "expected"),
    [
        ((1.05, 1.6), 1.3, "costlier"),
        ((1.05, 1.6), 1.2, "costlier"),  # the estimate exactly 1 + tau
        ((1.05, 1.35), 1.19, "inconclusive"),  # clearly dearer, not clearly by enough
        ((1.02, 1.15), 1.08, "same"),  # clearly dearer, but by less than the threshold
        ((1.0, 1.6), 1.3, "inconclusive"),  # the low limit on 1 does not decide
        ((0.5, 0.8), 0.65, "cheaper"),
        ((0.5, 0.9), 1 / 1.2, "cheaper"),  # the estimate exactly 1/(1 + tau)
        ((0.78, 0.95), 0.86, "inconclusive"),
        ((0.88, 0.99), 0.93, "same"),
        ((1 / 1.2, 1.2), 1.0, "same"),  # exactly the band
        ((0.83, 1.1), 1.0, "inconclusive"),  # just below the band
        ((0.9, 1.21), 1.0, "inconclusive"),  # just above it
        ((0.5, 3.0), 1.1, "inconclusive"),
        (None, 1.5, "inconclusive"),
        ((1.5, 2.0), None, "inconclusive"),
        ((1.5, 2.0), 0.0, "inconclusive"),
    ],
)
def test_verdict_rules(
    ci: tuple[float, float] | None, estimate: float | None, expected: str
) -> None:
    assert cost_verdict(ci, estimate, 0.2) == expected
    assert cost_verdict(ci, estimate) == expected  # 20% is the default
    assert DEFAULT_COST_THRESHOLD == 0.20


@pytest.mark.parametrize(
    ("ci", "estimate", "threshold", "expected"),
    [
        ((1.01, 1.2), 1.1, 0.0, "costlier"),  # any clear increase at threshold 0
        ((0.8, 0.99), 0.9, 0.0, "cheaper"),
        ((0.9, 1.1), 1.0, 0.0, "inconclusive"),  # "same" needs an interval of width 0
        ((1.05, 1.6), 1.3, 0.5, "inconclusive"),  # dearer, but not by 50%
        ((1.05, 2.0), 1.5, 0.5, "costlier"),
        ((0.7, 1.45), 1.0, 0.5, "same"),
    ],
)
def test_verdict_at_other_thresholds(
    ci: tuple[float, float], estimate: float, threshold: float, expected: str
) -> None:
    assert cost_verdict(ci, estimate, threshold) == expected


def test_verdict_tolerance() -> None:
    # An end within float noise of 1 or of the band does not decide either way.
    assert cost_verdict((1 + 1e-13, 1.5), 1.3) == "inconclusive"
    assert cost_verdict((1.05, 1.5), 1.2 - 1e-13) == "costlier"
    assert cost_verdict((0.9, 1.2 + 1e-13), 1.0) == "same"
    assert cost_verdict((1 / 1.2 - 1e-13, 1.1), 1.0) == "same"


@given(
    st.floats(-3, 3),
    st.floats(0, 3),
    st.floats(0, 3),
    st.sampled_from([0.0, 0.05, 0.2, 0.5]),
)
def test_classify_is_the_scalar_verdict(centre: float, down: float, up: float, tau: float) -> None:
    low, high = centre - down, centre + up
    # Away from the decision points, where exp and log may round an end across them.
    edges = (0.0, math.log1p(tau), -math.log1p(tau))
    assume(all(abs(v - e) > 1e-6 for v in (low, high, centre) for e in edges))
    code = int(classify(low, high, centre, tau))
    assert COST_VERDICTS[code] == cost_verdict(
        (math.exp(low), math.exp(high)), math.exp(centre), tau
    )


def test_classify_nan_is_inconclusive() -> None:
    codes = classify([np.nan, 0.5, 0.5], [1.0, np.nan, 1.0], [0.7, 0.7, np.nan], 0.2)
    assert [COST_VERDICTS[int(c)] for c in codes] == ["inconclusive"] * 3


# --- the suite --------------------------------------------------------------------------------


def test_suite_of_one_is_the_fixture() -> None:
    r = ratio([1, 2, 3], [2, 4, 6])
    s = suite_cost_ratio([r])
    assert (s.fixture, s.model, s.method) == ("*", "*", "geometric-mean-of-ratios")
    assert s.ratio == pytest.approx(r.ratio, rel=1e-14)
    assert s.ci == pytest.approx(r.ci, rel=1e-12)
    assert s.df == pytest.approx(r.df, rel=1e-12)
    assert s.verdict == r.verdict


def test_suite_by_hand() -> None:
    a = cost_ratio("a", "p/m", [1, 2, 3], [2, 4, 6])  # log 2, se² 1/6, df 4
    b = cost_ratio("b", "p/m", [2, 2, 2], [2, 4, 6])  # log 2, se² 1/12, df 2
    c = cost_ratio("c", "p/m", [4, 5, 6, 5], [2, 2.5, 3, 2.5])  # log 0.5
    parts = [a, b, c]
    s = suite_cost_ratio(parts)
    logs = [math.log(r.ratio or 0) for r in parts]
    ses = [r.se_log or 0 for r in parts]
    dfs = [r.df or 0 for r in parts]
    est = sum(logs) / 3
    v = sum(x * x for x in ses)
    df = v * v / sum(x**4 / d for x, d in zip(ses, dfs, strict=True))
    half = float(sps.t.ppf(0.975, df)) * math.sqrt(v) / 3
    assert s.ratio == pytest.approx((2 * 2 * 0.5) ** (1 / 3), rel=1e-14)  # geometric mean
    assert s.ratio == pytest.approx(math.exp(est), rel=1e-14)
    assert s.se_log == pytest.approx(math.sqrt(v) / 3, rel=1e-14)
    assert s.df == pytest.approx(df, rel=1e-12)
    assert s.ci == pytest.approx((math.exp(est - half), math.exp(est + half)), rel=1e-12)
    assert (s.n_base, s.n_cand) == (10, 10)
    assert s.mean_base is None and s.mean_cand is None


def test_suite_ratios_cancel_on_the_log_scale() -> None:
    """2x on one fixture and 0.5x on another: no change overall, however expensive each."""
    up = cost_ratio("a", "p/m", [100, 110, 90], [200, 220, 180])
    down = cost_ratio("b", "p/m", [0.02, 0.022, 0.018], [0.01, 0.011, 0.009])
    s = suite_cost_ratio([up, down])
    assert s.ratio == pytest.approx(1.0, rel=1e-12)


def test_suite_without_an_interval_names_the_fixture() -> None:
    ok = cost_ratio("a", "p/m", [1, 2, 3], [2, 4, 6])
    s = suite_cost_ratio([ok, cost_ratio("b", "q/m", [1], [2, 3])])
    assert s.ci is None and s.ratio is not None and s.verdict == "inconclusive"
    assert s.reason is not None and "b:q/m (fewer than 2 items" in s.reason
    s = suite_cost_ratio([ok, cost_ratio("z", "p/m", [0, 0], [2, 3])])
    assert s.ratio is None and s.reason is not None and "z:p/m (the baseline's mean" in s.reason
    s = suite_cost_ratio([])
    assert s.ratio is None and s.reason == "no fixture x model in common"
    assert s.verdict == "inconclusive"
    flat = suite_cost_ratio([cost_ratio("a", "p/m", [1, 1], [2, 2])])
    assert flat.ci is None and flat.verdict == "inconclusive"


# --- monotonicity and symmetry (properties) ---------------------------------------------------

#: cheaper < {same, inconclusive} < costlier; same and inconclusive are not ordered (an
#: interval sliding up enters the "same" band, then leaves it).
RANK = {"cheaper": 0, "same": 1, "inconclusive": 1, "costlier": 2}
MIRROR = {"cheaper": "costlier", "costlier": "cheaper", "same": "same"}

cost = st.one_of(st.just(0.0), st.floats(0.01, 100.0))
#: Loose runs (any costs) and tight ones (within 10% of a centre, or constant), so that
#: every verdict, "same" and "no interval" included, turns up.
run = st.one_of(
    st.lists(cost, min_size=1, max_size=6),
    st.builds(
        lambda c, jitter: [c * (1 + j) for j in jitter],
        st.floats(0.01, 100.0),
        st.lists(st.one_of(st.just(0.0), st.floats(-0.1, 0.1)), min_size=2, max_size=10),
    ),
)
#: 1 exactly, or far enough above 1 that log(k) is not lost in float noise (~1e-15).
factor = st.one_of(st.just(1.0), st.floats(1.0 + 1e-9, 10.0))
thresholds = st.sampled_from([0.0, 0.1, 0.2, 0.5])


def assert_not_milder(before: str, after: str) -> None:
    assert RANK[after] >= RANK[before], (before, after)
    if before == "costlier":
        assert after == "costlier"


def assert_not_lower(new: float | None, old: float | None) -> None:
    if old is None:
        return
    assert new is not None
    assert new >= old * (1 - 1e-12), (new, old)


def assert_dearer(before: CostRatio, after: CostRatio) -> None:
    assert_not_milder(before.verdict, after.verdict)
    if before.ratio:
        assert_not_lower(after.ratio, before.ratio)
    if before.ci is not None:
        assert after.ci is not None
        assert_not_lower(after.ci[0], before.ci[0])
        assert_not_lower(after.ci[1], before.ci[1])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(run, run, factor), min_size=1, max_size=4), thresholds)
def test_a_dearer_candidate_never_gets_a_milder_verdict(
    fixtures: list[tuple[list[float], list[float], float]], tau: float
) -> None:
    """Every fixture's candidate costs multiplied by some k >= 1: no fixture's verdict and
    not the suite's gets milder, and no ratio or interval end gets lower."""
    before = [cost_ratio(f"f{i}", "p/m", b, c, tau) for i, (b, c, _) in enumerate(fixtures)]
    after = [
        cost_ratio(f"f{i}", "p/m", b, [k * x for x in c], tau)
        for i, (b, c, k) in enumerate(fixtures)
    ]
    for old, new in zip(before, after, strict=True):
        assert_dearer(old, new)
    assert_dearer(suite_cost_ratio(before, tau), suite_cost_ratio(after, tau))


@settings(max_examples=300, deadline=None)
@given(st.floats(-2, 2), st.floats(1e-3, 2), st.floats(1e-3, 2), st.floats(0, 2), thresholds)
def test_the_rule_alone_is_monotone(
    centre: float, down: float, up: float, shift: float, tau: float
) -> None:
    """An interval and estimate moved up together never get a milder verdict."""
    before = COST_VERDICTS[int(classify(centre - down, centre + up, centre, tau))]
    moved = centre + shift
    after = COST_VERDICTS[int(classify(moved - down, moved + up, moved, tau))]
    assert_not_milder(before, after)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(run, run), min_size=1, max_size=4), thresholds)
def test_swapping_the_runs_inverts_the_ratio(
    fixtures: list[tuple[list[float], list[float]]], tau: float
) -> None:
    forward = [cost_ratio(f"f{i}", "p/m", b, c, tau) for i, (b, c) in enumerate(fixtures)]
    backward = [cost_ratio(f"f{i}", "p/m", c, b, tau) for i, (b, c) in enumerate(fixtures)]
    for fw, bw in [
        *zip(forward, backward, strict=True),
        (suite_cost_ratio(forward, tau), suite_cost_ratio(backward, tau)),
    ]:
        if not fw.ratio or not bw.ratio:
            continue
        assert bw.ratio == pytest.approx(1 / fw.ratio, rel=1e-12)
        assert (fw.ci is None) == (bw.ci is None)
        if fw.ci is not None and bw.ci is not None:
            assert bw.ci == pytest.approx((1 / fw.ci[1], 1 / fw.ci[0]), rel=1e-12)
            assert bw.se_log == pytest.approx(fw.se_log, rel=1e-12)
            assert bw.df == pytest.approx(fw.df, rel=1e-12)
        assert bw.verdict == MIRROR.get(fw.verdict, fw.verdict)


# --- comparing two runs' items ----------------------------------------------------------------


def item(
    fixture: str,
    trial: int,
    usd: float | None,
    tokens: int = 1_000,
    *,
    model: str = "p/m",
    unpriced: tuple[str, ...] = (),
    complete: bool = True,
    priced: bool = True,
) -> ItemResult:
    """A resolved item that spent ``tokens`` and cost ``usd`` (None: unpriced; ``priced``
    False: never priced, no cost at all)."""
    base = make_item(fixture, trial, True, model=model)
    usage = UsageSummary(total=TokenUsage(input_tokens=tokens), complete=complete, source="test")
    score = dataclasses.replace(base.score, tokens_used=tokens, usage=usage)
    cost = (
        ItemCost(
            usd=usd,
            source="none" if usd is None else "price file",
            detail=(),
            unpriced=unpriced,
            complete=complete,
        )
        if priced
        else None
    )
    return dataclasses.replace(base, score=score, cost=cost)


def run_items(fixture: str, usds: Sequence[float | None], **kwargs: object) -> list[ItemResult]:
    return [item(fixture, t, usd, **kwargs) for t, usd in enumerate(usds)]  # type: ignore[arg-type]


BASE = [1.0, 1.1, 0.9, 1.05, 0.95]


def test_compared_in_usd_when_every_item_has_a_price() -> None:
    # Tokens equal everywhere: only USD can show the 2x.
    base, cand = run_items("a", [1, 2, 3]), run_items("a", [2, 4, 6])
    c = compare_costs([("a", "", "p/m", base, cand)])
    assert c.unit == "usd" and c.complete and c.notes == ()
    assert c.threshold == DEFAULT_COST_THRESHOLD
    (fixture,) = c.fixtures
    assert (fixture.fixture, fixture.model) == ("a", "p/m")
    expected = cost_ratio("a", "p/m", [1, 2, 3], [2, 4, 6])
    assert fixture == expected
    assert c.overall.ratio == pytest.approx(2.0)
    json.dumps(c.to_dict())


def test_compared_in_tokens_when_an_item_is_unpriced() -> None:
    base = [item("a", t, 1.0, tokens) for t, tokens in enumerate([100, 200, 300])]
    cand = [item("a", t, 2.0, tokens) for t, tokens in enumerate([200, 400, 600])]
    cand[1] = item("a", 1, None, 400, unpriced=("sim/honest",))
    c = compare_costs([("a", "", "p/m", base, cand)])
    assert c.unit == "tokens"
    assert c.notes == (
        "compared in tokens: 1 of 6 items have no cost (no price known for sim/honest)",
    )
    assert c.fixtures[0] == cost_ratio("a", "p/m", [100, 200, 300], [200, 400, 600])


def test_items_never_priced_are_compared_in_tokens() -> None:
    base = run_items("a", [1.0, 2.0], priced=False)
    cand = run_items("a", [1.0, 2.0])
    c = compare_costs([("a", "", "p/m", base, cand)])
    assert c.unit == "tokens"
    assert c.notes == ("compared in tokens: 2 of 4 items have no cost (items not priced)",)


def test_one_unit_for_the_whole_suite() -> None:
    """One unpriced item in one fixture puts every fixture in tokens."""
    a_base, a_cand = run_items("a", [1.0, 2.0, 3.0]), run_items("a", [1.0, 2.0, 3.0])
    b_base = run_items("b", [1.0, 2.0])
    b_cand = [item("b", 0, None, unpriced=("scripted/x",)), item("b", 1, 2.0)]
    c = compare_costs([("a", "", "p/m", a_base, a_cand), ("b", "", "p/m", b_base, b_cand)])
    assert c.unit == "tokens"
    assert [f.fixture for f in c.fixtures] == ["a", "b"]
    assert all(f.mean_base == 1_000.0 for f in c.fixtures)


def test_incomplete_usage_is_a_lower_bound() -> None:
    base = run_items("a", BASE)
    cand = run_items("a", BASE)
    cand[2] = item("a", 2, 0.9, complete=False)
    c = compare_costs([("a", "", "p/m", base, cand)])
    assert c.unit == "usd" and not c.complete
    assert c.notes == (f"a lower bound: the usage of 1 item(s) is incomplete (e.g. {cand[2].key})",)


def test_gate_fails_on_an_overall_costlier() -> None:
    base = run_items("a", BASE)
    cand = run_items("a", [2 * x for x in BASE])
    c = compare_costs([("a", "", "p/m", base, cand)])
    assert c.overall.verdict == "costlier"
    assert not c.gate.passed
    (reason,) = c.gate.reasons
    assert reason.startswith("overall cost costlier: x2.00 the baseline's USD per item, 95% CI [x")
    assert reason.endswith("(threshold +20%)")


def test_gate_fails_in_tokens_too() -> None:
    base = [
        item("a", t, None, tokens, unpriced=("sim/honest",))
        for t, tokens in enumerate([1000, 1100, 900, 1050, 950])
    ]
    cand = [
        item("a", t, None, 3 * tokens, unpriced=("sim/honest",))
        for t, tokens in enumerate([1000, 1100, 900, 1050, 950])
    ]
    c = compare_costs([("a", "", "p/m", base, cand)])
    assert c.unit == "tokens" and c.overall.verdict == "costlier" and not c.gate.passed
    assert "tokens per item" in c.gate.reasons[0]


@pytest.mark.parametrize(
    ("factors", "overall"),
    [
        ((1.0,), "same"),
        ((0.5,), "cheaper"),
        ((2.0, 0.5), "same"),  # one fixture costlier, another cheaper: 1x overall
        ((1.3,), "costlier"),
    ],
)
def test_gate_fails_only_on_an_overall_costlier(factors: tuple[float, ...], overall: str) -> None:
    matched = [
        (f"f{i}", "", "p/m", run_items(f"f{i}", BASE), run_items(f"f{i}", [k * x for x in BASE]))
        for i, k in enumerate(factors)
    ]
    c = compare_costs(matched)
    assert c.overall.verdict == overall
    assert c.gate.passed == (overall != "costlier")
    assert (c.gate.reasons == ()) == c.gate.passed
    if factors == (2.0, 0.5):
        assert [f.verdict for f in c.fixtures] == ["costlier", "cheaper"]


def test_threshold_is_passed_through() -> None:
    matched = [("a", "", "p/m", run_items("a", BASE), run_items("a", [1.3 * x for x in BASE]))]
    assert compare_costs(matched).overall.verdict == "costlier"
    strict = compare_costs(matched, threshold=0.5)
    assert strict.threshold == 0.5
    # Clearly dearer, but the whole interval inside [1/1.5, 1.5]: the same at 50%.
    assert ci_of(strict.overall)[0] > 1 and ci_of(strict.overall)[1] < 1.5
    assert strict.overall.verdict == "same" and strict.gate.passed
    assert strict.fixtures[0].verdict == "same"


def test_nothing_matched() -> None:
    c = compare_costs([])
    assert c.unit == "tokens" and c.notes == () and c.complete
    assert c.fixtures == ()
    assert c.overall.ratio is None and c.overall.reason == "no fixture x model in common"
    assert c.gate.passed


def test_no_spread_in_token_counts_is_inconclusive() -> None:
    """Items that all spent the same tokens (a scripted model): no interval, never a
    confident verdict, and the gate passes."""
    base = [item("a", t, None, 500, unpriced=("scripted/x",)) for t in range(3)]
    cand = [item("a", t, None, 900, unpriced=("scripted/x",)) for t in range(3)]
    c = compare_costs([("a", "", "scripted/x", base, cand)])
    assert c.unit == "tokens"
    assert c.overall.ci is None and c.overall.verdict == "inconclusive" and c.gate.passed
    assert c.overall.reason is not None and "a:scripted/x" in c.overall.reason


def test_se_noise_is_tiny() -> None:
    assert 0 < SE_NOISE <= 1e-9
