"""The Anthropic Messages side: ``POST /v1/messages`` answered as SSE (or one JSON message).

Stateless like the completions side: the request's ``messages`` are the whole
conversation. The model id selects a script of the client being played (Claude Code's, or
opencode's: :mod:`scripted_model.opencode_scripts`); ids of the client's own
(``claude-...``) are answered harmlessly; any other id is a 404, as a real provider does.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from scripted_model.claude_scripts import (
    CLAUDE_SCRIPTS,
    INTERNAL_MODEL_PREFIX,
    ClaudeAction,
    ClaudeScript,
    Reply,
    describe,
    internal_action,
    next_claude_action,
    sleep_for,
)
from scripted_model.messages_conversation import MessagesConversation
from scripted_model.opencode_scripts import OpenCodeScript, next_opencode_action
from scripted_model.oracle import Oracle

MESSAGES_PATH = "/v1/messages"
#: A rough, deterministic token estimate: about four bytes of text per token.
BYTES_PER_TOKEN = 4
#: Tool input is streamed in pieces of this many characters (as real providers split it).
JSON_CHUNK = 64


class MessagesError(Exception):
    """An HTTP error answer: status, Anthropic error type, message."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status, self.kind, self.message = status, kind, message

    def body(self) -> dict[str, Any]:
        return {"type": "error", "error": {"type": self.kind, "message": self.message}}


#: The scripts a Messages client is played with, by the tools it offers the model.
MessagesScripts = Mapping[str, ClaudeScript] | Mapping[str, OpenCodeScript]


def plan_answer(
    body: Any, scripts: MessagesScripts, oracle: Oracle
) -> tuple[str, MessagesConversation, ClaudeAction]:
    """The model id, the conversation and the scripted answer to one request body."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise MessagesError(400, "invalid_request_error", "request body is not a Messages request")
    model = body["model"]
    conv = MessagesConversation.from_request(body)
    script = scripts.get(model)
    if isinstance(script, OpenCodeScript):
        return model, conv, next_opencode_action(script, conv, oracle)
    if isinstance(script, ClaudeScript):
        return model, conv, next_claude_action(script, conv, oracle)
    if model.startswith(INTERNAL_MODEL_PREFIX):
        return model, conv, internal_action()
    raise MessagesError(404, "not_found_error", f"model: {model}")


def message_id() -> str:
    return f"msg_scripted_{time.monotonic_ns():x}"


def _content(action: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if action.text:
        blocks.append({"type": "text", "text": action.text})
    for n, call in enumerate(action.calls):
        blocks.append(
            {
                "type": "tool_use",
                "id": f"toolu_scripted_{time.monotonic_ns():x}_{n}",
                "name": call.name,
                "input": dict(call.input),
            }
        )
    return blocks


def usage_for(action: Reply, prompt_bytes: int, cached: bool) -> dict[str, int]:
    """The usage the server bills for ``action``: about four bytes a token, and when the
    request marks prompt caching (``cache_control``) a deterministic share of its input read
    from the cache (a half) and written to it (a tenth), as a provider reports them:
    ``input_tokens`` is the uncached rest."""
    prompt = max(1, prompt_bytes // BYTES_PER_TOKEN)
    read = prompt // 2 if cached else 0
    written = prompt // 10 if cached else 0
    out = max(1, len(json.dumps(_content(action))) // BYTES_PER_TOKEN)
    return {
        "input_tokens": prompt - read - written,
        "output_tokens": out,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": written,
    }


def message_json(
    model: str, action: Reply, prompt_bytes: int, cached: bool = False
) -> dict[str, Any]:
    """The whole answer as one (non-streaming) message."""
    return {
        "id": message_id(),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(action),
        "stop_reason": "tool_use" if action.calls else "end_turn",
        "stop_sequence": None,
        "usage": usage_for(action, prompt_bytes, cached),
    }


def sse_events(
    model: str, action: Reply, prompt_bytes: int, cached: bool = False
) -> Iterator[bytes]:
    """The answer as Messages SSE events, block by block: ``message_start`` carries the input
    side and a placeholder output count of 1, ``message_delta`` the final output count (as
    the Messages API streams them)."""
    message = message_json(model, action, prompt_bytes, cached)
    blocks = message.pop("content")
    usage = message.pop("usage")
    start = {**message, "content": [], "stop_reason": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield _event("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            opening: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        else:
            opening = {**block, "input": {}}
            raw = json.dumps(block["input"])
            deltas = [
                {"type": "input_json_delta", "partial_json": raw[i : i + JSON_CHUNK]}
                for i in range(0, len(raw), JSON_CHUNK)
            ]
        yield _event(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": opening},
        )
        for delta in deltas:
            yield _event(
                "content_block_delta",
                {"type": "content_block_delta", "index": index, "delta": delta},
            )
        yield _event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield _event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]},
        },
    )
    yield _event("message_stop", {"type": "message_stop"})


#: Tool names (Claude Code's, opencode's) whose call spawns a subagent or writes a file.
SPAWN_TOOLS = frozenset({"Agent", "Task", "task"})
WRITE_TOOLS = frozenset({"Write", "write"})


def phase_of(action: ClaudeAction) -> str:
    """``spawn`` when the answer starts subagents, ``write`` when it writes a file, else
    ``any`` (what a fault plan's ``phase`` matches)."""
    if isinstance(action, Reply):
        names = {call.name for call in action.calls}
        if names & SPAWN_TOOLS:
            return "spawn"
        if names & WRITE_TOOLS:
            return "write"
    return "any"


def partial_events(model: str) -> bytes:
    """The first events of a streamed answer: what a cut stream delivers before it breaks
    (a ``message_start`` with its usage, an open text block, one delta)."""
    start: dict[str, Any] = {
        "id": message_id(),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},  # failed requests bill nothing
    }
    return b"".join(
        (
            _event("message_start", {"type": "message_start", "message": start}),
            _event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            _event(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {"type": "text_delta", "text": "Work"},
                },
            ),
        )
    )


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


__all__ = [
    "CLAUDE_SCRIPTS",
    "INTERNAL_MODEL_PREFIX",
    "MESSAGES_PATH",
    "MessagesError",
    "MessagesScripts",
    "describe",
    "message_json",
    "partial_events",
    "phase_of",
    "plan_answer",
    "sleep_for",
    "sse_events",
    "usage_for",
]
