"""Parse ``opencode run --format json`` stdout: the root session's id and its own messages.

One JSON event per line, each ``{"type", "timestamp", "sessionID", ...}``; only the root
session's parts are printed (no child's), tool parts only once completed or failed, and
there is no final event (1.18.33 prints none). A finished model call shows as a
``step_start`` ... ``step_finish`` pair, the ``step_finish`` part carrying the call's
``tokens`` and ``cost``; a call that failed for good shows as one ``error`` event
(``{"error": {"name", "data": {"message", "statusCode"?}}}``), the only trace of a failed
root on stdout. A ``step_start`` with no ``step_finish`` or ``error`` after it means the
stream stopped in the middle of a call (the client was killed).

The database is the record; this tally is the parent's usage only when the database has
no root session to count (:mod:`scorers.opencode.evidence`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

from scorers.lines import iter_json_lines
from scorers.opencode.usage import error_text, message_tokens
from scorers.records import NO_TOKENS, StreamParse, UsageTally


@dataclass(frozen=True, slots=True)
class StdoutParse:
    """stdout as a :class:`StreamParse`, and the session id its events name first."""

    stream: StreamParse
    session_id: str | None = None


def parse_stdout(stream: IO[bytes]) -> StdoutParse:
    """Read the whole of stdout; never raises on any input bytes."""
    events = malformed = messages = failed = 0
    usage = NO_TOKENS
    cost = 0.0
    first_error: str | None = None
    session_id: str | None = None
    open_step = False
    for value, _terminated in iter_json_lines(stream):
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            malformed += 1
            continue
        events += 1
        sid = value.get("sessionID")
        if session_id is None and isinstance(sid, str) and sid:
            session_id = sid
        kind = value["type"]
        if kind == "step_start":
            open_step = True
        elif kind == "step_finish":
            open_step = False
            part = value.get("part")
            part = part if isinstance(part, Mapping) else {}
            tokens = message_tokens(part.get("tokens"))
            messages += 1
            if tokens is None:
                malformed += 1
            else:
                usage = usage + tokens
            price = part.get("cost")
            if isinstance(price, int | float) and not isinstance(price, bool) and price > 0:
                cost += float(price)
        elif kind == "error":
            open_step = False
            messages += 1
            failed += 1
            first_error = first_error or error_text(value.get("error")) or "error"
    tally = UsageTally(messages, failed, usage, first_error, exact=True, cost_usd=cost or None)
    return StdoutParse(
        StreamParse(events, tally, malformed_lines=malformed, cut_short=open_step), session_id
    )
