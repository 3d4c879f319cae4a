"""The Gemini API side: ``POST /v1beta/models/<model>:streamGenerateContent?alt=sse`` (every
turn of Gemini CLI) answered as SSE, and ``:generateContent`` (the client's own utility
calls: a router, an edit fixer) answered with one JSON ``GenerateContentResponse``.

Stateless like the other sides: a request's ``contents`` are the whole thread. The model id
in the URL path selects the script (``scripted-<script>``, or the bare script name, as the
selftest's ``scripted/<script>`` reaches the client); an unknown ``scripted-`` id is
a 404 ``NOT_FOUND``, as the real API answers; any other id (the client's own utility
models, ``gemini-3-flash-preview``, ``gemini-3.5-flash-lite``, ...) is answered harmlessly
and counted under that id, so a run that ever asks another model than its own shows it in
:meth:`~scripted_model.server.ScriptedModelServer.requests_served` per model. The key comes
in ``x-goog-api-key`` (any non-empty one; without it a 403 ``PERMISSION_DENIED``).

The answer's ``usageMetadata`` is what the server bills: ``promptTokenCount`` (about four
bytes a token) of which ``cachedContentTokenCount`` (a half) was read from the cache,
``candidatesTokenCount`` and, beside it, ``thoughtsTokenCount`` (a quarter of the
candidates, never zero): fresh input = prompt - cached, cache read = cached, output =
candidates + thoughts, as Google bills them.

Faults (:mod:`scripted_model.faults`) are served with Google's error body,
``{"error": {"code", "message", "status", "details"}}``: 429 ``RESOURCE_EXHAUSTED`` with a
``RetryInfo`` detail (``retryDelay``: the rule's ``retry-after``, else 1 s), 500
``INTERNAL``, 503 ``UNAVAILABLE`` (and 529 as ``UNAVAILABLE``); a cut stream is the 200
headers, one partial ``data:`` event, then the connection closes short of its length.

What Gemini CLI 0.61.0 does with each (run by hand against this server with an API key,
``-m scripted-honest``, ``-o stream-json``, tiny's 3 shards, a fault on every request of
the parent unless said otherwise):

| fault | tries | waits between them | exit code | records and output |
|---|---|---|---|---|
| 429 ``RESOURCE_EXHAUSTED``, ``retryDelay`` 1s | 10 | 5.9, 10.3, 21.7, 34.7, 35.5, 35.4, 35.2, 32.1, 34.3 s (about 245 s in all): its own backoff, the stated delay ignored | 173 (429 mod 256) | stderr ``Attempt N failed: <message>`` / ``Suggested retry after 1s.. Retrying after 5315ms...``, then ``Attempt 10 failed ... Max attempts reached``; stdout's last event ``result {status: error, error.message: "[API Error: ..."}``; the chat holds the user turn only; ``$TMPDIR/gemini-client-error-Turn.run-sendMessageStream-<time>.json`` |
| 500 ``INTERNAL`` | 10 | 6.7, 10.3, 15.2, 39.0, 28.2, 24.2, 28.1, 23.9, 26.5 s (about 200 s) | 244 | as the 429 (``Attempt N failed with status 500. Retrying with backoff...``) |
| 503 ``UNAVAILABLE`` | 10 | 6.7, 9.3, 16.0, 35.7, 32.9, 29.8, 35.4, 26.8, 22.8 s (about 215 s) | 247 | as the 500 |
| 429 three times, then answers | 4 | 5.5, 10.2, 22.2 s | 0 | the run goes on and resolves; the retries leave no trace in the chat records (stderr only) |
| cut stream (parent) | 1: no retry | — | 1 | stdout streams the partial text (``message`` ``"Work"``), then ``result`` ``status: error``, ``[API Error: terminated]``; stderr ``TypeError: terminated`` / ``SocketError: other side closed``; an error report in ``$TMPDIR`` |
| cut stream (one child's first request) | 1: no retry | — | 0 | the parent gets ``Subagent 'shard-worker' failed. Error: terminated`` and writes the other shards |

Every try of every fault asked for the model the run named (``scripted-honest``): with an
API key 0.61.0 never switched to another model, not after ten 429s either. The server
counts every request under the model id of its path all the same
(``requests_served(model=...)``, the request log's ``model``), so a run that ever asks
another model shows it. A 400 (``child-fails``) is not retried: one request, and the parent
gets ``Subagent '...' failed. Error: {...INVALID_ARGUMENT...}``; the run exits 0.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any

from scripted_model.bill import Bill
from scripted_model.conversation import arm_of
from scripted_model.faults import FaultRule, break_stream, conversation_key
from scripted_model.gemini_conversation import GeminiConversation
from scripted_model.gemini_scripts import (
    GeminiAction,
    GeminiScript,
    Reply,
    describe,
    internal_reply,
    next_gemini_action,
    parts_of,
    phase_of,
    script_for,
)
from scripted_model.oracle import Oracle
from scripted_model.scripts import ModelFailure

#: ``/v1beta/models/<model>:<method>``: the model id and whether the answer streams.
GEMINI_PATH_RE = re.compile(
    r"\A/v1beta/models/(?P<model>[^/:?]+):(?P<method>streamGenerateContent|generateContent)\Z"
)
#: The model ids the scripts answer to: ``scripted-<script>``.
#: The API's name to the server (an agent adapter's ``model_api``): the Gemini API played
#: with Gemini CLI's tools.
GEMINI_API = "gemini-api:gemini"
SCRIPTED_PREFIX = "scripted-"
#: A rough, deterministic token estimate: about four bytes of text per token.
BYTES_PER_TOKEN = 4
#: Shares of a prompt billed as cache reads and of an answer's candidates billed again as
#: thoughts: fixed and nonzero, so a harness that drops one or counts one twice is caught.
CACHED_SHARE = 2
THOUGHTS_SHARE = 4
#: Google's status name for each HTTP status the server answers with.
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    529: "UNAVAILABLE",
}
#: The retry delay a 429 states when its rule names none.
DEFAULT_RETRY_DELAY_S = 1.0


def is_gemini_path(path: str) -> bool:
    return GEMINI_PATH_RE.match(path.split("?", 1)[0]) is not None


class GeminiError(Exception):
    """An HTTP error answer in Google's form."""

    def __init__(self, status: int, message: str, details: tuple[dict[str, Any], ...] = ()) -> None:
        super().__init__(message)
        self.status, self.message, self.details = status, message, details

    def body(self) -> dict[str, Any]:
        error: dict[str, Any] = {
            "code": self.status,
            "message": self.message,
            "status": STATUS_NAMES.get(self.status, "UNKNOWN"),
        }
        if self.details:
            error["details"] = list(self.details)
        return {"error": error}


