"""Parse ``claude -p ... --output-format stream-json --verbose`` stdout into parent usage.

One JSON event per line. The parent's assistant messages are the ``assistant`` events with
no ``parent_tool_use_id`` (a subagent's messages are streamed too, carrying the spawn's
id); each content block is its own event, so messages are counted once per id. The stream
may hold several ``system``/``init`` and ``result`` events: a background result that
arrives after the parent ended its turn starts a new one, so the first ``result`` is not
the end of the run. Each ``result`` carries the run's usage so far (``modelUsage``,
cumulative): the last readable one is the run's account. A stream with model work after
its last ``result`` (or none at all) was cut short.
"""

from __future__ import annotations

from typing import IO

from scorers.claude_code.usage import MessageTally, record_error, reported_usage
from scorers.lines import iter_json_lines
from scorers.records import ReportedUsage, StreamParse


def parse_stream(stream: IO[bytes]) -> StreamParse:
    """Read the whole stream; never raises on any input bytes."""
    tally = MessageTally()
    events = 0
    malformed = 0
    reported: ReportedUsage | None = None
    after_result = False  # model work seen since the last result event
    for value, _terminated in iter_json_lines(stream):
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            malformed += 1
            continue
        events += 1
        if value["type"] == "result":
            found = reported_usage(value)
            if found is not None:
                reported, after_result = found, False
            elif "modelUsage" in value:
                malformed += 1  # an account we cannot read is a defect, not an absence
            continue
        if value["type"] == "assistant":
            after_result = True
        if value["type"] != "assistant" or value.get("parent_tool_use_id") is not None:
            continue
        message = value.get("message")
        if not isinstance(message, dict):
            malformed += 1
            continue
        tally.add(message, record_error(value))
    return StreamParse(
        events=events,
        usage=tally.result(),
        malformed_lines=malformed + tally.malformed,
        reported=reported,
        cut_short=reported is None or after_result,
    )
