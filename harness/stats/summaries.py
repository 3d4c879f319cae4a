"""Aggregating item results into per-(fixture, agent, model) and per-(agent, model)
summaries.

Errored items (the harness could not run the agent, or the run was interrupted) are
counted in ``errors`` and listed, but kept out of every rate and mean: a missing result is
not a failure of the agent. A criterion an item's score did not judge (a report of an
older rubric) is left out of that criterion's rate, never counted as a failure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from harness.model.item import ItemResult
from harness.model.summary import (
    MEASURES,
    FixturesAsSample,
    FixtureSummary,
    ModelOverall,
    PerResolved,
    RateEntry,
    SequentialCell,
)
from harness.stats import rates
from harness.stats.per_resolved import per_resolved
from harness.stats.strata import stratified_rate
from scorers.criteria import criterion_names

#: Fewest fixtures for the "fixtures as a random sample" interval: below this, the spread
#: between fixtures is estimated from too few values to say anything about other fixtures.
MIN_FIXTURES_FOR_GENERALISATION = 10

#: A cell of a run: (fixture, agent, model).
GroupKey = tuple[str, str, str]


def cell_of(item: ItemResult) -> GroupKey:
    return item.fixture, item.agent, item.model


def group_items(items: Iterable[ItemResult]) -> dict[GroupKey, list[ItemResult]]:
    """Items by (fixture, agent, model), in that order."""
    groups: dict[GroupKey, list[ItemResult]] = {}
    for item in sorted(items, key=lambda i: (*cell_of(i), i.trial)):
        groups.setdefault(cell_of(item), []).append(item)
    return groups


def rate_entry(outcomes: Sequence[bool]) -> RateEntry:
    """A count with its rate and (boundary-modified) Wilson interval; None without any."""
    n = len(outcomes)
    if n == 0:
        return RateEntry(0, None, None)
    successes = sum(outcomes)
    summary = stratified_rate([(successes, n)])
    return RateEntry(successes, summary.rate, summary.ci)


def recorded(items: Iterable[ItemResult], criterion: str) -> list[bool]:
    """The outcomes of ``criterion`` in the items that judged it."""
    return [v for v in (i.passed(criterion) for i in items) if v is not None]


def measure_values(items: Iterable[ItemResult], name: str) -> list[float]:
    return [v for v in (i.measure(name) for i in items) if v is not None]


def summarize(
    items: Sequence[ItemResult],
    sequential: Mapping[GroupKey, SequentialCell] | None = None,
) -> list[FixtureSummary]:
    """Per fixture x agent x model: n (scored), errors, resolved count/rate/Wilson CI, criteria,
    measures, pass@k and pass^k; with ``sequential`` (``--trials auto``), how each cell's
    sequence ended."""
    sequential = sequential or {}
    out: list[FixtureSummary] = []
    for (fixture, agent, model), group in group_items(items).items():
        scored = [i for i in group if i.status != "error"]
        errored = sorted(i.key for i in group if i.status == "error")
        n = len(scored)
        resolved = sum(1 for i in scored if i.resolved)
        main = rate_entry([i.resolved for i in scored])
        usd, tokens = per_resolved_costs(scored)
        cell = sequential.get((fixture, agent, model))
        ks = range(1, min(n, len({i.trial for i in group})) + 1)
        out.append(
            FixtureSummary(
                fixture=fixture,
                agent=agent,
                model=model,
                n=n,
                errors=len(errored),
                errored_keys=tuple(errored),
                resolved=resolved,
                rate=main.rate,
                ci=main.ci,
                criteria={c: rate_entry(recorded(scored, c)) for c in criterion_names()},
                measures={m: rates.mean_interval(measure_values(scored, m)) for m in MEASURES},
                pass_at_k={str(k): rates.pass_at_k(n, resolved, k) for k in ks},
                pass_hat_k={str(k): rates.pass_hat_k(n, resolved, k) for k in ks},
                cost_per_resolved_usd=usd,
                tokens_per_resolved=tokens,
                unpriced=sum(1 for i in scored if i.cost_usd is None),
                usage_complete=usage_complete(scored),
                stop_reason=cell.stop_reason if cell is not None else None,
                sequential=cell,
            )
        )
    return out


def per_resolved_costs(
    scored: Sequence[ItemResult],
) -> tuple[PerResolved | None, PerResolved | None]:
    """USD and tokens per resolved item of scored items (one fixture x model's, or an agent
    x model's over its fixtures); USD None when an item has no price (a part of the total
    unknown is no total)."""
    if not scored:
        return None, None
    outcomes = [i.resolved for i in scored]
    costs = [i.cost_usd for i in scored]
    usd = None
    if all(c is not None for c in costs):
        usd = per_resolved([c for c in costs if c is not None], outcomes)
    return usd, per_resolved([float(i.score.tokens_used) for i in scored], outcomes)


def usage_complete(items: Iterable[ItemResult]) -> bool:
    """Whether every item's usage is complete (not a lower bound)."""
    return all(i.score.usage is None or i.score.usage.complete for i in items)


def overall(items: Sequence[ItemResult]) -> list[ModelOverall]:
    """Per agent x model: the equal-weight mean of its fixtures' resolved rates, fixtures as
    strata.

    The interval is the stratified Wilson interval of the fixed suite (:mod:`harness.stats.strata`).
    With many fixtures, ``random_fixtures`` adds the cluster-robust interval that treats the
    fixtures as a sample of possible fixtures (Miller 2024); it is reported, never gating.
    """
    by_model: dict[tuple[str, str], dict[str, list[bool]]] = {}
    for (fixture, agent, model), group in group_items(items).items():
        outcomes = [i.resolved for i in group if i.status != "error"]
        if outcomes:
            by_model.setdefault((agent, model), {})[fixture] = outcomes
    out = []
    for agent, model in sorted(by_model):
        fixtures = by_model[(agent, model)]
        summary = stratified_rate([(sum(v), len(v)) for v in fixtures.values()])
        random_fixtures = None
        if len(fixtures) >= MIN_FIXTURES_FOR_GENERALISATION:
            clustered = rates.clustered_rate(fixtures)
            random_fixtures = FixturesAsSample(
                clustered.rate, clustered.se, clustered.ci, "cluster-robust-t"
            )
        out.append(
            ModelOverall(
                agent=agent,
                model=model,
                strata=summary.strata,
                n=summary.n,
                n_effective=summary.n_effective,
                rate=summary.rate,
                ci=summary.ci,
                confidence=summary.confidence,
                method="stratified-wilson",
                resolved=sum(sum(v) for v in fixtures.values()),
                random_fixtures=random_fixtures,
            )
        )
    return out
