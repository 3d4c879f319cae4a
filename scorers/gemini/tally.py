"""A Gemini CLI thread's model calls as a :class:`UsageTally`: its usage (one record per
response: every ``gemini`` message carries its response's tokens), the requests that
failed at the provider, and whether it gave up on one; and the run's usage per model.

A request that failed leaves no ``gemini`` message: the client writes an ``error`` message
for one it reports and retries, and for one it gave up on tells whoever waits (the parent
gets ``Subagent '<x>' failed. Error: <the API error>``; a parent's own shows as the
stream's ``result`` with ``status: error``). Only failures that carry an API error (its
HTTP code, or words :func:`scorers.faults.classify` names) are provider faults; a subagent
that failed for any other reason is the agent's failure, not the provider's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from scorers.faults import GAVE_UP, MID_ANSWER, ProviderFault, classify
from scorers.gemini.chat import Chat
from scorers.records import NO_TOKENS, TokenUsage, UsageTally

#: The HTTP code inside an API error the client quotes (``{"error":{"code":400,...}}``).
_CODE: Final = re.compile(r'"code"\s*:\s*(?P<code>[1-5]\d\d)\b')
#: Message types the client writes for a failed request it reports.
ERROR_TYPES: Final = frozenset({"error"})


def api_fault(
    session: str, text: str, retried: bool = False, request: str = "", at: str | None = None
) -> ProviderFault | None:
    """The provider fault an error text quotes, or None when it names none."""
    found = _CODE.search(text)
    status = int(found["code"]) if found else None
    kind = classify(status, text)
    if status is None and kind == "unknown":
        return None
    return ProviderFault(session, kind, status, text, retried, request, at)


def chat_usage(chat: Chat) -> TokenUsage:
    """Every response's tokens of one thread, billed."""
    return sum((m.usage for m in chat.messages if m.usage is not None), NO_TOKENS)


def responses(chat: Chat) -> int:
    """The thread's model responses (its ``gemini`` messages)."""
    return sum(1 for m in chat.messages if m.type == "gemini")


def chat_faults(chat: Chat, session: str) -> list[ProviderFault]:
    """The failed requests a thread's own record reports (each retried unless nothing of the
    thread followed it)."""
    found: list[ProviderFault] = []
    last = chat.messages[-1].id if chat.messages else None
    for message in chat.messages:
        if message.type in ERROR_TYPES:
            fault = api_fault(session, message.text, message.id != last, message.id, message.at)
            if fault is not None:
                found.append(fault)
    return found


def chat_tally(
    chat: Chat | None,
    session: str,
    error: str | None = None,
    final: ProviderFault | None = None,
    logged: tuple[ProviderFault, ...] = (),
) -> UsageTally:
    """One thread's tally; ``error`` is the failure it ended on as whoever waited for it was
    told (None: it did not end on one), ``final`` that failure as a provider fault (None:
    it quotes no API error); ``logged`` are retried attempts the client's log holds, filed
    first (the parent's tally carries the run's: the log names no thread)."""
    faults = [*logged, *(chat_faults(chat, session) if chat is not None else [])]
    if final is not None:
        faults.append(final)
    ended = bool(faults) and not faults[-1].retried
    failed = 1 if error is not None or final is not None else 0
    first_error = error or next((f.message for f in faults if not f.retried), None)
    return UsageTally(
        assistant_messages=(responses(chat) if chat is not None else 0) + failed,
        failed_assistant_messages=failed,
        usage=chat_usage(chat) if chat is not None else NO_TOKENS,
        first_error=first_error,
        exact=True,
        faults=tuple(faults),
        ended_in_fault=ended and faults[-1].kind in GAVE_UP,
        unseen_calls=sum(1 for f in faults if f.kind in MID_ANSWER),
    )


def usage_by_model(chats: Iterable[Chat]) -> tuple[tuple[str, TokenUsage], ...]:
    """The tokens of every response of ``chats``, per the model its message names (the
    model the client asked for that request), sorted by model; a response that names no
    model counts under ``""``."""
    found: dict[str, TokenUsage] = {}
    for chat in chats:
        for message in chat.messages:
            if message.usage is not None:
                name = message.model or ""
                found[name] = found.get(name, NO_TOKENS) + message.usage
    return tuple(sorted(found.items()))


__all__ = ["api_fault", "chat_faults", "chat_tally", "chat_usage", "responses", "usage_by_model"]
