"""Each swarm item against its solo twin (``run --solo``): the pairs, and what they say.

A swarm item of agent ``A`` and its twin of agent ``A+solo`` share fixture, model and
trial: they form a pair. Pairs are left out, and counted, where either arm errored (it has
no time, tokens or verdict to compare) or the twin delegated anyway (it was not a solo run).
Per fixture x agent x model the pairs are independent units; over the suite (an agent x
model's overall row) each fixture is one unit (:mod:`harness.stats.solo`), so many trials of
a few fixtures are not read as many independent pairs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.model.comparison import Comparison, SoloShift
from harness.model.item import SOLO_SUFFIX, ItemResult
from harness.model.summary import Estimate, ModelOverall, SwarmVsSolo
from harness.stats.solo import PairedEstimate, paired_rate_diff, paired_ratio

#: (fixture, agent, model) of a summary row; (agent, model) of an overall row.
RowKey = tuple[str, str, str]
OverallKey = tuple[str, str]


@dataclass(frozen=True)
class Pair:
    """One swarm item and its solo twin."""

    swarm: ItemResult
    solo: ItemResult

    @property
    def fixture(self) -> str:
        return self.swarm.fixture


def solo_delegated(item: ItemResult) -> bool:
    """Whether a solo twin started subagents anyway (any depth-1 spawn its parent made)."""
    return item.score.total_spawns > 0


@dataclass
class _Cell:
    pairs: list[Pair]
    errored: int = 0
    delegated: int = 0
    unpaired: int = 0


def _cells(items: Iterable[ItemResult]) -> dict[RowKey, _Cell]:
    """Each swarm row that has twins in the run, with its pairs and what was left out."""
    swarm: dict[tuple[str, str, str, int], ItemResult] = {}
    solo: dict[tuple[str, str, str, int], ItemResult] = {}
    for item in items:
        if item.arm == "solo":
            base = item.agent.removesuffix(SOLO_SUFFIX)
            solo[(item.fixture, base, item.model, item.trial)] = item
        else:
            swarm[(item.fixture, item.agent, item.model, item.trial)] = item
    with_twins = {(f, a, m) for f, a, m, _ in solo}
    cells: dict[RowKey, _Cell] = {}
    for key in sorted(set(swarm) | set(solo)):
        row = key[:3]
        if row not in with_twins:
            continue  # an agent run without --solo
        cell = cells.setdefault(row, _Cell([]))
        mine, twin = swarm.get(key), solo.get(key)
        if mine is None or twin is None:
            cell.unpaired += 1
        elif mine.status == "error" or twin.status == "error":
            cell.errored += 1
        elif solo_delegated(twin):
            cell.delegated += 1
        else:
            cell.pairs.append(Pair(mine, twin))
    return cells


def _estimate(found: PairedEstimate) -> Estimate:
    return Estimate(found.value, found.ci)


def judge_pairs(
    pairs: Sequence[Pair], solo_agent: str, excluded: dict[str, int], by_fixture: bool
) -> SwarmVsSolo:
    """The four figures over ``pairs`` (``by_fixture``: fixtures are the units)."""
    clusters = [p.fixture for p in pairs] if by_fixture else None
    swarm_wall = [p.swarm.facts.wall_time_s for p in pairs]
    solo_wall = [p.solo.facts.wall_time_s for p in pairs]
    none = Estimate(None, None)
    if not pairs:
        return SwarmVsSolo(solo_agent, 0, excluded, none, none, none, none)
    costs = [(p.swarm.cost_usd, p.solo.cost_usd) for p in pairs]
    priced = all(a is not None and b is not None for a, b in costs)
    cost = (
        _estimate(
            paired_ratio(
                [float(a or 0) for a, _ in costs], [float(b or 0) for _, b in costs], clusters
            )
        )
        if priced
        else none
    )
    return SwarmVsSolo(
        solo_agent=solo_agent,
        pairs=len(pairs),
        excluded=excluded,
        speedup=_estimate(paired_ratio(solo_wall, swarm_wall, clusters)),
        tokens_ratio=_estimate(
            paired_ratio(
                [float(p.swarm.score.tokens_used) for p in pairs],
                [float(p.solo.score.tokens_used) for p in pairs],
                clusters,
            )
        ),
        cost_ratio=cost,
        resolved_diff=_estimate(
            paired_rate_diff(
                [p.swarm.resolved for p in pairs], [p.solo.resolved for p in pairs], clusters
            )
        ),
    )


def swarm_vs_solo(
    items: Iterable[ItemResult],
) -> tuple[dict[RowKey, SwarmVsSolo], dict[OverallKey, SwarmVsSolo]]:
    """The swarm against its twin per fixture x agent x model and per agent x model."""
    cells = _cells(items)
    rows: dict[RowKey, SwarmVsSolo] = {}
    suites: dict[OverallKey, list[tuple[str, _Cell]]] = {}
    for (fixture, agent, model), cell in cells.items():
        excluded = {"errored": cell.errored, "delegated": cell.delegated, "unpaired": cell.unpaired}
        rows[(fixture, agent, model)] = judge_pairs(
            cell.pairs, agent + SOLO_SUFFIX, excluded, by_fixture=False
        )
        suites.setdefault((agent, model), []).append((fixture, cell))
    overall: dict[OverallKey, SwarmVsSolo] = {}
    for (agent, model), found in suites.items():
        pairs = [p for _, cell in found for p in cell.pairs]
        excluded = {
            "errored": sum(c.errored for _, c in found),
            "delegated": sum(c.delegated for _, c in found),
            "unpaired": sum(c.unpaired for _, c in found),
        }
        # One fixture: the suite is that fixture's trials, and its row's interval holds.
        many = len({p.fixture for p in pairs}) > 1
        overall[(agent, model)] = judge_pairs(pairs, agent + SOLO_SUFFIX, excluded, by_fixture=many)
    return rows, overall


def swarm_only(items: Iterable[ItemResult]) -> tuple[ItemResult, ...]:
    """The swarm's items: what comparisons, their gates and the agents side by side read
    (a twin is judged against its swarm, never as an agent of its own)."""
    return tuple(i for i in items if i.arm == "swarm")


def with_solo(
    comparison: Comparison, baseline: Iterable[ModelOverall], candidate: Iterable[ModelOverall]
) -> Comparison:
    """``comparison`` with each agent x model's swarm against its twin in both runs, as
    each run's overall rows already hold it."""
    before = {(o.agent, o.model): o.swarm_vs_solo for o in baseline if o.swarm_vs_solo}
    after = {(o.agent, o.model): o.swarm_vs_solo for o in candidate if o.swarm_vs_solo}
    shifts = tuple(
        SoloShift(agent, model, before.get((agent, model)), after.get((agent, model)))
        for agent, model in sorted(set(before) | set(after))
    )
    return dataclasses.replace(comparison, solo=shifts)
