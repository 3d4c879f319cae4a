"""Replay ledger events into spawn edges (agent-neutral).

An edge is keyed by ``(child_id, child path)``; the last writer wins. A spawn (re)creates
the edge (parent, depth, name, spawn-time name) and clears its deleted mark; a rename or
delete applies only to an edge that already exists and is otherwise ignored. Events are
replayed in file order, never sorted by timestamp.

Only edges whose parent path is one of this run's parent paths belong to the run; edges of
other roots sharing the ledger are invisible to every rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from scorers.records import LedgerEvent, NormPath, RenameEvent, SpawnEvent

EdgeKey = tuple[str, NormPath]


class Edge(NamedTuple):
    """The current state of one spawned child: its latest spawn record, the name it goes
    by now and whether it was deleted since (a NamedTuple for the reason ledger events are:
    one is built per replayed record)."""

    spawn: SpawnEvent
    name: str
    deleted: bool

    @property
    def child_id(self) -> str:
        return self.spawn.child_id

    @property
    def child(self) -> NormPath:
        return self.spawn.child

    @property
    def child_session_id(self) -> str:
        return self.spawn.child_session_id

    @property
    def parent(self) -> NormPath:
        return self.spawn.parent

    @property
    def depth(self) -> int:
        return self.spawn.depth

    @property
    def key(self) -> EdgeKey:
        return (self.spawn.child_id, self.spawn.child)

    @property
    def live(self) -> bool:
        return not self.deleted

    @property
    def names_held(self) -> tuple[str, ...]:
        """Names a live edge keeps from others: renaming does not free the spawn name."""
        spawn_name = self.spawn.name
        return (spawn_name,) if self.name == spawn_name else (spawn_name, self.name)


#: One applied event and the edge before and after it (``before`` is ``None`` for a first
#: spawn). A plain tuple: one is built per replayed record of this parent.
Step = tuple[LedgerEvent, Edge | None, Edge]


@dataclass(frozen=True, slots=True)
class Replay:
    """The end state of this parent's edges, in order of first creation, and every step
    that touched one of them, in ledger order."""

    parents: frozenset[NormPath]
    edges: tuple[Edge, ...]
    steps: tuple[Step, ...]

    def owns(self, edge: Edge | None) -> bool:
        """Whether ``edge`` is a child of this run's parent."""
        return edge is not None and edge.spawn.parent in self.parents

    @property
    def depth1(self) -> tuple[Edge, ...]:
        """Edges whose latest spawn put them directly under the root (``depth == 1``)."""
        return tuple(edge for edge in self.edges if edge.depth == 1)


def _apply(event: LedgerEvent, before: Edge | None) -> Edge | None:
    """The edge after ``event``, or ``None`` if the event does not apply."""
    if type(event) is SpawnEvent:
        return Edge._make((event, event.name, False))
    if before is None:
        return None
    if type(event) is RenameEvent:
        return Edge._make((before.spawn, event.name, before.deleted))
    return Edge._make((before.spawn, before.name, True))


def replay(events: Iterable[LedgerEvent], parent_paths: Iterable[NormPath]) -> Replay:
    """Replay every event (all roots), keeping what concerns this run's parent."""
    mine = frozenset(parent_paths)
    events = tuple(events)
    # Each key's edge evolves on its own, so a key never spawned under this run's parent
    # (another root's child) can reach neither a step nor an edge of this run: its events
    # are skipped unreplayed. Screening by child path alone keeps a few such keys, which
    # are replayed as before; a path string is cheaper to look up than a key tuple.
    ours = {e.child for e in events if type(e) is SpawnEvent and e.parent in mine}
    edges: dict[EdgeKey, Edge] = {}
    steps: list[Step] = []
    for event in events:
        if event.child not in ours:
            continue
        key = (event.child_id, event.child)
        before = edges.get(key)
        after = _apply(event, before)
        if after is None:
            continue
        edges[key] = after
        if after.spawn.parent in mine or (before is not None and before.spawn.parent in mine):
            steps.append((event, before, after))
    return Replay(
        parents=mine,
        edges=tuple(edge for edge in edges.values() if edge.spawn.parent in mine),
        steps=tuple(steps),
    )
