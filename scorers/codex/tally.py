"""A Codex thread's model responses as a :class:`UsageTally`: its usage, the requests that
failed at the provider (from Codex's log, each retried but the one a turn ended on), and
whether it gave up on one."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Final

from scorers.codex.log import LoggedFailure, failure_kind
from scorers.codex.thread import Thread
from scorers.faults import GAVE_UP, MID_ANSWER, FaultKind, ProviderFault
from scorers.records import UsageTally

#: Codex's error infos that name a provider fault (the rest: see :func:`_failure_fault`).
_INFO_KINDS: Final[dict[str, FaultKind]] = {
    "internal_server_error": "server_error",
    "server_overloaded": "overloaded",
    "usage_limit_exceeded": "rate_limited",
    "http_connection_failed": "connection",
    "response_stream_connection_failed": "connection",
    "response_stream_disconnected": "stream_cut",
    "unauthorized": "auth",
    "bad_request": "invalid_request",
}


def _failure_fault(thread: Thread, session: str) -> ProviderFault | None:
    """The provider fault a thread's last turn ended on, or None (it did not end in error)."""
    failure = thread.failure
    if failure is None:
        return None
    kind = _INFO_KINDS.get(failure.info or "") or failure_kind(failure.status, failure.message)
    return ProviderFault(session, kind, failure.status, failure.message, False, "final", failure.at)


def _faults(
    thread: Thread, session: str, logged: Sequence[LoggedFailure]
) -> tuple[tuple[ProviderFault, ...], bool]:
    """A thread's failed requests (each retried but the one its turn ended on), and whether
    its last model call was one of them."""
    faults = [
        ProviderFault(
            session,
            f.kind,
            f.status,
            f.message,
            True,
            f"attempt {f.attempt}" if f.attempt is not None else "",
            f.at,
        )
        for f in logged
    ]
    final = _failure_fault(thread, session)
    if final is None:
        return tuple(faults), False
    if faults:
        faults[-1] = dataclasses.replace(faults[-1], retried=False)
    else:
        faults.append(final)
    return tuple(faults), True


def thread_tally(thread: Thread, session: str, logged: Sequence[LoggedFailure]) -> UsageTally:
    faults, ended = _faults(thread, session, logged)
    failure = thread.failure
    return UsageTally(
        assistant_messages=thread.responses + thread.failed_turns,
        failed_assistant_messages=thread.failed_turns,
        usage=thread.usage,
        first_error=failure.message if failure is not None else None,
        exact=True,
        faults=faults,
        ended_in_fault=ended and any(f.kind in GAVE_UP for f in faults[-1:]),
        # A turn Codex aborted (its parent's run ended) may have had a request in flight.
        unseen_calls=sum(1 for f in faults if f.kind in MID_ANSWER) + int(thread.aborted),
    )


__all__ = ["thread_tally"]
