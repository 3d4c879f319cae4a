"""Parse a prime-agent child session file (session format 3) into what the child did.

- Header: the first line, ``{"type": "session", "timestamp", "parentSession",
  "rlmDepth", ...}``: the parent transcript's path, the child's depth and when it began.
- The parent's task: a ``type: "custom_message"`` entry with ``customType:
  "agent_message"``, ``details.fromRelationship == "parent"``, ``details.id ==
  "spawn:<childId>"`` and the sender's session id in ``details.from.sessionId``.
- The child's own model turns: ``type: "message"`` entries whose ``message`` has
  ``role: "assistant"``; one worked when its ``stopReason`` is a string other than
  ``error`` / ``aborted``. Their usage adds up to the child's tokens.
- When it was busy: from the header's ``timestamp`` to the last entry's.
- The files it changed, when asked (``writes``): see :mod:`scorers.prime_agent.writes`.

Lines that are not JSON objects with a string ``type``, a header anywhere but the first
line, and entries of the kinds above whose fields we read are ill-typed, are counted as
malformed and skipped. A file without a readable header shows no parent, depth or start.
"""

from __future__ import annotations

from typing import IO, Final

from scorers.lines import MALFORMED, iter_json_lines
from scorers.prime_agent.assistant import (
    FAILED_STOP_REASONS,
    AssistantTally,
    is_assistant,
    usage_of,
)
from scorers.prime_agent.writes import WriteLog
from scorers.records import NO_TOKENS, ChildSession, PathParts, normalize_path

TASK_TYPE: Final = "agent_message"
#: ``details.id`` of the task message the runtime writes into a new child's session.
TASK_ID_PREFIX: Final = "spawn:"


class _Header:
    __slots__ = ("depth", "parent_session", "started_at")

    def __init__(self, value: object) -> None:
        self.parent_session: str | None = None
        self.depth: int | None = None
        self.started_at: str | None = None
        if not isinstance(value, dict):
            return
        parent = value.get("parentSession")
        depth = value.get("rlmDepth")
        started = value.get("timestamp")
        if isinstance(parent, str) and parent:
            self.parent_session = normalize_path(parent)
        if type(depth) is int:
            self.depth = depth
        if isinstance(started, str):
            self.started_at = started


def _is_header(value: object) -> bool:
    return isinstance(value, dict) and value.get("type") == "session"


def _task(entry: dict[str, object]) -> tuple[str, str] | bool:
    """``(sender, child id)`` of a task message; ``True`` for another kind of custom
    message, ``False`` for an ill-typed one."""
    kind = entry.get("customType")
    if not isinstance(kind, str):
        return False
    if kind != TASK_TYPE:
        return True
    details = entry.get("details")
    if not isinstance(details, dict):
        return False
    if details.get("fromRelationship") != "parent":
        return True
    task_id = details.get("id")
    sender = details.get("from")
    sender_id = sender.get("sessionId") if isinstance(sender, dict) else None
    if not isinstance(task_id, str) or not isinstance(sender_id, str):
        return False
    if not task_id.startswith(TASK_ID_PREFIX):
        return True
    return (sender_id, task_id.removeprefix(TASK_ID_PREFIX))


def parse_child_session(
    stream: IO[bytes], child_id: str, location: PathParts, writes: WriteLog | None = None
) -> tuple[ChildSession, int]:
    """Read a whole child session file: the record and its count of malformed lines; the
    files it changed go to ``writes`` when given.

    Never raises on any input bytes.
    """
    header = _Header(None)
    tasks: set[tuple[str, str]] = set()
    worked = False
    usage = NO_TOKENS
    tally = AssistantTally(child_id)  # its provider faults and unseen calls
    last_at: str | None = None
    malformed = 0
    first = True
    for value, _terminated in iter_json_lines(stream):
        if first:
            first = False
            if _is_header(value):
                header = _Header(value)
                if writes is not None and isinstance(value, dict):
                    writes.header(value)
                continue
        if value is MALFORMED or not isinstance(value, dict):
            malformed += 1
            continue
        stamp = value.get("timestamp")
        if isinstance(stamp, str):
            last_at = stamp
        kind = value.get("type")
        ok: bool = isinstance(kind, str) and kind != "session"
        if kind == "custom_message":
            task = _task(value)
            if isinstance(task, tuple):
                tasks.add(task)
            else:
                ok = task
        elif kind == "message":
            message = value.get("message")
            if isinstance(message, dict) and writes is not None:
                ok = writes.message(value, message)
            if not isinstance(message, dict):
                ok = False
            elif is_assistant(message):
                tally.add(message)
                stop = message.get("stopReason")
                spent = usage_of(message.get("usage"))
                if spent is not None:  # ill-typed usage adds nothing (the tally is a floor)
                    usage = usage + spent
                if not isinstance(stop, str):
                    ok = False
                elif stop not in FAILED_STOP_REASONS:
                    worked = True
        if not ok:
            malformed += 1
    faults = tally.result()
    session = ChildSession(
        child_id=child_id,
        location=location,
        parent_session=header.parent_session,
        depth=header.depth,
        started_at=header.started_at,
        tasks=frozenset(tasks),
        worked=worked,
        ended_at=last_at or header.started_at,
        usage=usage,
        faults=faults.faults,
        ended_in_fault=faults.ended_in_fault,
        unseen_calls=faults.unseen_calls,
    )
    return session, malformed
