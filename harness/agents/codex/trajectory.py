"""Codex's rollouts as agent-neutral turns for the ATIF export.

Codex writes one rollout per thread (``codex-home/sessions/YYYY/MM/DD/rollout-*.jsonl``; the
line format is in :mod:`scorers.codex.rollout`). Each rollout is read twice over the same
bytes: by the scorer's own reader (:func:`scorers.codex.parse_rollout`), so the threads are
named, placed and linked exactly as the evidence has them, and here, for the turns. A
thread's turns, in rollout order:

* ``user``: each ``message`` of role ``user`` that is not Codex's own context (the task, and
  under the first protocol each ``<subagent_notification>`` a parent gets when a child
  ends), and each ``agent_message`` (second protocol: ``NEW_TASK`` brings a child its spawn
  message, ``FINAL_ANSWER`` brings a parent a child's answer), as the model read it;
* ``agent``: one per model response: the assistant ``message``, ``reasoning`` summary and
  tool call items it wrote, closed by its ``token_usage_record`` (its usage counted as the
  scorer counts it: a response recorded twice is billed once). A call's output comes later
  in the rollout and is put on the turn of its call. A turn Codex ended in error
  (``task_complete.error``) is an agent turn with that error;
* ``system``: the ``<turn_aborted>`` note Codex writes when it interrupts a thread, and an
  output of no call the thread made.

Left out: the environment context and developer messages (Codex's, not the task), and the
requests Codex retried (only its log has them; they are the evidence's faults). The
parent is the root thread, the children the threads the evidence knows as child sessions
(a child's id is its thread id), labelled with the nickname Codex gave them; a depth-1
spawn's call is the parent's ``spawn_agent`` call whose output (``agent_id``, or the
``task_name`` path of a child's rollout) or Codex's own events name the child.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from harness.agents.codex.collect import Bundle, find_rollouts
from harness.files import open_regular
from harness.model.trajectory import Call, Swarm, Thread, Turn, TurnDraft, TurnLog
from scorers.codex import Thread as ScoredThread
from scorers.codex import parse_rollout
from scorers.codex.evidence import SPAWN_TOOL
from scorers.codex.rollout import CONTEXT_PREFIXES
from scorers.codex.thread import failure_of, response_usage, string, text_of
from scorers.lines import MALFORMED, iter_json_lines
from scorers.records import RunEvidence

#: The thread id of a parent the record does not name (no readable root rollout).
UNNAMED_PARENT: Final = "parent"
#: The user message Codex writes when it interrupts a turn: the runtime's note, not a user's.
ABORTED_PREFIX: Final = "<turn_aborted>"
#: Response items that are a tool call, and the items that carry a call's output.
CALL_ITEMS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
OUTPUT_ITEMS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
#: The name a ``local_shell_call`` (which names no tool) is given.
LOCAL_SHELL: Final = "local_shell"


def arguments(raw: object) -> Mapping[str, Any]:
    """A call's arguments: its JSON object, else ``{"input": <it as written>}``."""
    if isinstance(raw, Mapping):
        return raw
    if isinstance(raw, str):
        with contextlib.suppress(ValueError, RecursionError):
            value = json.loads(raw)
            if isinstance(value, Mapping):
                return value
    return {"input": raw}


def call_of(item: Mapping[str, object]) -> Call | None:
    """The tool call a response item makes (None: it names no call id)."""
    call_id = string(item.get("call_id"))
    if call_id is None:
        return None
    if item.get("type") == "local_shell_call":
        return Call(call_id, LOCAL_SHELL, arguments(item.get("action")))
    raw = item.get("input") if item.get("type") == "custom_tool_call" else item.get("arguments")
    return Call(call_id, string(item.get("name")) or "", arguments(raw))


def output_text(output: object) -> str:
    """A call output as text (a plain string, content parts, or ``{"content": ...}``)."""
    if isinstance(output, Mapping):
        output = output.get("content")
    return text_of(output, ("text",))


def reasoning_text(item: Mapping[str, object]) -> str:
    """A ``reasoning`` item's summary, else its plain reasoning text (``""``: encrypted only)."""
    summary = item.get("summary")
    return text_of(summary if summary else item.get("content"), ("text",))


