"""Parse one Gemini CLI chat record (``chats/session-*.jsonl`` or ``chats/<sid>/<agent>.jsonl``).

Gemini CLI (0.61.0) writes each conversation as JSONL:

* line 1, the metadata: ``{sessionId, projectHash, startTime, lastUpdated, kind}`` (``kind``
  ``main`` for the parent, ``subagent`` for a subagent, which also has ``directories``);
* message records ``{id, timestamp, type, content, ...}`` (``type`` ``user``, ``gemini``,
  ``info``, ``error`` ...). A ``gemini`` message carries ``tokens{input, output, cached,
  thoughts, tool, total}``, the ``model`` the client asked, its ``thoughts`` and, once its
  tools ran, ``toolCalls[]`` (``{id, name, args, status, timestamp, result[], agentId,
  resultDisplay}``). A message is appended again under the same ``id`` when its tool calls
  fill in: the last one wins, at the place of the first;
* patches ``{"$set": {...}}``: ``messages`` replaces the whole list (the client rewrites
  history that way, e.g. to drop a turn that failed), ``summary`` (a subagent's result),
  ``lastUpdated``.

Nothing here raises on any input bytes: unreadable lines, and records of no known shape,
are counted; a file with no metadata line is damaged (``meta`` stays empty).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any, NamedTuple

from scorers.lines import MALFORMED, iter_json_lines
from scorers.tokens import TokenUsage

#: The metadata's ``kind`` of the parent's record and of a subagent's.
MAIN = "main"
SUBAGENT = "subagent"


def string(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def text_of(content: object) -> str:
    """A message's text: a plain string, or the ``text`` of its parts."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
    )


def billed(tokens: object) -> TokenUsage | None:
    """One response's tokens as the provider bills them: ``input`` holds the cached tokens
    (billed as cache reads) and ``output`` leaves out the thinking tokens (billed as
    output). None when ``tokens`` is not a token record."""
    if not isinstance(tokens, Mapping) or not any(k in tokens for k in ("input", "output")):
        return None
    given, cached = count(tokens.get("input")), count(tokens.get("cached"))
    thoughts = count(tokens.get("thoughts"))
    return TokenUsage(
        input_tokens=max(given - cached, 0),
        output_tokens=count(tokens.get("output")) + thoughts,
        cache_read_tokens=cached,
        reasoning_tokens=thoughts,
    )


class ToolCall(NamedTuple):
    """One tool call of a ``gemini`` message, as the record has it once it ran.

    ``output`` / ``error`` are its function response's ``output`` and ``error`` (what the
    model was given back); ``at`` is when it finished (the call's own timestamp).
    """

    call_id: str
    name: str
    args: Mapping[str, Any]
    status: str | None
    agent_id: str | None
    output: str | None
    error: str | None
    at: str | None
    display: object = None


class Message(NamedTuple):
    """One message of the conversation, its last version."""

    id: str
    type: str
    at: str | None
    text: str
    model: str | None = None
    usage: TokenUsage | None = None
    calls: tuple[ToolCall, ...] = ()
    thoughts: str = ""
    #: Function responses a ``user`` message gives back: ``(call id, text)``.
    responses: tuple[tuple[str, str], ...] = ()


def _response(part: Mapping[str, Any]) -> tuple[str | None, str | None, str | None]:
    """``(call id, output, error)`` of a ``functionResponse`` part."""
    body = part.get("functionResponse")
    if not isinstance(body, Mapping):
        return None, None, None
    response = body.get("response")
    response = response if isinstance(response, Mapping) else {}
    output, error = response.get("output"), response.get("error")
    return (
        string(body.get("id")),
        output if isinstance(output, str) else None,
        error if isinstance(error, str) else None,
    )


def _call(raw: object) -> ToolCall | None:
    if not isinstance(raw, Mapping) or string(raw.get("name")) is None:
        return None
    args = raw.get("args")
    output = error = None
    results = raw.get("result")
    for part in results if isinstance(results, list) else ():
        if isinstance(part, Mapping):
            _cid, out, err = _response(part)
            output, error = output or out, error or err
    return ToolCall(
        call_id=string(raw.get("id")) or "",
        name=str(raw["name"]),
        args=args if isinstance(args, Mapping) else {},
        status=string(raw.get("status")),
        agent_id=string(raw.get("agentId")),
        output=output,
        error=error,
        at=string(raw.get("timestamp")),
        display=raw.get("resultDisplay"),
    )


