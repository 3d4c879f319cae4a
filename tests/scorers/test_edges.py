"""Replaying ledger events into edges: last writer wins, keyed by (childId, child path)."""

from __future__ import annotations

from hypothesis import given, settings
from record_builders import OTHER, PARENT, child, delete, ledger_events, rename, spawn

from scorers.edges import Edge, Replay, replay
from scorers.records import DeleteEvent, LedgerEvent, RenameEvent, SpawnEvent, normalize_path


def only_edge(*events: object) -> Edge:
    (edge,) = replay(events, [PARENT]).edges  # type: ignore[arg-type]
    return edge


def test_spawn_rename_delete() -> None:
    edge = only_edge(spawn("sub-1", "first"), rename("sub-1", "second"), delete("sub-1"))
    assert (edge.name, edge.spawn.name, edge.deleted, edge.live) == ("second", "first", True, False)
    assert edge.names_held == ("first", "second")


def test_a_respawn_recreates_the_edge_and_clears_deleted() -> None:
    edge = only_edge(
        spawn("sub-1", "a"), rename("sub-1", "b"), delete("sub-1"), spawn("sub-1", "c", depth=2)
    )
    assert (edge.name, edge.spawn.name, edge.deleted, edge.depth) == ("c", "c", False, 2)


def test_rename_and_delete_of_an_unknown_edge_are_ignored() -> None:
    history = replay([rename("sub-x", "a"), delete("sub-x"), spawn("sub-1", "w")], [PARENT])
    assert [edge.child_id for edge in history.edges] == ["sub-1"]
    assert len(history.steps) == 1


def test_the_key_includes_the_child_path() -> None:
    moved = DeleteEvent("sub-1", child("sub-1") + ".moved", "t")
    edge = only_edge(spawn("sub-1", "w"), moved, RenameEvent("sub-1", "elsewhere", "x", "t"))
    assert edge.live and edge.name == "w"


def test_edges_of_another_root_are_not_this_runs() -> None:
    history = replay([spawn("sub-o", "w", parent=OTHER), spawn("sub-1", "w")], [PARENT])
    assert [edge.child_id for edge in history.edges] == ["sub-1"]
    assert [step[0].child_id for step in history.steps] == ["sub-1"]


def test_an_edge_respawned_under_this_parent_becomes_its() -> None:
    events = [spawn("sub-1", "w", parent=OTHER), delete("sub-1"), spawn("sub-1", "w")]
    history = replay(events, [PARENT])
    assert [edge.live for edge in history.edges] == [True]
    assert len(history.steps) == 1  # only the step that made it this parent's


def test_no_parent_paths_owns_nothing() -> None:
    assert replay([spawn("sub-1", "w")], []).edges == ()


def test_depth1_uses_the_latest_spawn() -> None:
    history = replay([spawn("sub-1", "w", depth=2), spawn("sub-2", "v")], [PARENT])
    assert [edge.child_id for edge in history.depth1] == ["sub-2"]


def test_edges_keep_order_of_first_creation() -> None:
    history = replay([spawn("b", "x"), spawn("a", "y"), rename("b", "z")], [PARENT])
    assert [edge.child_id for edge in history.edges] == ["b", "a"]


def test_paths_compare_by_parts() -> None:
    assert normalize_path("/a/b/c.jsonl") == normalize_path("\\a\\b\\c.jsonl") == "a/b/c.jsonl"
    assert normalize_path("//a//b/") == normalize_path("a\\/b") == "a/b"
    assert normalize_path("C:\\x\\y") == "C:/x/y"
    assert normalize_path("/") == normalize_path("") == ""
    assert normalize_path("/a/b") != normalize_path("/a/B")


def replay_by_definition(events: list[LedgerEvent], parent_paths: list[str]) -> Replay:
    """The module docstring, followed literally: every event replayed, nothing skipped."""
    mine = frozenset(parent_paths)
    edges: dict[tuple[str, str], Edge] = {}
    steps = []
    for event in events:
        key = (event.child_id, event.child)
        before = edges.get(key)
        if isinstance(event, SpawnEvent):
            after = Edge(event, event.name, False)
        elif before is None:
            continue
        elif isinstance(event, RenameEvent):
            after = Edge(before.spawn, event.name, before.deleted)
        else:
            after = Edge(before.spawn, before.name, True)
        edges[key] = after
        if after.parent in mine or (before is not None and before.parent in mine):
            steps.append((event, before, after))
    owned = tuple(edge for edge in edges.values() if edge.parent in mine)
    return Replay(mine, owned, tuple(steps))


@settings(max_examples=300, deadline=None)
@given(events=ledger_events)
def test_replay_matches_its_definition(events: list[LedgerEvent]) -> None:
    assert replay(events, [PARENT]) == replay_by_definition(events, [PARENT])
