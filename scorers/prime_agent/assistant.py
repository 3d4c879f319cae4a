"""Tally prime-agent assistant messages (the same shape on stdout and in transcripts).

An assistant message is ``{"role": "assistant", "stopReason": ..., "usage": {...}}``.
Its tokens are ``usage.totalTokens``; it failed when ``stopReason`` is ``error`` or
``aborted``, and then ``errorMessage`` says why.
"""

from __future__ import annotations

from typing import Final

from scorers.records import UsageTally

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


def tokens_of(usage: object) -> int | None:
    """``usage.totalTokens``; ``0`` when ``usage`` is absent, ``None`` when ill-typed."""
    if usage is None:
        return 0
    if not isinstance(usage, dict):
        return None
    return _count(usage.get("totalTokens"))


class AssistantTally:
    """Accumulates assistant messages into a :class:`UsageTally`."""

    __slots__ = ("error", "failed", "messages", "tokens")

    def __init__(self) -> None:
        self.messages = 0
        self.failed = 0
        self.tokens = 0
        self.error: str | None = None

    def add(self, message: dict[str, object]) -> bool:
        """Count one assistant message; ``False`` if some field had to be skipped."""
        self.messages += 1
        ok = True
        tokens = tokens_of(message.get("usage"))
        if tokens is None:
            ok = False
        else:
            self.tokens += tokens
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
        return UsageTally(self.messages, self.failed, self.tokens, self.error)
