"""The run's session tree: its root, the sessions below it, and what each one shows.

The root is the session with no ``parent_id`` (exactly one per run); stdout's events name
it too, and that name wins when several roots share a database. Every other session of the
run hangs below it by ``parent_id`` (a subagent's session names the session whose ``task``
call made it); sessions of other roots, or whose parent is not in the database, are not
this run's. Per session: its assistant messages' usage, the prompts it was given (the text
of its user messages: a child's first is the spawn's ``prompt`` verbatim), whether one of
its own model turns succeeded, and its final texts.

A session's *final text* at a moment is what opencode hands back as the task's result: the
last ``text`` part of the last assistant message created by then, and ``""`` when that
message has no text part (an earlier message's text is never taken: the parent received an
empty result).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from scorers.opencode.spawns import Spawn, find_spawns
from scorers.opencode.store import MessageRow, PartRow, SessionRow, Store
from scorers.opencode.usage import is_assistant, tally_messages
from scorers.records import UsageTally

#: opencode's agent for automatic context compaction: its model calls are usage, not the
#: session's own work.
COMPACTION_AGENT: Final = "compaction"


@dataclass(frozen=True, slots=True)
class SessionView:
    """One session of the run. ``path`` runs from the root's id to this session's;
    ``finals`` holds ``(created, final text)`` per assistant message, in order;
    ``malformed`` counts its rows that could not be read and its messages whose tokens
    could not be."""

    row: SessionRow
    path: tuple[str, ...]
    tally: UsageTally
    prompts: frozenset[str]
    finals: tuple[tuple[int, str], ...]
    worked: bool
    malformed: int

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def depth(self) -> int:
        return len(self.path) - 1

    def final_text(self, by: int | None) -> str | None:
        """The final text as of ``by`` (epoch ms; ``None``: the end); ``None`` when no
        assistant message had been created by then."""
        found = None
        for created, text in self.finals:
            if by is not None and created > by:
                break
            found = text
        return found


@dataclass(frozen=True, slots=True)
class RunTree:
    """The root (``None`` when the database holds none), the sessions below it in creation
    order, and every ``task`` call made inside the tree, in creation order."""

    root: SessionView | None
    below: tuple[SessionView, ...] = ()
    spawns: tuple[Spawn, ...] = ()


def _last_text(parts: Sequence[PartRow]) -> str:
    text = ""
    for part in parts:
        if part.data.get("type") == "text":
            value = part.data.get("text")
            text = value if isinstance(value, str) else ""
    return text


def _view(
    row: SessionRow,
    path: tuple[str, ...],
    messages: Sequence[MessageRow],
    parts: dict[str, list[PartRow]],
    malformed: int,
) -> SessionView:
    counted = tally_messages((m.data for m in messages), "parent" if len(path) == 1 else row.id)
    prompts: set[str] = set()
    finals: list[tuple[int, str]] = []
    worked = False
    for message in messages:
        own = parts.get(message.id, [])
        if is_assistant(message.data):
            finals.append((message.created, _last_text(own)))
            if not message.data.get("error") and message.data.get("agent") != COMPACTION_AGENT:
                worked = True
        elif message.data.get("role") == "user":
            prompts.update(
                text
                for p in own
                if p.data.get("type") == "text" and isinstance(text := p.data.get("text"), str)
            )
    return SessionView(
        row,
        path,
        counted.tally,
        frozenset(prompts),
        tuple(finals),
        worked,
        malformed + counted.unreadable,
    )


def choose_root(sessions: Sequence[SessionRow], hint: str | None) -> SessionRow | None:
    """The run's root: the one stdout names when it is a root here, else the earliest."""
    roots = [s for s in sessions if s.parent_id is None]
    named = [s for s in roots if s.id == hint]
    found = named or roots
    return found[0] if found else None


def build_tree(store: Store, root_hint: str | None = None) -> RunTree:
    """The session tree of the run in ``store`` (``root_hint``: stdout's session id)."""
    root = choose_root(store.sessions, root_hint)
    if root is None:
        return RunTree(None)
    children: dict[str, list[SessionRow]] = defaultdict(list)
    for session in store.sessions:
        if session.parent_id is not None:
            children[session.parent_id].append(session)
    paths: dict[str, tuple[str, ...]] = {root.id: (root.id,)}
    order = [root]
    for session in order:  # breadth first; grows as it goes, each session once
        for child in children.get(session.id, ()):
            if child.id not in paths:
                paths[child.id] = (*paths[session.id], child.id)
                order.append(child)
    messages: dict[str, list[MessageRow]] = defaultdict(list)
    for message in store.messages:
        if message.session_id in paths:
            messages[message.session_id].append(message)
    parts: dict[str, list[PartRow]] = defaultdict(list)
    tree_parts = [p for p in store.parts if p.session_id in paths]
    for part in tree_parts:
        parts[part.message_id].append(part)
    views = {
        s.id: _view(s, paths[s.id], messages[s.id], parts, store.malformed.get(s.id, 0))
        for s in order
    }
    below = sorted((views[s.id] for s in order[1:]), key=lambda v: (v.row.created, v.id))
    return RunTree(views[root.id], tuple(below), tuple(find_spawns(tree_parts)))
