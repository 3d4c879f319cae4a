"""Codex's log (its stderr) as the record of failed requests: which lines are failures, what
each says, and that nothing in it can make the parser raise."""

from __future__ import annotations

import io

import pytest

from scorers.codex.log import parse_line, parse_log

HEAD = "2026-12-05T07:17:59.271719Z  INFO codex_otel.trace_safe: "
TAIL = " event.timestamp=2026-12-05T07:17:59.271Z conversation.id=01a24511-1d34-7091 app.version=0.171.0"


@pytest.mark.parametrize(
    ("body", "kind", "status", "message"),
    [
        pytest.param(
            'event.name="codex.api_request" duration_ms=20 http.response.status_code=529 '
            'error.message="http 529" attempt=0',
            "overloaded", 529, "http 529", id="http-529",
        ),
        pytest.param(
            'event.name="codex.api_request" duration_ms=1 http.response.status_code=500 '
            'error.message="http 500" attempt=3',
            "server_error", 500, "http 500", id="http-500",
        ),
        pytest.param(
            'event.name="codex.api_request" duration_ms=10 error.message="error sending request" '
            "attempt=0",
            "connection", None, "error sending request", id="dropped-connection",
        ),
        pytest.param(
            'event.name="codex.sse_event" event.kind=unknown duration_ms=0 error.message=Transport '
            "error: network error: error decoding response body",
            "stream_cut", None, "Transport error: network error: error decoding response body",
            id="cut-stream-bare-message",
        ),
    ],
)  # fmt: skip
def test_a_failed_request_line(body: str, kind: str, status: int | None, message: str) -> None:
    found = parse_line(HEAD + body + TAIL)
    assert found is not None
    assert (found.kind, found.status, found.message) == (kind, status, message)
    assert found.thread == "01a24511-1d34-7091" and found.at == "2026-12-05T07:17:59.271719Z"


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(
            'event.name="codex.api_request" duration_ms=11 http.response.status_code=200 attempt=0',
            id="answered",
        ),
        pytest.param(
            'event.name="codex.sse_event" event.kind=response.completed input_token_count=10',
            id="stream-event",
        ),
        pytest.param('event.name="codex.tool_result" tool_name=exec_command', id="tool"),
        pytest.param("WARN codex_models_manager::model_info: Unknown model x", id="warning"),
    ],
)
def test_other_lines_are_no_failure(body: str) -> None:
    assert parse_line(HEAD + body + TAIL) is None


def test_the_log_lists_failures_in_order_and_survives_any_bytes() -> None:
    ok = HEAD + 'event.name="codex.api_request" http.response.status_code=200' + TAIL
    bad = (
        HEAD
        + 'event.name="codex.api_request" http.response.status_code=429 error.message="x"'
        + TAIL
    )
    data = "\n".join([ok, bad, "Reading additional input from stdin...", bad]).encode()
    garbage = b"\xff\xfe\x00codex." * 1000 + b"\n" + data
    found = parse_log(io.BytesIO(garbage))
    assert [f.status for f in found] == [429, 429]
    assert parse_log(io.BytesIO(b"")) == ()


def test_a_broken_stream_logged_twice_is_one_failure() -> None:
    words = "Transport error: network error: error decoding response body"
    raw = f'event.name="codex.sse_event" event.kind=unknown error.message={words}'
    summary = (
        'event.name="codex.sse_event" event.kind=response.completed '
        f"error.message=stream disconnected before completion: {words}"
    )
    pair = HEAD + raw + TAIL + "\n" + HEAD + summary + TAIL + "\n"
    assert [f.kind for f in parse_log(io.BytesIO(pair.encode()))] == ["stream_cut"]
    # Two breaks are two failures; a summary logged alone still counts.
    assert len(parse_log(io.BytesIO((pair * 2).encode()))) == 2
    assert len(parse_log(io.BytesIO((HEAD + summary + TAIL).encode()))) == 1
