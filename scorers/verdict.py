"""The scorer's output: one :class:`ItemScore` per run, JSON-serialisable both ways.

``to_dict`` turns tuples into lists and nested records into objects; ``from_dict`` checks
every field's type and turns them back, so ``ItemScore.from_dict(s.to_dict()) == s``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any, TypeVar, get_args, get_origin, get_type_hints

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
    """One gating criterion's verdict (``scorers.criteria``): generic, whatever the rule."""

    name: str
    field: str
    passed: bool
    failing: tuple[str, ...]
    reason: str | None


@dataclasses.dataclass(frozen=True, slots=True)
class ItemScore:
    """The verdict on one run, with the evidence behind each criterion."""

    resolved: bool
    coverage: bool
    missing_shards: tuple[str, ...]
    wrong_answers: tuple[WrongAnswer, ...]
    delegation_evidence: bool
    live_depth1_edges: int
    distinct_worker_names: int
    child_session_dirs: int
    verified_shard_workers: tuple[str, ...]
    unverified_shard_workers: tuple[str, ...]
    dedup: bool
    duplicate_spawns: int
    duplicate_spawn_details: tuple[DuplicateSpawn, ...]
    total_spawns: int
    spawn_budget: int
    receipts: bool
    missing_receipts: tuple[str, ...]
    provenance: bool
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
    failures: tuple[str, ...]
    #: Every criterion of the registry, in order; the flat flags above mirror the built-in ones.
    checks: tuple[Check, ...] = ()
    schema_version: int = SCORE_SCHEMA_VERSION

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict (tuples become lists)."""
        return typing.cast(dict[str, Any], _encode(self))

    @classmethod
    def from_dict(cls, data: object) -> ItemScore:
        """The inverse of :meth:`to_dict`; raises ``ValueError`` on any mismatch."""
        score = _decode(cls, data, "ItemScore")
        if score.schema_version != SCORE_SCHEMA_VERSION:
            raise ValueError(
                f"ItemScore.schema_version: {score.schema_version}, "
                f"this scorer reads {SCORE_SCHEMA_VERSION}"
            )
        return score


def _encode(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_encode(item) for item in value]
    return value


_T = TypeVar("_T")


def _decode(hint: type[_T], value: object, where: str) -> _T:
    """Check ``value`` against the type ``hint`` and rebuild it."""
    return typing.cast(_T, _decode_any(hint, value, where))


def _decode_any(hint: object, value: object, where: str) -> object:
    origin = get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in get_args(hint):
            try:
                return _decode_any(option, value, where)
            except ValueError:
                continue
        raise ValueError(f"{where}: {value!r} is not {hint}")
    if origin is tuple:
        (item_hint, _ellipsis) = get_args(hint)
        if not isinstance(value, list | tuple):
            raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
        return tuple(_decode_any(item_hint, item, f"{where}[{i}]") for i, item in enumerate(value))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_record(hint, value, where)
    if hint is type(None):
        if value is None:
            return None
        raise ValueError(f"{where}: expected null, got {value!r}")
    if hint is int and isinstance(value, int) and not isinstance(value, bool):
        return value
    if hint in (bool, str) and type(value) is hint:
        return value
    raise ValueError(f"{where}: expected {getattr(hint, '__name__', hint)}, got {value!r}")


def _decode_record(cls: type, value: object, where: str) -> object:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {type(value).__name__}")
    hints = get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    unknown = sorted(set(value) - set(names))
    missing = [name for name in names if name not in value]
    if unknown or missing:
        raise ValueError(f"{where}: unknown fields {unknown}, missing fields {missing}")
    return cls(**{name: _decode_any(hints[name], value[name], f"{where}.{name}") for name in names})
