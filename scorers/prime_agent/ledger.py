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

Lines in the product's own compact form are read with one regular expression instead of
the JSON decoder (see "canonical lines" below); every other line is decoded and checked
field by field, with the same result either way.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from enum import Enum
from typing import IO

from scorers.lines import MALFORMED, decode_json, is_blank, iter_raw_lines
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


_SESSION_SUFFIX = ".jsonl"


def session_id_of(child: NormPath) -> str:
    """The session id of a child file: its name without ``.jsonl`` (prime-agent names
    each session file after its id)."""
    return last_part(child).removesuffix(_SESSION_SUFFIX)


class _Paths(dict[str, NormPath]):
    """Normalised paths, remembered: a parent repeats on every spawn and a child's path on
    each of its renames and deletes (the memo never holds more than the ledger does). A
    ``dict`` whose misses normalise, so a hit costs one lookup; sharing one string per path
    also makes the replay's edge keys cheap to hash."""

    __slots__ = ()

    def __missing__(self, path: str) -> NormPath:
        norm = self[path] = normalize_path(path)
        return norm


def _spawn_event(
    paths: _Paths, child_id: str, child: str, parent: str, depth: int, name: str, at: str
) -> SpawnEvent:
    norm = paths[child]
    fields = (child_id, norm, session_id_of(norm), paths[parent], depth, name, at)
    return SpawnEvent._make(fields)


# ------------------------------------------------------------------------ any JSON line


def _record(obj: object, paths: _Paths) -> LedgerEvent | _Skip:
    """One decoded ledger line as an event, or why it yields none.

    Types are checked exactly (``type(x) is int``): JSON decodes only to exact builtins,
    and a JSON ``true`` must not pass for the integer 1 as ``isinstance`` would let it.
    Fields are read by subscript (a missing one is malformed).
    """
    if type(obj) is not dict:
        return _Skip.MALFORMED
    try:
        v = obj["v"]
        at = obj["at"]
        op = obj["op"]
    except KeyError:
        return _Skip.MALFORMED
    if type(v) is not int or v != 1 or type(at) is not str or type(op) is not str:
        return _Skip.MALFORMED
    if op == "spawn":
        return _spawn(obj, at, paths)
    if op == "rename":
        return _rename(obj, at, paths)
    if op == "delete":
        return _delete(obj, at, paths)
    if op == "meta":
        return _Skip.IGNORED if type(obj.get("sessionsDir")) is str else _Skip.MALFORMED
    return _Skip.UNKNOWN


def _spawn(obj: dict[str, object], at: str, paths: _Paths) -> SpawnEvent | _Skip:
    try:
        child_id = obj["childId"]
        child = obj["child"]
        parent = obj["parent"]
        depth = obj["depth"]
        name = obj["name"]
    except KeyError:
        return _Skip.MALFORMED
    if (
        type(child_id) is not str
        or type(child) is not str
        or type(parent) is not str
        or type(name) is not str
        or type(depth) is not int
        or depth < 1
    ):
        return _Skip.MALFORMED
    return _spawn_event(paths, child_id, child, parent, depth, name, at)


def _rename(obj: dict[str, object], at: str, paths: _Paths) -> RenameEvent | _Skip:
    try:
        child_id = obj["childId"]
        child = obj["child"]
        name = obj["name"]
    except KeyError:
        return _Skip.MALFORMED
    if type(child_id) is not str or type(child) is not str or type(name) is not str:
        return _Skip.MALFORMED
    return RenameEvent._make((child_id, paths[child], name, at))


def _delete(obj: dict[str, object], at: str, paths: _Paths) -> DeleteEvent | _Skip:
    try:
        child_id = obj["childId"]
        child = obj["child"]
    except KeyError:
        return _Skip.MALFORMED
    if type(child_id) is not str or type(child) is not str:
        return _Skip.MALFORMED
    if "reason" in obj and type(obj["reason"]) is not str:
        return _Skip.MALFORMED
    return DeleteEvent._make((child_id, paths[child], at))


