"""Parse the parent transcript ``projects/<project>/<session>.jsonl``: spawns, results, usage.

A spawn is an ``Agent`` (``Task`` in older clients) ``tool_use`` block in one of the
parent's own assistant records. A spawn's result reaches the parent in one of three ways,
each a *delivery*:

* a ``user`` record whose ``tool_result`` answers the spawn's ``tool_use_id`` with a
  finished subagent (foreground; ``toolUseResult.status`` ``completed``) or an error
  (``is_error``); the ``async_launched`` answer of a background spawn only names its agent;
* a later ``user`` record holding a ``<task-notification>`` with the ``<tool-use-id>``
  (background, delivered when it starts a new parent turn);
* an ``attachment`` record of type ``queued_command`` holding that notification
  (background, delivered while the parent's turn was still running).

``queue-operation`` records repeat notification text but deliver nothing, and the client's
copies of what it sent the model (``api-request-blob`` ...) hold ``tool_result`` blocks too: both
are ignored, as are subagent records (``isSidechain``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Final, Literal

from scorers.claude_code.edits import WriteLog, block_text
from scorers.claude_code.usage import MessageTally, record_error
from scorers.lines import MALFORMED, iter_json_lines
from scorers.records import FileWrite, UsageTally

#: Tool names that spawn a subagent (the model calls it ``Agent``; stream-json's tool list
#: and older clients say ``Task``).
SPAWN_TOOLS: Final = frozenset({"Agent", "Task"})
#: Notification statuses that mean the subagent finished its work.
COMPLETED: Final = "completed"
#: How a foreground result frames the subagent's report (when the record carries no
#: structured ``toolUseResult``).
HAND_BACK: Final = "[Subagent hand-back]"
_NOTIFICATION: Final = re.compile(r"<task-notification>(?P<body>.*?)</task-notification>", re.S)
_FIELD: Final = r"<{0}>\s*(?P<v>[^<]*?)\s*</{0}>"
#: A foreground result names its agent after the report (``agentId: <id> ...``).
_AGENT_ID_LINE: Final = re.compile(r"(?m)^agentId:\s*(?P<id>[A-Za-z0-9_-]+)")

Outcome = Literal["completed", "failed"]


@dataclass(frozen=True, slots=True)
class Spawn:
    """One ``Agent`` call of the parent: ``name`` is its ``description``."""

    tool_use_id: str
    name: str
    prompt: str
    at: str | None


@dataclass(frozen=True, slots=True)
class Delivery:
    """A result for the spawn ``tool_use_id`` that reached the parent."""

    tool_use_id: str
    outcome: Outcome
    at: str | None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class ParentParse:
    session_id: str | None
    spawns: tuple[Spawn, ...]
    deliveries: tuple[Delivery, ...]
    #: Spawn tool_use_id -> agent id, as the client's answers to the spawns name it.
    agent_ids: Mapping[str, str]
    usage: UsageTally
    malformed_lines: int = 0
    #: Its first and last timestamps (ISO-8601).
    started_at: str | None = None
    ended_at: str | None = None
    #: The files its own tool calls changed (``child_id`` None), in the order they did.
    writes: tuple[FileWrite, ...] = ()


def _field(name: str, text: str) -> str | None:
    match = re.search(_FIELD.format(name), text)
    return match["v"] if match else None


def notifications(text: str, at: str | None) -> list[Delivery]:
    """Every ``<task-notification>`` in ``text`` that names a spawn."""
    found = []
    for match in _NOTIFICATION.finditer(text):
        body = match["body"]
        tool_use_id = _field("tool-use-id", body)
        if not tool_use_id:
            continue
        status = _field("status", body)
        outcome: Outcome = "completed" if status == COMPLETED else "failed"
        found.append(Delivery(tool_use_id, outcome, at, _field("task-id", body)))
    return found


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


class _Reader:
    def __init__(self) -> None:
        self.session_id: str | None = None
        self.spawns: list[Spawn] = []
        self.deliveries: list[Delivery] = []
        self.agent_ids: dict[str, str] = {}
        self.tally = MessageTally()
        self.malformed = 0
        self.first_at: str | None = None
        self.last_at: str | None = None
        self.write_log = WriteLog()

    def record(self, record: dict[str, object]) -> None:
        if self.session_id is None and isinstance(record.get("sessionId"), str):
            self.session_id = str(record["sessionId"])
        if record.get("isSidechain") is True:
            return
        kind = record.get("type")
        at = _str(record.get("timestamp"))
        if at is not None:
            self.first_at = self.first_at or at
            self.last_at = at
        if kind == "api-request":
            if not record.get("agentId"):  # a subagent's request, copied here: not ours
                self.tally.api_request(record)
        elif kind == "assistant":
            self._assistant(record, at)
        elif kind == "user":
            self._user(record, at)
        elif kind == "attachment":
            attachment = record.get("attachment")
            if isinstance(attachment, dict) and attachment.get("type") == "queued_command":
                self.deliveries += notifications(block_text(attachment.get("prompt")), at)

    def _assistant(self, record: dict[str, object], at: str | None) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            self.malformed += 1
            return
        self.tally.add(message, record_error(record), record)
        content = message.get("content")
        self.write_log.assistant(record, content)
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            if block.get("name") not in SPAWN_TOOLS:
                continue
            spawn_input = block.get("input")
            spawn_input = spawn_input if isinstance(spawn_input, dict) else {}
            tool_use_id = _str(block.get("id"))
            if not tool_use_id:
                self.malformed += 1
                continue
            self.spawns.append(
                Spawn(
                    tool_use_id,
                    _str(spawn_input.get("description")) or "",
                    _str(spawn_input.get("prompt")) or "",
                    at,
                )
            )

    def _user(self, record: dict[str, object], at: str | None) -> None:
        message = record.get("message")
        if not isinstance(message, dict):
            self.malformed += 1
            return
        content = message.get("content")
        if isinstance(content, str):
            self.deliveries += notifications(content, at)
            return
        self.write_log.user(record, content)
        result = record.get("toolUseResult")
        result = result if isinstance(result, dict) else {}
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                self.deliveries += notifications(str(block.get("text", "")), at)
            elif block.get("type") == "tool_result":
                self._tool_result(block, result, at)

    def _tool_result(
        self, block: dict[str, object], result: dict[str, object], at: str | None
    ) -> None:
        tool_use_id = _str(block.get("tool_use_id"))
        if not tool_use_id:
            return
        text = block_text(block.get("content"))
        agent_id = _str(result.get("agentId"))
        if agent_id is None:
            match = _AGENT_ID_LINE.search(text)
            agent_id = match["id"] if match else None
        if agent_id:
            self.agent_ids.setdefault(tool_use_id, agent_id)
        if block.get("is_error") is True:
            self.deliveries.append(Delivery(tool_use_id, "failed", at, agent_id))
        elif result.get("status") == COMPLETED or (not result and HAND_BACK in text):
            self.deliveries.append(Delivery(tool_use_id, "completed", at, agent_id))


def parse_parent_transcript(stream: IO[bytes]) -> ParentParse:
    """Read the whole parent transcript; never raises on any input bytes.

    Deliveries are kept for every ``tool_result``; the evidence keeps only those that
    answer a spawn.
    """
    reader = _Reader()
    for value, _terminated in iter_json_lines(stream):
        if value is MALFORMED or not isinstance(value, dict):
            reader.malformed += 1
            continue
        reader.record(value)
    return ParentParse(
        session_id=reader.session_id,
        spawns=tuple(reader.spawns),
        deliveries=tuple(reader.deliveries),
        agent_ids=dict(reader.agent_ids),
        usage=reader.tally.result(),
        malformed_lines=reader.malformed + reader.tally.malformed,
        started_at=reader.first_at,
        ended_at=reader.last_at,
        writes=tuple(reader.write_log.writes),
    )
