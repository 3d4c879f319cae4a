"""The receipt timeline parser: which entries it lists, with their timestamps."""

from __future__ import annotations

import io

from scorer_builders import Transcript

from scorers.prime_agent.timeline import parse_receipt_timeline


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
    parsed = parse_receipt_timeline(io.BytesIO(data))
    assert [e.kind for e in parsed.entries] == ["reply", "notice", "failure"]
    assert parsed.entries[0].name == "sub-a"
    assert parsed.entries[1].child == "sub-b" and parsed.entries[2].child == "sub-c"
    assert all(e.at for e in parsed.entries)
    assert parsed.skipped_lines == 1


def test_never_raises_on_garbage() -> None:
    parsed = parse_receipt_timeline(io.BytesIO(b"\xff\x00{]\n[1,2]\n"))
    assert parsed.entries == ()