class _Turns:
    """Accumulates one rollout's turns, line by line."""

    def __init__(self) -> None:
        self.meta: Mapping[str, object] = {}
        self.model: str | None = None
        self.log = TurnLog()
        self.open: TurnDraft | None = None  # the response being read
        self.responses: set[str] = set()

    def line(self, value: object) -> None:
        if not isinstance(value, Mapping) or not isinstance(value.get("payload"), Mapping):
            return
        at, kind, payload = string(value.get("timestamp")), value.get("type"), value["payload"]
        if kind == "session_meta" and not self.meta:
            self.meta = payload
        elif kind == "turn_context":
            self.model = string(payload.get("model")) or self.model
        elif kind == "response_item":
            self.item(payload, at)
        elif kind == "token_usage_record":
            self.usage(payload, at)
        elif kind == "event_msg" and payload.get("type") == "task_complete":
            error = payload.get("error")
            if isinstance(error, Mapping):
                self.draft(at).error = failure_of(error, at).message
            self.open = None
        elif kind == "event_msg" and payload.get("type") == "turn_aborted":
            self.open = None

    def draft(self, at: str | None) -> TurnDraft:
        """The response being read, or a new one starting at ``at``."""
        if self.open is None:
            self.open = TurnDraft(at, self.model)
            self.log.add(self.open)
        return self.open

    def said(self, turn: Turn) -> None:
        """A message given to the model: the response before it has ended."""
        self.open = None
        self.log.add(turn)

    def item(self, item: Mapping[str, object], at: str | None) -> None:
        kind, role = item.get("type"), item.get("role")
        if kind == "message" and role == "user":
            text = text_of(item.get("content"), ("text",))
            start = text.lstrip()
            if start.startswith(ABORTED_PREFIX):
                self.said(Turn("system", text, at))
            elif not start.startswith(CONTEXT_PREFIXES):
                self.said(Turn("user", text, at))
        elif kind == "agent_message":
            self.said(Turn("user", text_of(item.get("content"), ("text", "encrypted_content")), at))
        elif kind == "message" and role == "assistant":
            text = text_of(item.get("content"), ("text",))
            if text:
                self.draft(at).texts.append(text)
        elif kind == "reasoning":
            text = reasoning_text(item)
            if text:
                self.draft(at).reasoning.append(text)
        elif kind in CALL_ITEMS:
            call = call_of(item)
            if call is not None:
                self.log.call(self.draft(at), call)
        elif kind in OUTPUT_ITEMS:
            self.log.result(string(item.get("call_id")), output_text(item.get("output")), at)

    def usage(self, record: Mapping[str, object], at: str | None) -> None:
        """A response's usage on its turn, exactly as :mod:`scorers.codex.rollout` bills it."""
        usage = response_usage(record.get("usage"))
        if usage is None:
            return
        rid = string(record.get("response_id"))
        if rid is not None:
            if rid in self.responses:
                return
            self.responses.add(rid)
        target = self.open
        last = next((t for t in reversed(self.log.turns) if isinstance(t, TurnDraft)), None)
        if target is None and last is not None and last.usage is None and last.error is None:
            target = last  # a message to the model came between its items and its record
        (target or self.draft(at)).usage = usage
        self.open = None

    def result(self) -> tuple[Turn, ...]:
        return self.log.finished()


@dataclass(frozen=True)
class RolloutTurns:
    """One rollout: the scorer's reading of it, its turns, Codex's nickname for the thread
    and the CLI version that wrote it."""

    rollout: ScoredThread
    turns: tuple[Turn, ...]
    nickname: str | None
    version: str | None


def _nickname(meta: Mapping[str, object]) -> str | None:
    own = string(meta.get("agent_nickname"))
    source = meta.get("source")
    spawn = source.get("subagent") if isinstance(source, Mapping) else None
    spawn = spawn.get("thread_spawn") if isinstance(spawn, Mapping) else None
    return own or (string(spawn.get("agent_nickname")) if isinstance(spawn, Mapping) else None)


