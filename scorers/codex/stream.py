"""Parse ``codex exec --json`` stdout: the root thread's id and its own events.

One JSON event per line: ``thread.started {thread_id}``, ``turn.started``, ``item.started`` /
``item.completed`` (the root's messages, commands and collaboration calls; a first
``error`` item about missing model metadata means nothing), ``error`` events for retries,
then ``turn.completed {usage}`` or ``turn.failed {error}``. Only the root thread is on
stdout: its ``usage`` is the root's alone, so the rollouts are the record and this tally
is the parent's only when no rollout of the root was found. A turn that started and never
ended means the client was stopped mid-turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO

from scorers.codex.rollout import response_usage
from scorers.faults import fault_from_error
from scorers.lines import iter_json_lines
from scorers.records import StreamParse, UsageTally


@dataclass(frozen=True, slots=True)
class StdoutParse:
    """stdout as a :class:`StreamParse`, and the root thread's id."""

    stream: StreamParse
    thread_id: str | None = None


def parse_stdout(stream: IO[bytes]) -> StdoutParse:
    """Read the whole of stdout; never raises on any input bytes."""
    events = malformed = turns = failed = 0
    usage = UsageTally().usage
    thread_id: str | None = None
    open_turn = False
    first_error: str | None = None
    final = None
    for value, _terminated in iter_json_lines(stream):
        if not isinstance(value, Mapping) or not isinstance(value.get("type"), str):
            malformed += 1
            continue
        events += 1
        kind = value["type"]
        if kind == "thread.started" and thread_id is None:
            found = value.get("thread_id")
            thread_id = found if isinstance(found, str) and found else None
        elif kind == "turn.started":
            open_turn = True
        elif kind == "turn.completed":
            open_turn = False
            turns += 1
            counted = response_usage(value.get("usage"))
            if counted is not None:
                usage = usage + counted
        elif kind == "turn.failed":
            open_turn = False
            turns += 1
            failed += 1
            error = value.get("error")
            message = error.get("message") if isinstance(error, Mapping) else None
            text = message if isinstance(message, str) and message else "turn failed"
            first_error = first_error or text
            final = fault_from_error("parent", text)
    tally = UsageTally(turns, failed, usage, first_error)
    return StdoutParse(
        StreamParse(events, tally, malformed, cut_short=open_turn, final_fault=final), thread_id
    )


__all__ = ["StdoutParse", "parse_stdout"]
