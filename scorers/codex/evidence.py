"""Turn what one Codex run left on disk into agent-neutral :class:`RunEvidence`.

Only the openers the collector handed over are called. The mapping onto the records:

* the parent is the root thread (the rollout with no parent thread; the one stdout names
  when there are several); a thread's path is the thread ids from the root down to it;
* a spawn edge per ``spawn_agent`` call that started a child (a refused spawn, ``collab
  spawn failed: ...``, starts none): child id = the child's thread id (the call's output
  ``agent_id``, or the child Codex's own events name for the call), child path = the
  caller's path + ``/<child id>``, depth = the caller's depth + 1, time = the call's. The
  name is the call's ``task_name`` read back as the fixture's worker it spells (``-``
  written as ``_``: Codex allows nothing else in a task name), else the ``Worker: <name>``
  line of its message (Codex gives children random nicknames; the prompt has the name
  travel there). Codex never renames or deletes a child, so a second spawn under a name
  is a duplicate;
* a receipt per child the caller heard the end of: a ``completed`` status (the
  ``wait_agent`` output, a ``<subagent_notification>`` or, second protocol, a
  ``FINAL_ANSWER`` agent message: the same end often comes two ways, read once, the first
  time) is a reply, an ``errored`` one a failure notice, any other final status
  (``shutdown``, ``not_found``) a notice;
* a reply's text is the child's own final message (``task_complete.last_agent_message``)
  when what the caller received is exactly that, else empty (the caller got something
  else, so the child's words cannot vouch for an answer);
* a write per change of a file a thread's own rollout records (:mod:`scorers.codex.writes`),
  the root's as the parent's, any other thread's as the child its thread id names;
* a child session per thread below the root: its parent's path, its depth, the task it
  was given when one of its messages is the spawn message of a call that started it,
  ``worked`` when at least one of its own model responses completed, its usage from its
  own ``token_usage_record`` lines.

Usage is the rollouts', one record per model response (exact: checked equal to what the
scripted server billed, response by response): the root's records are the parent's, the
threads below it the children's. Faults are the log's failed requests per thread, the last
one not retried when the thread's turn ended in that error (its ``task_complete.error``;
without a log, that error alone).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from scorers.artifact import parse_artifact
from scorers.codex.log import LoggedFailure, parse_log
from scorers.codex.rollout import Call, Heard, Thread, parse_rollout
from scorers.codex.stream import StdoutParse, parse_stdout
from scorers.codex.tally import thread_tally
from scorers.codex.types import CodexInputs
from scorers.codex.writes import thread_writes
from scorers.records import (
    NO_TOKENS,
    ChildNotice,
    ChildReply,
    ChildSession,
    LedgerParse,
    NoticeKind,
    ReceiptIndex,
    RunEvidence,
    SessionParse,
    SpawnEvent,
    UsageTally,
    rootless_evidence,
)
from scorers.types import read_opened

#: How the worker name travels in a spawn message (the prompt's ``Worker: <name>`` line;
#: markdown emphasis around the label is tolerated, the name itself is not altered).
WORKER_LINE: Final = re.compile(r"^[\W_]*worker[\W_]*:[*_\s]*(?P<name>[\w.-]+)", re.I | re.M)
#: What Codex calls the tools that start a child and hear from one.
SPAWN_TOOL: Final = "spawn_agent"
#: Statuses of a child's end that are its reply, or a failure.
REPLIED: Final = "completed"
FAILED: Final = "errored"
#: Statuses a wait may report of a child that has not ended: no receipt.
NOT_FINAL: Final = frozenset({"pending_init", "running"})


def worker_of(call: Call, workers: Sequence[str]) -> str:
    """The worker name a spawn call gives its child (``""``: none): its ``task_name`` when
    that spells one of the fixture's workers (``-`` written as ``_``), else the ``Worker:``
    line of its message, else the ``task_name`` as it is. Codex refuses a second child
    under one task name, so a second child for a worker has another task name and the
    same worker in its message: a duplicate all the same."""
    task_name = call.arguments.get("task_name")
    task_name = task_name if isinstance(task_name, str) and task_name else None
    if task_name is not None:
        named = [w for w in workers if w.replace("-", "_").lower() == task_name]
        if len(named) == 1:
            return named[0]
    message = call.arguments.get("message")
    found = WORKER_LINE.search(message) if isinstance(message, str) else None
    if found:
        return found["name"]
    return task_name or ""


def _spawned_child(call: Call, caller: Thread, by_path: Mapping[str, str]) -> str | None:
    """The thread a spawn call started, or None (refused, or never answered)."""
    output = caller.outputs.get(call.call_id)
    if output is not None:
        try:
            body = json.loads(output)
        except ValueError:
            return None  # "collab spawn failed: ..." and other refusals
        if isinstance(body, Mapping):
            agent = body.get("agent_id")
            if isinstance(agent, str) and agent:
                return agent
            path = body.get("task_name")
            if isinstance(path, str) and path in by_path:
                return by_path[path]
    return caller.started.get(call.call_id)


def _tree(threads: Sequence[Thread], root: Thread) -> dict[str, tuple[str, ...]]:
    """Thread id -> its path from the root; threads not below the root (another root, a
    parent no rollout holds, a cycle) are left out."""
    parents = {t.id: t.parent_id for t in threads if t.id}
    paths: dict[str, tuple[str, ...]] = {str(root.id): (str(root.id),)}
    for t in threads:
        chain: list[str] = []
        node = t.id
        while node is not None and node not in paths and node not in chain:
            chain.append(node)
            node = parents.get(node)
        if node is None or node not in paths:
            continue
        base = paths[node]
        for n in reversed(chain):
            base = (*base, n)
            paths[n] = base
    return paths


def _receipts(
    root: Thread, children: Mapping[str, Thread], by_path: Mapping[str, str]
) -> tuple[list[ChildReply], list[ChildNotice]]:
    """One receipt per child the root heard the end of, however many ways it came: a reply
    when it completed (with the child's own final message as its text when what the root
    received is exactly that), else a failure notice (``errored``) or a notice."""
    heard: dict[str, list[Heard]] = {}
    for h in root.heard:
        if h.status not in NOT_FINAL:
            heard.setdefault(by_path.get(h.child, h.child), []).append(h)
    replies: list[ChildReply] = []
    notices: list[ChildNotice] = []
    for child_id, ends in heard.items():
        child = children.get(child_id)
        own = child.final_message if child is not None else None
        completed = [h for h in ends if h.status == REPLIED]
        if completed:
            same = [h for h in completed if own is not None and h.text == own]
            first = (same or completed)[0]
            replies.append(ChildReply(child_id, own if same and own else "", first.at))
            continue
        first = ends[0]
        kind: NoticeKind = "failure" if first.status == FAILED else "notice"
        notices.append(ChildNotice(child_id, kind, first.text or first.status, first.at))
    return replies, notices


def _spawns(
    threads: Iterable[Thread],
    paths: Mapping[str, tuple[str, ...]],
    by_path: Mapping[str, str],
    workers: Sequence[str],
) -> tuple[list[SpawnEvent], dict[str, list[str]]]:
    """Every spawn that started a child, in call order per caller, and the messages each
    child was spawned with."""
    events: list[SpawnEvent] = []
    messages: dict[str, list[str]] = {}
    for caller in threads:
        path = paths.get(caller.id or "")
        if path is None:
            continue
        for call in caller.calls:
            if call.name != SPAWN_TOOL:
                continue
            child_id = _spawned_child(call, caller, by_path)
            if child_id is None:
                continue
            message = call.arguments.get("message")
            if isinstance(message, str):
                messages.setdefault(child_id, []).append(message)
            events.append(
                SpawnEvent(
                    child_id=child_id,
                    child="/".join((*path, child_id)),
                    child_session_id=child_id,
                    parent="/".join(path),
                    depth=len(path),
                    name=worker_of(call, workers),
                    at=call.at or "",
                )
            )
    return events, messages


def _root(threads: Sequence[Thread], hint: str | None) -> Thread | None:
    roots = [t for t in threads if t.id and t.parent_id is None]
    named = [t for t in roots if t.id == hint]
    if named:
        return named[0]
    return min(roots, key=lambda t: t.started_at or "", default=None)


def codex_evidence(inputs: CodexInputs) -> RunEvidence:
    """Parse every file of one run (missing ones stay ``None``)."""
    stdout: StdoutParse | None = read_opened(inputs.stdout, parse_stdout)
    answers = read_opened(inputs.artifact, parse_artifact)
    logged = read_opened(inputs.log, parse_log) or ()
    threads = [
        t for opener in inputs.rollouts if (t := read_opened(opener, parse_rollout)) is not None
    ]
    stream = stdout.stream if stdout is not None else None
    hint = stdout.thread_id if stdout is not None else None
    root = _root(threads, hint)
    broken = sum(t.malformed for t in threads if not t.id)
    if root is None or root.id is None:
        # Rollouts are there but none reads as the root: a defect, not absence.
        return rootless_evidence(hint, broken, stream, answers)
    paths = _tree(threads, root)
    below = sorted(
        (t for t in threads if t.id in paths and t.id != root.id),
        key=lambda t: (t.started_at or "", t.id or ""),
    )
    children = {t.id: t for t in below if t.id}
    by_path = {t.agent_path: t.id for t in below if t.agent_path and t.id}
    by_thread: dict[str, list[LoggedFailure]] = {}
    for failure in logged:
        by_thread.setdefault(failure.thread, []).append(failure)
    events, messages = _spawns((root, *below), paths, by_path, inputs.workers)
    replies, notices = _receipts(root, children, by_path)
    sessions = []
    child_usage = NO_TOKENS
    writes = list(thread_writes(root, None))
    for t in below:
        tid = t.id or ""
        writes += thread_writes(t, tid)
        tally = thread_tally(t, tid, by_thread.get(tid, ()))
        child_usage = child_usage + t.usage
        path = paths[tid]
        tasked = frozenset((path[-2], tid) for m in messages.get(tid, ()) if m in t.prompts)
        sessions.append(
            ChildSession(
                child_id=tid,
                location=path,
                parent_session="/".join(path[:-1]),
                depth=len(path) - 1,
                started_at=t.started_at,
                tasks=tasked,
                worked=t.responses > 0,
                ended_at=t.ended_at,
                usage=t.usage,
                faults=tally.faults,
                ended_in_fault=tally.ended_in_fault,
                unseen_calls=tally.unseen_calls,
            )
        )
    if stream is not None:  # the rollouts count the parent; stdout is not a second source
        stream = dataclasses.replace(stream, usage=UsageTally())
    return RunEvidence(
        parent_paths=(root.id,),
        ledger=LedgerParse(events=tuple(events)),
        session=SessionParse(
            header_id=root.id,
            receipts=ReceiptIndex(
                frozenset(r.sender_session_id for r in replies),
                frozenset(n.child_id for n in notices),
            ),
            child_usage=child_usage,
            usage=thread_tally(root, "parent", by_thread.get(root.id, ())),
            malformed_lines=root.malformed + broken,
            replies=tuple(replies),
            notices=tuple(notices),
            child_usage_exact=True,
            started_at=root.started_at,
            ended_at=root.ended_at,
        ),
        stream=stream,
        answers=answers,
        child_sessions=tuple(sessions),
        child_session_dirs=len(below),
        child_malformed_lines=sum(t.malformed for t in below),
        writes=tuple(writes),
    )


__all__ = ["WORKER_LINE", "codex_evidence", "worker_of"]