def _thoughts(raw: object) -> str:
    found = []
    for thought in raw if isinstance(raw, list) else ():
        if isinstance(thought, Mapping):
            text = " ".join(t for k in ("subject", "description") if (t := string(thought.get(k))))
            if text:
                found.append(text)
    return "\n".join(found)


def message_of(raw: object) -> Message | None:
    """A message record, or None when ``raw`` is not one."""
    if not isinstance(raw, Mapping):
        return None
    mid, kind = string(raw.get("id")), string(raw.get("type"))
    if mid is None or kind is None:
        return None
    content = raw.get("content")
    calls = raw.get("toolCalls")
    responses = []
    for part in content if isinstance(content, list) else ():
        if isinstance(part, Mapping) and "functionResponse" in part:
            cid, out, err = _response(part)
            responses.append((cid or "", out if out is not None else err or ""))
    return Message(
        id=mid,
        type=kind,
        at=string(raw.get("timestamp")),
        text=text_of(content),
        model=string(raw.get("model")),
        usage=billed(raw.get("tokens")) if kind == "gemini" else None,
        calls=tuple(c for c in map(_call, calls if isinstance(calls, list) else ()) if c),
        thoughts=_thoughts(raw.get("thoughts")),
        responses=tuple(responses),
    )


@dataclass(frozen=True, slots=True)
class Chat:
    """One chat record as it stands after every line: its metadata (empty when the file
    has none), its messages in order (deduplicated, patches applied), the summary a
    subagent's record ends with, and what could not be read."""

    meta: Mapping[str, Any]
    messages: tuple[Message, ...]
    summary: str | None = None
    last_updated: str | None = None
    malformed: int = 0

    @property
    def session_id(self) -> str | None:
        return string(self.meta.get("sessionId"))

    @property
    def kind(self) -> str | None:
        return string(self.meta.get("kind"))

    @property
    def started_at(self) -> str | None:
        first = next((m.at for m in self.messages if m.at), None)
        return string(self.meta.get("startTime")) or first

    @property
    def ended_at(self) -> str | None:
        last = next((m.at for m in reversed(self.messages) if m.at), None)
        stamps = [s for s in (last, self.last_updated) if s]
        return max(stamps) if stamps else self.started_at

    @property
    def directories(self) -> tuple[str, ...]:
        found = self.meta.get("directories")
        return tuple(d for d in found if isinstance(d, str)) if isinstance(found, list) else ()


def _is_meta(value: Mapping[str, Any]) -> bool:
    return "sessionId" in value and "id" not in value and "$set" not in value


def parse_chat(stream: IO[bytes]) -> Chat:
    """Read one whole chat record; never raises on any input bytes."""
    meta: Mapping[str, Any] = {}
    messages: dict[str, Message] = {}
    summary = updated = None
    malformed = 0
    first = True
    for value, _terminated in iter_json_lines(stream):
        if value is MALFORMED or not isinstance(value, Mapping):
            malformed += 1
            first = False
            continue
        if first and _is_meta(value):
            meta = value
        elif isinstance(value.get("$set"), Mapping):
            patch = value["$set"]
            if isinstance(patch.get("messages"), list):
                messages = {}
                for raw in patch["messages"]:
                    message = message_of(raw)
                    if message is None:
                        malformed += 1
                    else:
                        messages[message.id] = message
            summary = string(patch.get("summary")) or summary
            updated = string(patch.get("lastUpdated")) or updated
        elif (message := message_of(value)) is not None:
            messages[message.id] = message  # a re-appended id keeps its first place
        else:
            malformed += 1
        first = False
    if not meta:
        malformed += 1  # no metadata line: the record is damaged
    return Chat(meta, tuple(messages.values()), summary, updated, malformed)


__all__ = ["Chat", "Message", "ToolCall", "billed", "message_of", "parse_chat"]