def fault_error(rule: FaultRule) -> GeminiError:
    """A fault plan's HTTP error as Google words it (a 429 says when to retry)."""
    details: tuple[dict[str, Any], ...] = ()
    if rule.status == 429:
        delay = rule.retry_after if rule.retry_after is not None else DEFAULT_RETRY_DELAY_S
        details = (
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{delay:g}s"},
        )
    return GeminiError(rule.status, rule.message, details)


def plan_answer(
    model: str, body: Any, scripts: Mapping[str, GeminiScript], oracle: Oracle
) -> tuple[GeminiConversation, GeminiAction, str]:
    """The conversation, the scripted answer to one request for ``model``, and who asks
    (the conversation's parent or child; ``internal`` for the client's own model)."""
    if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
        raise GeminiError(400, "request body is not a GenerateContentRequest")
    conv = GeminiConversation.from_request(body)
    script = script_for(scripts, model)
    if script is None and not model.startswith(SCRIPTED_PREFIX):
        return conv, internal_reply(conv), "internal"  # the client's own utility model
    if script is None:
        raise GeminiError(404, f"models/{model} is not found for API version v1beta")
    return conv, next_gemini_action(script, conv, oracle), conv.caller


def usage_for(action: Reply, prompt_bytes: int) -> dict[str, int]:
    """The ``usageMetadata`` the server bills for an answer to a request of ``prompt_bytes``."""
    prompt = max(2, prompt_bytes // BYTES_PER_TOKEN)
    cached = prompt // CACHED_SHARE
    out = max(4, len(json.dumps(parts_of(action))) // BYTES_PER_TOKEN)
    thoughts = max(1, out // THOUGHTS_SHARE)
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": out,
        "cachedContentTokenCount": cached,
        "thoughtsTokenCount": thoughts,
        "totalTokenCount": prompt + out + thoughts,
    }


def response_json(model: str, action: Reply, usage: Mapping[str, int]) -> dict[str, Any]:
    """The whole answer as one ``GenerateContentResponse``."""
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts_of(action)},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": dict(usage),
        "modelVersion": model,
        "responseId": f"scripted-{time.monotonic_ns():x}",
    }


