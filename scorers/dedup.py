"""Dedup: one live child per shard worker name, and a bounded number of spawns.

Replaying the ledger in order, a depth-1 spawn of this parent that takes a shard worker's
name while another live edge of this parent holds that name is a duplicate. A live edge
holds both its spawn-time name and its current name (renaming does not free a name); a
delete frees both; re-spawning the same edge is not "another" edge. All depth-1 spawns of
this parent, re-spawns included, must stay within the manifest's spawn budget.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scorers.edges import Edge, EdgeKey, Replay
from scorers.records import SpawnEvent
from scorers.verdict import DuplicateSpawn


@dataclass(frozen=True, slots=True)
class SpawnAudit:
    """Every duplicate spawn of a worker name, and the count of depth-1 spawns."""

    duplicates: tuple[DuplicateSpawn, ...]
    total_spawns: int


class _NameHolders:
    """Which live edges of this parent hold each worker name, in the order they took it.

    Only worker names are tracked: no other name can make a spawn a duplicate.
    """

    def __init__(self, workers: frozenset[str]) -> None:
        self._holders: dict[str, dict[EdgeKey, Edge]] = {name: {} for name in workers}

    def other_holder(self, edge: Edge) -> Edge | None:
        """A live edge other than ``edge`` that holds ``edge``'s name."""
        holders = self._holders.get(edge.name)
        if holders:
            key = edge.key
            for holder_key, holder in holders.items():
                if holder_key != key:
                    return holder
        return None

    def release(self, edge: Edge) -> None:
        for name in edge.names_held:
            holders = self._holders.get(name)
            if holders is not None:
                holders.pop(edge.key, None)

    def take(self, edge: Edge) -> None:
        for name in edge.names_held:
            holders = self._holders.get(name)
            if holders is not None:
                holders[edge.key] = edge


def audit_spawns(replay: Replay, worker_names: Iterable[str]) -> SpawnAudit:
    """Find duplicate worker spawns and count depth-1 spawns.

    Stops the hedging cheat: spawning two children under the same worker name (or
    renaming one away and spawning another) so that whichever answers first wins.
    """
    workers = frozenset(worker_names)
    holders = _NameHolders(workers)
    duplicates: list[DuplicateSpawn] = []
    total = 0
    mine = replay.parents
    # This loop runs once per step of this parent (tens of thousands at the ledger cap) and
    # most steps touch no worker name, so names are checked before any holder bookkeeping
    # (for other names it is a no-op) and fields are read directly rather than through
    # ``Replay.owns`` and the ``Edge`` properties.
    for event, before, after in replay.steps:
        if type(event) is SpawnEvent and event.depth == 1 and after.spawn.parent in mine:
            total += 1
            held = holders.other_holder(after) if event.name in workers else None
            if held is not None:
                duplicates.append(
                    DuplicateSpawn(event.child_id, event.name, held.child_id, event.at)
                )
        if (
            before is not None
            and (before.name in workers or before.spawn.name in workers)
            and not before.deleted
            and before.spawn.parent in mine
        ):
            holders.release(before)
        if (
            (after.name in workers or after.spawn.name in workers)
            and not after.deleted
            and after.spawn.parent in mine
        ):
            holders.take(after)
    return SpawnAudit(tuple(duplicates), total)


def over_budget(total_spawns: int, budget: int) -> bool:
    """Whether depth-1 spawns exceed the budget (one retry per shard).

    Stops the brute-force cheat: spawning children again and again (deleting each first,
    so no two are live at once) until one happens to answer right.
    """
    return total_spawns > budget
