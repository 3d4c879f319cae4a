"""Usage per assistant message, counted once per message id.

Claude Code writes one transcript record (and one stream event) per content block of an
assistant message, each repeating the whole message's ``usage``: counting records would
multiply the tokens by the number of blocks.
"""

from __future__ import annotations

from collections.abc import Mapping

from scorers.records import UsageTally

#: The ``usage`` fields that are token counts (cache reads and writes are input too).
TOKEN_FIELDS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def message_tokens(usage: object) -> int | None:
    """The tokens of one ``usage`` object, or ``None`` when it is not one."""
    if not isinstance(usage, Mapping):
        return None
    total = 0
    for name in TOKEN_FIELDS:
        value = usage.get(name, 0)
        if value is None:
            continue
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        total += value
    return total


class MessageTally:
    """Assistant messages by id: the first record of each message is the one counted."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self.messages = 0
        self.failed = 0
        self.tokens = 0
        self.first_error: str | None = None
        self.malformed = 0

    def add(self, message: Mapping[str, object], error: str | None) -> None:
        """Count ``message`` (an assistant ``message`` object) unless its id was seen.

        ``error`` is the record's error text (an API error the client recorded as an
        assistant message), ``None`` when the message is a real model turn.
        """
        mid = message.get("id")
        key = mid if isinstance(mid, str) and mid else f"#{len(self._seen)}"
        if key in self._seen:
            return
        self._seen.add(key)
        self.messages += 1
        if error is not None:
            self.failed += 1
            if self.first_error is None:
                self.first_error = error
        tokens = message_tokens(message.get("usage"))
        if tokens is None:
            self.malformed += 1
        else:
            self.tokens += tokens

    def result(self) -> UsageTally:
        return UsageTally(self.messages, self.failed, self.tokens, self.first_error)


def record_error(record: Mapping[str, object]) -> str | None:
    """The error an assistant record stands for, or ``None`` for a real model turn.

    The client records a failed model request as a synthetic assistant message flagged
    ``isApiErrorMessage`` (transcripts) / ``is_api_error_message`` (stream) with ``error``.
    """
    if record.get("isApiErrorMessage") is True or record.get("is_api_error_message") is True:
        text = record.get("error")
        return str(text) if text else "api error"
    error = record.get("error")
    return str(error) if isinstance(error, str) and error else None
