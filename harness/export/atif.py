"""The one ATIF writer: an item's swarm as an Agent Trajectory Interchange Format document.

Whatever the agent, a builder (``harness/agents/<agent>/trajectory.py``) reads its records
into :class:`harness.model.trajectory.Swarm`, and this module writes it, with what the scorer
judged from the same bundle (:class:`scorers.records.RunEvidence`) placed where a reader
of ATIF expects it:

- the parent's turns are its ``steps``; every child with a session is an embedded
  trajectory in ``subagent_trajectories`` (``trajectory_id`` = its child id);
- each depth-1 spawn is a ``subagent_trajectory_ref`` on the result of the parent's call
  that made it, its ``extra`` naming the worker, the spawn's time and ledger order, and
  what later happened to the child (renamed, deleted);
- each reply or notice the parent received from a child is a ``system`` step at the time it
  arrived, its result referring to that child;
- a tool call that changed files is the call it was (its arguments as the agent gave
  them: the ``await edit(...)`` cell, the Edit tool's input, the patch), and where the
  agent records the change only beside its result's text (prime-agent's ``details.diffs``)
  that record is in the result's ``extra.details``;
- the answer artifact's bullets, the verdict per criterion, the failure signatures, the
  item key and run id are in the root's ``extra``;
- of an edit fixture's item, the root's ``extra`` also holds the final tree the collector
  recorded (``tree``: edits.json's form, ``null`` when the run had none) and every write
  the agent's parser read from the threads' records (``writes``, in record order, each
  naming its thread): carried, not left to be re-derived from the tool calls (why:
  :mod:`scorers.atif.edits`).

So a trajectory carries the evidence the rubric needs, and ``score --trajectory`` (by
:mod:`scorers.atif`) judges it with the same rules. Large texts are cut with a marker that
says how large they were; the bundle was redacted when it was collected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from harness.model.trajectory import Call, Result, Swarm, Thread, Turn
from scorers.records import (
    ChildNotice,
    ChildReply,
    ChildSession,
    DeleteEvent,
    RenameEvent,
    RunEvidence,
    SpawnEvent,
)
from scorers.tokens import TokenUsage
from scorers.tree import tree_to_dict
from scorers.types import FixtureKind

#: The newest ATIF version the pinned validator (``atif`` 1.8.0) accepts.
SCHEMA_VERSION: Final = "ATIF-v1.8"

#: Where the harness's own fields live in every ``extra`` it writes.
OURS: Final = "swarm_harness"

#: Characters of one message or tool output kept before it is cut.
MAX_TEXT_CHARS: Final = 16_000

#: Prices one model response's tokens at its model (None: not priced).
PriceFn = Callable[[str | None, TokenUsage], float | None]


@dataclass(frozen=True)
class ItemFacts:
    """What the run's report says of the item, for the document's metadata."""

    run_id: str
    key: str
    fixture: str
    trial: int
    status: str
    agent: str
    agent_version: str | None
    model: str
    #: The verdict per criterion: name -> (passed, reason, failing).
    checks: Mapping[str, tuple[bool, str | None, Sequence[str]]]
    signatures: Sequence[str]
    usage: Mapping[str, Any]
    cost_usd: float | None
    artifact: str
    error: str | None = None
    #: Where the fixture was when the item ran (``score --trajectory`` finds it there).
    fixture_path: str | None = None
    #: The fixture's kind: an edit item's document carries its final tree and writes.
    kind: FixtureKind = "read"


def _cut(text: str) -> tuple[str, dict[str, Any] | None]:
    """``text``, cut to :data:`MAX_TEXT_CHARS` with a marker; the extra that says so."""
    if len(text) <= MAX_TEXT_CHARS:
        return text, None
    marker = f"\n[... cut by swarm-harness: {len(text):,} characters in all]"
    return text[:MAX_TEXT_CHARS] + marker, {OURS: {"cut_from_chars": len(text)}}


def metrics_of(usage: TokenUsage, cost_usd: float | None = None) -> dict[str, Any]:
    """ATIF step metrics: prompt tokens count every input token (cached and written to the
    cache included), cached the ones read from the cache."""
    metrics: dict[str, Any] = {
        "prompt_tokens": usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens,
        "completion_tokens": usage.output_tokens,
        "cached_tokens": usage.cache_read_tokens,
    }
    if cost_usd is not None:
        metrics["cost_usd"] = cost_usd
    extra = {"cache_write_tokens": usage.cache_write_tokens}
    if usage.reasoning_tokens is not None:
        extra["reasoning_tokens"] = usage.reasoning_tokens
    metrics["extra"] = extra
    return metrics


def final_metrics_of(
    usage: TokenUsage, steps: int, cost_usd: float | None, extra: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    step = metrics_of(usage)
    final: dict[str, Any] = {
        "total_prompt_tokens": step["prompt_tokens"],
        "total_completion_tokens": step["completion_tokens"],
        "total_cached_tokens": step["cached_tokens"],
        "total_steps": steps,
        "extra": {**step["extra"], **(extra or {})},
    }
    if cost_usd is not None:
        final["total_cost_usd"] = cost_usd
    return final


def usage_from(data: Mapping[str, Any] | None) -> TokenUsage:
    """A :class:`TokenUsage` from its report.json form."""
    if not data:
        return TokenUsage()
    return TokenUsage(
        int(data.get("input_tokens") or 0),
        int(data.get("output_tokens") or 0),
        int(data.get("cache_read_tokens") or 0),
        int(data.get("cache_write_tokens") or 0),
        data.get("reasoning_tokens"),
    )


def _arguments(call: Call) -> dict[str, Any]:
    args = call.arguments
    return dict(args) if isinstance(args, Mapping) else {"input": args}


def _cut_strings(value: object) -> object:
    """``value`` (JSON-ready) with every string in it cut as :func:`_cut` cuts a text."""
    if isinstance(value, str):
        return _cut(value)[0]
    if isinstance(value, Mapping):
        return {str(k): _cut_strings(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_cut_strings(v) for v in value]
    return value


def _edits(evidence: RunEvidence) -> dict[str, Any]:
    """An edit item's final tree and writes, as the root's ``extra`` carries them. The
    tree is not cut (the collector bounded its diffs and tails, and a reason quotes a
    tail's last line); its ``seconds`` are its shards' own (the checks process's total is
    the bundle's). A write's texts are cut as any text is (no rule reads them)."""
    tree = evidence.tree
    return {
        "tree": None if tree is None else tree_to_dict(tree, sum(c.seconds for c in tree.checks)),
        "writes": [_cut_strings(w.to_dict()) for w in evidence.writes],
    }


def _result(result: Result, calls: frozenset[str]) -> dict[str, Any]:
    content, cut = _cut(result.content)
    out: dict[str, Any] = {"content": content}
    extra: dict[str, Any] = dict(cut or {})
    if result.details:  # the agent's own record of what the call changed (edits' diffs)
        extra["details"] = _cut_strings(result.details)
    if result.call_id is not None and result.call_id in calls:
        out["source_call_id"] = result.call_id
    elif result.call_id is not None:  # a result the records did not tie to this turn's calls
        extra.setdefault(OURS, {})["call_id"] = result.call_id
    if extra:
        out["extra"] = extra
    return out


def _step(turn: Turn, price: PriceFn | None) -> dict[str, Any]:
    """One turn as an ATIF step (without its ``step_id``)."""
    message, cut = _cut(turn.text)
    step: dict[str, Any] = {"source": turn.source, "message": message}
    if turn.at is not None and _parse_time(turn.at) is not None:
        step["timestamp"] = turn.at
    extra: dict[str, Any] = {}
    if cut:
        extra[OURS] = dict(cut[OURS])
    if turn.source == "agent":
        if turn.model:
            step["model_name"] = turn.model
        if turn.reasoning:
            step["reasoning_content"], _ = _cut(turn.reasoning)
        if turn.calls:
            step["tool_calls"] = [
                {"tool_call_id": c.call_id, "function_name": c.name, "arguments": _arguments(c)}
                for c in turn.calls
            ]
        if turn.usage is not None:
            cost = price(turn.model, turn.usage) if price is not None else None
            step["metrics"] = metrics_of(turn.usage, cost)
        if turn.error is not None:
            extra.setdefault(OURS, {})["error"] = turn.error
    calls = frozenset(c.call_id for c in turn.calls) if turn.source == "agent" else frozenset()
    if turn.results:
        step["observation"] = {"results": [_result(r, calls) for r in turn.results]}
    if extra:
        step["extra"] = extra
    return step


def _parse_time(at: str | None) -> datetime | None:
    if at is None:
        return None
    try:
        stamp = datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        return None
    return stamp if stamp.tzinfo is not None else None


def _thread_steps(thread: Thread | None, price: PriceFn | None) -> list[dict[str, Any]]:
    if thread is None:
        return []
    return [_step(turn, price) for turn in thread.turns]


def _times(steps: Sequence[dict[str, Any]]) -> list[float]:
    """Each step's time (the last known one before it where it has none), as a sortable
    number; steps before any known time count as the earliest."""
    times, last = [], float("-inf")
    for step in steps:
        stamp = _parse_time(step.get("timestamp"))
        if stamp is not None:
            last = max(last, stamp.timestamp())
        times.append(last)
    return times


def _last_call_before(
    steps: Sequence[dict[str, Any]], times: Sequence[float], at: str | None
) -> tuple[int, str] | None:
    """The parent's last tool call at or before ``at`` (its step and id); ``times`` are
    the steps' :func:`_times`."""
    limit = _parse_time(at)
    found = None
    for index, (step, when) in enumerate(zip(steps, times, strict=False)):
        if limit is not None and when > limit.timestamp():
            break
        calls = step.get("tool_calls") or ()
        if calls:
            found = (index, calls[-1]["tool_call_id"])
    return found


def _add_ref(step: dict[str, Any], call_id: str | None, ref: dict[str, Any]) -> None:
    """Attach ``ref`` to the step's result of ``call_id`` (made if it has none)."""
    results = step.setdefault("observation", {"results": []})["results"]
    for result in results:
        if call_id is not None and result.get("source_call_id") == call_id:
            result.setdefault("subagent_trajectory_ref", []).append(ref)
            return
    result = {"subagent_trajectory_ref": [ref]}
    if call_id is not None:
        result["source_call_id"] = call_id
    results.append(result)


def _link_spawns(
    steps: list[dict[str, Any]], evidence: RunEvidence, swarm: Swarm, sessions: set[str]
) -> None:
    """Every depth-1 spawn of the parent as a ref on the call that made it, with what the
    ledger later says of that child, in the ledger's order (``seq``)."""
    parents = set(evidence.parent_paths)
    refs: dict[str, dict[str, Any]] = {}  # child id -> the ref of its latest spawn
    times = _times(steps)  # the agent's steps only: a step added below has no calls
    made_in = {c["tool_call_id"]: i for i, s in enumerate(steps) for c in s.get("tool_calls", ())}
    for seq, event in enumerate(evidence.ledger.events):
        if type(event) is SpawnEvent:
            if event.depth != 1 or event.parent not in parents:
                continue
            ref = _spawn_ref(event, seq, sessions)
            refs[event.child_id] = ref
            call_id = swarm.spawned_by.get(event.child_id)
            index = made_in.get(call_id) if call_id is not None else None
            if index is None:
                found = _last_call_before(steps, times, event.at)
                index, call_id = found if found is not None else (None, None)
            if index is None:
                steps.append(
                    {
                        "source": "system",
                        "message": f"the runtime spawned {event.name}",
                        "observation": {"results": []},
                    }
                )
                index, call_id = len(steps) - 1, None
            _add_ref(steps[index], call_id, ref)
        elif isinstance(event, (RenameEvent, DeleteEvent)) and event.child_id in refs:
            later = refs[event.child_id][  # the events that follow this spawn of the child
                "extra"
            ][OURS].setdefault("later", [])
            entry: dict[str, Any] = {"seq": seq, "at": event.at}
            if type(event) is RenameEvent:
                entry.update(op="rename", name=event.name)
            else:
                entry.update(op="delete")
            later.append(entry)


def _spawn_ref(event: SpawnEvent, seq: int, sessions: set[str]) -> dict[str, Any]:
    ours = {
        "role": "spawn",
        "worker": event.name,
        "at": event.at,
        "seq": seq,
        "child_session_id": event.child_session_id,
        "has_session": event.child_id in sessions,
    }
    return {"trajectory_id": event.child_id, "extra": {OURS: ours}}


def _receipt_steps(
    evidence: RunEvidence, by_session: Mapping[str, str]
) -> list[tuple[str | None, dict[str, Any]]]:
    """Each reply and notice the parent received, as a system step (with its time)."""
    session = evidence.session
    if session is None:
        return []
    out: list[tuple[str | None, dict[str, Any]]] = []
    for reply in session.replies:
        out.append((reply.at, _reply_step(reply, by_session)))
    for notice in session.notices:
        out.append((notice.at, _notice_step(notice)))
    return out


def _reply_step(reply: ChildReply, by_session: Mapping[str, str]) -> dict[str, Any]:
    child = by_session.get(reply.sender_session_id, reply.sender_session_id)
    content, cut = _cut(reply.text)
    ours = {"role": "reply", "from_session": reply.sender_session_id, "at": reply.at}
    result: dict[str, Any] = {
        "content": content,
        "subagent_trajectory_ref": [{"trajectory_id": child, "extra": {OURS: ours}}],
    }
    if cut:
        result["extra"] = cut
    step: dict[str, Any] = {
        "source": "system",
        "message": f"the parent received a reply from child {child}",
        "observation": {"results": [result]},
    }
    if reply.at is not None and _parse_time(reply.at) is not None:
        step["timestamp"] = reply.at
    return step


def _notice_step(notice: ChildNotice) -> dict[str, Any]:
    ours = {"role": notice.kind, "at": notice.at}
    content, _ = _cut(notice.text)
    step: dict[str, Any] = {
        "source": "system",
        "message": f"the runtime told the parent that child {notice.child_id} ended "
        + ("with a failure" if notice.kind == "failure" else "without a reply"),
        "observation": {
            "results": [
                {
                    "content": content,
                    "subagent_trajectory_ref": [
                        {"trajectory_id": notice.child_id, "extra": {OURS: ours}}
                    ],
                }
            ]
        },
    }
    if notice.at is not None and _parse_time(notice.at) is not None:
        step["timestamp"] = notice.at
    return step


def _merge_by_time(
    steps: list[dict[str, Any]], extra: Iterable[tuple[str | None, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """``steps`` with each of ``extra`` placed after the last step at or before its time
    (at the end without a time), stable among equals: one pass over both in time order."""
    timed: list[tuple[float, dict[str, Any]]] = []
    untimed: list[dict[str, Any]] = []
    for at, step in extra:
        stamp = _parse_time(at)
        if stamp is None:
            untimed.append(step)
        else:
            timed.append((stamp.timestamp(), step))
    timed.sort(key=lambda pair: pair[0])
    merged: list[dict[str, Any]] = []
    pending = iter(timed)
    upcoming = next(pending, None)
    for step, when in zip(steps, _times(steps), strict=True):
        while upcoming is not None and upcoming[0] < when:
            merged.append(upcoming[1])
            upcoming = next(pending, None)
        merged.append(step)
    while upcoming is not None:
        merged.append(upcoming[1])
        upcoming = next(pending, None)
    return [*merged, *untimed]


def _numbered(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for index, step in enumerate(steps, start=1):
        out.append({"step_id": index, **step})
    if not out:  # ATIF wants at least one step: say that nothing was recorded
        out.append({"step_id": 1, "source": "system", "message": "no readable transcript"})
    return out


def _child_doc(
    child: ChildSession,
    thread: Thread | None,
    session_id: str,
    agent: dict[str, Any],
    price: PriceFn | None,
) -> dict[str, Any]:
    steps = _numbered(_thread_steps(thread, price))
    facts = {
        "parent_session": child.parent_session,
        "depth": child.depth,
        "started_at": child.started_at,
        "ended_at": child.ended_at,
        "tasks": sorted([sender, addressed] for sender, addressed in child.tasks),
        "worked": child.worked,
        "location": list(child.location),
        "label": thread.label if thread is not None else None,
    }
    cost = price(agent.get("model_name"), child.usage) if price is not None else None
    return {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "trajectory_id": child.child_id,
        "agent": agent,
        "steps": steps,
        "final_metrics": final_metrics_of(child.usage, len(steps), cost),
        "extra": {OURS: {"child_session": facts}},
    }


def write_trajectory(
    swarm: Swarm,
    evidence: RunEvidence,
    item: ItemFacts,
    price: PriceFn | None = None,
) -> dict[str, Any]:
    """The ATIF document of one item (a JSON-ready dict)."""
    session_id = f"{item.run_id}/{item.key}"
    agent = {
        "name": item.agent,
        "version": swarm.agent_version or item.agent_version or "unknown",
        "model_name": item.model,
    }
    threads = {t.thread_id: t for t in swarm.children}
    sessions = {c.child_id for c in evidence.child_sessions}
    steps = _thread_steps(swarm.parent, price)
    _link_spawns(steps, evidence, swarm, sessions)
    by_session = {
        e.child_session_id: e.child_id
        for e in evidence.ledger.events
        if type(e) is SpawnEvent and e.child_session_id
    }
    steps = _numbered(_merge_by_time(steps, _receipt_steps(evidence, by_session)))
    usage = item.usage
    total = usage_from(usage.get("total"))
    answers = evidence.answers
    ours: dict[str, Any] = {
        "run_id": item.run_id,
        "item_key": item.key,
        "fixture": item.fixture,
        "fixture_path": item.fixture_path,
        "trial": item.trial,
        "status": item.status,
        "error": item.error,
        "parent_session": evidence.session.header_id if evidence.session else None,
        "parent_paths": list(evidence.parent_paths),
        "verdicts": {
            name: {"passed": passed, "reason": reason, "failing": list(failing)}
            for name, (passed, reason, failing) in item.checks.items()
        },
        "signatures": list(item.signatures),
        "answer": None
        if answers is None
        else {
            "artifact": item.artifact,
            "bullets": [[b.file, b.answer] for b in answers.bullets],
            "unreadable_lines": answers.unreadable_lines,
        },
    }
    if item.kind == "edit":
        ours.update(_edits(evidence))
    children = []
    for child in evidence.child_sessions:
        doc = _child_doc(child, threads.get(child.child_id), session_id, agent, price)
        children.append(doc)
    document = {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "trajectory_id": swarm.parent.thread_id,
        "agent": agent,
        "steps": steps,
        "notes": (
            "Written by swarm-harness. final_metrics are the whole swarm's (the parent and "
            "its subagents) as the item's usage in report.json; each subagent's own are in "
            "its final_metrics, the parent's alone in final_metrics.extra.parent."
        ),
        "final_metrics": final_metrics_of(
            total,
            len(steps),
            item.cost_usd,
            {
                k: v
                for k, v in (
                    ("parent", usage.get("parent")),
                    ("children", usage.get("children")),
                    ("usage_source", usage.get("source")),
                    ("usage_complete", usage.get("complete")),
                )
                if v not in (None, {})
            },
        ),
        "subagent_trajectories": _unique(children),
        "extra": {OURS: ours},
    }
    return {k: v for k, v in document.items() if v not in (None, [])}


def _unique(children: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """ATIF wants embedded ids unique: a second session under one child id gets ``#2``."""
    seen: dict[str, int] = {}
    for child in children:
        tid = child["trajectory_id"]
        seen[tid] = seen.get(tid, 0) + 1
        if seen[tid] > 1:
            child["trajectory_id"] = f"{tid}#{seen[tid]}"
    return children
