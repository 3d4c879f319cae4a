"""Candidate-vs-baseline comparison with intervals, verdicts and the CI gate.

The two runs are independent samples: trial *i* of one run is never paired with trial *i*
of the other. Per fixture x model the resolved-rate difference gets Newcombe's hybrid score
interval (the one-fixture case of :mod:`harness.stats.strata`). Overall, the fixtures are
strata of a fixed suite with equal weight: the stratified difference with its MOVER
interval, which is what the gate reads. With many fixtures a second, non-gating interval
treats the fixtures as a random sample ("would this hold on other fixtures?").

Missing evidence never passes the gate: a fixture x model that only one run scored (absent,
or every item errored) fails it, and so does a comparison with nothing in common.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.model.comparison import (
    DEFAULT_COST_THRESHOLD,
    NOT_RUN_BY,
    BaselineRun,
    Comparison,
    DiffAsSample,
    FixtureComparison,
    Gate,
    Missing,
    OverallComparison,
    RateDiff,
    SequentialVerdict,
    cell_label,
    not_run,
)
from harness.model.item import ItemResult
from harness.model.summary import MEASURES, DiffSummary, SequentialCell
from harness.model.text import format_ci_pp, format_pp
from harness.stats import rates
from harness.stats.cost import compare_costs
from harness.stats.power import trials_for_power
from harness.stats.strata import stratified_diff
from harness.stats.summaries import (
    MIN_FIXTURES_FOR_GENERALISATION,
    GroupKey,
    measure_values,
    recorded,
)
from scorers.criteria import criterion_names

Items = Sequence[ItemResult]
#: A run's cell as (fixture, agent label, model).
Cell = tuple[str, str, str]


@dataclass(frozen=True)
class _Group:
    """One fixture x model of one run: its scored items and how many errored."""

    scored: list[ItemResult]
    errored: int


@dataclass(frozen=True)
class Pairing:
    """How two runs' cells are matched: (fixture, agent, model), where ``agent`` is "" when
    each run has one agent (those two are compared, whatever their names: the change under
    test is often the agent itself) and ``model`` is ``*`` when each run has one model and
    they differ (two models compared); ``model_label`` then names the candidate's. Never
    both when the agents are of two kinds: two runs whose agent *and* model differ are
    compared cell by exactly matching cell (a sim run against a Claude Code selftest's
    scripted models shares none); two behaviours of one agent (``sim:honest`` on
    ``sim/honest`` against ``sim:flaky=0.5`` on ``sim/flaky=0.5``) are still compared."""

    by_agent: bool
    by_model: bool
    model_label: str | None

    def cell(self, item: ItemResult) -> GroupKey:
        return self.key((item.fixture, item.agent, item.model))

    def key(self, cell: Cell) -> GroupKey:
        """The matching key of a (fixture, agent, model) cell."""
        fixture, agent, model = cell
        return (fixture, agent if self.by_agent else "", model if self.by_model else "*")


def pairing(baseline: Iterable[ItemResult], candidate: Iterable[ItemResult]) -> Pairing:
    """The :class:`Pairing` of two runs' items."""
    base, cand = list(baseline), list(candidate)
    return pair_runs(
        {i.agent for i in base},
        {i.model for i in base},
        {i.agent for i in cand},
        {i.model for i in cand},
    )


def pair_runs(
    base_agents: set[str], base_models: set[str], cand_agents: set[str], cand_models: set[str]
) -> Pairing:
    """The :class:`Pairing` of two runs with these agents and models."""
    one_each = len(base_agents) == 1 and len(cand_agents) == 1
    models_differ = len(base_models) == 1 and len(cand_models) == 1 and base_models != cand_models
    kinds = {agent_kind(a) for a in base_agents | cand_agents}
    both_differ = one_each and len(kinds) > 1 and models_differ
    by_model = not models_differ or both_differ
    by_agent = not one_each or both_differ
    return Pairing(by_agent, by_model, None if by_model else next(iter(cand_models)))


