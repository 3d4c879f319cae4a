"""One Codex thread as its rollout tells it, and the small values read off its lines
(a response's usage, a ``wait_agent`` output, a turn's error); :mod:`scorers.codex.rollout`
reads the lines."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from scorers.records import NO_TOKENS, TokenUsage

Via = Literal["wait", "notification", "agent_message"]


@dataclass(frozen=True, slots=True)
class Call:
    """A function call the thread's model made."""

    call_id: str
    name: str
    namespace: str | None
    arguments: Mapping[str, object]
    at: str | None


@dataclass(frozen=True, slots=True)
class PatchApplied:
    """A patch Codex applied (its ``FileChange`` item, completed): the files it changed,
    each ``(absolute path, kind, content, moved to)`` with kind ``add``, ``delete`` or
    ``update``, the content an add wrote (else None) and an update's new path (else
    None). ``call_id`` is the call that asked for it (``apply_patch``, or a shell
    command Codex read as one)."""

    call_id: str
    files: tuple[tuple[str, str, str | None, str | None], ...]
    at: str | None


@dataclass(frozen=True, slots=True)
class CommandRun:
    """A shell command the thread asked for (its ``CommandExecution`` item, or its call and
    output when there is no such item): the script text, where it ran, and whether it ran
    (it exited, with any code, or was still running; a command refused before it started
    did not)."""

    call_id: str
    command: str
    cwd: str | None
    ran: bool
    at: str | None


#: What a thread did to files, in record order.
Change = PatchApplied | CommandRun


@dataclass(frozen=True, slots=True)
class Heard:
    """Something the thread was told of a child's end: which child (a thread id under the
    first protocol, an agent path under the second), its status (``completed``,
    ``errored``, ...), the text that came with it, when, and how it came."""

    child: str
    status: str
    text: str | None
    at: str | None
    via: Via


@dataclass(frozen=True, slots=True)
class Failure:
    """How a turn of the thread ended in error: Codex's words and its error info (a name
    such as ``internal_server_error``, with the HTTP status where it kept one)."""

    message: str
    info: str | None
    status: int | None
    at: str | None


@dataclass(frozen=True, slots=True)
class Thread:
    """One rollout, reduced to what the rules and the usage need."""

    id: str | None = None
    parent_id: str | None = None
    depth: int | None = None
    agent_path: str | None = None
    protocol: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    #: The task it was given: its first ``NEW_TASK`` payload (second protocol), else its
    #: first user message that is not Codex's own.
    task: str | None = None
    #: Every message that could be its task: those user messages and ``NEW_TASK`` payloads
    #: (a child started with its parent's history forked in holds the parent's too).
    prompts: tuple[str, ...] = ()
    calls: tuple[Call, ...] = ()
    #: Call id -> its output text.
    outputs: Mapping[str, str] = field(default_factory=dict)
    #: Spawn call id -> the child thread it started, as Codex's own events record it.
    started: Mapping[str, str] = field(default_factory=dict)
    heard: tuple[Heard, ...] = ()
    #: Its last turn's final message, and how that turn failed (None: it did not).
    final_message: str | None = None
    failure: Failure | None = None
    #: Turns that ended in error, and whether its last turn was aborted (interrupted).
    failed_turns: int = 0
    aborted: bool = False
    responses: int = 0
    usage: TokenUsage = NO_TOKENS
    malformed: int = 0
    #: Its working directory (``session_meta.cwd``: the item's repo).
    cwd: str | None = None
    #: Every patch it applied and every command it ran, in record order.
    changes: tuple[Change, ...] = ()


def string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def response_usage(usage: object) -> TokenUsage | None:
    """One response's billed fields (cached input and reasoning are subsets Codex reports
    inside ``input_tokens`` and ``output_tokens``), or None when it is not a usage."""
    if not isinstance(usage, Mapping):
        return None
    total_in = _count(usage.get("input_tokens"))
    cached = min(_count(usage.get("cached_input_tokens")), total_in)
    written = min(_count(usage.get("cache_write_input_tokens")), total_in - cached)
    output = _count(usage.get("output_tokens"))
    reasoning = min(_count(usage.get("reasoning_output_tokens")), output)
    return TokenUsage(total_in - cached - written, output, cached, written, reasoning)


def text_of(content: object, kinds: tuple[str, ...] = ("text",)) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts = []
    for part in content:
        if isinstance(part, Mapping):
            for key in kinds:
                value = part.get(key)
                if isinstance(value, str):
                    parts.append(value)
                    break
    return "".join(parts) if "encrypted_content" in kinds else "\n".join(parts)


def arguments_of(raw: object) -> Mapping[str, object]:
    if isinstance(raw, Mapping):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except (ValueError, RecursionError):
        return {}
    return value if isinstance(value, Mapping) else {}


def statuses(output: str) -> list[tuple[str, str, str | None]]:
    """(child, status, text) of each final status in a first-protocol ``wait_agent``
    output (``{"status": {"<id>": {"completed": "<text>"}}, "timed_out": ...}``)."""
    try:
        body = json.loads(output)
    except (ValueError, RecursionError):
        return []
    status = body.get("status") if isinstance(body, Mapping) else None
    if not isinstance(status, Mapping):
        return []
    found = []
    for child, state in status.items():
        if isinstance(state, Mapping):
            for kind, text in state.items():
                found.append((str(child), str(kind), text if isinstance(text, str) else None))
        elif isinstance(state, str):  # a bare status (``not_found``, ``shutdown``)
            found.append((str(child), state, None))
    return found


def failure_of(error: Mapping[str, object], at: str | None) -> Failure:
    info = error.get("codex_error_info")
    name: str | None = None
    status: int | None = None
    if isinstance(info, str):
        name = info
    elif isinstance(info, Mapping) and info:
        name = str(next(iter(info)))
        detail = info[name]
        if isinstance(detail, Mapping):
            code = detail.get("http_status_code")
            status = code if isinstance(code, int) and not isinstance(code, bool) else None
    return Failure(string(error.get("message")) or "error", name, status, at)


__all__ = [
    "Call",
    "Change",
    "CommandRun",
    "Failure",
    "Heard",
    "PatchApplied",
    "Thread",
    "Via",
    "arguments_of",
    "failure_of",
    "response_usage",
    "statuses",
    "string",
    "text_of",
]
