"""opencode's session store as agent-neutral turns for the ATIF export.

The bundle's ``opencode.db`` (with its write-ahead log) is read by the scorer's own reader
(:func:`scorers.opencode.store.read_store`), so the threads are the sessions the evidence
was judged from: the root session is the parent, every session below it a child, each
named by its session id (the evidence's ``child_id``).

A session's messages, in creation order, are its turns. A ``user`` message is a user turn
(its ``text`` parts; a context compaction opencode requested itself is a system turn). An
``assistant`` message is one model call: an agent turn with its ``text`` and ``reasoning``
parts, its ``tool`` parts as calls, its ``tokens`` as the scorer counts them, and its
``error``. A tool part keeps the call and its outcome together (``state.input`` beside
``state.output``, or ``state.error`` when it failed), so each result sits on the turn of its
call; a call still ``pending`` or ``running`` when the run ended has none. A child's answer
reaches the parent as the result of the parent's ``task`` call (the
``<task_result>`` frame), which is how ``spawned_by`` is found: the ``task`` part names
the child session it made (:mod:`scorers.opencode.spawns`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from harness.agents.opencode.collect import Bundle
from harness.files import open_regular
from harness.model.trajectory import Call, Result, Swarm, Thread, Turn
from scorers.opencode.spawns import find_spawns
from scorers.opencode.store import MAX_DB_BYTES, MessageRow, PartRow, Store, read_store
from scorers.opencode.tree import choose_root
from scorers.opencode.usage import error_text, is_assistant, message_tokens
from scorers.opencode.wal import apply_wal, rollback_mode
from scorers.records import RunEvidence

#: The thread id of a parent the record does not name (no readable root session).
UNNAMED_PARENT: Final = "parent"
#: What a turn says for a compaction opencode asked for itself (a user message whose only
#: part is ``compaction``): the runtime's doing, not a message to the agent.
COMPACTION_NOTE: Final = "opencode compacted the context"
#: The session column that names the opencode version that wrote the session (the
#: scorer's reader leaves it out: the rubric has no use for it).
VERSION_SQL: Final = "SELECT version FROM session WHERE id = ?"


def _map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def iso_ms(ms: int) -> str | None:
    """Epoch milliseconds as ISO-8601 UTC with a ``Z`` (None for an impossible value)."""
    try:
        moment = dt.datetime.fromtimestamp(ms // 1000, tz=dt.UTC)
        moment += dt.timedelta(milliseconds=ms % 1000)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def created_ms(message: MessageRow) -> int:
    """When a message was created: its ``time.created``, else its row's time."""
    created = _map(message.data.get("time")).get("created")
    if isinstance(created, int) and not isinstance(created, bool):
        return created
    return message.created


def model_of(data: Mapping[str, object]) -> str | None:
    """``providerID/modelID``, as ``--model`` names it (the bare model id without one)."""
    model, provider = _str(data.get("modelID")), _str(data.get("providerID"))
    if model is None:
        return None
    return f"{provider}/{model}" if provider is not None else model


def _texts(parts: Iterable[PartRow], kind: str) -> list[str]:
    return [
        text
        for p in parts
        if p.data.get("type") == kind and isinstance(text := p.data.get("text"), str)
    ]


def tool_call(part: PartRow) -> tuple[Call, Result | None] | None:
    """A ``tool`` part as its call and its result (None: the call had not ended), or None
    when the part is not a tool call."""
    data = part.data
    name = _str(data.get("tool"))
    if data.get("type") != "tool" or name is None:
        return None
    state = _map(data.get("state"))
    given = state.get("input", {})
    arguments = dict(given) if isinstance(given, Mapping) else {"input": given}
    # The same fallback the scorer's spawns use, so a spawn names this very call.
    call = Call(_str(data.get("callID")) or part.id, name, arguments)
    status = state.get("status")
    content = state.get("output") if status == "completed" else state.get("error")
    if status not in ("completed", "error") or content is None:
        return call, None
    if not isinstance(content, str):
        content = json.dumps(content, default=str)
    return call, Result(call.call_id, content)


