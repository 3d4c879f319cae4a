"""The bounded line reader: chunk boundaries, over-long lines, strict decoding."""

from __future__ import annotations

import io
import tracemalloc
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scorers import lines
from scorers.lines import MALFORMED, decode_json, iter_json_lines, iter_raw_lines


class _Endless(io.RawIOBase):
    """``size`` bytes of ``fill`` produced on demand, never held at once."""

    def __init__(self, size: int, fill: bytes = b"x", tail: bytes = b"") -> None:
        self.left = size
        self.fill = fill
        self.tail = tail

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        if self.left <= 0:
            n = min(len(buffer), len(self.tail))
            buffer[:n] = self.tail[:n]
            self.tail = self.tail[n:]
            return n
        n = min(len(buffer), self.left)
        buffer[:n] = self.fill * n
        self.left -= n
        return n


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "CHUNK_BYTES", 4)


@pytest.mark.usefixtures("small_chunks")
def test_lines_are_reassembled_across_chunk_boundaries() -> None:
    data = b"abcdefghij\nk\n\nlmnop"
    assert list(iter_raw_lines(io.BytesIO(data))) == [
        (b"abcdefghij", True),
        (b"k", True),
        (b"", True),
        (b"lmnop", False),
    ]


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize(
    ("data", "expected"),
    [
        pytest.param(b"12345678\nok\n", [(None, True), (b"ok", True)], id="long-then-short"),
        pytest.param(b"ok\n123456789", [(b"ok", True), (None, False)], id="long-unterminated"),
        pytest.param(b"12345\n", [(b"12345", True)], id="exactly-the-cap"),
        pytest.param(b"123456\n", [(None, True)], id="one-over-the-cap"),
        pytest.param(b"1234567890123\nab\n", [(None, True), (b"ab", True)], id="spans-chunks"),
    ],
)
def test_over_long_lines_are_reported_not_returned(
    data: bytes, expected: list[tuple[bytes | None, bool]]
) -> None:
    assert list(iter_raw_lines(io.BytesIO(data), cap=5)) == expected


def split_by_definition(data: bytes, cap: int) -> list[tuple[bytes | None, bool]]:
    """What ``iter_raw_lines`` promises, computed the obvious way (all in memory)."""
    *lines, tail = data.split(b"\n")
    expected = [(line if len(line) <= cap else None, True) for line in lines]
    if tail:
        expected.append((tail if len(tail) <= cap else None, False))
    return expected


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"\n", b"a", b"bc", b"defghij", b"\r"]), max_size=30).map(
        b"".join
    ),
    chunk=st.integers(1, 9),
    cap=st.integers(0, 12),
)
def test_lines_are_the_same_at_any_chunk_size_and_cap(data: bytes, chunk: int, cap: int) -> None:
    with mock.patch.object(lines, "CHUNK_BYTES", chunk):
        assert list(iter_raw_lines(io.BytesIO(data), cap=cap)) == split_by_definition(data, cap)


def test_an_over_long_line_is_never_held_in_memory() -> None:
    cap = 1024 * 1024
    stream = io.BufferedReader(_Endless(64 * cap, tail=b'\n{"ok":1}\n'))
    tracemalloc.start()
    try:
        got = list(iter_json_lines(stream, cap=cap))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got == [(MALFORMED, True), ({"ok": 1}, True)]
    assert peak < 4 * lines.CHUNK_BYTES + 2 * cap  # nowhere near the 64 MiB line


def test_an_empty_stream_has_no_lines() -> None:
    assert list(iter_raw_lines(io.BytesIO(b""))) == []


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        pytest.param(b'{"a": 1}', {"a": 1}, id="object"),
        pytest.param(b' \t{"a": 1}\r', {"a": 1}, id="json-whitespace-around"),
        pytest.param(b"[1]", [1], id="list"),
        pytest.param(b'"\\u00e9"', "é", id="escape"),
        pytest.param("é".encode(), MALFORMED, id="bare-word"),
        pytest.param(b'"\xc3\xa9"', "é", id="utf8"),
        pytest.param(b'"\xff"', MALFORMED, id="bad-utf8"),
        pytest.param(b'"\xed\xa0\x80"', MALFORMED, id="utf8-encoded-surrogate"),
        pytest.param('"x"'.encode("utf-16"), MALFORMED, id="utf16"),
        pytest.param(b'\xef\xbb\xbf{"a": 1}', MALFORMED, id="bom"),
        pytest.param(b'{"a": "\x00"}', MALFORMED, id="nul"),
        pytest.param(b"{} {}", MALFORMED, id="two-values"),
        pytest.param(b"{", MALFORMED, id="truncated"),
        pytest.param(b"\xa0{}", MALFORMED, id="nbsp-is-not-json-space"),
        pytest.param(b"1" * 10_000, MALFORMED, id="huge-integer"),
        pytest.param(b"[" * 100_000, MALFORMED, id="deep-nesting"),
        pytest.param(None, MALFORMED, id="over-long"),
    ],
)
def test_decode_json(payload: bytes | None, expected: object) -> None:
    assert decode_json(payload) == expected


def test_blank_lines_are_skipped_but_bad_ones_are_not() -> None:
    data = b'\n  \n\r\n{"a":1}\nnope\n'
    assert list(iter_json_lines(io.BytesIO(data))) == [({"a": 1}, True), (MALFORMED, True)]
