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

from harness.export.model import Call, Result, Swarm, Thread, Turn
from harness.files import open_regular
from scorers.lines import MALFORMED, iter_json_lines
from scorers.prime_agent.assistant import FAILED_STOP_REASONS, usage_of
from scorers.prime_agent.types import ChildSessionFile
from scorers.records import RunEvidence, SpawnEvent


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
    turns: list[Turn] = []
    results: dict[int, list[Result]] = {}
    owner: dict[str, int] = {}  # call id -> index of its turn
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
                provider, model_id = value.get("provider"), value.get("modelId")
                if isinstance(provider, str) and isinstance(model_id, str):
                    model = f"{provider}/{model_id}"
            elif kind == "custom_message":
                turns.append(Turn("user", _text(value.get("content")), at))
            elif kind == "message" and isinstance(value.get("message"), dict):
                message = value["message"]
                role, content = message.get("role"), message.get("content")
                if role == "user":
                    turns.append(Turn("user", _text(content), at))
                elif role == "assistant":
                    stop = message.get("stopReason")
                    error = None
                    if stop in FAILED_STOP_REASONS:
                        error = str(message.get("errorMessage") or stop)
                    provider, model_id = message.get("provider"), message.get("model")
                    own = (
                        f"{provider}/{model_id}"
                        if isinstance(provider, str) and isinstance(model_id, str)
                        else model
                    )
                    calls = _calls(content)
                    for call in calls:
                        owner[call.call_id] = len(turns)
                    turns.append(
                        Turn(
                            "agent",
                            _text(content),
                            at,
                            own,
                            _thinking(content),
                            calls,
                            (),
                            usage_of(message.get("usage")),
                            error,
                        )
                    )
                elif role == "toolResult":
                    call_id = message.get("toolCallId")
                    call_id = call_id if isinstance(call_id, str) else None
                    index = owner.get(call_id) if call_id is not None else None
                    result = Result(call_id, _text(content))
                    if index is None:  # a result of no call we saw: a turn of its own
                        turns.append(Turn("system", "", at, results=(result,)))
                    else:
                        results.setdefault(index, []).append(result)
    for index, found in results.items():
        turn = turns[index]
        turns[index] = Turn(
            turn.source,
            turn.text,
            turn.at,
            turn.model,
            turn.reasoning,
            turn.calls,
            tuple(found),
            turn.usage,
            turn.error,
        )
    return header, tuple(turns)


def _spawned_by(parent: Thread, evidence: RunEvidence) -> dict[str, str]:
    """Child id -> the ``ipython`` call that spawned it: the one whose output names the
    child's id, else the last one whose code names its worker."""
    out: dict[str, str] = {}
    spawns = [e for e in evidence.depth1_spawns() if type(e) is SpawnEvent]
    for event in spawns:
        named = None
        for turn in parent.turns:
            for result in turn.results:
                if result.call_id is not None and f"'{event.child_id}'" in result.content:
                    out[event.child_id] = result.call_id
            for call in turn.calls:
                if event.name and event.name in str(call.arguments):
                    named = call.call_id
        if event.child_id not in out and named is not None:
            out[event.child_id] = named
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
