"""Read opencode's own log (``$XDG_DATA_HOME/opencode/log/*.log``) for failed model calls.

opencode retries a retryable provider error (five times, about 70 s in 1.18.33) and its
database keeps only the last failure of a request, on the assistant message; every failed
attempt is a ``stream error`` line of its log, naming the session and the error's words::

    timestamp=... level=ERROR run=... message="stream error" ... session.id=ses_...
    ... error.error="AI_APICallError: Overloaded"

Lines are ``key=value`` pairs, a value bare or in double quotes (backslash escapes). Nothing
here raises on any input bytes; lines that are not stream errors are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import IO, Final

#: The log's message for a model request that failed (each attempt, retried or not).
STREAM_ERROR: Final = "stream error"
#: The most a scorer reads of a log: far more than a run's worth of error lines.
MAX_LOG_BYTES: Final = 64 * 1024 * 1024
_PAIR: Final = re.compile(r'([A-Za-z0-9_.]+)=("(?:[^"\\]|\\.)*"|\S*)')


@dataclass(frozen=True, slots=True)
class StreamError:
    """One failed attempt of a model request: its session, its time, the error's words."""

    session: str
    at: str | None
    text: str


def _value(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':
        return re.sub(r"\\(.)", r"\1", raw[1:-1])
    return raw


def parse_log(stream: IO[bytes]) -> tuple[StreamError, ...]:
    """Every ``stream error`` line of the log, in order."""
    found = []
    for raw in stream.read(MAX_LOG_BYTES).decode("utf-8", errors="replace").splitlines():
        if STREAM_ERROR not in raw:
            continue
        fields = {k: _value(v) for k, v in _PAIR.findall(raw)}
        session = fields.get("session.id")
        if fields.get("message") != STREAM_ERROR or not session:
            continue
        text = fields.get("error.error") or fields.get("error") or STREAM_ERROR
        found.append(StreamError(session, fields.get("timestamp"), text))
    return tuple(found)


__all__ = ["MAX_LOG_BYTES", "STREAM_ERROR", "StreamError", "parse_log"]
