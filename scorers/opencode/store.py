"""Read the three tables of ``opencode.db`` a scorer needs: ``session``, ``message``, ``part``.

The database is rebuilt in memory from bytes (:mod:`scorers.opencode.wal`) and loaded with
``sqlite3``'s ``deserialize``: no file is opened, none is written. Nothing here raises on
any input bytes. A database SQLite cannot read at all, a table that is missing or breaks
off in the middle (a truncated file: the rows before the break are kept) and a WAL that
cannot be applied are *defects* of the database; a row whose columns have the wrong types
or whose ``data`` is not a JSON object is a *malformed row* of the session it names. Rows
come back ordered by creation time, then id (opencode's session ids sort backwards in
time, so ids alone would reverse them).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, TypeVar

from scorers.opencode.wal import apply_wal, rollback_mode

_R = TypeVar("_R")

#: The largest main file or WAL the scorer loads (each): a 3-shard run is 5 MB, so this
#: leaves room for runs hundreds of times larger while refusing to exhaust memory.
MAX_DB_BYTES: Final = 1024 * 1024 * 1024

#: Columns read, in order. The ``data`` column holds each row's JSON object.
SESSION_SQL: Final = "SELECT id, parent_id, title, time_created, time_updated FROM session"
MESSAGE_SQL: Final = "SELECT id, session_id, time_created, time_updated, data FROM message"
PART_SQL: Final = "SELECT id, message_id, session_id, time_created, time_updated, data FROM part"


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One session: ``parent_id`` is ``None`` for a root. Times are epoch milliseconds."""

    id: str
    parent_id: str | None
    title: str
    created: int
    updated: int


@dataclass(frozen=True, slots=True)
class MessageRow:
    """One message (``data``: its JSON: ``role``, ``tokens``, ``error``, ``time`` ...)."""

    id: str
    session_id: str
    created: int
    updated: int
    data: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class PartRow:
    """One part of a message (``data``: its JSON, ``type`` ``text`` / ``tool`` / ...)."""

    id: str
    message_id: str
    session_id: str
    created: int
    updated: int
    data: Mapping[str, object]


@dataclass(frozen=True, slots=True)
class Store:
    """What the database holds, as far as it could be read.

    ``defects`` counts problems of the database as a whole; ``malformed`` counts the rows
    that could not be read, per session id they name (``""``: naming none).
    """

    sessions: tuple[SessionRow, ...] = ()
    messages: tuple[MessageRow, ...] = ()
    parts: tuple[PartRow, ...] = ()
    defects: int = 0
    malformed: Mapping[str, int] = field(default_factory=dict)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _object(value: object) -> Mapping[str, object] | None:
    if not isinstance(value, str):
        return None
    try:
        data = json.loads(value)
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _session(row: tuple[object, ...]) -> SessionRow | None:
    sid, parent, title, created, updated = row
    sid, created, updated = _text(sid), _int(created), _int(updated)
    if sid is None or created is None or updated is None:
        return None
    if parent is not None and _text(parent) is None:
        return None
    return SessionRow(sid, _text(parent), title if isinstance(title, str) else "", created, updated)


def _message(row: tuple[object, ...]) -> MessageRow | None:
    mid, sid, created, updated, data = row
    mid, sid, created, updated = _text(mid), _text(sid), _int(created), _int(updated)
    parsed = _object(data)
    if mid is None or sid is None or created is None or updated is None or parsed is None:
        return None
    return MessageRow(mid, sid, created, updated, parsed)


def _part(row: tuple[object, ...]) -> PartRow | None:
    pid, mid, sid, created, updated, data = row
    pid, mid, sid = _text(pid), _text(mid), _text(sid)
    created, updated, parsed = _int(created), _int(updated), _object(data)
    if pid is None or mid is None or sid is None or created is None or updated is None:
        return None
    if parsed is None:
        return None
    return PartRow(pid, mid, sid, created, updated, parsed)


def _rows(con: sqlite3.Connection, sql: str) -> Iterator[tuple[object, ...] | None]:
    """Every row ``sql`` yields; a trailing ``None`` when reading broke off (or never
    started: a missing table or column)."""
    try:
        for row in con.execute(sql):
            yield tuple(row)
    except sqlite3.Error:
        yield None


class _Reader:
    def __init__(self, con: sqlite3.Connection) -> None:
        self.con = con
        self.defects = 0
        self.malformed: Counter[str] = Counter()

    def table(
        self, sql: str, make: Callable[[tuple[object, ...]], _R | None], owner: int
    ) -> list[_R]:
        found: list[_R] = []
        for row in _rows(self.con, sql):
            if row is None:
                self.defects += 1
                break
            made = make(row)
            if made is None:
                sid = row[owner] if len(row) > owner else None
                self.malformed[sid if isinstance(sid, str) else ""] += 1
            else:
                found.append(made)
        return found


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", "replace")


def read_store(main: bytes | None, wal: bytes | None = None) -> Store:
    """Read the database ``main`` with ``wal`` applied (either may be ``None``: missing)."""
    if main is None and not wal:
        return Store()
    if len(main or b"") > MAX_DB_BYTES or len(wal or b"") > MAX_DB_BYTES:
        return Store(defects=1)
    rebuilt = apply_wal(main or b"", wal)
    defects = 1 if rebuilt.unusable else 0
    con = sqlite3.connect(":memory:")
    try:
        con.text_factory = _decode  # never fails on text that is not UTF-8
        try:
            if rebuilt.image:  # SQLite cannot load an empty image; an empty database is one
                con.deserialize(rollback_mode(rebuilt.image))
            con.execute("PRAGMA query_only = ON")
            con.execute("PRAGMA trusted_schema = OFF")
        except sqlite3.Error:
            return Store(defects=defects + 1)
        reader = _Reader(con)
        sessions = reader.table(SESSION_SQL, _session, 0)
        messages = reader.table(MESSAGE_SQL, _message, 1)
        parts = reader.table(PART_SQL, _part, 2)
    finally:
        con.close()
    return Store(
        sessions=tuple(sorted(sessions, key=lambda s: (s.created, s.id))),
        messages=tuple(sorted(messages, key=lambda m: (m.created, m.id))),
        parts=tuple(sorted(parts, key=lambda p: (p.created, p.id))),
        defects=defects + reader.defects,
        malformed=dict(reader.malformed),
    )
