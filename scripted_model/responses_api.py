"""The OpenAI Responses side: ``POST /v1/responses`` answered as SSE (what Codex speaks).

Stateless like the other sides: the request's ``input`` is the whole thread (Codex sends
``store: false``). The model id selects a Codex script (``honest`` or ``scripted-honest``);
any other id is a 404, as the real API answers. The answer streams
``response.created``, per output item ``response.output_item.added`` (a message's text as
``response.output_text.delta``) and ``response.output_item.done``, then
``response.completed`` with the usage the server bills: ``input_tokens`` with its cached
part in ``input_tokens_details.cached_tokens`` (a subset), ``output_tokens`` with its
reasoning part in ``output_tokens_details.reasoning_tokens`` (a subset), as the API reports
them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

from scripted_model.codex_scripts import (
    CodexAction,
    CodexScript,
    Reply,
    next_codex_action,
    script_for,
)
from scripted_model.conversation import CHILD_JOB_RE
from scripted_model.oracle import Oracle
from scripted_model.responses_conversation import ResponsesConversation
from scripted_model.scripts import WRITE_MARKER, ModelFailure

RESPONSES_PATH = "/v1/responses"
#: A rough, deterministic token estimate: about four bytes of text per token.
BYTES_PER_TOKEN = 4
#: Shares of a request billed as cached input and of an answer billed as reasoning: fixed,
#: so a harness that adds a subset on top of its total (or drops it) is caught.
CACHED_SHARE = 2  # a half of the input (every request carries a prompt_cache_key)
REASONING_SHARE = 4  # a quarter of the output


class ResponsesError(Exception):
    """An HTTP error answer: status, OpenAI error type, message."""

    def __init__(self, status: int, kind: str, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.code = status, kind, message, code

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.kind, "code": self.code}}


def plan_answer(
    body: Any, scripts: Mapping[str, CodexScript], oracle: Oracle
) -> tuple[str, ResponsesConversation, CodexAction]:
    """The model id, the conversation and the scripted answer to one request body."""
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        raise ResponsesError(
            400, "invalid_request_error", "request body is not a Responses request"
        )
    model = body["model"]
    script = script_for(scripts, model)
    if script is None:
        raise ResponsesError(
            404, "invalid_request_error", f"The model `{model}` does not exist", "model_not_found"
        )
    conv = ResponsesConversation.from_request(body)
    return model, conv, next_codex_action(script, conv, oracle)


def _id(prefix: str) -> str:
    return f"{prefix}_scripted_{time.monotonic_ns():x}"


def output_items(action: Reply) -> list[dict[str, Any]]:
    """The answer's output items: a message for its text, a function call per call (a
    custom tool call for a freeform tool)."""
    items: list[dict[str, Any]] = []
    if action.text:
        items.append(
            {
                "type": "message",
                "id": _id("msg"),
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": action.text, "annotations": []}],
            }
        )
    for n, call in enumerate(action.calls):
        if call.custom:  # a freeform tool: its text is the item's input
            items.append(
                {
                    "type": "custom_tool_call",
                    "id": _id("ctc"),
                    "call_id": f"call_{time.monotonic_ns():x}_{n}",
                    "name": call.name,
                    "input": str(call.arguments.get("input", "")),
                    "status": "completed",
                }
            )
            continue
        item: dict[str, Any] = {
            "type": "function_call",
            "id": _id("fc"),
            "call_id": f"call_{time.monotonic_ns():x}_{n}",
            "name": call.name,
            "arguments": json.dumps(dict(call.arguments)),
            "status": "completed",
        }
        if call.namespace:
            item["namespace"] = call.namespace
        items.append(item)
    return items


def usage_for(items: list[dict[str, Any]], prompt_bytes: int) -> dict[str, Any]:
    """The usage the server bills for an answer of ``items`` to a request of
    ``prompt_bytes``: subsets reported inside their totals, as the API does."""
    prompt = max(1, prompt_bytes // BYTES_PER_TOKEN)
    out = max(1, len(json.dumps(items)) // BYTES_PER_TOKEN)
    cached = prompt // CACHED_SHARE
    reasoning = out // REASONING_SHARE
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": out,
        "output_tokens_details": {"reasoning_tokens": reasoning},
        "total_tokens": prompt + out,
    }


def _response(rid: str, model: str, status: str, **extra: Any) -> dict[str, Any]:
    return {"id": rid, "object": "response", "model": model, "status": status, **extra}


def sse_events(
    model: str, items: list[dict[str, Any]], usage: Mapping[str, Any]
) -> Iterator[bytes]:
    """The answer as Responses SSE events, item by item."""
    rid = _id("resp")
    yield _event(
        "response.created",
        {"type": "response.created", "response": _response(rid, model, "in_progress")},
    )
    for index, item in enumerate(items):
        opening = {**item, "status": "in_progress"}
        if item["type"] == "message":
            opening["content"] = []
        elif item["type"] == "function_call":
            opening["arguments"] = ""
        elif item["type"] == "custom_tool_call":
            opening["input"] = ""
        yield _event(
            "response.output_item.added",
            {"type": "response.output_item.added", "output_index": index, "item": opening},
        )
        if item["type"] == "message":
            yield _event(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": index,
                    "content_index": 0,
                    "delta": item["content"][0]["text"],
                },
            )
        yield _event(
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": index, "item": item},
        )
    done = _response(rid, model, "completed", output=items, usage=dict(usage))
    yield _event("response.completed", {"type": "response.completed", "response": done})


def partial_events(model: str) -> bytes:
    """The first events of an answer: what a cut stream delivers before it breaks."""
    rid = _id("resp")
    item = {
        "type": "message",
        "id": _id("msg"),
        "role": "assistant",
        "status": "in_progress",
        "content": [],
    }
    return b"".join(
        (
            _event(
                "response.created",
                {"type": "response.created", "response": _response(rid, model, "in_progress")},
            ),
            _event(
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            _event(
                "response.output_text.delta",
                {
                    "type": "response.output_text.delta",
                    "item_id": item["id"],
                    "output_index": 0,
                    "content_index": 0,
                    "delta": "Work",
                },
            ),
        )
    )


def phase_of(action: CodexAction) -> str:
    """``spawn`` when the answer starts children, ``write`` when it writes the artifact,
    else ``any`` (what a fault plan's ``phase`` matches)."""
    if isinstance(action, Reply):
        if any(c.name == "spawn_agent" for c in action.calls):
            return "spawn"
        if any(WRITE_MARKER in str(c.arguments.get("cmd", "")) for c in action.calls):
            return "write"
    return "any"


def spawned_paths(action: CodexAction) -> list[str]:
    """The shard paths whose children an answer spawns."""
    if not isinstance(action, Reply):
        return []
    found = []
    for call in action.calls:
        if call.name == "spawn_agent":
            job = CHILD_JOB_RE.search(str(call.arguments.get("message", "")))
            if job:
                found.append(job["path"])
    return found


def caller_of(conv: ResponsesConversation) -> str:
    if not conv.has_tools:
        return "internal"
    return "child" if conv.child_job is not None else "parent"


def error_json(status: int, message: str) -> ResponsesError:
    """A script's own refusal as the API words it."""
    kind = "invalid_request_error" if status < 500 else "server_error"
    return ResponsesError(status, kind, message)


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


__all__ = [
    "RESPONSES_PATH",
    "ModelFailure",
    "ResponsesError",
    "caller_of",
    "error_json",
    "output_items",
    "partial_events",
    "phase_of",
    "plan_answer",
    "spawned_paths",
    "sse_events",
    "usage_for",
]
