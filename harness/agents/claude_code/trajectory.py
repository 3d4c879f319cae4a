"""Claude Code's transcripts as agent-neutral turns for the ATIF export.

The bundle holds the parent's transcript ``claude-config/projects/<project>/<session>.jsonl``
and one ``<session>/subagents/agent-<agentId>.jsonl`` (with its ``.meta.json``) per
subagent, found as the adapter's evidence finds them (:func:`locate`). The parent's is
read twice over the same bytes: by the scorer's own reader, so spawns are tied to their
children exactly as the evidence has them, and here, for the turns. A thread's turns, in
transcript order:

* ``user``: each ``user`` record that says something besides tool results (the task, a
  subagent's prompt, a ``<task-notification>`` that starts a new parent turn), and each
  ``queued_command`` attachment (a notification delivered while the parent's turn was still
  running); the client's own context (``isMeta`` records, other attachments) is left out;
* ``agent``: one per assistant message. The client writes one record per content block of
  a message, each repeating its id and whole ``usage``, and may write the results of the
  message's first calls between its records: all records of one id are one turn, at the
  place and time of its first, with its text, its ``thinking`` as reasoning, its
  ``tool_use`` blocks as calls and its usage counted once (as the scorer's
  ``MessageTally`` counts it). A failed model call the client recorded as a synthetic
  message (``isApiErrorMessage``) is a turn with no text whose error is that message's words;
* a ``tool_result`` (in a later ``user`` record) is put on the turn of its call; one that
  answers no call of the thread is a ``system`` turn.

Left out: the client's bookkeeping records (``queue-operation`` repeats notifications and
delivers nothing, ``api-request`` is the evidence's retried faults) and, in the parent,
copied subagent records (``isSidechain``). The parent is the session the evidence names;
the children are the subagents the evidence knows as child sessions (child id = agent id),
labelled with the spawn's ``description`` from their meta file; a spawn's call is the
parent's ``Agent`` call whose answer, notification or meta file names the agent (the
sources the evidence uses, :func:`spawn_calls`).
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.agents.claude_code.collect import bundle_paths, locate
from harness.files import open_regular
from harness.model.trajectory import Call, Swarm, Thread, Turn, TurnDraft, TurnLog
from scorers.claude_code.evidence import UNSTARTED_PREFIX
from scorers.claude_code.parent import ParentParse, parse_parent_transcript
from scorers.claude_code.subagent import SubagentMeta, parse_meta
from scorers.claude_code.usage import message_usage, record_error
from scorers.lines import MALFORMED, iter_json_lines
from scorers.records import RunEvidence

#: The thread id of a parent the records do not name (no readable parent transcript).
UNNAMED_PARENT: Final = "parent"
#: The model name the client gives a message it made up itself (an API error): no model.
SYNTHETIC_MODEL: Final = "<synthetic>"
#: The artifact is no part of the turns; :func:`locate` finds none under this name.
NO_ARTIFACT: Final = ""


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def arguments(raw: object) -> Mapping[str, Any]:
    """A ``tool_use`` block's ``input``: its JSON object, else ``{"input": <it>}``."""
    return raw if isinstance(raw, Mapping) else {"input": raw}


def content_text(content: object) -> str:
    """A message's or tool result's text: a plain string, or its ``text`` blocks joined."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    )


class _Turns:
    """Accumulates one transcript's turns, record by record."""

    def __init__(self, sidechains: bool) -> None:
        self.sidechains = sidechains  # False: the parent's (copied subagent records skipped)
        self.version: str | None = None
        self.log = TurnLog()
        self.messages: dict[str, TurnDraft] = {}  # message key -> its turn

    def record(self, record: Mapping[str, Any]) -> None:
        if record.get("isSidechain") is True and not self.sidechains:
            return
        self.version = self.version or _str(record.get("version"))
        kind, at = record.get("type"), _str(record.get("timestamp"))
        if kind == "assistant":
            self.assistant(record, at)
        elif kind == "user":
            self.user(record, at)
        elif kind == "attachment":
            attachment = _map(record.get("attachment"))
            if attachment.get("type") == "queued_command":
                self.log.add(Turn("user", content_text(attachment.get("prompt")), at))

    def assistant(self, record: Mapping[str, Any], at: str | None) -> None:
        message = record.get("message")
        if not isinstance(message, Mapping):
            return
        # The key MessageTally counts a message under: its id, else its own place.
        key = _str(message.get("id")) or f"#{len(self.messages)}"
        draft = self.messages.get(key)
        content = message.get("content")
        if draft is None:
            model = _str(message.get("model"))
            error = record_error(record)
            draft = TurnDraft(
                at,
                None if model == SYNTHETIC_MODEL else model,
                message_usage(message.get("usage")),
                # The provider's words, as the scorer names the fault (not the model's text).
                (content_text(content).strip() or error) if error is not None else None,
            )
            self.messages[key] = draft
            self.log.add(draft)
        if draft.error is not None:
            return
        for block in content if isinstance(content, list) else ():
            self.block(draft, _map(block))

    def block(self, draft: TurnDraft, block: Mapping[str, Any]) -> None:
        kind = block.get("type")
        if kind == "text" and _str(block.get("text")):
            draft.texts.append(block["text"])
        elif kind == "thinking" and _str(block.get("thinking")):
            draft.reasoning.append(block["thinking"])
        elif kind == "tool_use" and _str(block.get("id")):
            call = Call(block["id"], _str(block.get("name")) or "", arguments(block.get("input")))
            self.log.call(draft, call)

    def user(self, record: Mapping[str, Any], at: str | None) -> None:
        message = _map(record.get("message"))
        content = message.get("content")
        text = content_text(content)
        if text.strip() and record.get("isMeta") is not True:
            self.log.add(Turn("user", text, at))
        for block in content if isinstance(content, list) else ():
            block = _map(block)
            if block.get("type") != "tool_result":
                continue
            call_id = _str(block.get("tool_use_id"))
            self.log.result(call_id, content_text(block.get("content")), at)

    def result(self) -> tuple[Turn, ...]:
        return self.log.finished()


