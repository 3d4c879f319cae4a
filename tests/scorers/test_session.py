"""The parent transcript: its header id, and what it counts as malformed."""

from __future__ import annotations

import io
import json

import pytest
from scorer_builders import Transcript, jsonl

from scorers.prime_agent.session import parse_session


def test_the_header_id_is_the_session_id() -> None:
    parsed = parse_session(io.BytesIO(Transcript(header_id="hdr-1").data))
    assert (parsed.header_id, parsed.malformed_lines) == ("hdr-1", 0)


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(b'{"type":"session","id":5}', id="id-int"),
        pytest.param(b'{"type":"session","id":""}', id="id-empty"),
        pytest.param(b'{"type":"session"}', id="no-id"),
        pytest.param(b"[1]", id="list"),
        pytest.param(b"\xff", id="bad-utf8"),
    ],
)
def test_a_bad_header_gives_no_id_and_counts_malformed(first: bytes) -> None:
    parsed = parse_session(io.BytesIO(first + b"\n"))
    assert (parsed.header_id, parsed.malformed_lines) == (None, 1)


def test_a_header_that_is_not_first_is_not_the_header() -> None:
    data = jsonl({"type": "model_change"}, {"type": "session", "id": "late"})
    parsed = parse_session(io.BytesIO(data))
    assert (parsed.header_id, parsed.malformed_lines) == (None, 1)


def test_blank_lines_before_the_header_are_skipped() -> None:
    parsed = parse_session(io.BytesIO(b"\n\n" + Transcript(header_id="h").data))
    assert parsed.header_id == "h"


def test_an_empty_transcript() -> None:
    parsed = parse_session(io.BytesIO(b""))
    assert (parsed.header_id, parsed.malformed_lines, parsed.child_usage.total) == (None, 0, 0)


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param({"type": "child_usage_attributed", "childUsage": 5}, id="usage-int"),
        pytest.param({"type": "child_usage_attributed", "childUsage": {"input": 1.5}}, id="float"),
        pytest.param({"type": "message", "message": "hi"}, id="message-string"),
        pytest.param({"type": ["message"]}, id="type-list"),
        pytest.param(7, id="top-level-int"),
    ],
)
def test_ill_typed_entries_are_malformed(entry: object) -> None:
    data = Transcript().data + json.dumps(entry).encode() + b"\n"
    parsed = parse_session(io.BytesIO(data))
    assert (parsed.malformed_lines, parsed.child_usage.total) == (1, 0)


def test_entries_of_other_types_are_fine() -> None:
    transcript = Transcript().entry(type="model_change", provider="x").entry(type="new-kind")
    transcript.custom("some_other_custom", [1, 2]).entry(type="message", message={"role": "user"})
    assert parse_session(io.BytesIO(transcript.data)).malformed_lines == 0