def agent_kind(label: str) -> str:
    """The agent a label names, without its options (``sim:flaky=0.5`` -> ``sim``)."""
    return label.partition(":")[0]


def cells_of(items: Iterable[ItemResult]) -> set[Cell]:
    """The (fixture, agent, model) cells a run's items fall in."""
    return {(i.fixture, i.agent, i.model) for i in items}


def shared_cells(baseline: Iterable[Cell], candidate: Iterable[Cell]) -> list[GroupKey]:
    """The cells two runs have in common, matched as :func:`compare` matches them; each
    run's cells given as (fixture, agent, model) (from its items, or from a plan)."""
    base, cand = set(baseline), set(candidate)
    pair = pair_runs(
        {c[1] for c in base}, {c[2] for c in base}, {c[1] for c in cand}, {c[2] for c in cand}
    )
    return sorted({pair.key(c) for c in base} & {pair.key(c) for c in cand})


def _groups(items: Items, pair: Pairing) -> dict[GroupKey, _Group]:
    scored: dict[GroupKey, list[ItemResult]] = {}
    errored: dict[GroupKey, int] = {}
    for item in items:
        key = pair.cell(item)
        scored.setdefault(key, [])
        if item.status == "error":
            errored[key] = errored.get(key, 0) + 1
        else:
            scored[key].append(item)
    return {k: _Group(v, errored.get(k, 0)) for k, v in scored.items()}


#: The main rate of a comparison; every other rate is a criterion's.
RESOLVED = "resolved"


def _outcomes(items: Sequence[ItemResult], rate: str) -> list[bool]:
    return [i.resolved for i in items] if rate == RESOLVED else recorded(items, rate)


def _rate_diff(
    base: Sequence[Sequence[ItemResult]], cand: Sequence[Sequence[ItemResult]], rate: str
) -> RateDiff:
    """Stratified difference of a rate (``resolved`` or a criterion's) over matched groups
    (one group: Newcombe).

    An item whose score did not judge a criterion is left out, never counted as a failure;
    a group where one run judged it for no item makes the difference undefined (all None).
    """
    base_vals = [_outcomes(g, rate) for g in base]
    cand_vals = [_outcomes(g, rate) for g in cand]
    if not all(base_vals) or not all(cand_vals):
        return RateDiff(None, None, None, None)
    diff = stratified_diff(
        [(sum(v), len(v)) for v in base_vals], [(sum(v), len(v)) for v in cand_vals]
    )
    return RateDiff(diff.baseline_rate, diff.candidate_rate, diff.delta, diff.ci)


def _measure_diff(base: Sequence[ItemResult], cand: Sequence[ItemResult], name: str) -> DiffSummary:
    return rates.welch_interval(measure_values(base, name), measure_values(cand, name))


def disagreement(base_rate: float, cand_rate: float) -> float:
    """Chance that one baseline trial and one candidate trial of a fixture disagree.

    The two runs are independent draws, so this is all a "flip rate" can honestly mean:
    ``p_b (1 - p_c) + p_c (1 - p_b)``. It measures noise plus change, not a paired test.
    """
    return base_rate * (1.0 - cand_rate) + cand_rate * (1.0 - base_rate)


def _missing(
    mine: dict[GroupKey, _Group], other: dict[GroupKey, _Group], label: str
) -> tuple[Missing, ...]:
    """Groups the other run scored that this run did not, with the reason."""
    out = []
    for key in sorted(k for k, g in other.items() if g.scored):
        group = mine.get(key)
        if group is not None and group.scored:
            continue
        why = (
            f"all {group.errored} {label} items errored"
            if group is not None and group.errored
            else f"{NOT_RUN_BY}{label}"
        )
        out.append(Missing(key[0], key[1], key[2], why))
    return tuple(out)


