"""Parse a prime-agent parent transcript (session format 3) into receipts and usage.

- Header: the first line, ``{"type": "session", "id": ...}``. Its ``id`` (not the file
  name) names the directory the children's sessions live under.
- Receipts, in ``type: "custom_message"`` entries (``details`` an object):
  a reply is ``customType: "agent_message"`` with ``details.fromRelationship == "child"``
  and a string ``details.from.sessionId`` (its text is ``details.message``, when it
  arrived the entry's ``timestamp``); a notice is ``customType`` in
  ``rlm_child_terminal_notice`` / ``rlm_child_failure`` with a string ``details.childId``.
  Messages from any other relationship are not receipts.
- Child usage: ``type: "child_usage_attributed"`` entries, ``childUsage`` (the four billed
  fields and ``cost.total``, like a message's usage; ``aggregateUsage`` is not kept up to
  date by the product and is never read).
- When: the first and the last ``timestamp`` of any entry (the header's included).
- The parent's own assistant messages: ``type: "message"`` entries whose ``message`` has
  ``role: "assistant"`` (used only when the live stream recorded nothing).
- The files it changed, when asked (``writes``): see :mod:`scorers.prime_agent.writes`.

Lines that are not JSON objects with a string ``type``, and entries of the kinds above
whose fields we read are ill-typed, are counted as malformed and skipped.
"""

from __future__ import annotations

from typing import IO, Final

from scorers.lines import MALFORMED, iter_json_lines
from scorers.prime_agent.assistant import AssistantTally, cost_of, is_assistant, usage_of
from scorers.prime_agent.writes import WriteLog
from scorers.records import (
    NO_TOKENS,
    ChildNotice,
    ChildReply,
    NoticeKind,
    ReceiptIndex,
    SessionParse,
)

REPLY_TYPE: Final = "agent_message"
#: customType -> the kind of notice: a failure, or the runtime's word that a child ended
#: (finished without a reply, cancelled).
NOTICE_KINDS: Final[dict[str, NoticeKind]] = {
    "rlm_child_terminal_notice": "notice",
    "rlm_child_failure": "failure",
}
NOTICE_TYPES: Final = frozenset(NOTICE_KINDS)


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _stamp(entry: dict[str, object]) -> str | None:
    at = entry.get("timestamp")
    return at if isinstance(at, str) else None


class _Reader:
    """Accumulates one transcript's entries."""

    def __init__(self, writes: WriteLog | None) -> None:
        self.writes = writes
        self.replies: set[str] = set()
        self.reply_texts: list[ChildReply] = []
        self.notices: list[ChildNotice] = []
        self.child_usage = NO_TOKENS
        self.child_cost: float | None = None
        self.assistant = AssistantTally()
        self.first_at: str | None = None
        self.last_at: str | None = None

    def custom_message(self, entry: dict[str, object]) -> bool:
        kind = entry.get("customType")
        if not isinstance(kind, str):
            return False
        if kind != REPLY_TYPE and kind not in NOTICE_TYPES:
            return True
        details = entry.get("details")
        if not isinstance(details, dict):
            return False
        if kind == REPLY_TYPE:
            if details.get("fromRelationship") != "child":
                return True
            sender = details.get("from")
            session_id = sender.get("sessionId") if isinstance(sender, dict) else None
            if not isinstance(session_id, str):
                return False
            self.replies.add(session_id)
            self.reply_texts.append(
                ChildReply(session_id, _text(details.get("message")), _stamp(entry))
            )
            return True
        child_id = details.get("childId")
        if not isinstance(child_id, str):
            return False
        notice = ChildNotice(
            child_id, NOTICE_KINDS[kind], _text(entry.get("content")), _stamp(entry)
        )
        self.notices.append(notice)
        return True

    def attributed(self, entry: dict[str, object]) -> bool:
        raw = entry.get("childUsage")
        usage = usage_of(raw)
        if usage is None:
            return False
        self.child_usage = self.child_usage + usage
        cost = cost_of(raw)
        if cost is not None:
            self.child_cost = (self.child_cost or 0.0) + cost
        return True

    def stamp(self, entry: dict[str, object]) -> None:
        at = _stamp(entry)
        if at is not None:
            self.first_at = self.first_at or at
            self.last_at = at

    def entry(self, entry: dict[str, object]) -> bool:
        """Take one entry; ``False`` if it had to be skipped as ill-typed."""
        self.stamp(entry)
        kind = entry.get("type")
        if kind == "custom_message":
            return self.custom_message(entry)
        if kind == "child_usage_attributed":
            return self.attributed(entry)
        if kind == "message":
            message = entry.get("message")
            if not isinstance(message, dict):
                return False
            ok = self.writes.message(entry, message) if self.writes is not None else True
            return (self.assistant.add(message) if is_assistant(message) else True) and ok
        # A header anywhere but a well-formed first line is a defect, not an entry.
        return isinstance(kind, str) and kind != "session"


def _header_id(value: object) -> str | None:
    if isinstance(value, dict) and value.get("type") == "session":
        header_id = value.get("id")
        if isinstance(header_id, str) and header_id:
            return header_id
    return None


def parse_session(stream: IO[bytes], writes: WriteLog | None = None) -> SessionParse:
    """Read a whole parent transcript (the files it changed go to ``writes`` when given);
    never raises on any input bytes."""
    reader = _Reader(writes)
    header_id: str | None = None
    malformed = 0
    first = True
    for value, _terminated in iter_json_lines(stream):
        if first:
            first = False
            header_id = _header_id(value)
            if header_id is not None and isinstance(value, dict):
                reader.stamp(value)
                if writes is not None:
                    writes.header(value)
                continue
        if value is MALFORMED or not isinstance(value, dict) or not reader.entry(value):
            malformed += 1
    return SessionParse(
        header_id=header_id,
        receipts=ReceiptIndex(
            frozenset(reader.replies), frozenset(n.child_id for n in reader.notices)
        ),
        child_usage=reader.child_usage,
        child_cost_usd=reader.child_cost,
        started_at=reader.first_at,
        ended_at=reader.last_at,
        usage=reader.assistant.result(),
        malformed_lines=malformed,
        replies=tuple(reader.reply_texts),
        notices=tuple(reader.notices),
    )
