"""Bounded, streaming line reading shared by every parser.

Artifacts come from an agent under test, so their bytes are hostile until proven otherwise:
a single "line" may be gigabytes long, may not be UTF-8, may hold NUL bytes. Everything
here reads fixed-size chunks and never holds more than one capped line in memory, and
nothing raises on any input bytes: bad lines are reported as :data:`MALFORMED` instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO, Final, cast

#: The longest line any parser will hold. The product caps a whole ledger at 32 MiB and
#: its largest legitimate lines (assistant messages carrying a tool call with file content
#: in a transcript or stream) stay far below this; anything longer is either corruption or
#: an attempt to exhaust the scorer's memory, so it is skipped unread and counted.
MAX_LINE_BYTES: Final = 8 * 1024 * 1024

#: Read size: large enough that per-chunk overhead is negligible, small enough that the
#: scorer's footprint stays a few MiB beyond the line cap.
CHUNK_BYTES: Final = 1024 * 1024


class _Malformed:
    """Marker type for a line that could not be read as JSON."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MALFORMED"


#: Stands in for the value of a line that was over-long, not UTF-8, held NUL or was not JSON.
MALFORMED: Final = _Malformed()

#: ``(payload, terminated)``: ``payload`` is ``None`` for an over-long line (never held).
RawLine = tuple[bytes | None, bool]

#: ``(payloads, terminated)``: consecutive lines that share ``terminated``.
_Batch = tuple[list[bytes | None], bool]


def _iter_batches(stream: IO[bytes], cap: int) -> Iterator[_Batch]:
    """The lines of ``stream`` a chunk at a time (see :func:`iter_raw_lines`).

    Batched so that the per-line work of the readers below is one loop step: a capped
    ledger has 100,000 lines and this is the innermost loop of every parser.
    """
    pending: list[bytes] = []
    pending_len = 0
    skipping = False
    while True:
        chunk = stream.read(CHUNK_BYTES)
        if not chunk:
            break
        pieces = chunk.split(b"\n")
        tail = pieces.pop()
        if pieces:
            lines: list[bytes | None] = (
                [None if len(piece) > cap else piece for piece in pieces]
                if max(map(len, pieces)) > cap
                else cast("list[bytes | None]", pieces)
            )
            if skipping or pending:
                first = lines[0]
                if skipping or first is None or pending_len + len(first) > cap:
                    lines[0] = None
                else:
                    pending.append(first)
                    lines[0] = b"".join(pending)
                skipping = False
                pending = []
                pending_len = 0
            yield lines, True
        if skipping or not tail:
            continue
        if pending_len + len(tail) > cap:
            skipping = True
            pending = []
            pending_len = 0
        else:
            pending.append(tail)
            pending_len += len(tail)
    if skipping:
        yield [None], False
    elif pending:
        yield [b"".join(pending)], False


def iter_raw_lines(stream: IO[bytes], cap: int = MAX_LINE_BYTES) -> Iterator[RawLine]:
    """Yield each ``\\n``-terminated line of ``stream`` without its newline.

    A line longer than ``cap`` bytes is yielded as ``None`` and its bytes are dropped as
    they are read. The last line is yielded with ``terminated=False`` when the stream does
    not end in a newline (an empty remainder yields nothing).
    """
    for payloads, terminated in _iter_batches(stream, cap):
        for payload in payloads:
            yield payload, terminated


#: ``(value, terminated)``: ``value`` is the decoded JSON value or :data:`MALFORMED`.
JsonLine = tuple[object, bool]


#: One decoder for every line: ``raw_decode`` returns where the value ended, so trailing
#: data is detected without a second scan, and (unlike ``json.loads``) it takes the text as
#: decoded here, never sniffing another encoding in the bytes.
_DECODER: Final = json.JSONDecoder()

#: Whitespace as JSON defines it (``str.strip()`` would also accept e.g. NBSP).
_JSON_SPACE: Final = " \t\r\n"

#: The NUL byte as an int: ``NUL in payload`` is a plain ``memchr``, whereas
#: ``b"\x00" in payload`` first tries its needle as an int and builds (then discards) a
#: ``TypeError``, which measured as slow as decoding the line.
_NUL: Final = 0


def decode_json(payload: bytes | None) -> object:
    """Decode one line as strict UTF-8 JSON, or return :data:`MALFORMED`."""
    if payload is None or _NUL in payload:
        return MALFORMED
    try:
        # Decoded here, strictly: json.loads would also sniff UTF-16/32 in bytes.
        text = payload.decode("utf-8")
        if text[:1] in _JSON_SPACE:
            text = text.lstrip(_JSON_SPACE)
        value, end = _DECODER.raw_decode(text)
    except (ValueError, RecursionError):
        # ValueError: bad UTF-8, bad JSON (no value at all included), over-long integer
        # literals; RecursionError: absurdly deep nesting.
        return MALFORMED
    if end != len(text) and text[end:].strip(_JSON_SPACE):
        return MALFORMED  # trailing data after the value
    return value


def is_blank(payload: bytes | None) -> bool:
    """Whether a line is only whitespace: layout, not a defect (readers skip it)."""
    return payload is not None and not payload.strip()


def iter_json_lines(stream: IO[bytes], cap: int = MAX_LINE_BYTES) -> Iterator[JsonLine]:
    """Yield every non-blank line of ``stream`` decoded as JSON (or :data:`MALFORMED`)."""
    for payloads, terminated in _iter_batches(stream, cap):
        for payload in payloads:
            value = decode_json(payload)
            if value is MALFORMED and is_blank(payload):
                continue
            yield value, terminated


def iter_text_lines(stream: IO[bytes], cap: int = MAX_LINE_BYTES) -> Iterator[str | None]:
    """Yield every line of ``stream`` as text, or ``None`` for an unreadable line."""
    for payload, _terminated in iter_raw_lines(stream, cap):
        if payload is None or _NUL in payload:
            yield None
            continue
        try:
            yield payload.decode("utf-8")
        except UnicodeDecodeError:
            yield None