def agent_turn(message: MessageRow, parts: Sequence[PartRow]) -> Turn:
    """One assistant message: its text, reasoning, calls with their results, usage."""
    calls: list[Call] = []
    results: list[Result] = []
    for part in parts:
        found = tool_call(part)
        if found is not None:
            calls.append(found[0])
            if found[1] is not None:
                results.append(found[1])
    reasoning = "\n".join(_texts(parts, "reasoning"))
    return Turn(
        "agent",
        "\n".join(_texts(parts, "text")),
        iso_ms(created_ms(message)),
        model_of(message.data),
        reasoning or None,
        tuple(calls),
        tuple(results),
        message_tokens(message.data.get("tokens")),
        error_text(message.data.get("error")),
    )


def user_turn(message: MessageRow, parts: Sequence[PartRow]) -> Turn:
    """One user message: its text, or a system turn for a compaction request."""
    texts = _texts(parts, "text")
    at = iso_ms(created_ms(message))
    if not texts and any(p.data.get("type") == "compaction" for p in parts):
        return Turn("system", COMPACTION_NOTE, at)
    return Turn("user", "\n".join(texts), at)


def session_turns(
    messages: Sequence[MessageRow], parts: Mapping[str, Sequence[PartRow]]
) -> tuple[Turn, ...]:
    """A session's messages as turns, in creation order (other roles are skipped)."""
    turns = []
    for message in sorted(messages, key=lambda m: (created_ms(m), m.id)):
        own = parts.get(message.id, ())
        if is_assistant(message.data):
            turns.append(agent_turn(message, own))
        elif message.data.get("role") == "user":
            turns.append(user_turn(message, own))
    return tuple(turns)


def spawned_by(store: Store, parent_id: str, children: Iterable[str]) -> dict[str, str]:
    """Child id -> the parent's ``task`` call that made it (the first, if several name it)."""
    wanted = set(children)
    found: dict[str, str] = {}
    for spawn in find_spawns(p for p in store.parts if p.session_id == parent_id):
        child = spawn.child_id
        if child in wanted and child not in found:
            found[child] = spawn.call_id
    return found


def _read(path: Path) -> bytes | None:
    with contextlib.suppress(OSError), open_regular(path) as stream:
        return stream.read(MAX_DB_BYTES + 1)  # one byte over: read_store refuses it
    return None


def store_version(main: bytes | None, wal: bytes | None, session_id: str) -> str | None:
    """The opencode version the session's row names, or None (unreadable, not there)."""
    if main is None and not wal:
        return None
    image = apply_wal(main or b"", wal).image
    if not image or len(image) > MAX_DB_BYTES:
        return None
    con = sqlite3.connect(":memory:")
    try:
        con.deserialize(rollback_mode(image))
        con.execute("PRAGMA query_only = ON")
        con.execute("PRAGMA trusted_schema = OFF")
        row = con.execute(VERSION_SQL, (session_id,)).fetchone()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    return _str(row[0]) if row else None


def message_version(messages: Iterable[MessageRow]) -> str | None:
    """The first ``version`` a message records (later clients may write one)."""
    return next((v for m in messages if (v := _str(m.data.get("version"))) is not None), None)


def build_swarm(item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence) -> Swarm:
    """The swarm of an opencode run from its bundle: the root session's turns, one thread
    per child session the evidence knows, and the ``task`` call that made each."""
    bundle = Bundle(item_dir)
    main, wal = _read(bundle.db), _read(bundle.wal)
    store = read_store(main, wal)
    root = choose_root(store.sessions, None)
    parent_id = (
        (evidence.session.header_id if evidence.session is not None else None)
        or (root.id if root is not None else None)
        or UNNAMED_PARENT
    )
    messages: dict[str, list[MessageRow]] = defaultdict(list)
    for message in store.messages:
        messages[message.session_id].append(message)
    parts: dict[str, list[PartRow]] = defaultdict(list)
    for part in store.parts:
        parts[part.message_id].append(part)
    titles = {s.id: s.title for s in store.sessions}
    children = tuple(
        Thread(
            c.child_id,
            session_turns(messages.get(c.child_id, ()), parts),
            titles.get(c.child_id) or None,
        )
        for c in evidence.child_sessions
    )
    parent = Thread(parent_id, session_turns(messages.get(parent_id, ()), parts))
    version = message_version(store.messages) or store_version(main, wal, parent_id)
    return Swarm(
        parent,
        children,
        spawned_by(store, parent_id, (c.thread_id for c in children)),
        version,
    )
