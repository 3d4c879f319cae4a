"""Read an ATIF document into :class:`RunEvidence` (see :mod:`scorers.atif` for the rules).

Never raises on a well-formed JSON object, whatever it holds: a part of the wrong shape is
skipped, as a malformed transcript line is, and what the rubric then lacks is either judged
as missing (a spawn with no embedded child) or reported unscorable (no answer, no names).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from scorers.artifact import bullet_of
from scorers.atif.edits import edit_records
from scorers.records import (
    ArtifactParse,
    Bullet,
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
    path_ends_with,
)
from scorers.tokens import NO_TOKENS, TokenUsage, UsageTally
from scorers.types import FixtureKind

#: The key of swarm-harness's own fields in an ``extra``.
OURS: Final = "swarm_harness"

#: Arguments of a spawning call that name the child's worker, in the order tried.
NAME_ARGUMENTS: Final = ("description", "name", "task_name")
#: Arguments of a tool call that name the file it writes, and that hold what it writes.
PATH_ARGUMENTS: Final = ("file_path", "path", "filePath", "filename", "file")
CONTENT_ARGUMENTS: Final = ("content", "contents", "text")

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


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _ours(part: object) -> dict[str, Any]:
    return _dict(_dict(_dict(part).get("extra")).get(OURS))


def _steps(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [s for s in _list(doc.get("steps")) if isinstance(s, dict)]


def _results(step: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    for result in _list(_dict(step.get("observation")).get("results")):
        if isinstance(result, dict):
            yield result


def _text(message: object) -> str:
    if isinstance(message, str):
        return message
    return "".join(str(p.get("text") or "") for p in _list(message) if isinstance(p, dict))


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _usage(metrics: Mapping[str, Any], prefix: str = "") -> TokenUsage:
    """ATIF metrics (``prompt_tokens`` holding cached and cache-written input) as the four
    billed fields."""
    extra = _dict(metrics.get("extra"))
    prompt = _int(metrics.get(f"{prefix}prompt_tokens"))
    cached = _int(metrics.get(f"{prefix}cached_tokens"))
    written = _int(extra.get("cache_write_tokens"))
    reasoning = extra.get("reasoning_tokens")
    return TokenUsage(
        max(0, prompt - cached - written),
        _int(metrics.get(f"{prefix}completion_tokens")),
        cached,
        written,
        reasoning if isinstance(reasoning, int) else None,
    )


def _steps_usage(steps: Sequence[Mapping[str, Any]]) -> TokenUsage:
    total = NO_TOKENS
    for step in steps:
        if isinstance(step.get("metrics"), dict):
            total = total + _usage(step["metrics"])
    return total


def _last_agent_message(doc: Mapping[str, Any]) -> str:
    for step in reversed(_steps(doc)):
        if step.get("source") == "agent":
            text = _text(step.get("message")).strip()
            if text:
                return text
    return ""


def _stamps(steps: Sequence[Mapping[str, Any]]) -> list[str]:
    return [t for s in steps if (t := _str(s.get("timestamp"))) is not None]


def _worked(steps: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        s.get("source") == "agent" and s.get("llm_call_count") != 0 and "error" not in _ours(s)
        for s in steps
    )


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
        self.root = _ours(doc)
        self.header = (
            _str(self.root.get("parent_session"))
            or _str(doc.get("trajectory_id"))
            or _str(doc.get("session_id"))
            or "root"
        )
        paths = [p for p in _list(self.root.get("parent_paths")) if isinstance(p, str) and p]
        self.parent_paths = tuple(normalize_path(p) for p in paths) or (self.header,)
        self.embedded: dict[str, dict[str, Any]] = {}
        for sub in _list(doc.get("subagent_trajectories")):
            tid = _str(_dict(sub).get("trajectory_id"))
            if tid is not None and tid not in self.embedded:
                self.embedded[tid] = sub
        self.spawns: list[_Spawn] = []
        self.replies: list[ChildReply] = []
        self.notices: list[ChildNotice] = []

    def location(self, tid: str) -> tuple[str, ...]:
        facts = _dict(_ours(self.embedded.get(tid)).get("child_session"))
        found = _list(facts.get("location"))
        if found and all(isinstance(p, str) and p for p in found):
            return tuple(found)
        return (self.header, tid, CHILD_FILE)

    def read_root(self) -> None:
        calls: dict[str, dict[str, Any]] = {}
        spawned: dict[str, _Spawn] = {}
        for step in _steps(self.doc):
            for call in _list(step.get("tool_calls")):
                cid = _str(_dict(call).get("tool_call_id"))
                if cid is not None:
                    calls[cid] = _dict(_dict(call).get("arguments"))
            at = _str(step.get("timestamp"))
            for result in _results(step):
                content = _text(result.get("content"))
                args = calls.get(_str(result.get("source_call_id")) or "", {})
                for ref in _list(result.get("subagent_trajectory_ref")):
                    self._ref(_dict(ref), content, args, at, spawned)

    def _ref(
        self,
        ref: dict[str, Any],
        content: str,
        args: Mapping[str, Any],
        at: str | None,
        spawned: dict[str, _Spawn],
    ) -> None:
        tid = _str(ref.get("trajectory_id"))
        if tid is None:
            return
        ours = _ours(ref)
        role = ours.get("role")
        when = _str(ours.get("at")) if "at" in ours else at
        if role == "spawn":
            spawn = _Spawn(
                tid,
                _str(ours.get("worker")),
                when,
                ours.get("seq") if isinstance(ours.get("seq"), int) else None,
                _str(ours.get("child_session_id")) or tid,
                [e for e in _list(ours.get("later")) if isinstance(e, dict)],
            )
            self.spawns.append(spawn)
            spawned[tid] = spawn
        elif role == "reply":
            sender = _str(ours.get("from_session"))
            if sender is None:
                sender = spawned[tid].child_session_id if tid in spawned else tid
            self.replies.append(ChildReply(sender, content, when))
        elif role in ("notice", "failure"):
            self.notices.append(ChildNotice(tid, role, content, when))
        elif role is None:  # another tool's trajectory: first mention spawns, content replies
            if tid not in spawned:
                name = next((a for k in NAME_ARGUMENTS if (a := _str(args.get(k)))), None)
                spawn = _Spawn(tid, name, at, None, tid, [])
                self.spawns.append(spawn)
                spawned[tid] = spawn
            final = _last_agent_message(self.embedded.get(tid, {}))
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
                stamp = _str(later.get("at")) or ""
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
            steps = _steps(sub)
            facts = _dict(_ours(sub).get("child_session"))
            stamps = _stamps(steps)
            tasks_given = _list(facts.get("tasks")) if "tasks" in facts else None
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
            final = _dict(sub.get("final_metrics"))
            usage = _usage(final, "total_") if final else _steps_usage(steps)
            depth = facts.get("depth", 1)
            out.append(
                ChildSession(
                    child_id=tid,
                    location=self.location(tid),
                    parent_session=_str(facts.get("parent_session"))
                    if "parent_session" in facts
                    else self.parent_paths[0],
                    depth=depth if isinstance(depth, int) else None,
                    started_at=_str(facts.get("started_at"))
                    if "started_at" in facts
                    else (stamps[0] if stamps else None),
                    tasks=tasks,
                    worked=bool(facts["worked"]) if "worked" in facts else _worked(steps),
                    ended_at=_str(facts.get("ended_at"))
                    if "ended_at" in facts
                    else (stamps[-1] if stamps else None),
                    usage=usage,
                )
            )
        return tuple(out)

    def answers(self, artifact: str) -> tuple[ArtifactParse | None, bool]:
        """The answer's bullets, and whether the trajectory says anything of the answer."""
        if "answer" in self.root:
            answer = self.root["answer"]
            if answer is None:
                return None, True  # the exporter found no artifact: it was missing
            bullets = tuple(
                Bullet(b[0], b[1])
                for b in _list(_dict(answer).get("bullets"))
                if isinstance(b, list) and len(b) == 2 and all(isinstance(x, str) for x in b)
            )
            unreadable = _dict(answer).get("unreadable_lines")
            return ArtifactParse(bullets, unreadable if isinstance(unreadable, int) else 0), True
        written = None
        tail = (artifact,)
        for step in _steps(self.doc):
            for call in _list(step.get("tool_calls")):
                args = _dict(_dict(call).get("arguments"))
                path = next((p for k in PATH_ARGUMENTS if (p := _str(args.get(k)))), None)
                text = next((c for k in CONTENT_ARGUMENTS if (c := _str(args.get(k)))), None)
                if (
                    path is not None
                    and text is not None
                    and path_ends_with(normalize_path(path), tail)
                ):
                    written = text
        if written is None:
            return None, False
        bullets = tuple(b for line in written.splitlines() if (b := bullet_of(line)) is not None)
        return ArtifactParse(bullets), True


def trajectory_evidence(
    doc: Mapping[str, Any], artifact: str, kind: FixtureKind = "read"
) -> TrajectoryEvidence:
    """The rubric's evidence in an ATIF document, for a fixture of ``kind`` whose answer is
    ``artifact``."""
    reader = _Reader(doc)
    reader.read_root()
    children = reader.children()
    answers, said = reader.answers(artifact)
    edits = edit_records(reader.root)
    root_steps = _steps(doc)
    stamps = _stamps(root_steps)
    parent_usage = _steps_usage(root_steps)
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
        name: bool(_dict(v).get("passed"))
        for name, v in _dict(reader.root.get("verdicts")).items()
        if isinstance(name, str)
    }
    return TrajectoryEvidence(evidence, unscorable, exported)
