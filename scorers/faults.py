"""Provider faults: a model request that failed at the provider, as the agent recorded it.

Agent-neutral like :mod:`scorers.records`: each agent's parser turns what its client wrote
(an assistant message that ended in an API error, a retried request, a log line) into
:class:`ProviderFault` records, and :func:`classify` names the kind from the HTTP status
where the agent kept it, else from the error's words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

FaultKind = Literal[
    "rate_limited",
    "overloaded",
    "server_error",
    "stream_cut",
    "timeout",
    "connection",
    "unreachable",
    "auth",
    "invalid_request",
    "unknown",
]
#: Kinds a provider's passing trouble makes: what a later attempt can get past. An
#: ``unknown`` failure is one the client retried without recording why.
TRANSIENT: Final = frozenset(
    {"rate_limited", "overloaded", "server_error", "stream_cut", "timeout", "connection", "unknown"}
)
#: Kinds no later attempt gets past while the world stays as it is: the endpoint cannot be
#: reached at all (its name does not resolve, nothing listens there) or refuses the
#: credentials. Retrying a run that ended on one only burns time: the harness never does,
#: and its breaker stops at the first.
FATAL: Final = frozenset({"unreachable", "auth"})
#: Kinds a run that ended on is lost to the provider (the agent could not get past them):
#: the passing ones and an unreachable endpoint. Refused credentials are told apart where
#: the model was never reached (the item's error says what gives the credentials).
GAVE_UP: Final = TRANSIENT | {"unreachable"}
#: Kinds that end a request after its answer began (or without saying how far it got):
#: the provider may have billed what it generated, and the agent recorded no usage for it.
MID_ANSWER: Final = frozenset({"stream_cut", "timeout", "unknown"})
#: How each kind reads in a sentence.
KIND_WORDS: Final = {
    "rate_limited": "rate limited",
    "overloaded": "overloaded",
    "server_error": "server error",
    "stream_cut": "stream cut or connection dropped",
    "timeout": "timed out",
    "connection": "connection failed",
    "unreachable": "endpoint unreachable",
    "auth": "authentication failed",
    "invalid_request": "request refused",
    "unknown": "failed, cause not recorded",
}

_BY_STATUS: Final[dict[int, FaultKind]] = {
    429: "rate_limited",
    529: "overloaded",
    500: "server_error",
    502: "server_error",
    503: "server_error",
    504: "server_error",
    401: "auth",
    403: "auth",
    408: "timeout",
    400: "invalid_request",
    404: "invalid_request",
    413: "invalid_request",
    422: "invalid_request",
}
#: The words of each kind, tried in order (the first that matches names it).
_BY_WORDS: Final[tuple[tuple[FaultKind, re.Pattern[str]], ...]] = (
    ("rate_limited", re.compile(r"rate.?limit|too many req|\b429\b", re.I)),
    ("overloaded", re.compile(r"overloaded|\b529\b", re.I)),
    (
        "auth",
        re.compile(
            r"unauthori[sz]ed|authenticat|invalid.{0,10}(api.?key|x-api-key)|forbidden|"
            r"permission|\b40[13]\b",
            re.I,
        ),
    ),
    (
        "server_error",
        re.compile(
            r"internal server error|service unavailable|bad gateway|gateway timeout|"
            r"server error|api_error|\b50[0234]\b",
            re.I,
        ),
    ),
    # The endpoint cannot be reached at all: its name does not resolve, or nothing listens
    # there (Claude Code: "Can't reach the API server ... (ENOTFOUND)", "Connection
    # refused ... (ECONNREFUSED)").
    (
        "unreachable",
        re.compile(
            r"enotfound|can'?t reach|could not resolve|getaddrinfo|name or service not known|"
            r"name resolution|no such host|dns error|econnrefused|connection refused",
            re.I,
        ),
    ),
    ("timeout", re.compile(r"time.?out|timed out|etimedout", re.I)),
    # A connection that broke after the request went out (a cut stream, a reset): the
    # answer may have begun. Tried before the refusals, which some clients word alike
    # ("Cannot connect to API: The ... connection was closed unexpectedly").
    (
        "stream_cut",
        re.compile(
            r"closed unexpectedly|hang up|econnreset|connection reset|premature close|"
            r"terminated|unexpected end|incomplete|\bstream\b",
            re.I,
        ),
    ),
    (
        "connection",
        re.compile(
            r"econnrefused|connection (refused|error|closed)|cannot connect|unable to connect|"
            r"fetch failed|network|epipe|enotfound|eai_again",
            re.I,
        ),
    ),
    ("invalid_request", re.compile(r"invalid_request|bad request|not.?found|\b40[04]\b", re.I)),
)
#: An error message that starts with the HTTP status (``429 Too Many Requests``,
#: ``API Error: 529 ...``, ``APIError 500: ...``).
_LEADING_STATUS: Final = re.compile(r"^\W*(?:api\s*error\W*)?(?P<status>[1-5]\d\d)\b", re.I)


def status_in(text: str) -> int | None:
    """The HTTP status an error message opens with, or None."""
    match = _LEADING_STATUS.match(text)
    return int(match["status"]) if match else None


def classify(status: int | None, text: str) -> FaultKind:
    """The kind of a failed request from its HTTP status (where the agent kept it), else
    from the status its message opens with, else from its words."""
    if status is None:
        status = status_in(text)
    if status is not None and status in _BY_STATUS:
        return _BY_STATUS[status]
    if status is not None and 500 <= status < 600:
        return "server_error"
    for kind, pattern in _BY_WORDS:
        if pattern.search(text):
            return kind
    return "unknown"


@dataclass(frozen=True, slots=True)
class ProviderFault:
    """One model request that failed at the provider.

    ``session`` is ``parent`` or the child id it belongs to; ``request`` says which request
    (a message id, a request digest, a position); ``message`` is the provider's (or the
    client's) words for it; ``retried`` whether the agent tried the request again (False:
    that failure was the last word of the request); ``retry_after_s`` a wait the provider
    asked for, where the agent recorded one.
    """

    session: str
    kind: FaultKind
    status: int | None
    message: str
    retried: bool
    request: str = ""
    at: str | None = None
    retry_after_s: float | None = None


def fault_from_error(
    session: str,
    text: str,
    status: int | None = None,
    retried: bool = False,
    request: str = "",
    at: str | None = None,
) -> ProviderFault:
    """A fault from an error the agent recorded (its status, if it kept one)."""
    found = status if status is not None else status_in(text)
    return ProviderFault(session, classify(found, text), found, text, retried, request, at)


__all__ = [
    "FATAL",
    "GAVE_UP",
    "KIND_WORDS",
    "MID_ANSWER",
    "TRANSIENT",
    "FaultKind",
    "ProviderFault",
    "classify",
    "fault_from_error",
    "status_in",
]
