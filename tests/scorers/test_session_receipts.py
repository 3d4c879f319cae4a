"""The parent transcript's receipts with their timestamps: what `show` and the HTML
drill-down put on an item's timeline (one parser for the rubric and for people)."""

from __future__ import annotations

import io

from scorer_builders import Transcript

from scorers.prime_agent import parse_session


def test_lists_replies_notices_and_failures_in_file_order_with_timestamps() -> None:
    data = (
        Transcript("root")
        .reply("sub-a")
        .notice("sub-b")
        .failure("sub-c")
        .reply("sub-d", relationship="peer")  # not a child: not a receipt
        .raw(b"not json\n")
        .data
    )
    parsed = parse_session(io.BytesIO(data))
    assert [r.sender_session_id for r in parsed.replies] == ["sess-sub-a"]
    assert [(n.child_id, n.kind) for n in parsed.notices] == [
        ("sub-b", "notice"),
        ("sub-c", "failure"),
    ]
    assert all(r.at for r in parsed.replies) and all(n.at for n in parsed.notices)
    assert parsed.receipts.notice_child_ids == frozenset({"sub-b", "sub-c"})
    assert parsed.malformed_lines == 1


def test_never_raises_on_garbage() -> None:
    parsed = parse_session(io.BytesIO(b"\xff\x00{]\n[1,2]\n"))
    assert parsed.replies == () and parsed.notices == ()
