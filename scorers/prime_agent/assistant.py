"""Tally prime-agent assistant messages (the same shape on stdout and in transcripts).

An assistant message is ``{"role": "assistant", "stopReason": ..., "usage": {...}}``.
Its usage has the four billed fields ``input`` (uncached), ``output``, ``cacheRead`` and
``cacheWrite`` (a missing field is 0), ``totalTokens`` (their sum, not read) and ``cost``
(the agent's own price, ``cost.total`` in USD, from its models.json). A message failed when
``stopReason`` is ``error`` or ``aborted``, and then ``errorMessage`` says why.
"""

from __future__ import annotations

from typing import Final

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

    __slots__ = ("cost", "error", "failed", "messages", "usage")

    def __init__(self) -> None:
        self.messages = 0
        self.failed = 0
        self.usage = NO_TOKENS
        self.cost: float | None = None
        self.error: str | None = None

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
        if stop is not None and not isinstance(stop, str):
            ok = False
        elif stop in FAILED_STOP_REASONS:
            self.failed += 1
            error = message.get("errorMessage")
            if self.error is None and isinstance(error, str):
                self.error = error
        return ok

    def result(self) -> UsageTally:
        return UsageTally(self.messages, self.failed, self.usage, self.error, cost_usd=self.cost)
