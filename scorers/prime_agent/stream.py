"""Parse prime-agent's ``--mode json`` stdout (CONTRACT section 4) into parent usage.

Line 1 is the session header (not an event), then one event object per line. A turn is counted
only on ``{"type": "message_end", "message": {"role": "assistant", ...}}``: ``turn_end``
repeats the same message and is never counted. Children's usage never appears here.
A stream whose last ``agent_start`` has no ``agent_end`` after it was cut short (the
agent was stopped mid-turn): its last request may be billed and not recorded.

A line that is not a JSON object with a string ``type``, a ``message_end`` whose
``message`` is not an object, or an assistant message with ill-typed usage or stop
reason is counted as malformed.
"""

from __future__ import annotations

from typing import IO

from scorers.lines import iter_json_lines
from scorers.prime_agent.assistant import AssistantTally, is_assistant
from scorers.records import StreamParse


def _message_end(event: dict[str, object], tally: AssistantTally) -> bool:
    """Count a ``message_end`` event's assistant message; ``False`` if malformed."""
    message = event.get("message")
    if not isinstance(message, dict):
        return False
    return tally.add(message) if is_assistant(message) else True


def parse_stream(stream: IO[bytes]) -> StreamParse:
    """Read the whole event stream; never raises on any input bytes."""
    tally = AssistantTally()
    events = 0
    malformed = 0
    open_turns = 0
    for value, _terminated in iter_json_lines(stream):
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            malformed += 1
            continue
        if value["type"] == "session":
            continue  # the header, not an event
        events += 1
        if value["type"] == "agent_start":
            open_turns += 1
        elif value["type"] == "agent_end":
            open_turns = max(0, open_turns - 1)
        elif value["type"] == "message_end" and not _message_end(value, tally):
            malformed += 1
    return StreamParse(
        events=events, usage=tally.result(), malformed_lines=malformed, cut_short=open_turns > 0
    )