def sse_events(model: str, action: Reply, usage: Mapping[str, int]) -> Iterator[bytes]:
    """The answer as SSE: its text first (when it has both), then the rest with the finish
    reason and the usage, as the API streams a turn."""
    whole = response_json(model, action, usage)
    if action.text and action.calls:
        first = response_json(model, Reply(action.text), usage)
        del first["usageMetadata"]
        del first["candidates"][0]["finishReason"]
        yield _event(first)
        whole["candidates"][0]["content"]["parts"] = parts_of(Reply(calls=action.calls))
    yield _event(whole)


def partial_event(model: str) -> bytes:
    """The first event of an answer: what a cut stream delivers before it breaks."""
    return _event(
        {
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Work"}]}, "index": 0}],
            "modelVersion": model,
        }
    )


def _event(data: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\r\n\r\n"


def serve(handler: BaseHTTPRequestHandler, server: Any, raw: bytes) -> None:
    """Answer one Gemini API request on ``handler`` for ``server`` (a
    :class:`~scripted_model.server.ScriptedModelServer`): fault, count, bill, answer."""

    found = GEMINI_PATH_RE.match(handler.path.split("?", 1)[0])
    assert found is not None
    model, stream = found["model"], found["method"] == "streamGenerateContent"
    key = handler.headers.get("x-goog-api-key") or handler.headers.get("authorization")
    try:
        if not key:
            raise GeminiError(403, "Method doesn't allow unregistered callers (no API key).")
        try:
            body = json.loads(raw)
        except ValueError:
            raise GeminiError(400, "Invalid JSON payload received.") from None
        conv, action, caller = plan_answer(model, body, server.gemini_scripts, server.oracle)
    except GeminiError as error:
        _json(handler, error.status, error.body())
        return
    files = conv.shard_files(server.oracle)
    arm = arm_of(raw)
    first = conv.first_user_text
    thread = conversation_key(GEMINI_API, model, first, conv.cwd)
    fault = server.fault_for(
        GEMINI_API, model, caller, first, conv.cwd, phase_of(action), files, arm
    )
    if fault is not None:
        _fail(handler, server, fault, model)
        return
    item = f"{model}\0{conv.cwd or ''}"
    if isinstance(action, Reply) and action.locks:
        server.gemini_locks.acquire(item, thread, stopping=lambda: server.stopping)
    else:
        server.gemini_locks.release(item, thread)
    server.record_request(model, files, body, describe(action), GEMINI_API, arm)
    if isinstance(action, ModelFailure):
        server.count_failure(GEMINI_API, model, caller, files, arm)
        failure = GeminiError(action.status, action.message)
        _json(handler, failure.status, failure.body())
        return
    usage = usage_for(action, len(raw))
    cached = usage["cachedContentTokenCount"]
    server.bill(
        model,
        caller,
        files,
        Bill(
            usage["promptTokenCount"] - cached,
            usage["candidatesTokenCount"] + usage["thoughtsTokenCount"],
            cached,
            requests=1,
        ),
        GEMINI_API,
        arm,
    )
    if not stream:
        _json(handler, 200, response_json(model, action, usage))
        return
    handler.send_response(200)
    handler.send_header("content-type", "text/event-stream")
    handler.send_header("cache-control", "no-cache")
    handler.send_header("connection", "close")
    handler.end_headers()
    for event in sse_events(model, action, usage):
        handler.wfile.write(event)
    handler.wfile.flush()
    handler.close_connection = True


def _json(handler: BaseHTTPRequestHandler, status: int, obj: Mapping[str, Any]) -> None:
    data = json.dumps(obj).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json; charset=UTF-8")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _fail(handler: BaseHTTPRequestHandler, server: Any, rule: FaultRule, model: str) -> None:
    """Serve a fault of the plan: an HTTP error in Google's form, or a stream that breaks
    (billed nothing, either way)."""
    if rule.status:
        error = fault_error(rule)
        data = json.dumps(error.body()).encode()
        handler.send_response(rule.status)
        handler.send_header("content-type", "application/json; charset=UTF-8")
        handler.send_header("content-length", str(len(data)))
        for name, value in rule.headers().items():
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(data)
        return
    break_stream(handler, rule, partial_event(model), lambda: server.stopping)


__all__ = [
    "GEMINI_PATH_RE",
    "GeminiError",
    "fault_error",
    "is_gemini_path",
    "partial_event",
    "plan_answer",
    "response_json",
    "serve",
    "sse_events",
    "usage_for",
]
