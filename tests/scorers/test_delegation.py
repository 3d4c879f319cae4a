"""Delegation evidence: each worker is a live, depth-1, on-disk child of this parent."""

from __future__ import annotations

import pytest
from record_builders import PARENT, ROOT, child, delete, rename, spawn

from scorers.delegation import DelegationResult, check_delegation
from scorers.edges import replay
from scorers.records import ChildSession, LedgerEvent
from scorers.types import Shard

SHARDS = (Shard("a.txt", "w-a", "q", 1), Shard("b.txt", "w-b", "q", 2))


def present(*child_ids: str, root: str = ROOT) -> list[ChildSession]:
    return [ChildSession(c, (root, c, f"s-{c}.jsonl")) for c in child_ids]


def judge(
    events: list[LedgerEvent], sessions: list[ChildSession], shards: tuple[Shard, ...] = SHARDS
) -> DelegationResult:
    return check_delegation(shards, replay(events, [PARENT]).depth1, sessions)


HONEST = [spawn("sub-a", "w-a"), spawn("sub-b", "w-b")]


def test_honest_children_verify_every_worker() -> None:
    result = judge(HONEST, present("sub-a", "sub-b"))
    assert (result.passed, result.verified, result.unverified) == (True, ("w-a", "w-b"), ())
    assert (result.live_depth1_edges, result.distinct_worker_names) == (2, 2)


@pytest.mark.parametrize(
    ("events", "sessions", "unverified"),
    [
        pytest.param([], [], ("w-a", "w-b"), id="no-spawn"),
        pytest.param(
            [spawn("sub-a", "helper-1"), spawn("sub-b", "helper-2")],
            present("sub-a", "sub-b"),
            ("w-a", "w-b"),
            id="helper-names",
        ),
        pytest.param(HONEST, present("sub-a"), ("w-b",), id="forged-ledger"),
        pytest.param(
            HONEST, present("sub-a") + present("sub-b", root="other"), ("w-b",), id="other-root-dir"
        ),
        pytest.param(
            HONEST,
            [*present("sub-a"), ChildSession("sub-b", (ROOT, "sub-b", "other.jsonl"))],
            ("w-b",),
            id="different-file",
        ),
        pytest.param(
            HONEST,
            [*present("sub-a"), ChildSession("sub-b", (ROOT, "sub-a", "s-sub-b.jsonl"))],
            ("w-b",),
            id="file-under-another-child",
        ),
        pytest.param(
            [*HONEST, delete("sub-b")], present("sub-a", "sub-b"), ("w-b",), id="deleted-child"
        ),
        pytest.param(
            [spawn("sub-a", "w-a"), spawn("sub-b", "w-b", depth=2)],
            present("sub-a", "sub-b"),
            ("w-b",),
            id="depth2-only",
        ),
        pytest.param(
            [*HONEST, rename("sub-b", "w-c")],
            present("sub-a", "sub-b"),
            ("w-b",),
            id="renamed-away",
        ),
        pytest.param(
            [spawn("sub-a", "w-a"), spawn("sub-b", "w-b", parent="elsewhere/p.jsonl")],
            present("sub-a", "sub-b"),
            ("w-b",),
            id="another-parent",
        ),
    ],
)
def test_workers_without_evidence_are_unverified(
    events: list[LedgerEvent], sessions: list[ChildSession], unverified: tuple[str, ...]
) -> None:
    result = judge(events, sessions)
    assert (result.passed, result.unverified) == (False, unverified)


def test_a_rename_to_the_worker_name_counts() -> None:
    events = [spawn("sub-a", "scratch"), rename("sub-a", "w-a"), spawn("sub-b", "w-b")]
    assert judge(events, present("sub-a", "sub-b")).passed


def test_a_deleted_then_respawned_child_counts() -> None:
    events = [*HONEST, delete("sub-b"), spawn("sub-b", "w-b")]
    assert judge(events, present("sub-a", "sub-b")).passed


def test_one_child_backs_one_shard() -> None:
    shards = (Shard("a.txt", "w", "q", 1), Shard("b.txt", "w", "q", 2))
    result = judge([spawn("sub-a", "w")], present("sub-a"), shards)
    assert (result.verified, result.unverified) == (("w",), ("w",))
    result = judge([spawn("sub-a", "w"), spawn("sub-b", "w")], present("sub-a", "sub-b"), shards)
    assert result.passed


def test_counts_cover_all_live_depth1_children() -> None:
    events = [*HONEST, spawn("sub-c", "w-a"), spawn("sub-d", "x"), delete("sub-d")]
    result = judge(events, present("sub-a", "sub-b"))
    assert (result.live_depth1_edges, result.distinct_worker_names) == (3, 2)


def test_locations_must_match_whole_parts() -> None:
    sessions = [ChildSession("sub-a", ("root-id", "sub-a", "s-sub-a.jsonl"))]
    events = [spawn("sub-a", "w-a")]
    assert child("sub-a").endswith("root-id/sub-a/s-sub-a.jsonl")
    assert judge(events, sessions, SHARDS[:1]).passed
    sessions = [ChildSession("sub-a", ("t-id", "sub-a", "s-sub-a.jsonl"))]  # "root-id" ends so
    assert not judge(events, sessions, SHARDS[:1]).passed
