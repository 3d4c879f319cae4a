"""Parse one subagent's files: ``agent-<id>.jsonl`` (its transcript) and ``agent-<id>.meta.json``.

The transcript's first ``user`` record is the prompt the parent gave; its records carry the
parent's ``sessionId`` and the subagent's ``agentId``. Its own final report is the text of
its last assistant message: that is what the parent was told, before the client framed it
(``[Subagent hand-back]`` and a ``<usage>`` block) or wrapped it in a notification.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import IO, Final

from scorers.claude_code.edits import WriteLog
from scorers.claude_code.usage import MessageTally, record_error
from scorers.lines import MALFORMED, iter_json_lines
from scorers.records import FileWrite, UsageTally

#: A meta file is a few hundred bytes; anything far larger is not one.
MAX_META_BYTES: Final = 64 * 1024


@dataclass(frozen=True, slots=True)
class SubagentMeta:
    """``agent-<id>.meta.json``: the spawn it belongs to and how deep it sits."""

    tool_use_id: str | None = None
    description: str | None = None
    spawn_depth: int | None = None
    malformed: bool = False


@dataclass(frozen=True, slots=True)
class SubagentParse:
    """One subagent transcript, reduced to what the rules need."""

    session_id: str | None
    agent_id: str | None
    started_at: str | None
    prompt: str | None
    #: The text of its last assistant message that was a real model turn.
    final_report: str
    usage: UsageTally
    malformed_lines: int = 0
    #: Its last timestamp (ISO-8601).
    ended_at: str | None = None
    #: The files its tool calls changed (``child_id`` None), in the order they did.
    writes: tuple[FileWrite, ...] = ()


def parse_meta(stream: IO[bytes]) -> SubagentMeta:
    """Read a meta file; never raises (unreadable or ill-typed: ``malformed``)."""
    raw = stream.read(MAX_META_BYTES + 1)
    if len(raw) > MAX_META_BYTES:
        return SubagentMeta(malformed=True)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        return SubagentMeta(malformed=True)
    if not isinstance(data, dict):
        return SubagentMeta(malformed=True)
    depth = data.get("spawnDepth")
    tool_use_id = data.get("toolUseId")
    description = data.get("description")
    return SubagentMeta(
        tool_use_id=tool_use_id if isinstance(tool_use_id, str) else None,
        description=description if isinstance(description, str) else None,
        spawn_depth=depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
    )


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def parse_subagent_transcript(stream: IO[bytes]) -> SubagentParse:
    """Read a whole subagent transcript; never raises on any input bytes."""
    session_id = agent_id = started_at = ended_at = prompt = None
    reports: dict[str, str] = {}  # message id -> its text so far (one record per block)
    last_id: str | None = None
    records: list[tuple[str, dict[str, object]]] = []
    write_log = WriteLog()
    malformed = 0
    for value, _terminated in iter_json_lines(stream):
        if value is MALFORMED or not isinstance(value, dict):
            malformed += 1
            continue
        if session_id is None and isinstance(value.get("sessionId"), str):
            session_id = value["sessionId"]
        if agent_id is None and isinstance(value.get("agentId"), str):
            agent_id = value["agentId"]
        if isinstance(value.get("timestamp"), str):
            ended_at = value["timestamp"]
            if started_at is None:
                started_at = ended_at
        message = value.get("message")
        kind = value.get("type")
        if kind == "api-request":
            records.append(("api-request", value))
        elif kind == "user" and isinstance(message, dict):
            if prompt is None:
                prompt = _text(message.get("content"))
            write_log.user(value, message.get("content"))
        elif kind == "assistant":
            if not isinstance(message, dict):
                malformed += 1
                continue
            error = record_error(value)
            records.append(("assistant", value))
            write_log.assistant(value, message.get("content"))
            if error is None:
                mid = str(message.get("id") or f"#{len(reports)}")
                text = _text(message.get("content"))
                if text:
                    reports[mid] = (reports.get(mid, "") + "\n" + text).strip()
                last_id = mid
    # The session's faults name the subagent, known only once its records are read.
    tally = MessageTally(agent_id or "child")
    for kind, record in records:
        if kind == "api-request":
            tally.api_request(record)
        else:
            tally.add(record["message"], record_error(record), record)  # type: ignore[arg-type]
    return SubagentParse(
        session_id=session_id,
        agent_id=agent_id,
        started_at=started_at,
        prompt=prompt,
        final_report=reports.get(last_id, "") if last_id is not None else "",
        usage=tally.result(),
        malformed_lines=malformed + tally.malformed,
        ended_at=ended_at,
        writes=tuple(write_log.writes),
    )
