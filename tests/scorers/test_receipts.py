"""Receipts: every depth-1 child of the parent, live or deleted, was heard from."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from record_builders import PARENT, delete, spawn
from scorer_builders import Transcript

from scorers.edges import replay
from scorers.prime_agent.session import parse_session
from scorers.receipts import find_missing_receipts
from scorers.records import LedgerEvent, ReceiptIndex

CHILDREN = [spawn("sub-1", "w-a"), spawn("sub-2", "w-b")]


def missing(events: list[LedgerEvent], transcript: Transcript) -> tuple[str, ...]:
    receipts = parse_session(io.BytesIO(transcript.data)).receipts
    return find_missing_receipts(replay(events, [PARENT]).depth1, receipts)


def both_replied() -> Transcript:
    return Transcript().reply("sub-1", sender="s-sub-1").reply("sub-2", sender="s-sub-2")


@pytest.mark.parametrize(
    ("events", "transcript", "expected"),
    [
        pytest.param(CHILDREN, both_replied(), (), id="replies"),
        pytest.param(
            CHILDREN,
            Transcript().notice("sub-1").failure("sub-2"),
            (),
            id="notice-and-failure",
        ),
        pytest.param(
            CHILDREN,
            Transcript().notice("sub-1", kind="cancelled").notice("sub-2", kind="brand-new"),
            (),
            id="any-notice-kind",
        ),
        pytest.param(
            CHILDREN, Transcript().reply("sub-1", sender="s-sub-1"), ("sub-2",), id="silent-drop"
        ),
        pytest.param(
            [*CHILDREN, delete("sub-2")],
            Transcript().reply("sub-1", sender="s-sub-1"),
            ("sub-2",),
            id="delete-to-hide",
        ),
        pytest.param(
            CHILDREN,
            Transcript()
            .reply("sub-1", sender="s-sub-1")
            .reply("sub-2", sender="s-sub-2", relationship="sibling"),
            ("sub-2",),
            id="sibling-relationship",
        ),
        pytest.param(
            CHILDREN,
            Transcript()
            .reply("sub-1", sender="s-sub-1")
            .reply("sub-2", sender="s-sub-2", relationship="parent"),
            ("sub-2",),
            id="parent-relationship",
        ),
        pytest.param(
            CHILDREN,
            Transcript().reply("sub-1", sender="s-sub-1").reply("sub-2", sender="sub-2"),
            ("sub-2",),
            id="reply-keyed-by-child-id-not-session-id",
        ),
        pytest.param(
            CHILDREN,
            Transcript().reply("sub-1", sender="s-sub-1").notice("s-sub-2"),
            ("sub-2",),
            id="notice-keyed-by-session-id-not-child-id",
        ),
        pytest.param(
            [*CHILDREN, spawn("sub-3", "w-c", depth=2), spawn("sub-4", "x", parent="other/p")],
            both_replied(),
            (),
            id="only-depth1-children-of-this-parent",
        ),
        pytest.param([], Transcript(), (), id="no-children"),
    ],
)
def test_missing_receipts(
    events: list[LedgerEvent], transcript: Transcript, expected: tuple[str, ...]
) -> None:
    assert missing(events, transcript) == expected


@pytest.mark.parametrize(
    "details",
    [
        pytest.param([], id="details-list"),
        pytest.param({"fromRelationship": "child", "from": "s-sub-1"}, id="from-string"),
        pytest.param({"fromRelationship": "child", "from": {"sessionId": 5}}, id="id-int"),
    ],
)
def test_ill_typed_replies_are_malformed_not_receipts(details: object) -> None:
    transcript = Transcript().custom("agent_message", details)
    parsed = parse_session(io.BytesIO(transcript.data))
    assert parsed.receipts == ReceiptIndex()
    assert parsed.malformed_lines == 1


@pytest.mark.parametrize(
    "details",
    [
        pytest.param({"kind": "cancelled", "childId": ["sub-1"]}, id="child-id-list"),
        pytest.param({"kind": "cancelled"}, id="no-child-id"),
        pytest.param("sub-1", id="details-string"),
    ],
)
def test_ill_typed_notices_are_malformed_not_receipts(details: object) -> None:
    transcript = Transcript().custom("rlm_child_terminal_notice", details)
    parsed = parse_session(io.BytesIO(transcript.data))
    assert parsed.receipts == ReceiptIndex()
    assert parsed.malformed_lines == 1


def test_receipts_read_from_a_real_transcript(real_runs: Path) -> None:
    path = next((real_runs / "run0-turn-end-exit" / "sessions").glob("*.jsonl"))
    with path.open("rb") as stream:
        parsed = parse_session(stream)
    assert parsed.receipts == ReceiptIndex(frozenset(), frozenset({"sub-d6e18ece"}))
    assert parsed.header_id == "01a228ac-4361-736c-b3d0-fe6a9add0efe"
    assert parsed.header_id not in path.name
