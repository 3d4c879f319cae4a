"""Dedup: no worker name taken twice by live children; spawns within budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from record_builders import OTHER, PARENT, delete, ledger_events, rename, spawn

from scorers.dedup import SpawnAudit, audit_spawns, over_budget
from scorers.edges import Edge, EdgeKey, Replay, replay
from scorers.records import LedgerEvent, SpawnEvent
from scorers.verdict import DuplicateSpawn

WORKERS = ("w-a", "w-b")


def audit(*events: LedgerEvent) -> SpawnAudit:
    return audit_spawns(replay(events, [PARENT]), WORKERS)


@pytest.mark.parametrize(
    ("events", "duplicates"),
    [
        pytest.param(
            [spawn("s1", "w-a"), spawn("s2", "w-a", at="t2")],
            (DuplicateSpawn("s2", "w-a", "s1", "t2"),),
            id="double-spawn",
        ),
        pytest.param(
            [spawn("s1", "w-a"), rename("s1", "old"), spawn("s2", "w-a", at="t2")],
            (DuplicateSpawn("s2", "w-a", "s1", "t2"),),
            id="rename-does-not-free-the-spawn-name",
        ),
        pytest.param(
            [spawn("s1", "x"), rename("s1", "w-a"), spawn("s2", "w-a", at="t2")],
            (DuplicateSpawn("s2", "w-a", "s1", "t2"),),
            id="renamed-into-the-name-holds-it",
        ),
        pytest.param(
            [spawn("s1", "w-a"), spawn("s2", "w-a", at="t2"), spawn("s3", "w-a", at="t3")],
            (DuplicateSpawn("s2", "w-a", "s1", "t2"), DuplicateSpawn("s3", "w-a", "s1", "t3")),
            id="triple-spawn",
        ),
    ],
)
def test_duplicate_spawns(events: list[LedgerEvent], duplicates: tuple[DuplicateSpawn]) -> None:
    assert audit(*events).duplicates == duplicates


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([spawn("s1", "w-a"), delete("s1"), spawn("s2", "w-a")], id="delete-frees"),
        pytest.param([spawn("s1", "w-a"), spawn("s1", "w-a")], id="respawn-same-edge"),
        pytest.param([spawn("s1", "w-a"), spawn("s2", "w-b")], id="distinct-names"),
        pytest.param([spawn("s1", "x"), spawn("s2", "x")], id="non-worker-names"),
        pytest.param(
            [spawn("s1", "w-a"), rename("s1", "x"), delete("s1"), spawn("s2", "w-a")],
            id="renamed-then-deleted",
        ),
        pytest.param(
            [spawn("s1", "x"), rename("s1", "w-a"), rename("s1", "y"), spawn("s2", "w-a")],
            id="renamed-through-the-name",
        ),
        pytest.param(
            [spawn("o1", "w-a", parent=OTHER), spawn("s1", "w-a")], id="other-root-holds-it"
        ),
        pytest.param(
            [spawn("s1", "w-a"), spawn("o1", "w-a", parent=OTHER)], id="other-root-takes-it"
        ),
    ],
)
def test_not_duplicates(events: list[LedgerEvent]) -> None:
    assert audit(*events).duplicates == ()


def test_a_spawn_moved_to_another_root_releases_the_name() -> None:
    events = [spawn("s1", "w-a"), spawn("s1", "w-a", parent=OTHER), spawn("s2", "w-a")]
    assert audit(*events).duplicates == ()


def test_total_counts_depth1_spawns_of_this_parent_including_respawns() -> None:
    events = [
        spawn("s1", "w-a"),
        delete("s1"),
        spawn("s1", "w-a"),
        spawn("s2", "x"),
        spawn("g1", "w-b", depth=2),
        spawn("o1", "w-b", parent=OTHER),
        rename("s2", "y"),
    ]
    assert audit(*events).total_spawns == 3


@pytest.mark.parametrize(
    ("total", "budget", "over"),
    [
        pytest.param(6, 6, False, id="at-budget"),
        pytest.param(7, 6, True, id="over-budget"),
        pytest.param(0, 0, False, id="nothing"),
        pytest.param(1, 0, True, id="zero-budget"),
    ],
)
def test_over_budget(total: int, budget: int, over: bool) -> None:
    assert over_budget(total, budget) is over


def test_a_huge_ledger_of_duplicates_is_still_linear() -> None:
    events = [spawn(f"s{i}", "w-a") for i in range(20_000)]
    result = audit(*events)
    assert len(result.duplicates) == 19_999
    assert {d.held_by for d in result.duplicates} == {"s0"}


def audit_by_definition(history: Replay, workers: tuple[str, ...]) -> SpawnAudit:
    """The module docstring, followed literally through the ``Edge`` and ``Replay`` API."""
    holders: dict[str, dict[EdgeKey, Edge]] = {name: {} for name in workers}
    duplicates = []
    total = 0
    for event, before, after in history.steps:
        if isinstance(event, SpawnEvent) and event.depth == 1 and history.owns(after):
            total += 1
            others = [e for k, e in holders.get(event.name, {}).items() if k != after.key]
            if others:
                duplicates.append(
                    DuplicateSpawn(event.child_id, event.name, others[0].child_id, event.at)
                )
        if before is not None and before.live and history.owns(before):
            for name in before.names_held:
                holders.get(name, {}).pop(before.key, None)
        if after.live and history.owns(after):
            for name in after.names_held:
                if name in holders:
                    holders[name][after.key] = after
    return SpawnAudit(tuple(duplicates), total)


@settings(max_examples=300, deadline=None)
@given(events=ledger_events)
def test_the_audit_matches_its_definition(events: list[LedgerEvent]) -> None:
    history = replay(events, [PARENT])
    assert audit_spawns(history, WORKERS) == audit_by_definition(history, WORKERS)
