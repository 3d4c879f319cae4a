"""Read an ATIF document into :class:`RunEvidence` (see :mod:`scorers.atif` for the rules).

Never raises on a well-formed JSON object, whatever it holds: a part of the wrong shape is
skipped, as a malformed transcript line is, and what the rubric then lacks is either judged
as missing (a spawn with no embedded child) or reported unscorable (no answer, no names).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from scorers.atif.edits import edit_records
from scorers.atif.parts import (
    dict_of,
    last_agent_message,
    list_of,
    ours_of,
    results_of,
    stamps_of,
    steps_of,
    steps_usage,
    str_of,
    text_of,
    trajectory_answers,
    usage_of,
    worked,
)
from scorers.records import (
    ChildNotice,
    ChildReply,
    ChildSession,
    DeleteEvent,
    LedgerEvent,
    LedgerParse,
    ReceiptIndex,
    RenameEvent,
    RunEvidence,
    SessionParse,
    SpawnEvent,
    normalize_path,
)
from scorers.tokens import NO_TOKENS, UsageTally
from scorers.types import FixtureKind

#: Arguments of a spawning call that name the child's worker, in the order tried.
NAME_ARGUMENTS: Final = ("description", "name", "task_name")

#: The file name a child's session has in a trajectory that does not say otherwise.
CHILD_FILE: Final = "trajectory.json"

COVERAGE_LIKE: Final = ("coverage", "provenance")
NAMED_LIKE: Final = ("delegation", "dedup", "provenance")


@dataclass(frozen=True)
class TrajectoryEvidence:
    """The evidence a trajectory holds, the criteria it cannot support (name -> why), and
    the verdicts its exporter recorded (name -> passed; empty when it is not ours)."""

    evidence: RunEvidence
    unscorable: Mapping[str, str] = field(default_factory=dict)
    exported: Mapping[str, bool] = field(default_factory=dict)


@dataclass
class _Spawn:
    child_id: str
    name: str | None
    at: str | None
    seq: int | None
    child_session_id: str
    later: list[dict[str, Any]]


class _Reader:
    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = doc
        self.root = ours_of(doc)
        self.header = (
            str_of(self.root.get("parent_session"))
            or str_of(doc.get("trajectory_id"))
            or str_of(doc.get("session_id"))
            or "root"
        )
        paths = [p for p in list_of(self.root.get("parent_paths")) if isinstance(p, str) and p]
        self.parent_paths = tuple(normalize_path(p) for p in paths) or (self.header,)
        self.embedded: dict[str, dict[str, Any]] = {}
        for sub in list_of(doc.get("subagent_trajectories")):
            tid = str_of(dict_of(sub).get("trajectory_id"))
            if tid is not None and tid not in self.embedded:
                self.embedded[tid] = sub
        self.spawns: list[_Spawn] = []
        self.replies: list[ChildReply] = []
        self.notices: list[ChildNotice] = []

    def location(self, tid: str) -> tuple[str, ...]:
        facts = dict_of(ours_of(self.embedded.get(tid)).get("child_session"))
        found = list_of(facts.get("location"))
        if found and all(isinstance(p, str) and p for p in found):
            return tuple(found)
        return (self.header, tid, CHILD_FILE)

    def read_root(self) -> None:
        calls: dict[str, dict[str, Any]] = {}
        spawned: dict[str, _Spawn] = {}
        for step in steps_of(self.doc):
            for call in list_of(step.get("tool_calls")):
                cid = str_of(dict_of(call).get("tool_call_id"))
                if cid is not None:
                    calls[cid] = dict_of(dict_of(call).get("arguments"))
            at = str_of(step.get("timestamp"))
            for result in results_of(step):
                content = text_of(result.get("content"))
                args = calls.get(str_of(result.get("source_call_id")) or "", {})
                for ref in list_of(result.get("subagent_trajectory_ref")):
                    self._ref(dict_of(ref), content, args, at, spawned)

    def _ref(
        self,
        ref: dict[str, Any],
        content: str,
        args: Mapping[str, Any],
        at: str | None,
        spawned: dict[str, _Spawn],
    ) -> None:
        tid = str_of(ref.get("trajectory_id"))
        if tid is None:
            return
        ours = ours_of(ref)
        role = ours.get("role")
        when = str_of(ours.get("at")) if "at" in ours else at
        if role == "spawn":
            spawn = _Spawn(
                tid,
                str_of(ours.get("worker")),
                when,
                ours.get("seq") if isinstance(ours.get("seq"), int) else None,
                str_of(ours.get("child_session_id")) or tid,
                [e for e in list_of(ours.get("later")) if isinstance(e, dict)],
            )
            self.spawns.append(spawn)
            spawned[tid] = spawn
        elif role == "reply":
            sender = str_of(ours.get("from_session"))
            if sender is None:
                sender = spawned[tid].child_session_id if tid in spawned else tid
            self.replies.append(ChildReply(sender, content, when))
        elif role in ("notice", "failure"):
            self.notices.append(ChildNotice(tid, role, content, when))
        elif role is None:  # another tool's trajectory: first mention spawns, content replies
            if tid not in spawned:
                name = next((a for k in NAME_ARGUMENTS if (a := str_of(args.get(k)))), None)
                spawn = _Spawn(tid, name, at, None, tid, [])
                self.spawns.append(spawn)
                spawned[tid] = spawn
            final = last_agent_message(self.embedded.get(tid, {}))
            if final and final in content:
                self.replies.append(ChildReply(spawned[tid].child_session_id, content, at))

    def ledger(self) -> LedgerParse:
        parent = self.parent_paths[0]
        ordered: list[tuple[int, int, LedgerEvent]] = []
        by_seq = all(s.seq is not None for s in self.spawns)
        for index, spawn in enumerate(self.spawns):
            child = "/".join(self.location(spawn.child_id))
            event = SpawnEvent(
                spawn.child_id,
                normalize_path(child),
                spawn.child_session_id,
                parent,
                1,
                spawn.name or "",
                spawn.at or "",
            )
            position = spawn.seq if by_seq and spawn.seq is not None else index * 1_000_000
            ordered.append((position, 0, event))
            for offset, later in enumerate(spawn.later, start=1):
                seq = later.get("seq")
                where = seq if by_seq and isinstance(seq, int) else position + offset
                stamp = str_of(later.get("at")) or ""
                if later.get("op") == "rename" and isinstance(later.get("name"), str):
                    ordered.append(
                        (
                            where,
                            offset,
                            RenameEvent(spawn.child_id, event.child, later["name"], stamp),
                        )
                    )
                elif later.get("op") == "delete":
                    ordered.append((where, offset, DeleteEvent(spawn.child_id, event.child, stamp)))
        ordered.sort(key=lambda entry: (entry[0], entry[1]))
        return LedgerParse(tuple(event for _, _, event in ordered))

    def children(self) -> tuple[ChildSession, ...]:
        out = []
        for tid, sub in self.embedded.items():
            steps = steps_of(sub)
            facts = dict_of(ours_of(sub).get("child_session"))
            stamps = stamps_of(steps)
            tasks_given = list_of(facts.get("tasks")) if "tasks" in facts else None
            if tasks_given is not None:
                tasks = frozenset(
                    (t[0], t[1])
                    for t in tasks_given
                    if isinstance(t, list) and len(t) == 2 and all(isinstance(x, str) for x in t)
                )
            else:
                first = steps[0] if steps else {}
                tasks = (
                    frozenset({(self.header, tid)})
                    if first.get("source") == "user"
                    else frozenset()
                )
            final = dict_of(sub.get("final_metrics"))
            usage = usage_of(final, "total_") if final else steps_usage(steps)
            depth = facts.get("depth", 1)
            out.append(
                ChildSession(
                    child_id=tid,
                    location=self.location(tid),
                    parent_session=str_of(facts.get("parent_session"))
                    if "parent_session" in facts
                    else self.parent_paths[0],
                    depth=depth if isinstance(depth, int) else None,
                    started_at=str_of(facts.get("started_at"))
                    if "started_at" in facts
                    else (stamps[0] if stamps else None),
                    tasks=tasks,
                    worked=bool(facts["worked"]) if "worked" in facts else worked(steps),
                    ended_at=str_of(facts.get("ended_at"))
                    if "ended_at" in facts
                    else (stamps[-1] if stamps else None),
                    usage=usage,
                )
            )
        return tuple(out)


def trajectory_evidence(
    doc: Mapping[str, Any], artifact: str, kind: FixtureKind = "read"
) -> TrajectoryEvidence:
    """The rubric's evidence in an ATIF document, for a fixture of ``kind`` whose answer is
    ``artifact``."""
    reader = _Reader(doc)
    reader.read_root()
    children = reader.children()
    answers, said = trajectory_answers(doc, reader.root, artifact)
    edits = edit_records(reader.root)
    root_steps = steps_of(doc)
    stamps = stamps_of(root_steps)
    parent_usage = steps_usage(root_steps)
    session = SessionParse(
        header_id=reader.header,
        receipts=ReceiptIndex(
            frozenset(r.sender_session_id for r in reader.replies),
            frozenset(n.child_id for n in reader.notices),
        ),
        child_usage=sum((c.usage for c in children), NO_TOKENS),
        usage=UsageTally(
            assistant_messages=sum(1 for s in root_steps if s.get("source") == "agent"),
            usage=parent_usage,
        ),
        replies=tuple(reader.replies),
        notices=tuple(reader.notices),
        started_at=stamps[0] if stamps else None,
        ended_at=stamps[-1] if stamps else None,
    )
    evidence = RunEvidence(
        parent_paths=reader.parent_paths,
        ledger=reader.ledger(),
        session=session,
        stream=None,
        answers=answers,
        child_sessions=children,
        child_session_dirs=len(children),
        writes=edits.writes,
        tree=edits.tree,
    )
    unscorable: dict[str, str] = {}
    if not said:
        for name in COVERAGE_LIKE:
            unscorable[name] = f"the trajectory holds no {artifact} (no answer, no call writing it)"
    if kind == "edit":  # what its edits lack, after what its answer does
        for name, why in edits.unscorable().items():
            unscorable[name] = f"{unscorable[name]}; {why}" if name in unscorable else why
    unnamed = [s.child_id for s in reader.spawns if not s.name]
    if unnamed:
        for name in NAMED_LIKE:
            unscorable.setdefault(
                name, f"spawns of {', '.join(unnamed[:3])} name no worker (no description or name)"
            )
    exported = {
        name: bool(dict_of(v).get("passed"))
        for name, v in dict_of(reader.root.get("verdicts")).items()
        if isinstance(name, str)
    }
    return TrajectoryEvidence(evidence, unscorable, exported)
