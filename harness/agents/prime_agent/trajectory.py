"""prime-agent's (and the sim's) records as agent-neutral turns for the ATIF export.

A session file (CONTRACT §4) holds ``message`` entries (``user``, ``assistant`` with
``text``, ``thinking`` and ``toolCall`` blocks and its ``usage``, ``toolResult`` answering
a call by ``toolCallId``) and ``custom_message`` entries: the task a child got, and the
replies and notices the parent got, which the model reads as messages. The parent spawns
from ``ipython`` cells (``await rlm(..., name=...)``): the call whose result names the
child's id (``rlm_child_id='sub-...'``) spawned it, else the last call naming its worker.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.files import open_regular
from harness.model.trajectory import Call, Swarm, Thread, Turn, TurnDraft, TurnLog
from scorers.lines import MALFORMED, iter_json_lines
from scorers.prime_agent.assistant import FAILED_STOP_REASONS, usage_of
from scorers.prime_agent.types import ChildSessionFile
from scorers.records import RunEvidence


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"
    )


def _thinking(content: object) -> str | None:
    if not isinstance(content, list):
        return None
    parts = [
        str(b.get("thinking", ""))
        for b in content
        if isinstance(b, dict) and b.get("type") == "thinking"
    ]
    return "".join(parts) or None


def _calls(content: object) -> tuple[Call, ...]:
    if not isinstance(content, list):
        return ()
    calls = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "toolCall":
            continue
        call_id, name, args = block.get("id"), block.get("name"), block.get("arguments")
        if isinstance(call_id, str) and isinstance(name, str):
            calls.append(Call(call_id, name, args if isinstance(args, dict) else {"input": args}))
    return tuple(calls)


def read_turns(path: Path | None) -> tuple[str | None, tuple[Turn, ...]]:
    """A session file's header id and turns (tool results on the turn of their call)."""
    if path is None:
        return None, ()
    header: str | None = None
    log = TurnLog()
    model: str | None = None
    with contextlib.suppress(OSError), open_regular(path) as stream:
        for value, _ in iter_json_lines(stream):
            if value is MALFORMED or not isinstance(value, dict):
                continue
            kind, at = value.get("type"), value.get("timestamp")
            at = at if isinstance(at, str) else None
            if kind == "session" and header is None:
                header = value.get("id") if isinstance(value.get("id"), str) else None
            elif kind == "model_change":
                model = _model(value.get("provider"), value.get("modelId")) or model
            elif kind == "custom_message":
                log.add(Turn("user", _text(value.get("content")), at))
            elif kind == "message" and isinstance(value.get("message"), dict):
                message = value["message"]
                role, content = message.get("role"), message.get("content")
                if role == "user":
                    log.add(Turn("user", _text(content), at))
                elif role == "assistant":
                    log.add(_assistant(log, message, at, model))
                elif role == "toolResult":
                    call_id = message.get("toolCallId")
                    call_id = call_id if isinstance(call_id, str) else None
                    log.result(call_id, _text(content), at, _edits(message.get("details")))
    return header, log.finished()


def _edits(details: object) -> dict[str, Any] | None:
    """The file changes an ``ipython`` result records (the edit skill's ``details.diffs``:
    path, old and new text, start line): the one record of the change the result's text
    does not carry (it says only ``Edited <path>``). None when it records none."""
    diffs = details.get("diffs") if isinstance(details, dict) else None
    return {"diffs": diffs} if isinstance(diffs, list) and diffs else None


def _model(provider: object, model_id: object) -> str | None:
    if isinstance(provider, str) and isinstance(model_id, str):
        return f"{provider}/{model_id}"
    return None


def _assistant(
    log: TurnLog, message: dict[str, Any], at: str | None, model: str | None
) -> TurnDraft:
    """One assistant message as a turn whose calls' results are still to come."""
    content, stop = message.get("content"), message.get("stopReason")
    error = str(message.get("errorMessage") or stop) if stop in FAILED_STOP_REASONS else None
    own = _model(message.get("provider"), message.get("model")) or model
    text, thinking = _text(content), _thinking(content)
    draft = TurnDraft(at, own, usage_of(message.get("usage")), error)
    draft.texts.extend([text] if text else [])
    draft.reasoning.extend([thinking] if thinking else [])
    for call in _calls(content):
        log.call(draft, call)
    return draft


def _spawned_by(parent: Thread, evidence: RunEvidence) -> dict[str, str]:
    """Child id -> the ``ipython`` call that spawned it: the one whose output names the
    child's id, else the last one whose code names its worker."""
    results = [(r.call_id, r.content) for t in parent.turns for r in t.results if r.call_id]
    calls = [(c.call_id, str(c.arguments)) for t in parent.turns for c in t.calls]
    out: dict[str, str] = {}
    for event in evidence.depth1_spawns():
        quoted = f"'{event.child_id}'"
        found = next((cid for cid, text in reversed(results) if quoted in text), None)
        if found is None and event.name:
            found = next((cid for cid, args in reversed(calls) if event.name in args), None)
        if found is not None:
            out[event.child_id] = found
    return out


def build_swarm(
    parent_file: Path | None,
    children_root: Path | None,
    children: Sequence[ChildSessionFile],
    evidence: RunEvidence,
) -> Swarm:
    """The swarm of a prime-agent run: its parent session file, and its depth-1 child
    session files (``children``, found under ``children_root``)."""
    header, turns = read_turns(parent_file)
    parent_id = (evidence.session.header_id if evidence.session else None) or header or "parent"
    parent = Thread(parent_id, turns)
    threads = []
    if children_root is not None:
        for child in children:
            if len(child.subdirs) != 1:  # grandchildren are their parents' business
                continue
            _, child_turns = read_turns(children_root / Path(*child.subdirs, child.file_name))
            threads.append(Thread(child.subdirs[0], child_turns))
    return Swarm(parent, tuple(threads), _spawned_by(parent, evidence))
