"""The scorer's output: one :class:`ItemScore` per run, JSON-serialisable both ways.

``to_dict`` turns tuples into lists and nested records into objects; ``from_dict`` checks
every field's type and turns them back (:mod:`scorers.codec`), so
``ItemScore.from_dict(s.to_dict()) == s``.

Each criterion's verdict lives once, in ``checks`` (one :class:`Check` per registry
criterion): whether the run is resolved and why not are read from there, never stored
beside it.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Literal

from scorers.codec import decode, encode
from scorers.records import NO_TOKENS, TokenUsage
from scorers.types import SCORE_SCHEMA_VERSION

#: Which arm of an item a verdict is on: the swarm, or its solo twin (``run --solo``).
Arm = Literal["swarm", "solo"]


@dataclasses.dataclass(frozen=True, slots=True)
class WrongAnswer:
    """A shard whose bullets did not all equal the expected answer; ``got`` lists them all."""

    file: str
    expected: int | str
    got: tuple[str, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class DuplicateSpawn:
    """A spawn of ``child_id`` as ``name`` while ``held_by`` (a child id) held that name."""

    child_id: str
    name: str
    held_by: str
    at: str


@dataclasses.dataclass(frozen=True, slots=True)
class UntracedShard:
    """A shard whose answer could not be traced to work by its own child, and why."""

    file: str
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class Check:
    """One gating criterion's verdict (``scorers.criteria``): generic, whatever the rule.

    ``details`` holds what the criterion reported that :class:`ItemScore` has no field for
    (a new criterion's evidence), so nothing a judge says is dropped.
    """

    name: str
    passed: bool
    failing: tuple[str, ...]
    reason: str | None
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: The failure's kinds in words that stay the same from trial to trial ("events-03
    #: wrong", "worker-a not delegated"): what triage groups failed items by.
    signatures: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class UsageSummary:
    """What one run used, from the source the agent makes authoritative (``source``).

    ``total`` is everything billed (parent, children, the agent's internal calls);
    ``parent`` and ``children`` split it where the agent tells them apart (None where it
    does not); ``by_model`` splits it per model as the agent names them (empty when it does
    not say, and then every token is the run's model's). ``complete`` is False when the
    evidence is known to miss usage (a spawned child with no transcript, a stream cut
    short, a source that under-counts): the figures are then a lower bound, and ``gaps``
    says why. ``agent_reported_cost_usd`` is the agent's own price of the run, if it gives
    one (never used for ``cost_usd``, which the harness prices itself).
    """

    total: TokenUsage = NO_TOKENS
    parent: TokenUsage | None = None
    children: TokenUsage | None = None
    by_model: dict[str, TokenUsage] = dataclasses.field(default_factory=dict)
    complete: bool = True
    source: str = "none"
    gaps: tuple[str, ...] = ()
    agent_reported_cost_usd: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Efficiency:
    """How the swarm spent its work (reported, never gating; None where the evidence does
    not tell).

    ``tokens_per_shard``: total tokens / shards. ``children_share``: the children's part of
    the tokens. ``spawn_overhead``: depth-1 spawns / shards (1.0: one child per shard; more:
    retries or duplicates). ``peak_parallel_children``: the most children busy at once;
    ``busy_over_wall``: the children's busy time summed, over the parent's wall time (a
    parent that waits for each child before spawning the next shows about 1.0; eight
    children working side by side, about 8). Busy time runs from a child transcript's first
    to its last timestamp; the parent's wall time from its transcript's first to last.
    """

    shards: int = 0
    tokens_per_shard: float | None = None
    children_share: float | None = None
    depth1_spawns: int = 0
    spawn_overhead: float | None = None
    peak_parallel_children: int | None = None
    busy_over_wall: float | None = None
    parent_wall_s: float | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ItemScore:
    """The verdict on one run, with the evidence behind each criterion."""

    missing_shards: tuple[str, ...]
    wrong_answers: tuple[WrongAnswer, ...]
    live_depth1_edges: int
    distinct_worker_names: int
    child_session_dirs: int
    verified_shard_workers: tuple[str, ...]
    unverified_shard_workers: tuple[str, ...]
    duplicate_spawns: int
    duplicate_spawn_details: tuple[DuplicateSpawn, ...]
    total_spawns: int
    spawn_budget: int
    missing_receipts: tuple[str, ...]
    untraced_shards: tuple[str, ...]
    untraced_shard_details: tuple[UntracedShard, ...]
    ledger_malformed_lines: int
    ledger_unknown_ops: int
    ledger_torn_tail: bool
    transcript_malformed_lines: int
    child_session_malformed_lines: int
    stdout_malformed_lines: int
    #: ``usage.total.total``: every token billed (kept as one number for tables and gates).
    tokens_used: int
    turns: int
    assistant_messages: int
    failed_assistant_messages: int
    model_reached: bool
    agent_error: str | None
    parent_session_id: str | None
    #: Every criterion of the registry, in order: the one record of each verdict.
    checks: tuple[Check, ...] = ()
    #: None only in scores read from reports that predate them (``tokens_used`` alone).
    usage: UsageSummary | None = None
    efficiency: Efficiency | None = None
    schema_version: int = SCORE_SCHEMA_VERSION

    @property
    def resolved(self) -> bool:
        """Every criterion passed (a score with no checks resolves nothing)."""
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def failures(self) -> tuple[str, ...]:
        """One reason per failed criterion, in registry order."""
        return tuple(c.reason or f"{c.name}: failed" for c in self.checks if not c.passed)

    @property
    def failed_criteria(self) -> tuple[str, ...]:
        """The names of the failed criteria, in registry order."""
        return tuple(c.name for c in self.checks if not c.passed)

    def check(self, name: str) -> Check | None:
        """The verdict of criterion ``name``, or ``None`` when this score did not judge it
        (a score of an older rubric)."""
        return next((c for c in self.checks if c.name == name), None)

    def passed(self, name: str) -> bool | None:
        """Whether criterion ``name`` passed; ``None`` when it was not judged."""
        found = self.check(name)
        return None if found is None else found.passed

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (tuples become lists)."""
        return typing.cast(dict[str, Any], encode(self))

    @classmethod
    def from_dict(cls, data: object) -> ItemScore:
        """The inverse of :meth:`to_dict`; raises ``ValueError`` on any mismatch."""
        score = decode(cls, data, "ItemScore")
        if score.schema_version != SCORE_SCHEMA_VERSION:
            raise ValueError(
                f"ItemScore.schema_version: {score.schema_version}, "
                f"this scorer reads {SCORE_SCHEMA_VERSION}"
            )
        return score
