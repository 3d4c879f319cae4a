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

from collections.abc import Mapping
from typing import IO

from scorers.claude_code.usage import MessageTally, record_error, reported_usage
from scorers.faults import FaultKind, ProviderFault, classify, fault_from_error
from scorers.lines import iter_json_lines
from scorers.records import ReportedUsage, StreamParse

#: stream-json's categories of a retried error -> our kinds (``unknown``: a stream that
#: broke off, a dropped connection: the client does not say which).
RETRY_CATEGORIES: dict[str, FaultKind] = {
    "overloaded": "overloaded",
    "rate_limit": "rate_limited",
    "rate_limited": "rate_limited",
    "server_error": "server_error",
    "api_error": "server_error",
    "timeout": "timeout",
    "connection": "connection",
    "connection_error": "connection",
}


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _retry(session: str, status: object, category: object) -> ProviderFault:
    """One retry the stream announced (``system/api_retry`` of the parent, or a foreground
    subagent's ``subagent_retry``)."""
    code = _int(status)
    words = str(category) if isinstance(category, str) else ""
    kind: FaultKind
    if code is not None:
        kind = classify(code, words)
    else:
        kind = RETRY_CATEGORIES.get(words) or classify(None, words)
    text = f"retried: {code or ''} {words}".strip()
    return ProviderFault(session, kind, code, text, True)


def _final_fault(result: Mapping[str, object]) -> ProviderFault | None:
    """The API error a ``result`` event ended its turn on, or None."""
    if result.get("is_error") is not True or result.get("terminal_reason") != "api_error":
        return None
    text = result.get("result")
    return fault_from_error(
        "parent",
        str(text) if isinstance(text, str) else "api error",
        _int(result.get("api_error_status")),
    )


def parse_stream(stream: IO[bytes]) -> StreamParse:
    """Read the whole stream; never raises on any input bytes."""
    tally = MessageTally()
    events = 0
    malformed = 0
    reported: ReportedUsage | None = None
    after_result = False  # model work seen since the last result event
    retries: list[ProviderFault] = []
    final: ProviderFault | None = None
    for value, _terminated in iter_json_lines(stream):
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            malformed += 1
            continue
        events += 1
        if value["type"] == "system" and value.get("subtype") == "api_retry":
            retries.append(_retry("parent", value.get("error_status"), value.get("error")))
            continue
        sub = value.get("subagent_retry")
        if value["type"] == "tool_progress" and isinstance(sub, dict):
            agent = sub.get("agent_id")
            if isinstance(agent, str) and agent:
                retries.append(_retry(agent, sub.get("error_status"), sub.get("error_category")))
            continue
        if value["type"] == "result":
            final = _final_fault(value)
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
        tally.add(message, record_error(value), value)
    return StreamParse(
        events=events,
        usage=tally.result(),
        malformed_lines=malformed + tally.malformed,
        reported=reported,
        cut_short=reported is None or after_result,
        retries=tuple(retries),
        final_fault=final,
    )
