"""Provenance: each shard's answer came from its own child, and that child did the work.

For every shard, each distinct value the artifact gives it must be stated, as a standalone
value compared the way coverage compares answers, in a reply the parent received from a
depth-1 child of this parent that held the shard's worker name (any of its spawns, live or
deleted, so a retry counts). The child behind that reply must have a collected session
file that names this run's parent, sits at depth 1, holds the parent's task addressed to
that child and shows at least one model turn that did not fail. Neither the reply nor the
session may be older than the child's spawn (beyond :data:`CLOCK_TOLERANCE_S`); a missing
or unreadable timestamp never passes. A shard with no answer has nothing to trace: it fails.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from scorers.coverage import integer_text, normalise_answer
from scorers.edges import Edge
from scorers.records import Bullet, ChildReply, ChildSession, NormPath, path_ends_with
from scorers.types import Shard
from scorers.verdict import UntracedShard

#: How much older than its spawn record a child's session start or reply may look. The
#: product creates a child's session file before it appends the spawn record to the ledger
#: (in the captured real run the header is up to 107 ms older than the spawn), and the two
#: are written by different processes; two seconds covers that on a loaded machine with a
#: wide margin, while a copied or pre-made session, or a reply written before the child
#: existed, is typically older by far more.
CLOCK_TOLERANCE_S: Final = 2.0

#: Distinct answers traced per shard. An honest artifact gives each shard one answer; a
#: shard given more is already wrong (coverage), and tracing an unbounded number of them
#: against every reply would let a hostile artifact make scoring quadratic.
MAX_TRACED_VALUES: Final = 8

#: A standalone integer: not inside a word, file name or path (``depot-01.tsv``,
#: ``shard-a.txt``, ``v2``), not part of a decimal or a range (``3.5``, ``3-4``); thousands
#: separators only in three-digit groups, as coverage reads them.
_INTEGER: Final = re.compile(
    r"(?<![\w.,+\-/\\])([+-]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+))(?![\w\-/\\]|[.,][0-9])"
)
#: The boundaries a standalone text value must have on each side.
_TEXT_BEFORE: Final = r"(?<![\w.\-/\\])"
_TEXT_AFTER: Final = r"(?![\w\-/\\]|\.\w)"


@dataclass(frozen=True, slots=True)
class ProvenanceResult:
    """Shards traced to their own working child, and the others with one reason each."""

    traced: tuple[str, ...]
    untraced: tuple[UntracedShard, ...]

    @property
    def passed(self) -> bool:
        return not self.untraced


@dataclass(frozen=True, slots=True)
class AnswerValue:
    """One answer the artifact gives a shard: a canonical integer or normalised text."""

    integer: str | None
    text: str

    def __str__(self) -> str:
        return self.integer if self.integer is not None else self.text


def epoch_seconds(stamp: str | None) -> float | None:
    """An ISO-8601 timestamp with a time zone as seconds since the epoch, else ``None``."""
    if stamp is None:
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return moment.timestamp() if moment.tzinfo is not None else None


def answer_values(answers: Iterable[str], shard: Shard) -> list[AnswerValue]:
    """The distinct values among the artifact's ``answers`` to ``shard``, in order,
    normalised as coverage normalises them (integers canonical when the shard's answer is
    an integer)."""
    wants_integer = isinstance(shard.expected, int) and not isinstance(shard.expected, bool)
    values: dict[AnswerValue, None] = {}
    for answer in dict.fromkeys(answers):  # a repeated bullet is normalised once
        text = normalise_answer(answer)
        integer = integer_text(text) if wants_integer else None
        values[AnswerValue(integer, text if integer is None else integer)] = None
    return list(values)


class _ReplyValues:
    """The standalone integers of each reply text, found once however often asked."""

    def __init__(self) -> None:
        self._integers: dict[str, frozenset[str]] = {}

    def integers(self, text: str) -> frozenset[str]:
        found = self._integers.get(text)
        if found is None:
            found = frozenset(
                canonical
                for match in _INTEGER.finditer(text)
                if (canonical := integer_text(match.group(1))) is not None
            )
            self._integers[text] = found
        return found


def states_value(text: str, value: AnswerValue, seen: _ReplyValues | None = None) -> bool:
    """Whether a reply's ``text`` states ``value`` as a standalone value.

    Stops the coincidence cheat: a reply that merely names ``depot-01.tsv`` or
    ``shard-3.txt`` vouching for the answer ``1`` or ``3``; digits inside a file name or a
    word are not a value.
    """
    if value.integer is not None:
        return value.integer in (seen or _ReplyValues()).integers(text)
    if not value.text:
        return False
    words = r"\s+".join(re.escape(word) for word in value.text.split())
    return re.search(_TEXT_BEFORE + words + _TEXT_AFTER, text) is not None


def children_by_name(depth1: Iterable[Edge]) -> dict[str, list[Edge]]:
    """Every name a depth-1 child held -> those children, in ledger order (one pass, so
    finding each shard's children stays linear in shards plus children)."""
    index: dict[str, list[Edge]] = {}
    for edge in depth1:
        for name in edge.names_held:
            index.setdefault(name, []).append(edge)
    return index


def shard_children(shard: Shard, by_name: Mapping[str, Sequence[Edge]]) -> Sequence[Edge]:
    """This parent's depth-1 children that held ``shard``'s worker name, live or deleted
    (``by_name`` is :func:`children_by_name` of them).

    Stops the borrowed-reply cheat: a reply from another shard's child, or from a helper
    under another name, vouching for this shard's answer.
    """
    return by_name.get(shard.worker, ())


def session_of(edge: Edge, sessions: Iterable[ChildSession]) -> ChildSession | None:
    """The collected session file at the place ``edge``'s ledger record names (``sessions``
    may be all of them or only those of ``edge``'s child id)."""
    for session in sessions:
        if session.child_id == edge.child_id and path_ends_with(edge.child, session.location):
            return session
    return None


def work_problem(
    edge: Edge,
    session: ChildSession | None,
    parent_paths: frozenset[NormPath],
    parent_id: str | None,
) -> str | None:
    """Why ``edge``'s session file does not show the child did the work, or ``None``.

    Stops the hollow-children cheat (session files holding a header and nothing else) and
    copied sessions: a file taken from another run names another parent, one taken from a
    sibling holds a task addressed to another child, and a child whose every model turn
    failed did no work.
    """
    who = f"{edge.name} ({edge.child_id})"
    if session is None:
        return f"no session file for {who}"
    if session.parent_session is None or session.parent_session not in parent_paths:
        return f"session of {who} does not name this run's parent"
    if session.depth != 1:
        return f"session of {who} is not at depth 1"
    if parent_id is None or (parent_id, edge.child_id) not in session.tasks:
        return f"session of {who} holds no task from the parent addressed to {edge.child_id}"
    if not session.worked:
        return f"session of {who} shows no model turn that succeeded"
    return None


def order_problem(edge: Edge, reply: ChildReply, session: ChildSession) -> str | None:
    """Why ``reply`` or ``session`` cannot have followed ``edge``'s spawn, or ``None``.

    Stops the backdated-reply cheat (a reply, or a session, dated before the child
    existed: written in advance or by someone else). A timestamp that is missing or
    unreadable does not pass.
    """
    who = f"{edge.name} ({edge.child_id})"
    spawned = epoch_seconds(edge.spawn.at)
    if spawned is None:
        return f"spawn of {who} has no readable time"
    replied = epoch_seconds(reply.at)
    if replied is None:
        return f"reply from {who} has no readable time"
    if replied < spawned - CLOCK_TOLERANCE_S:
        return f"reply from {who} at {reply.at} is older than its spawn at {edge.spawn.at}"
    started = epoch_seconds(session.started_at)
    if started is None:
        return f"session of {who} has no readable start time"
    if started < spawned - CLOCK_TOLERANCE_S:
        return f"session of {who} starts at {session.started_at}, before its spawn"
    return None


class _Tracer:
    """Traces answers of one run to children; keeps the most advanced failure reason."""

    def __init__(
        self,
        replies: Iterable[ChildReply],
        sessions: Sequence[ChildSession],
        parent_paths: frozenset[NormPath],
        parent_id: str | None,
    ) -> None:
        self.by_sender: dict[str, list[ChildReply]] = {}
        for reply in replies:
            self.by_sender.setdefault(reply.sender_session_id, []).append(reply)
        self.sessions: dict[str, list[ChildSession]] = {}
        for session in sessions:
            self.sessions.setdefault(session.child_id, []).append(session)
        self.parent_paths = parent_paths
        self.parent_id = parent_id
        self.seen = _ReplyValues()

    def through(self, edge: Edge, value: AnswerValue) -> tuple[int, str | None]:
        """``(how far the trace got, why it stopped)``; no reason means it is traced."""
        who = f"{edge.name} ({edge.child_id})"
        replies = self.by_sender.get(edge.child_session_id, ())
        if not replies:
            return 1, f"no reply from {who}"
        stating = [r for r in replies if states_value(r.text, value, self.seen)]
        if not stating:
            return 2, f"no reply from {who} states {str(value)!r}"
        session = session_of(edge, self.sessions.get(edge.child_id, ()))
        problem = work_problem(edge, session, self.parent_paths, self.parent_id)
        if session is None or problem is not None:
            return 3, problem
        for reply in stating:
            problem = order_problem(edge, reply, session)
            if problem is None:
                return 5, None
        return 4, problem

    def shard(
        self, shard: Shard, values: Sequence[AnswerValue], children: Sequence[Edge]
    ) -> str | None:
        """Why ``shard``'s answers cannot all be traced, or ``None``."""
        if not values:
            return "no answer in the artifact to trace"
        if len(values) > MAX_TRACED_VALUES:
            return f"{len(values)} distinct answers, more than {MAX_TRACED_VALUES} to trace"
        if not children:
            return f"no depth-1 child of this parent was named {shard.worker}"
        for value in values:
            best: tuple[int, str | None] = (0, None)
            for edge in children:
                step = self.through(edge, value)
                if step[1] is None:
                    break
                best = max(best, step, key=lambda s: s[0])
            else:
                return best[1]
        return None


def check_provenance(
    shards: Sequence[Shard],
    bullets: Sequence[Bullet] | None,
    depth1: Sequence[Edge],
    replies: Sequence[ChildReply],
    sessions: Sequence[ChildSession],
    parent_paths: Iterable[NormPath],
    parent_id: str | None,
) -> ProvenanceResult:
    """Trace every shard's answers to its own child's reply and that child's work."""
    tracer = _Tracer(replies, sessions, frozenset(parent_paths), parent_id)
    answers: dict[str, list[str]] = {shard.file: [] for shard in shards}
    for bullet in bullets or ():
        if bullet.file in answers:
            answers[bullet.file].append(bullet.answer)
    traced: list[str] = []
    untraced: list[UntracedShard] = []
    by_name = children_by_name(depth1)
    for shard in shards:
        values = answer_values(answers[shard.file], shard)
        reason = tracer.shard(shard, values, shard_children(shard, by_name))
        if reason is None:
            traced.append(shard.file)
        else:
            untraced.append(UntracedShard(shard.file, reason))
    return ProvenanceResult(tuple(traced), tuple(untraced))
