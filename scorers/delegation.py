"""Delegation evidence: each shard's worker really existed as a child with a transcript.

For every shard's worker name there must be a live depth-1 edge of this parent whose
current name is that worker and whose child session file was really collected. One child
backs at most one shard.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scorers.edges import Edge
from scorers.records import ChildSession, PathParts, path_ends_with
from scorers.types import Shard


@dataclass(frozen=True, slots=True)
class DelegationResult:
    """Which shard workers are backed by a real child, in manifest order."""

    verified: tuple[str, ...]
    unverified: tuple[str, ...]
    live_depth1_edges: int
    distinct_worker_names: int

    @property
    def passed(self) -> bool:
        return not self.unverified


def live_children(depth1: Iterable[Edge]) -> list[Edge]:
    """Depth-1 edges that were not deleted.

    Stops the delete-then-claim cheat: a child that was deleted (or a grandchild, which
    never appears here) cannot stand in for a shard's worker.
    """
    return [edge for edge in depth1 if edge.live]


def backed_children(edges: Iterable[Edge], sessions: Iterable[ChildSession]) -> list[Edge]:
    """Edges whose child session file was really collected at the place the edge names.

    Stops the forged-ledger cheat: writing spawn records for children that never ran.
    """
    locations: dict[str, set[PathParts]] = {}
    for session in sessions:
        locations.setdefault(session.child_id, set()).add(session.location)
    backed = []
    for edge in edges:
        for location in locations.get(edge.child_id, ()):
            if path_ends_with(edge.child, location):
                backed.append(edge)
                break
    return backed


def assign_workers(shards: Sequence[Shard], candidates: Iterable[Edge]) -> list[Edge | None]:
    """For each shard in order, a distinct candidate child named exactly its worker.

    Stops the helper-names cheat (children named anything but the shard's worker) and
    one child standing in for two shards.
    """
    by_name: dict[str, list[Edge]] = {}
    for edge in candidates:
        by_name.setdefault(edge.name, []).append(edge)
    pools = {name: iter(edges) for name, edges in by_name.items()}
    return [next(pools.get(shard.worker, iter(())), None) for shard in shards]


def check_delegation(
    shards: Sequence[Shard], depth1: Sequence[Edge], sessions: Sequence[ChildSession]
) -> DelegationResult:
    """Judge the depth-1 edges of this parent against the manifest's workers."""
    live = live_children(depth1)
    assigned = assign_workers(shards, backed_children(live, sessions))
    pairs = list(zip(shards, assigned, strict=True))
    return DelegationResult(
        verified=tuple(shard.worker for shard, edge in pairs if edge is not None),
        unverified=tuple(shard.worker for shard, edge in pairs if edge is None),
        live_depth1_edges=len(live),
        distinct_worker_names=len({edge.name for edge in live}),
    )