def read_rollout(data: bytes) -> RolloutTurns:
    """One rollout's bytes; never raises (unreadable lines are skipped: the scorer counts
    them)."""
    reader = _Turns()
    for value, _terminated in iter_json_lines(io.BytesIO(data)):
        if value is not MALFORMED:
            reader.line(value)
    return RolloutTurns(
        parse_rollout(io.BytesIO(data)),
        reader.result(),
        _nickname(reader.meta),
        string(reader.meta.get("cli_version")),
    )


def _rollouts(item_dir: Path) -> list[RolloutTurns]:
    """Every readable rollout of the bundle, one per thread id (the first one read)."""
    sessions = Bundle(item_dir).sessions
    found: list[RolloutTurns] = []
    seen: set[str] = set()
    for rel in find_rollouts(sessions).rollouts:
        try:
            with open_regular(sessions / rel) as stream:
                data = stream.read()
        except OSError:
            continue
        read = read_rollout(data)
        if read.rollout.id is not None and read.rollout.id not in seen:
            seen.add(read.rollout.id)
            found.append(read)
    return found


def _root(reads: Sequence[RolloutTurns], evidence: RunEvidence) -> RolloutTurns | None:
    """The rollout the evidence names as the parent's; when it names none, the earliest one
    that names no parent thread (as the scorer picks it)."""
    named = evidence.session.header_id if evidence.session is not None else None
    if named is not None:
        return next((r for r in reads if r.rollout.id == named), None)
    roots = [r for r in reads if r.rollout.parent_id is None]
    return min(roots, key=lambda r: r.rollout.started_at or "", default=None)


def named_children(call_id: str, caller: ScoredThread, by_path: Mapping[str, str]) -> set[str]:
    """The child threads a spawn call's output (``agent_id``, or a ``task_name`` path) or
    Codex's own events (``caller.started``) name."""
    named = {caller.started[call_id]} if call_id in caller.started else set()
    body: object = None
    with contextlib.suppress(ValueError, RecursionError):
        body = json.loads(caller.outputs.get(call_id) or "")
    if isinstance(body, Mapping):
        agent, path = body.get("agent_id"), body.get("task_name")
        if isinstance(agent, str) and agent:
            named.add(agent)
        if isinstance(path, str) and path in by_path:
            named.add(by_path[path])
    return named


def spawned_by(
    root: ScoredThread, by_path: Mapping[str, str], evidence: RunEvidence
) -> dict[str, str]:
    """Child id -> the parent's ``spawn_agent`` call that started it, for each depth-1
    spawn of the evidence (the first call that names the child)."""
    wanted = {e.child_id for e in evidence.depth1_spawns()}
    out: dict[str, str] = {}
    for call in root.calls:
        if call.name != SPAWN_TOOL:
            continue
        for child in sorted(named_children(call.call_id, root, by_path) & wanted):
            out.setdefault(child, call.call_id)
    return out


def build_swarm(item_dir: Path, meta: Mapping[str, Any], evidence: RunEvidence) -> Swarm:
    """The swarm of a Codex run from its bundle (``meta`` adds nothing the rollouts do not
    say); ``evidence`` is what the scorer read from the same bundle."""
    reads = _rollouts(item_dir)
    by_id = {str(r.rollout.id): r for r in reads}
    root = _root(reads, evidence)
    parent_id = (
        (evidence.session.header_id if evidence.session is not None else None)
        or (root.rollout.id if root is not None else None)
        or UNNAMED_PARENT
    )
    parent = Thread(parent_id, root.turns if root is not None else ())
    children: list[Thread] = []
    for child_id in dict.fromkeys(c.child_id for c in evidence.child_sessions):
        read = by_id.get(child_id)
        if read is not None:
            children.append(Thread(child_id, read.turns, read.nickname))
    by_path = {
        r.rollout.agent_path: str(r.rollout.id)
        for r in reads
        if r.rollout.agent_path and r is not root
    }
    return Swarm(
        parent,
        tuple(children),
        spawned_by(root.rollout, by_path, evidence) if root is not None else {},
        root.version if root is not None else next((r.version for r in reads if r.version), None),
    )


__all__ = ["RolloutTurns", "build_swarm", "read_rollout", "spawned_by"]
