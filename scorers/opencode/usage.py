"""Usage per assistant message, as opencode stores it: final values, one row per model call.

Each assistant message's ``tokens`` hold what the provider reported for that one call
(checked equal to what the scripted server billed, call by call): ``input`` is the
uncached input only, ``cache.read`` / ``cache.write`` the prompt-cache reads and writes,
``output`` the *visible* output and ``reasoning`` the reasoning tokens (opencode 1.18.33
stores ``output`` = the provider's output tokens minus reasoning, so the billed output is
the two summed; Anthropic reports no reasoning, 0). Nothing is counted twice: each message
is one row, and its ``step-finish`` part, which repeats the tokens, is never read. A call
that failed leaves an assistant message with ``error`` and zero tokens (billed nothing).
``cost`` is opencode's own price of the message: 0 for a model with no price configured.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scorers.faults import ProviderFault, fault_from_error
from scorers.records import NO_TOKENS, TokenUsage, UsageTally

#: The error opencode records on a message its own run aborted (not the provider's).
ABORTED_ERROR = "MessageAbortedError"


def _count(value: object) -> int | None:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def message_tokens(tokens: object) -> TokenUsage | None:
    """The billed fields of one message's ``tokens``, or ``None`` when it is not one."""
    if not isinstance(tokens, Mapping):
        return None
    cache = tokens.get("cache", {})
    cache = cache if isinstance(cache, Mapping) else None
    if cache is None:
        return None
    fields = (
        _count(tokens.get("input")),
        _count(tokens.get("output")),
        _count(tokens.get("reasoning")),
        _count(cache.get("read")),
        _count(cache.get("write")),
    )
    if any(f is None for f in fields):
        return None
    uncached, visible, reasoning, read, write = (f or 0 for f in fields)
    return TokenUsage(uncached, visible + reasoning, read, write, reasoning)


def error_text(error: object) -> str | None:
    """One line for a message's ``error`` (``APIError 401: scripted failure 401``), or
    ``None`` when the message has none."""
    if not error:
        return None
    if not isinstance(error, Mapping):
        return str(error)
    name = error.get("name")
    data = error.get("data")
    data = data if isinstance(data, Mapping) else {}
    status = data.get("statusCode")
    message = data.get("message")
    head = name if isinstance(name, str) and name else "error"
    if isinstance(status, int) and not isinstance(status, bool):
        head += f" {status}"
    return f"{head}: {message}" if isinstance(message, str) and message else head


def is_assistant(data: Mapping[str, object]) -> bool:
    return data.get("role") == "assistant"


@dataclass(frozen=True, slots=True)
class Tally:
    """A session's assistant messages as a :class:`UsageTally`, plus the ones whose
    ``tokens`` could not be read (counted as malformed, their tokens as zero)."""

    tally: UsageTally
    unreadable: int = 0


def message_fault(session: str, data: Mapping[str, object], request: str) -> ProviderFault | None:
    """The provider fault a failed assistant message records (its error's status code and
    message), or None: no error, or one of opencode's own (an abort)."""
    error = data.get("error")
    if not error or (isinstance(error, Mapping) and error.get("name") == ABORTED_ERROR):
        return None
    info = error.get("data") if isinstance(error, Mapping) else None
    info = info if isinstance(info, Mapping) else {}
    status = info.get("statusCode")
    code = status if isinstance(status, int) and not isinstance(status, bool) else None
    fault = fault_from_error(session, error_text(error) or "error", code, request=request)
    headers = info.get("responseHeaders")
    wait = retry_after(headers) if isinstance(headers, Mapping) else None
    return dataclasses.replace(fault, retry_after_s=wait) if wait is not None else fault


def retry_after(headers: Mapping[str, object]) -> float | None:
    """The wait a provider's ``retry-after-ms`` or ``retry-after`` (seconds) header asks for,
    or None (an HTTP date is not read)."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        try:
            seconds = float(str(value)) * scale if value is not None else None
        except ValueError:
            continue
        if seconds is not None and seconds >= 0:
            return seconds
    return None


def tally_messages(messages: Iterable[Mapping[str, object]], session: str = "parent") -> Tally:
    """Tally the assistant messages among ``messages`` (each a message's ``data``).

    ``cost_usd`` is ``None`` when every message's cost is 0 or missing: opencode prices a
    model it has no price for at 0, which says nothing. A failed message is the final
    failure of its request (opencode retries a retryable one first and records only the
    last); an aborted one with no tokens may have been billed (unseen usage).
    """
    count = failed = unreadable = unseen = 0
    usage = NO_TOKENS
    first_error: str | None = None
    cost = 0.0
    faults: list[ProviderFault] = []
    last_fault = False
    for data in messages:
        if not is_assistant(data):
            continue
        count += 1
        error = error_text(data.get("error"))
        fault = message_fault(session, data, f"assistant message {count}")
        last_fault = fault is not None
        if fault is not None:
            faults.append(fault)
        if error is not None:
            failed += 1
            first_error = first_error or error
        tokens = message_tokens(data.get("tokens"))
        if tokens is None:
            unreadable += 1
        else:
            usage = usage + tokens
        if error is not None and fault is None and (tokens is None or tokens.total == 0):
            unseen += 1
        price = data.get("cost")
        if isinstance(price, int | float) and not isinstance(price, bool) and price > 0:
            cost += float(price)
    return Tally(
        UsageTally(
            count,
            failed,
            usage,
            first_error,
            exact=True,
            cost_usd=cost or None,
            faults=tuple(faults),
            ended_in_fault=last_fault,
            unseen_calls=unseen,
        ),
        unreadable,
    )
