"""Parse prime-agent's RLM spawn ledger (CONTRACT section 4) into ledger events.

Every record is a JSON object with ``v == 1``, a string ``op`` and a string ``at``. Known
ops and their required fields:

- ``meta``: ``sessionsDir`` (string); carries nothing the rubric needs.
- ``spawn``: ``childId``, ``parent``, ``child``, ``name`` (strings), ``depth`` (integer
  >= 1; a JSON boolean is not an integer).
- ``rename``: ``childId``, ``child``, ``name`` (strings).
- ``delete``: ``childId``, ``child`` (strings); ``reason`` optional, any string.

A record with ``v == 1``, a string ``at`` and an op we do not know is forward-compatible:
counted in ``unknown_ops`` and ignored. Anything else is malformed: counted and skipped.
A final line without a trailing newline that is not a valid record is a torn tail (normal
after a crash): flagged, not counted as malformed.
"""

from __future__ import annotations

from enum import Enum
from typing import IO

from scorers.lines import MALFORMED, iter_json_lines
from scorers.records import (
    DeleteEvent,
    LedgerEvent,
    LedgerParse,
    NormPath,
    RenameEvent,
    SpawnEvent,
    last_part,
    normalize_path,
)


class _Skip(Enum):
    """Why a ledger line produced no event."""

    MALFORMED = "malformed"
    IGNORED = "ignored"  # a valid op the rubric does not need (``meta``)
    UNKNOWN = "unknown"  # a forward-compatible op we do not know


_KNOWN_OPS = frozenset({"meta", "spawn", "rename", "delete"})

_SESSION_SUFFIX = ".jsonl"


def session_id_of(child: NormPath) -> str:
    """The session id of a child file: its name without ``.jsonl`` (prime-agent names
    each session file after its id)."""
    return last_part(child).removesuffix(_SESSION_SUFFIX)


class _Parents:
    """Normalised parent paths, remembered: the same few repeat on every spawn (and the
    memo never holds more than the ledger itself does)."""

    def __init__(self) -> None:
        self._seen: dict[str, NormPath] = {}

    def normalize(self, path: str) -> NormPath:
        norm = self._seen.get(path)
        if norm is None:
            norm = self._seen[path] = normalize_path(path)
        return norm


def _record(obj: object, parents: _Parents) -> LedgerEvent | _Skip:
    """One decoded ledger line as an event, or why it yields none.

    Types are checked exactly (``type(x) is int``): JSON decodes only to exact builtins,
    and a JSON ``true`` must not pass for the integer 1 as ``isinstance`` would let it.
    """
    if type(obj) is not dict:
        return _Skip.MALFORMED
    get = obj.get
    v = get("v")
    at = get("at")
    op = get("op")
    if type(v) is not int or v != 1 or type(at) is not str or type(op) is not str:
        return _Skip.MALFORMED
    if op not in _KNOWN_OPS:
        return _Skip.UNKNOWN
    if op == "meta":
        return _Skip.IGNORED if type(get("sessionsDir")) is str else _Skip.MALFORMED
    child_id = get("childId")
    child = get("child")
    if type(child_id) is not str or type(child) is not str:
        return _Skip.MALFORMED
    if op == "spawn":
        parent = get("parent")
        depth = get("depth")
        name = get("name")
        if type(parent) is not str or type(name) is not str:
            return _Skip.MALFORMED
        if type(depth) is not int or depth < 1:
            return _Skip.MALFORMED
        child_parts = normalize_path(child)
        return SpawnEvent(
            child_id,
            child_parts,
            session_id_of(child_parts),
            parents.normalize(parent),
            depth,
            name,
            at,
        )
    if op == "rename":
        name = get("name")
        if type(name) is not str:
            return _Skip.MALFORMED
        return RenameEvent(child_id, normalize_path(child), name, at)
    if "reason" in obj and type(obj["reason"]) is not str:
        return _Skip.MALFORMED
    return DeleteEvent(child_id, normalize_path(child), at)


def parse_ledger(stream: IO[bytes]) -> LedgerParse:
    """Read a whole ledger; never raises on any input bytes."""
    parents = _Parents()
    events: list[LedgerEvent] = []
    malformed = 0
    unknown = 0
    torn = False
    for value, terminated in iter_json_lines(stream):
        result = _Skip.MALFORMED if value is MALFORMED else _record(value, parents)
        if not isinstance(result, _Skip):
            events.append(result)
        elif result is _Skip.UNKNOWN:
            unknown += 1
        elif result is _Skip.MALFORMED:
            if terminated:
                malformed += 1
            else:
                torn = True
    return LedgerParse(tuple(events), malformed, unknown, torn)
