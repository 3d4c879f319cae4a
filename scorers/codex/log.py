"""Parse Codex's log (its stderr): one line per model request that failed, retried or not.

The rollouts keep only how a turn ended (``task_complete.error``); a request Codex retried
and got past leaves no trace there. With ``RUST_LOG`` naming ``codex_otel.trace_safe`` at
``info`` (the harness sets it), Codex logs every HTTP request to the model as a
``codex.api_request`` line (``http.response.status_code``, ``error.message`` when it failed,
``attempt``, and ``conversation.id``: the thread) and every broken answer stream as a
``codex.sse_event`` line with an ``error.message``. Each such failure is one line; the rest
of the log (successful requests, tool events, warnings) is skipped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import IO, Final

from scorers.faults import FaultKind, classify
from scorers.lines import iter_text_lines

_EVENT: Final = re.compile(r'event\.name="(?P<name>codex\.(?:api_request|sse_event))"')
_STATUS: Final = re.compile(r"\bhttp\.response\.status_code=(?P<status>\d{3})\b")
#: A quoted message, or an unquoted one running up to the next `` key=`` field.
_MESSAGE: Final = re.compile(
    r'\berror\.message=(?:"(?P<quoted>[^"]*)"|(?P<bare>.*?))(?= [\w.]+=|$)'
)
#: How Codex sums up a broken answer stream after logging the transport's error.
STREAM_SUMMARY: Final = "stream disconnected before completion: "
_THREAD: Final = re.compile(r"\bconversation\.id=(?P<thread>[0-9A-Za-z-]+)")
_ATTEMPT: Final = re.compile(r"\battempt=(?P<attempt>\d+)")
_AT: Final = re.compile(r"\A(?P<at>\d{4}-\d\d-\d\dT[\d:.]+Z)")
#: What Codex's transport errors mean, tried before the generic words.
_CODEX_WORDS: Final[tuple[tuple[FaultKind, re.Pattern[str]], ...]] = (
    ("stream_cut", re.compile(r"error decoding response body|stream disconnected", re.I)),
    ("connection", re.compile(r"error sending request|connection refused|dns error", re.I)),
    ("timeout", re.compile(r"idle timeout|timed out", re.I)),
)


@dataclass(frozen=True, slots=True)
class LoggedFailure:
    """One failed request: its thread, HTTP status (None: no HTTP answer), Codex's words,
    its kind, which attempt it was, and when."""

    thread: str
    status: int | None
    message: str
    kind: FaultKind
    attempt: int | None
    at: str | None


def failure_kind(status: int | None, message: str) -> FaultKind:
    """A failure's kind from its status, else Codex's transport words, else the generic
    words (:func:`scorers.faults.classify`)."""
    if status is None:
        for kind, pattern in _CODEX_WORDS:
            if pattern.search(message):
                return kind
    return classify(status, message)


def parse_line(line: str) -> LoggedFailure | None:
    """The failure one log line records, or None (any other line)."""
    event = _EVENT.search(line)
    if event is None:
        return None
    status_match = _STATUS.search(line)
    status = int(status_match["status"]) if status_match else None
    message = _MESSAGE.search(line)
    text = (
        (message["quoted"] if message["quoted"] is not None else message["bare"]) if message else ""
    )
    if (status is None or 200 <= status < 300) and not text:
        return None  # a request, or a stream, that went well
    thread = _THREAD.search(line)
    attempt = _ATTEMPT.search(line)
    at = _AT.search(line)
    words = text or f"http {status}"
    return LoggedFailure(
        thread=thread["thread"] if thread else "",
        status=status if status is not None and not 200 <= status < 300 else None,
        message=words,
        kind=failure_kind(status, words),
        attempt=int(attempt["attempt"]) if attempt else None,
        at=at["at"] if at else None,
    )


def parse_log(stream: IO[bytes]) -> tuple[LoggedFailure, ...]:
    """Every failed request the log records, in order; never raises on any input bytes.

    A broken answer stream is logged twice: the transport's error, then Codex's summary of
    the same break (``stream disconnected before completion: <that error>``); the summary
    of a break already counted is not a second failure.
    """
    found: list[LoggedFailure] = []
    last: dict[str, LoggedFailure] = {}
    for line in iter_text_lines(stream):
        if line is None or "codex." not in line:
            continue
        failure = parse_line(line)
        if failure is None:
            continue
        before = last.get(failure.thread)
        summary = failure.message.removeprefix(STREAM_SUMMARY)
        if summary != failure.message and before is not None and before.message == summary:
            continue
        last[failure.thread] = failure
        found.append(failure)
    return tuple(found)


__all__ = ["LoggedFailure", "failure_kind", "parse_line", "parse_log"]
