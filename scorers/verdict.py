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
from typing import Any

from scorers.codec import decode, encode
from scorers.types import SCORE_SCHEMA_VERSION


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
    tokens_used: int
    parent_tokens: int
    child_tokens: int
    turns: int
    assistant_messages: int
    failed_assistant_messages: int
    model_reached: bool
    agent_error: str | None
    parent_session_id: str | None
    #: Every criterion of the registry, in order: the one record of each verdict.
    checks: tuple[Check, ...] = ()
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
