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

Every line is judged as its decoded JSON, field by field. A line in the product's own
compact form is read by one regular expression instead of the decoder, with the same
result (see "compact lines" below): decoding was half of a 1,800-shard re-score over a
capped ledger (``benchmarks/bench_rescore.py``).
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
    OTHER_ROOT = "other root"  # a valid spawn by a parent not kept (``parse_ledger``'s keep)


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


def _record(obj: object, paths: _Paths, keep: Collection[NormPath] | None) -> LedgerEvent | _Skip:
    """One decoded ledger line as an event, or why it yields none (``keep``: as
    :func:`parse_ledger`'s).

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
        return _spawn(obj, at, paths, keep)
    if op == "rename":
        return _rename(obj, at, paths)
    if op == "delete":
        return _delete(obj, at, paths)
    if op == "meta":
        return _Skip.IGNORED if type(obj.get("sessionsDir")) is str else _Skip.MALFORMED
    return _Skip.UNKNOWN


def _spawn(
    obj: dict[str, object], at: str, paths: _Paths, keep: Collection[NormPath] | None
) -> SpawnEvent | _Skip:
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
    if keep is not None and paths[parent] not in keep:
        # Checked before the event is built: a capped ledger of other roots' records is
        # mostly these, and their child paths (each new) need not be normalised.
        return _Skip.OTHER_ROOT
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


# --------------------------------------------------------------------------- compact lines
#
# prime-agent writes every record as compact JSON with its keys in one fixed order (CONTRACT
# section 4; the captured real runs agree). A line of exactly that shape whose strings are
# printable ASCII without a quote or a backslash (so without escapes) decodes to exactly what
# the pattern captures, every field already of its type: it is a valid record, and the
# decoder is not needed for it. Any other line (another key order, a space, an escape, a
# non-ASCII character, an extra field, a depth of 0) takes the decoder and is judged as
# above; so is the meta record, once per ledger.

#: A JSON string of printable ASCII other than ``"`` and ``\``, its body captured.
_TEXT = rb'"([ !#-\[\]-~]*)"'
#: A depth of 1 or more as JSON writes it; one longer than 18 digits takes the decoder.
_DEPTH = rb"([1-9][0-9]{0,17})"
#: The three event records in compact form, one pattern: groups 1-6 are a spawn's (at,
#: childId, parent, child, depth, name), 7-10 a rename's (at, childId, child, name), 11-13
#: a delete's (at, childId, child; its optional reason is checked, not kept).
_COMPACT = re.compile(
    rb'\{"v":1,"op":"(?:'
    rb'spawn","at":' + _TEXT + rb',"childId":' + _TEXT + rb',"parent":' + _TEXT
    + rb',"child":' + _TEXT + rb',"depth":' + _DEPTH + rb',"name":' + _TEXT
    + rb'|rename","at":' + _TEXT + rb',"childId":' + _TEXT + rb',"child":' + _TEXT
    + rb',"name":' + _TEXT
    + rb'|delete","at":' + _TEXT + rb',"childId":' + _TEXT + rb',"child":' + _TEXT
    + rb'(?:,"reason":' + _TEXT + rb")?"
    + rb")\}"
)  # fmt: skip


def _compact(
    payload: bytes, paths: _Paths, keep: Collection[NormPath] | None
) -> LedgerEvent | _Skip | None:
    """The event of a line in compact form (``_Skip.OTHER_ROOT`` for a spawn ``keep`` does
    not want), or None for any other line. Every capture is ASCII."""
    match = _COMPACT.fullmatch(payload)
    if match is None:
        return None
    spawn = match.group(1, 2, 3, 4, 5, 6)
    if spawn[0] is not None:
        parent = spawn[2].decode("ascii")
        if keep is not None and paths[parent] not in keep:
            return _Skip.OTHER_ROOT  # before the rest is decoded: most of a capped ledger
        at, child_id, _, child, depth, name = (part.decode("ascii") for part in spawn)
        return _spawn_event(paths, child_id, child, parent, int(depth), name, at)
    rename = match.group(7, 8, 9, 10)
    if rename[0] is not None:
        at, child_id, child, name = (part.decode("ascii") for part in rename)
        return RenameEvent._make((child_id, paths[child], name, at))
    at, child_id, child = (part.decode("ascii") for part in match.group(11, 12, 13))
    return DeleteEvent._make((child_id, paths[child], at))


def parse_ledger(stream: IO[bytes], keep: Collection[NormPath] | None = None) -> LedgerParse:
    """Read a whole ledger; never raises on any input bytes.

    ``keep``: the (normalised) parent paths whose spawns are wanted. One ledger serves every
    root of a sessions dir, and another root's spawns can never become this run's edges
    (their child paths lie under another root), so they are dropped here (a capped ledger
    of other roots' records then holds few events). Their renames and deletes are kept:
    they apply to no edge of ours. None keeps every spawn.
    """
    paths = _Paths()
    events: list[LedgerEvent] = []
    malformed = 0
    unknown = 0
    torn = False
    for payload, terminated in iter_raw_lines(stream):
        compact = _compact(payload, paths, keep) if payload is not None else None
        if compact is not None:
            if not isinstance(compact, _Skip):  # else another root's spawn
                events.append(compact)
            continue
        value = decode_json(payload)
        if value is MALFORMED and is_blank(payload):
            continue
        result = _Skip.MALFORMED if value is MALFORMED else _record(value, paths, keep)
        if isinstance(result, _Skip):
            if result is _Skip.UNKNOWN:
                unknown += 1
            elif result is _Skip.MALFORMED and terminated:
                malformed += 1
            elif result is _Skip.MALFORMED:
                torn = True
        else:
            events.append(result)
    return LedgerParse(tuple(events), malformed, unknown, torn)
