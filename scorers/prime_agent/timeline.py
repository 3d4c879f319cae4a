"""Parse the receipts of a prime-agent parent transcript *with their timestamps*.

:mod:`scorers.prime_agent.session` keeps only which children were heard from (what the
rubric judges). A person reading one item also wants *when*: this parser lists each
receipt entry (the same ``custom_message`` kinds, read by the same rules) in file order
with the entry's ``timestamp``. It judges nothing and is used only for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO, Literal

from scorers.lines import iter_json_lines
from scorers.prime_agent.session import NOTICE_TYPES, REPLY_TYPE

ReceiptKind = Literal["reply", "notice", "failure"]

#: customType -> the kind shown; ``rlm_child_failure`` is a failure, the other a notice.
_KINDS: dict[str, ReceiptKind] = {
    REPLY_TYPE: "reply",
    "rlm_child_terminal_notice": "notice",
    "rlm_child_failure": "failure",
}
assert set(_KINDS) == {REPLY_TYPE, *NOTICE_TYPES}, "a receipt kind has no display name"


@dataclass(frozen=True, slots=True)
class ReceiptEntry:
    """One receipt in the parent transcript.

    ``child`` is the child's session id for a reply, its ledger child id for a notice or
    failure; ``name`` the sender's session name when the reply carries one; ``at`` the
    entry's ``timestamp`` (empty when absent); ``text`` the message (replies) or notice text.
    """

    kind: ReceiptKind
    at: str
    child: str
    name: str
    text: str


@dataclass(frozen=True, slots=True)
class ReceiptTimeline:
    entries: tuple[ReceiptEntry, ...]
    skipped_lines: int = 0


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _entry(value: object) -> ReceiptEntry | None:
    if not isinstance(value, dict) or value.get("type") != "custom_message":
        return None
    kind = _KINDS.get(_str(value.get("customType")))
    details = value.get("details")
    if kind is None or not isinstance(details, dict):
        return None
    at = _str(value.get("timestamp"))
    if kind == "reply":
        sender = details.get("from")
        if details.get("fromRelationship") != "child" or not isinstance(sender, dict):
            return None
        child = _str(sender.get("sessionId"))
        name = _str(sender.get("sessionName"))
        text = _str(details.get("message"))
    else:
        child = _str(details.get("childId"))
        name = _str(details.get("sessionName"))
        text = _str(value.get("content"))
    if not child:
        return None
    return ReceiptEntry(kind, at, child, name, text)


def parse_receipt_timeline(stream: IO[bytes]) -> ReceiptTimeline:
    """Every receipt entry of a parent transcript, in file order; never raises."""
    entries: list[ReceiptEntry] = []
    skipped = 0
    for value, _terminated in iter_json_lines(stream):
        entry = _entry(value)
        if entry is not None:
            entries.append(entry)
        elif not isinstance(value, dict):
            skipped += 1
    return ReceiptTimeline(tuple(entries), skipped)
