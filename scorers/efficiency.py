"""Swarm efficiency: how a run spent its work across its children (reported, never gating).

Stops nothing by itself; it shows what a rate cannot: a swarm that resolves by running its
children one after another, or by spawning twice per shard, or by doing the work in the
parent. Every figure is None where the evidence does not tell (no shards, no timestamps,
no parent/children split).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable

from scorers.records import RunEvidence
from scorers.types import Manifest
from scorers.verdict import Efficiency, UsageSummary


def _when(stamp: str | None) -> dt.datetime | None:
    if not stamp:
        return None
    try:
        when = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def peak_overlap(intervals: Iterable[tuple[dt.datetime, dt.datetime]]) -> int:
    """The most intervals open at one instant (an interval ending when another starts
    does not overlap it)."""
    edges = []
    for start, end in intervals:
        edges.append((start, 1))
        edges.append((end, -1))
    edges.sort(key=lambda e: (e[0], e[1]))  # ends before starts at the same instant
    peak = open_now = 0
    for _at, step in edges:
        open_now += step
        peak = max(peak, open_now)
    return peak


def efficiency(evidence: RunEvidence, usage: UsageSummary, manifest: Manifest) -> Efficiency:
    """The efficiency figures of one run."""
    shards = len(manifest.shards)
    total = usage.total.total
    depth1 = len(evidence.depth1_spawns())
    children_share = None
    if usage.children is not None and total > 0:
        children_share = usage.children.total / total
    busy = []
    for child in evidence.child_sessions:
        if child.depth not in (None, 1):
            continue
        start, end = _when(child.started_at), _when(child.ended_at)
        if start is not None and end is not None and end >= start:
            busy.append((start, end))
    session = evidence.session
    wall = None
    if session is not None:
        start, end = _when(session.started_at), _when(session.ended_at)
        if start is not None and end is not None and end > start:
            wall = (end - start).total_seconds()
    busy_s = sum((end - start).total_seconds() for start, end in busy)
    return Efficiency(
        shards=shards,
        tokens_per_shard=total / shards if shards and total else None,
        children_share=children_share,
        depth1_spawns=depth1,
        spawn_overhead=depth1 / shards if shards else None,
        peak_parallel_children=peak_overlap(busy) if busy else None,
        busy_over_wall=busy_s / wall if busy and wall else None,
        parent_wall_s=wall,
    )
