"""Parse ``gemini -p ... -o stream-json`` stdout: the parent's session id and how it ended.

One JSON event per line: ``init{session_id, model}``, ``message{role, content, delta}``
(the user's task, the parent's text in pieces), ``tool_use{tool_name, tool_id,
parameters}`` / ``tool_result{tool_id, status, output?, error?}`` (the parent's own tool
calls only), then ``result{status, stats}`` (``status: error`` with ``error{type,
message}`` when the run ended on a failure). The stream says nothing of the subagents, and
its ``stats`` count output without the thinking tokens (less than was billed), so the
chat records are the usage record: this stream gives only the session id, whether the run
was stopped before its ``result`` (cut short) and the failure it ended on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

from scorers.faults import ProviderFault
from scorers.gemini.chat import string
from scorers.gemini.tally import api_fault
from scorers.lines import iter_json_lines
from scorers.records import StreamParse, UsageTally


@dataclass(frozen=True, slots=True)
class StdoutParse:
    """stdout as a :class:`StreamParse` (no usage of its own), the parent's session id,
    the model ``init`` names and the error its ``result`` ended on (its words; the
    stream's ``final_fault`` when they quote an API error)."""

    stream: StreamParse
    session_id: str | None = None
    model: str | None = None
    error: str | None = None


def _ended_on(result: Mapping[str, object]) -> tuple[str | None, ProviderFault | None]:
    if result.get("status") != "error":
        return None, None
    error = result.get("error")
    message = string(error.get("message")) if isinstance(error, Mapping) else None
    text = message or "the run ended in error"
    at = string(result.get("timestamp"))
    return text, api_fault("parent", text, at=at)


def parse_stdout(stream: IO[bytes]) -> StdoutParse:
    """Read the whole of stdout; never raises on any input bytes."""
    events = malformed = 0
    session_id = model = error = None
    started = ended = False
    final: ProviderFault | None = None
    for value, _terminated in iter_json_lines(stream):
        if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
            malformed += 1
            continue
        events += 1
        kind = value["type"]
        if kind == "init" and session_id is None:
            started = True
            session_id, model = string(value.get("session_id")), string(value.get("model"))
        elif kind == "result":
            ended = True
            error, final = _ended_on(value)
    return StdoutParse(
        StreamParse(
            events,
            UsageTally(),
            malformed,
            cut_short=started and not ended,
            final_fault=final,
        ),
        session_id,
        model,
        error,
    )


__all__ = ["StdoutParse", "parse_stdout"]