def compare(
    baseline: Items,
    candidate: Items,
    threshold: float,
    baseline_label: str,
    baseline_run: BaselineRun | None = None,
    cost_threshold: float = DEFAULT_COST_THRESHOLD,
    shared_only: bool = False,
) -> Comparison:
    """The ``comparison`` object of a candidate report (fields documented in README);
    ``shared_only``: a cell only one run ran is listed but fails no gate."""
    pair = pairing(baseline, candidate)
    cand_label = pair.model_label
    base_g, cand_g = _groups(baseline, pair), _groups(candidate, pair)
    matched = sorted(k for k in base_g if base_g[k].scored and k in cand_g and cand_g[k].scored)
    fixtures = tuple(
        _fixture_entry(key, base_g[key], cand_g[key], threshold, cand_label) for key in matched
    )
    overall = _overall(
        [base_g[k].scored for k in matched],
        [cand_g[k].scored for k in matched],
        fixtures,
        threshold,
    )
    tol = rates.VERDICT_TOLERANCE
    wins = sum(1 for e in fixtures if e.delta > tol)
    losses = sum(1 for e in fixtures if e.delta < -tol)
    return _with_gate(
        Comparison(
            baseline=baseline_label,
            baseline_run=baseline_run,
            threshold=threshold,
            fixtures=fixtures,
            overall=overall,
            wins=wins,
            losses=losses,
            ties=len(fixtures) - wins - losses,
            missing_in_candidate=_missing(cand_g, base_g, "candidate"),
            missing_in_baseline=_missing(base_g, cand_g, "baseline"),
            shared_only=shared_only,
            baseline_cells=sum(1 for g in base_g.values() if g.scored),
            error=None,
            gate=Gate(True, ()),
            cost=compare_costs(
                [
                    (key[0], key[1], cand_label or key[2], base_g[key].scored, cand_g[key].scored)
                    for key in matched
                ],
                cost_threshold,
            ),
        )
    )


def _fixture_entry(
    key: GroupKey, base: _Group, cand: _Group, threshold: float, cand_label: str | None
) -> FixtureComparison:
    main = _rate_diff([base.scored], [cand.scored], RESOLVED)
    # Both arms have scored items here, so every part of the difference is defined.
    assert main.delta is not None and main.baseline_rate is not None
    assert main.candidate_rate is not None
    verdict = rates.verdict(main.ci, main.delta, threshold)
    return FixtureComparison(
        fixture=key[0],
        agent=key[1],
        model=cand_label or key[2],
        baseline_n=len(base.scored),
        candidate_n=len(cand.scored),
        baseline_errors=base.errored,
        candidate_errors=cand.errored,
        baseline_rate=main.baseline_rate,
        candidate_rate=main.candidate_rate,
        delta=main.delta,
        ci=main.ci,
        verdict=verdict,
        disagreement=disagreement(main.baseline_rate, main.candidate_rate),
        criteria={c: _rate_diff([base.scored], [cand.scored], c) for c in criterion_names()},
        measures={m: _measure_diff(base.scored, cand.scored, m) for m in MEASURES},
        trials_for_power=(
            trials_for_power([main.baseline_rate], threshold) if verdict == "inconclusive" else None
        ),
    )


def _overall(
    base: Sequence[Sequence[ItemResult]],
    cand: Sequence[Sequence[ItemResult]],
    fixtures: Sequence[FixtureComparison],
    threshold: float,
) -> OverallComparison:
    """The fixed-suite comparison over matched groups (the gate), plus, with many fixtures,
    the fixtures-as-a-random-sample interval (reported, never gating)."""
    if not fixtures:
        return OverallComparison(
            strata=0,
            baseline_rate=None,
            candidate_rate=None,
            delta=None,
            ci=None,
            verdict="inconclusive",
            method="none: no fixture x model in common",
            disagreement=None,
            criteria={},
            trials_for_power=None,
            random_fixtures=None,
        )
    main = _rate_diff(base, cand, RESOLVED)
    verdict = rates.verdict(main.ci, main.delta, threshold)
    random_fixtures = None
    if len(fixtures) >= MIN_FIXTURES_FOR_GENERALISATION:
        spread = rates.paired_cluster_diff(
            {cell_label(e.fixture, e.agent, e.model): e.delta for e in fixtures}
        )
        random_fixtures = DiffAsSample(
            spread.delta, spread.ci, spread.se, spread.df, "fixtures-as-random-sample-t"
        )
    return OverallComparison(
        strata=len(fixtures),
        baseline_rate=main.baseline_rate,
        candidate_rate=main.candidate_rate,
        delta=main.delta,
        ci=main.ci,
        verdict=verdict,
        method="newcombe" if len(fixtures) == 1 else "stratified-newcombe",
        disagreement=sum(e.disagreement for e in fixtures) / len(fixtures),
        criteria={c: _rate_diff(base, cand, c) for c in criterion_names()},
        trials_for_power=(
            trials_for_power([e.baseline_rate for e in fixtures], threshold)
            if verdict == "inconclusive"
            else None
        ),
        random_fixtures=random_fixtures,
    )