# ---------------------------------------------------------------------- canonical lines
#
# The product writes every record as compact JSON with its keys in one fixed order
# (CONTRACT section 4; the real runs confirm it). A line of exactly that shape whose
# strings are plain printable ASCII (no escapes, quotes, control or non-ASCII characters)
# decodes to exactly the dict its regular expression captures, with every type already
# right, so it is read without the JSON decoder: at the ledger cap that is most of the
# parse. Any other line (another key order, whitespace, an escape, an extra field) takes
# the general path above and is judged exactly as before.

#: The body of a JSON string of plain printable ASCII: no ``"``, no ``\\`` (so no escapes),
#: nothing below U+0020 and nothing above U+007E.
_PLAIN_CHARS = r"[ !#-\[\]-~]*"
_PLAIN = rf'"({_PLAIN_CHARS})"'

#: A depth >= 1 without a leading zero; longer ones (no real ledger has them) take the
#: general path, so the decoder's limits on huge integers still apply to them.
_DEPTH = r"([1-9][0-9]{0,17})"

#: The three event records in canonical form, as one pattern (one match per line): groups
#: 1-6 are a spawn's, 7-10 a rename's, 11-13 a delete's (its ``reason`` is not kept).
_CANONICAL_LINE = re.compile(
    r'\{"v":1,"op":"(?:'
    rf'spawn","at":{_PLAIN},"childId":{_PLAIN},"parent":{_PLAIN},"child":{_PLAIN},'
    rf'"depth":{_DEPTH},"name":{_PLAIN}'
    rf'|rename","at":{_PLAIN},"childId":{_PLAIN},"child":{_PLAIN},"name":{_PLAIN}'
    rf'|delete","at":{_PLAIN},"childId":{_PLAIN},"child":{_PLAIN}'
    rf'(?:,"reason":"{_PLAIN_CHARS}")?'
    r")\}"
)


def _canonical(
    payload: bytes, paths: _Paths, keep: Collection[NormPath] | None
) -> LedgerEvent | _Skip | None:
    """The event on a line in the product's canonical form (``_Skip.IGNORED`` for another
    root's spawn when ``keep`` names the parents wanted), else ``None``."""
    try:
        match = _CANONICAL_LINE.fullmatch(payload.decode())
    except UnicodeDecodeError:
        return None
    if match is None:
        return None
    groups = match.groups()
    if groups[0] is not None:
        at, child_id, parent, child, depth, name = groups[:6]
        if keep is not None and paths[parent] not in keep:
            return _Skip.IGNORED
        return _spawn_event(paths, child_id, child, parent, int(depth), name, at)
    if groups[6] is not None:
        at, child_id, child, name = groups[6:10]
        return RenameEvent._make((child_id, paths[child], name, at))
    at, child_id, child = groups[10:]
    return DeleteEvent._make((child_id, paths[child], at))


def parse_ledger(stream: IO[bytes], keep: Collection[NormPath] | None = None) -> LedgerParse:
    """Read a whole ledger; never raises on any input bytes.

    ``keep``: the (normalised) parent paths whose spawns are wanted. One ledger serves every
    root of a sessions dir, and another root's spawns can never become this run's edges
    (their child paths lie under another root), so they are skipped as soon as their
    parent is read, without building their events (a capped ledger of other roots' records
    is then mostly skipped). Their renames and deletes still parse: they apply to no edge
    of ours. None keeps every spawn.
    """
    paths = _Paths()
    events: list[LedgerEvent] = []
    malformed = 0
    unknown = 0
    torn = False
    for payload, terminated in iter_raw_lines(stream):
        event = _canonical(payload, paths, keep) if payload is not None else None
        if event is not None:
            if type(event) is not _Skip:
                events.append(event)
            continue
        value = decode_json(payload)
        if value is MALFORMED and is_blank(payload):
            continue
        result = _Skip.MALFORMED if value is MALFORMED else _record(value, paths)
        if type(result) is SpawnEvent and keep is not None and result.parent not in keep:
            continue
        if type(result) is not _Skip:
            events.append(result)
        elif result is _Skip.UNKNOWN:
            unknown += 1
        elif result is _Skip.MALFORMED:
            if terminated:
                malformed += 1
            else:
                torn = True
    return LedgerParse(tuple(events), malformed, unknown, torn)