@dataclass(frozen=True)
class TranscriptTurns:
    """One transcript's turns and the client version that wrote it."""

    turns: tuple[Turn, ...]
    version: str | None


def read_transcript(data: bytes, *, sidechains: bool) -> TranscriptTurns:
    """One transcript's bytes (``sidechains``: a subagent's, whose records all are); never
    raises (unreadable lines are skipped: the scorer counts them)."""
    reader = _Turns(sidechains)
    for value, _terminated in iter_json_lines(io.BytesIO(data)):
        if value is not MALFORMED and isinstance(value, Mapping):
            reader.record(value)
    return TranscriptTurns(reader.result(), reader.version)


def spawn_calls(parent: ParentParse, metas: Mapping[str, SubagentMeta]) -> dict[str, str]:
    """Agent id -> the spawn call that started it (its first, for an agent two calls name),
    from the sources the evidence names a spawn's agent by, each overriding the one before:
    a delivery naming its task, the subagent's meta file, the client's answer to the call.
    A spawn no source names keeps the evidence's unstarted id."""
    ids: dict[str, str] = {}  # call id -> agent id
    for delivery in parent.deliveries:
        if delivery.agent_id:
            ids.setdefault(delivery.tool_use_id, delivery.agent_id)
    for agent_id, meta in metas.items():
        if meta.tool_use_id:
            ids[meta.tool_use_id] = agent_id
    ids.update(parent.agent_ids)
    calls: dict[str, str] = {}
    for spawn in parent.spawns:
        agent_id = ids.get(spawn.tool_use_id) or UNSTARTED_PREFIX + spawn.tool_use_id
        calls.setdefault(agent_id, spawn.tool_use_id)
    return calls


def _read(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        with open_regular(path) as stream:
            return stream.read()
    except OSError:
        return None


def _first(versions: Sequence[str | None]) -> str | None:
    return next((v for v in versions if v), None)


def build_swarm(item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence) -> Swarm:
    """The swarm of a Claude Code run from its bundle (``meta`` adds nothing the
    transcripts do not say); ``evidence`` is what the scorer read from the same bundle."""
    located = locate(bundle_paths(item_dir), NO_ARTIFACT)
    parent_id = (
        (evidence.session.header_id if evidence.session is not None else None)
        or located.session_id
        or UNNAMED_PARENT
    )
    data = _read(located.parent)
    parent = read_transcript(data or b"", sidechains=False)
    files = {
        agent_id: (transcript, meta_file) for agent_id, transcript, meta_file in located.subagents
    }
    metas: dict[str, SubagentMeta] = {}
    children: list[Thread] = []
    versions: list[str | None] = [parent.version]
    for child_id in dict.fromkeys(c.child_id for c in evidence.child_sessions):
        transcript, meta_path = files.get(child_id, (None, None))
        meta_data = _read(meta_path)
        if meta_data is not None:
            metas[child_id] = parse_meta(io.BytesIO(meta_data))
        read = read_transcript(_read(transcript) or b"", sidechains=True)
        label = metas[child_id].description if child_id in metas else None
        children.append(Thread(child_id, read.turns, label))
        versions.append(read.version)
    depth1 = {e.child_id for e in evidence.depth1_spawns()}
    calls = spawn_calls(parse_parent_transcript(io.BytesIO(data or b"")), metas)
    return Swarm(
        Thread(parent_id, parent.turns),
        tuple(children),
        {child: call for child, call in calls.items() if child in depth1},
        _first(versions),
    )


__all__ = [
    "TranscriptTurns",
    "build_swarm",
    "bundle_paths",
    "content_text",
    "read_transcript",
    "spawn_calls",
]