def with_sequential(comparison: Comparison, cells: Mapping[GroupKey, SequentialCell]) -> Comparison:
    """The comparison of a ``--trials auto`` run: the suite's sequential verdict, which the
    gate reads instead of the fixed-sample one (not valid after a data-dependent stop)."""
    voting = {k: c for k, c in cells.items() if c.question == "regression"}
    statuses = {c.status for c in voting.values()}
    several = len({agent for _, agent, _ in cells}) > 1
    regressed = tuple(
        f"{cell_label(fixture, agent if several else '', model)} (after {c.decided_at} trials)"
        for (fixture, agent, model), c in sorted(voting.items())
        if c.status == "regressed"
    )
    if regressed:
        status = "regressed"
    elif not voting:
        status = "none"
    elif statuses == {"not-regressed"}:
        status = "not-regressed"
    else:
        status = "stopped" if "stopped" in statuses else "cap"
    alpha = sum(c.alpha for c in voting.values())
    verdict = SequentialVerdict(status, alpha, len(voting), regressed)
    return _with_gate(dataclasses.replace(comparison, sequential=verdict))


def gate(comparison: Comparison) -> Gate:
    """Whether ``--fail-on regression`` passes, with one reason per failure."""
    reasons: list[str] = []
    if comparison.error:
        reasons.append(f"comparison failed: {comparison.error}")
    for side, missing in (
        ("candidate", comparison.missing_in_candidate),
        ("baseline", comparison.missing_in_baseline),
    ):
        reasons.extend(
            f"missing in the {side}: {m.label()}"
            for m in missing
            if not (comparison.shared_only and not_run(m))
        )
    overall = comparison.overall
    if not comparison.error and not comparison.fixtures:
        reasons.append("no fixture x model scored by both runs")
    sequential = comparison.sequential
    if sequential is not None:
        if sequential.status == "regressed":
            reasons.append("sequential verdict regressed: " + ", ".join(sequential.regressed_cells))
    elif overall.verdict == "regressed":
        reasons.append(
            f"overall verdict regressed: {format_pp(overall.delta)}, 95% CI {format_ci_pp(overall.ci)}"
        )
    return Gate(not reasons, tuple(reasons))


def _with_gate(comparison: Comparison) -> Comparison:
    return dataclasses.replace(comparison, gate=gate(comparison))


def failed_comparison(baseline_label: str, threshold: float, error: str) -> Comparison:
    """The comparison object when comparing was impossible; it fails the gate."""
    return _with_gate(
        Comparison(
            baseline=baseline_label,
            baseline_run=None,
            threshold=threshold,
            fixtures=(),
            overall=_overall([], [], [], threshold),
            wins=0,
            losses=0,
            ties=0,
            missing_in_candidate=(),
            missing_in_baseline=(),
            error=error,
            gate=Gate(True, ()),
        )
    )


def gate_failed(comparison: Comparison | None, fail_on: tuple[str, ...] = ("regression",)) -> bool:
    """True when a comparison exists and a gate ``fail_on`` names did not pass."""
    return comparison is not None and bool(comparison.failing(fail_on))
