"""Tally prime-agent assistant messages (the same shape on stdout and in transcripts).

An assistant message is ``{"role": "assistant", "stopReason": ..., "usage": {...}}``.
Its usage has the four billed fields ``input`` (uncached), ``output``, ``cacheRead`` and
``cacheWrite`` (a missing field is 0), ``totalTokens`` (their sum, not read) and ``cost``
(the agent's own price, ``cost.total`` in USD, from its models.json). A message failed when
``stopReason`` is ``error`` or ``aborted``, and then ``errorMessage`` says why.

An ``error`` is a request that failed at the provider: a provider fault, retried when a
later message follows it. An ``aborted`` one is the agent's own doing (its teardown cut the
request short), not the provider's. Either with no usage may still have been billed when
the answer had begun (an abort, a stream cut, a timeout): it counts as unseen usage (a run
of the real CLI showed a billed request the transcript recorded as aborted with zero
usage, ``real-runs/billed-early-exit-undercount``). A refusal with an HTTP status billed
nothing.
"""

from __future__ import annotations

from typing import Final

from scorers.faults import MID_ANSWER, ProviderFault, fault_from_error
from scorers.records import NO_TOKENS, TokenUsage, UsageTally

#: Stop reasons of a request that never produced a usable answer.
FAILED_STOP_REASONS: Final = frozenset({"error", "aborted"})


def _count(value: object) -> int | None:
    """A non-negative JSON integer, else ``None``."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def is_assistant(message: object) -> bool:
    """Whether ``message`` is an object with ``role == "assistant"``."""
    return isinstance(message, dict) and message.get("role") == "assistant"


#: prime-agent's usage field -> the billed field it is.
USAGE_FIELDS: Final = (
    ("input", "input_tokens"),
    ("output", "output_tokens"),
    ("cacheRead", "cache_read_tokens"),
    ("cacheWrite", "cache_write_tokens"),
)


def usage_of(usage: object) -> TokenUsage | None:
    """The four billed fields of a ``usage`` object; no tokens when ``usage`` is absent,
    ``None`` when it or a field is ill-typed."""
    if usage is None:
        return NO_TOKENS
    if not isinstance(usage, dict):
        return None
    counts: dict[str, int] = {}
    for theirs, ours in USAGE_FIELDS:
        value = usage.get(theirs, 0)
        count = _count(0 if value is None else value)
        if count is None:
            return None
        counts[ours] = count
    return TokenUsage(**counts)


def cost_of(usage: object) -> float | None:
    """``usage.cost.total`` (USD), or ``None`` when the message does not say."""
    cost = usage.get("cost") if isinstance(usage, dict) else None
    total = cost.get("total") if isinstance(cost, dict) else None
    if isinstance(total, int | float) and not isinstance(total, bool) and total >= 0:
        return float(total)
    return None


class AssistantTally:
    """Accumulates assistant messages into a :class:`UsageTally`."""

    __slots__ = (
        "cost",
        "error",
        "failed",
        "faults",
        "last_fault",
        "messages",
        "session",
        "unseen",
        "usage",
    )

    def __init__(self, session: str = "parent") -> None:
        self.session = session
        self.messages = 0
        self.failed = 0
        self.usage = NO_TOKENS
        self.cost: float | None = None
        self.error: str | None = None
        self.faults: list[ProviderFault] = []
        self.unseen = 0
        #: Whether the last message counted was a provider fault.
        self.last_fault = False

    def add(self, message: dict[str, object]) -> bool:
        """Count one assistant message; ``False`` if some field had to be skipped."""
        self.messages += 1
        ok = True
        raw = message.get("usage")
        usage = usage_of(raw)
        if usage is None:
            ok = False
        else:
            self.usage = self.usage + usage
            cost = cost_of(raw)
            if cost is not None:
                self.cost = (self.cost or 0.0) + cost
        stop = message.get("stopReason")
        self.last_fault = False
        if stop is not None and not isinstance(stop, str):
            ok = False
        elif stop in FAILED_STOP_REASONS:
            self.failed += 1
            error = message.get("errorMessage")
            if self.error is None and isinstance(error, str):
                self.error = error
            text = error if isinstance(error, str) and error else str(stop)
            nothing = usage is None or usage.total == 0
            if stop == "error":
                at = message.get("timestamp")
                fault = fault_from_error(
                    self.session,
                    text,
                    request=f"assistant message {self.messages}",
                    at=str(at) if at is not None else None,
                )
                self.faults.append(fault)
                self.last_fault = True
                self.unseen += nothing and fault.kind in MID_ANSWER
            else:
                self.unseen += nothing
        return ok

    def result(self) -> UsageTally:
        # Every fault but a last one was followed by another request: the agent went on.
        faults = [
            f if (self.last_fault and n == len(self.faults) - 1) else _retried(f)
            for n, f in enumerate(self.faults)
        ]
        return UsageTally(
            self.messages,
            self.failed,
            self.usage,
            self.error,
            cost_usd=self.cost,
            faults=tuple(faults),
            ended_in_fault=self.last_fault,
            unseen_calls=self.unseen,
        )


def _retried(fault: ProviderFault) -> ProviderFault:
    return ProviderFault(
        fault.session,
        fault.kind,
        fault.status,
        fault.message,
        True,
        fault.request,
        fault.at,
        fault.retry_after_s,
    )
