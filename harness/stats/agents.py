"""Agents side by side (:mod:`harness.model.agents`): each agent x model's standing, and
every other agent compared with the reference agent by the run-to-run comparison
(:func:`harness.stats.compare.compare`), the reference as its baseline.

The agents of one run ran the same fixtures interleaved under the same conditions (same
machine, same model endpoint, same time), which is what makes their comparison fair; their
trials are still independent samples, compared as two runs are.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harness.errors import UsageError
from harness.model.agents import AgentsComparison, AgentStanding, AgentVersus
from harness.model.comparison import DEFAULT_COST_THRESHOLD, DEFAULT_THRESHOLD
from harness.model.item import ItemResult
from harness.stats.compare import compare
from harness.stats.summaries import overall, per_resolved_costs


def agents_in(items: Sequence[ItemResult], order: Sequence[str] = ()) -> tuple[str, ...]:
    """The agents of ``items``: those of ``order`` first (the run's ``--agent`` order),
    then any other by name."""
    present = {i.agent for i in items}
    first = [a for a in order if a in present]
    return (*first, *sorted(present - set(first)))


def agents_comparison(
    items: Sequence[ItemResult],
    order: Sequence[str] = (),
    reference: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    cost_threshold: float = DEFAULT_COST_THRESHOLD,
) -> AgentsComparison | None:
    """The agents of ``items`` side by side (None with fewer than two). ``order``: the
    run's agents in ``--agent`` order; ``reference`` (default: the first) is the baseline
    every other agent is compared with; a reference the run does not have is refused."""
    agents = agents_in(items, order)
    if len(agents) < 2:
        return None
    reference = reference if reference is not None else agents[0]
    if reference not in agents:
        raise UsageError(f"--reference {reference}: not an agent of this run ({', '.join(agents)})")
    by_agent = {a: [i for i in items if i.agent == a] for a in agents}
    versus = tuple(
        AgentVersus(
            agent,
            reference,
            compare(
                by_agent[reference],
                by_agent[agent],
                threshold,
                f"agent {reference}",
                None,
                cost_threshold,
            ),
        )
        for agent in agents
        if agent != reference
    )
    standings = tuple(s for agent in agents for s in _standings(by_agent[agent]))
    return AgentsComparison(reference, agents, standings, versus)


def _standings(items: Sequence[ItemResult]) -> list[AgentStanding]:
    """One agent's standing per model (its items only)."""
    rates = {(o.agent, o.model): o for o in overall(items)}
    out = []
    for agent, model in sorted({(i.agent, i.model) for i in items}):
        mine = [i for i in items if i.model == model]
        scored = [i for i in mine if i.status != "error"]
        resolved = sum(1 for i in scored if i.resolved)
        costs = [i.cost_usd for i in scored]
        priced = [c for c in costs if c is not None]
        all_priced = bool(scored) and len(priced) == len(costs)
        tokens = [float(i.score.tokens_used) for i in scored]
        usd_per_resolved, tokens_per_resolved = per_resolved_costs(scored)
        rate = rates.get((agent, model))
        out.append(
            AgentStanding(
                agent=agent,
                model=model,
                fixtures=len({i.fixture for i in scored}),
                n=len(scored),
                errors=len(mine) - len(scored),
                resolved=resolved,
                rate=rate.rate if rate is not None else None,
                ci=rate.ci if rate is not None else None,
                mean_cost_usd=_mean(priced) if all_priced else None,
                mean_tokens=_mean(tokens),
                cost_per_resolved_usd=usd_per_resolved,
                tokens_per_resolved=tokens_per_resolved,
                mean_wall_time_s=_mean([i.facts.wall_time_s for i in scored]),
            )
        )
    return out


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


__all__ = ["agents_comparison", "agents_in"]
