"""Usage per assistant message, counted once per message id, and the run's own account.

Claude Code writes one transcript record (and one stream event) per content block of an
assistant message, each repeating the whole message's ``usage``: counting records would
multiply the tokens by the number of blocks. Those records keep the usage of the stream's
``message_start``, whose ``output_tokens`` is a placeholder (1 on the Messages API), never
the final count: a tally of them under-counts output and is marked inexact.

The authoritative account is the ``result`` event's ``modelUsage``: per model, the
client's own totals over the whole run (parent, subagents, internal calls), cumulative
across the several ``result`` events a run can emit, with ``total_cost_usd`` beside it.
"""

from __future__ import annotations

from collections.abc import Mapping

from scorers.faults import ProviderFault, fault_from_error
from scorers.records import NO_TOKENS, ReportedUsage, TokenUsage, UsageTally

#: What a retried request the transcript keeps no error for is said to be.
UNRECORDED_RETRY = "the client retried this request; it recorded no cause"

#: A message ``usage`` field -> the billed field it is.
MESSAGE_FIELDS = (
    ("input_tokens", "input_tokens"),
    ("output_tokens", "output_tokens"),
    ("cache_read_input_tokens", "cache_read_tokens"),
    ("cache_creation_input_tokens", "cache_write_tokens"),
)
#: A ``modelUsage`` entry field -> the billed field it is.
MODEL_USAGE_FIELDS = (
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("cacheReadInputTokens", "cache_read_tokens"),
    ("cacheCreationInputTokens", "cache_write_tokens"),
)


def _fields(usage: object, names: tuple[tuple[str, str], ...]) -> TokenUsage | None:
    if not isinstance(usage, Mapping):
        return None
    counts: dict[str, int] = {}
    for theirs, ours in names:
        value = usage.get(theirs, 0)
        if value is None:
            value = 0
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            return None
        counts[ours] = value
    return TokenUsage(**counts)


def message_usage(usage: object) -> TokenUsage | None:
    """The billed fields of one message ``usage`` object, or ``None`` when it is not one."""
    return _fields(usage, MESSAGE_FIELDS)


def message_tokens(usage: object) -> int | None:
    """The tokens of one ``usage`` object, or ``None`` when it is not one."""
    found = message_usage(usage)
    return None if found is None else found.total


def reported_usage(result: Mapping[str, object]) -> ReportedUsage | None:
    """A ``result`` event's ``modelUsage`` and ``total_cost_usd``; ``None`` when it has no
    readable ``modelUsage``."""
    models = result.get("modelUsage")
    if not isinstance(models, Mapping):
        return None
    by_model = []
    for name, entry in models.items():
        usage = _fields(entry, MODEL_USAGE_FIELDS)
        if not isinstance(name, str) or usage is None or not isinstance(entry, Mapping):
            return None
        thinking = entry.get("thinkingTokens")
        if isinstance(thinking, int) and not isinstance(thinking, bool) and thinking >= 0:
            usage = TokenUsage(
                usage.input_tokens,
                usage.output_tokens,
                usage.cache_read_tokens,
                usage.cache_write_tokens,
                thinking,
            )
        by_model.append((name, usage))
    cost = result.get("total_cost_usd")
    usd = float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None
    return ReportedUsage(tuple(sorted(by_model)), usd)


class MessageTally:
    """Assistant messages by id (the first record of each message is the one counted), and
    the session's failed model calls.

    A failed request the client did not retry is a synthetic assistant message
    (:func:`record_error`) carrying ``apiErrorStatus``; one it retried leaves no error
    record, only a second ``api-request`` record with the same ``requestDigest``: so the
    retried failures are the ``api-request`` records beyond one per digest.
    """

    def __init__(self, session: str = "parent") -> None:
        self.session = session
        self._seen: set[str] = set()
        self.messages = 0
        self.failed = 0
        self.usage = NO_TOKENS
        self.first_error: str | None = None
        self.malformed = 0
        self.faults: list[ProviderFault] = []
        self.last_fault = False
        self._sent = 0
        self._digests: dict[str, int] = {}

    def add(
        self,
        message: Mapping[str, object],
        error: str | None,
        record: Mapping[str, object] | None = None,
    ) -> None:
        """Count ``message`` (an assistant ``message`` object) unless its id was seen.

        ``error`` is the record's error text (an API error the client recorded as an
        assistant message), ``None`` when the message is a real model turn; ``record`` the
        record holding it (its ``apiErrorStatus``).
        """
        mid = message.get("id")
        key = mid if isinstance(mid, str) and mid else f"#{len(self._seen)}"
        if key in self._seen:
            return
        self._seen.add(key)
        self.messages += 1
        self.last_fault = error is not None
        if error is not None:
            self.failed += 1
            if self.first_error is None:
                self.first_error = error
            self.faults.append(_error_fault(self.session, message, error, record or {}, key))
        usage = message_usage(message.get("usage"))
        if usage is None:
            self.malformed += 1
        else:
            self.usage = self.usage + usage

    def api_request(self, record: Mapping[str, object]) -> None:
        """Count one ``api-request`` record (one request on the wire)."""
        digest = record.get("requestDigest")
        self._sent += 1
        if isinstance(digest, str) and digest:
            self._digests[digest] = self._digests.get(digest, 0) + 1
        else:
            self._digests[f"#{self._sent}"] = 1

    def result(self) -> UsageTally:
        """The tally; inexact: transcripts keep placeholder output counts."""
        retried = [
            ProviderFault(self.session, "unknown", None, UNRECORDED_RETRY, True, digest[:16])
            for digest, count in self._digests.items()
            for _ in range(count - 1)
        ]
        return UsageTally(
            self.messages,
            self.failed,
            self.usage,
            self.first_error,
            exact=False,
            faults=(*retried, *self.faults),
            ended_in_fault=self.last_fault,
        )


def _error_fault(
    session: str,
    message: Mapping[str, object],
    error: str,
    record: Mapping[str, object],
    key: str,
) -> ProviderFault:
    status = record.get("apiErrorStatus", record.get("api_error_status"))
    code = status if isinstance(status, int) and not isinstance(status, bool) else None
    content = message.get("content")
    words = (
        " ".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
        if isinstance(content, list)
        else ""
    )
    at = record.get("timestamp")
    return fault_from_error(
        session,
        words.strip() or error,
        code,
        request=key,
        at=at if isinstance(at, str) else None,
    )


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
