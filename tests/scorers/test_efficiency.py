"""Efficiency figures: parallelism from child busy intervals, spawn overhead, shares."""

from __future__ import annotations

import datetime as dt

import pytest

from scorers.efficiency import efficiency, peak_overlap
from scorers.records import (
    ChildSession,
    LedgerParse,
    ReceiptIndex,
    RunEvidence,
    SessionParse,
    SpawnEvent,
    TokenUsage,
    UsageTally,
)
from scorers.types import Manifest, Shard
from scorers.verdict import UsageSummary

T0 = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
MANIFEST = Manifest(
    "m", "out.md", tuple(Shard(f"s{i}.txt", f"worker-s{i}", "q", 1) for i in range(4))
)


def at(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).isoformat()


def run(children: list[tuple[float, float]], parent: tuple[float, float] = (0, 10)) -> RunEvidence:
    """A parent that spawned one child per interval (start, end) in seconds."""
    spawns = tuple(
        SpawnEvent(f"c{i}", f"p/c{i}", f"c{i}", "p", 1, f"worker-s{i}", at(s))
        for i, (s, _e) in enumerate(children)
    )
    sessions = tuple(
        ChildSession(f"c{i}", ("h", f"c{i}", "f.jsonl"), depth=1, started_at=at(s), ended_at=at(e))
        for i, (s, e) in enumerate(children)
    )
    session = SessionParse(
        header_id="h",
        receipts=ReceiptIndex(),
        child_usage=TokenUsage(),
        usage=UsageTally(),
        started_at=at(parent[0]),
        ended_at=at(parent[1]),
    )
    return RunEvidence(("p",), LedgerParse(spawns), session, None, None, sessions, len(sessions))


USAGE = UsageSummary(
    total=TokenUsage(800, 200), parent=TokenUsage(300, 100), children=TokenUsage(500, 100)
)


def test_children_side_by_side() -> None:
    eff = efficiency(run([(1, 5), (1, 5), (2, 6), (2, 6)]), USAGE, MANIFEST)
    assert eff.peak_parallel_children == 4
    assert eff.busy_over_wall == pytest.approx(16 / 10)
    assert (eff.depth1_spawns, eff.spawn_overhead, eff.parent_wall_s) == (4, 1.0, 10.0)
    assert eff.tokens_per_shard == 250 and eff.children_share == 0.6


def test_children_one_after_another_show_about_one() -> None:
    """A parent that waits for each child before spawning the next: peak 1, busy ~ wall."""
    eff = efficiency(run([(0, 2.5), (2.5, 5), (5, 7.5), (7.5, 10)]), USAGE, MANIFEST)
    assert eff.peak_parallel_children == 1  # touching intervals do not overlap
    assert eff.busy_over_wall == pytest.approx(1.0)


def test_retries_show_as_spawn_overhead() -> None:
    eff = efficiency(run([(0, 1)] * 6), USAGE, MANIFEST)
    assert eff.spawn_overhead == 1.5


def test_no_children_no_timestamps_no_split() -> None:
    bare = RunEvidence((), LedgerParse(()), None, None, None, (), 0)
    eff = efficiency(bare, UsageSummary(total=TokenUsage(10)), MANIFEST)
    assert (eff.peak_parallel_children, eff.busy_over_wall, eff.parent_wall_s) == (None,) * 3
    assert (eff.children_share, eff.spawn_overhead, eff.tokens_per_shard) == (None, 0.0, 2.5)


def test_peak_overlap() -> None:
    def span(a: float, b: float) -> tuple[dt.datetime, dt.datetime]:
        return T0 + dt.timedelta(seconds=a), T0 + dt.timedelta(seconds=b)

    assert peak_overlap([]) == 0
    assert peak_overlap([span(0, 3), span(1, 2), span(2, 4), span(5, 6)]) == 2
    assert peak_overlap([span(0, 10), span(1, 9), span(2, 8)]) == 3
