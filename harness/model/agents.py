"""Agents side by side: a run of several agents (``--agent`` repeated) on the same fixtures.

Each agent x model gets its standing over the run's fixtures (resolved rate with the fixed
suite's interval, what an item and a resolved item cost), and every other agent is compared
with the reference agent (the first ``--agent``) as a candidate with its baseline: rate
differences with their intervals and verdicts, and the cost ratio
(:mod:`harness.stats.compare`). These comparisons inform; no gate reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.model.comparison import Comparison
from harness.model.record import Interval, Record
from harness.model.summary import PerResolved


@dataclass(frozen=True)
class AgentStanding(Record):
    """One agent x model over the run's fixtures.

    ``rate``/``ci``: the equal-weight mean of the fixtures' resolved rates with the
    stratified Wilson interval (as ``overall``); ``mean_cost_usd`` and ``mean_tokens`` per
    scored item, ``cost_per_resolved_usd`` and ``tokens_per_resolved`` the totals over the
    resolved items with their interval, the fixtures' scored items pooled (the figure the
    cost chart plots; its ``value`` None: nothing resolved; ``cost_per_resolved_usd`` None:
    some item without a price); ``mean_wall_time_s`` per scored item."""

    agent: str
    model: str
    fixtures: int
    n: int
    errors: int
    resolved: int
    rate: float | None
    ci: Interval | None
    mean_cost_usd: float | None
    mean_tokens: float | None
    cost_per_resolved_usd: PerResolved | None
    tokens_per_resolved: PerResolved | None
    mean_wall_time_s: float | None


@dataclass(frozen=True)
class AgentVersus(Record):
    """``agent`` as the candidate against the ``reference`` agent as the baseline, on the
    fixtures (and models) both ran."""

    agent: str
    reference: str
    comparison: Comparison


@dataclass(frozen=True)
class AgentsComparison(Record):
    """The run's agents side by side (present when the run has more than one)."""

    reference: str
    agents: tuple[str, ...]
    standings: tuple[AgentStanding, ...]
    versus: tuple[AgentVersus, ...]


__all__ = ["AgentStanding", "AgentVersus", "AgentsComparison"]
