"""Small synthetic transcripts, one per fact of the Claude Code contract the parsers rely on."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from scorers.claude_code import (
    ClaudeCodeArtifacts,
    SubagentFile,
    parse_parent_transcript,
    parse_stream,
    score_claude_code,
)
from scorers.types import Manifest, Shard

SID = "s-1"
MANIFEST = Manifest("one", "combined-index.md", (Shard("a.txt", "worker-a", "?", 7),))
PROMPT = "Read a.txt. SHARD=shards/a.txt INDEX=0 ATTEMPT=1"
T0, T1, T2 = "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:01.000Z", "2026-01-01T00:00:02.000Z"
NOTICE = (
    "<task-notification>\n<task-id>ag1</task-id>\n<tool-use-id>tu1</tool-use-id>\n"
    "<status>{status}</status>\n<result>done\nANSWER::a.txt::7</result>\n"
    "<usage><subagent_tokens>7</subagent_tokens></usage>\n</task-notification>"
)
FRAME = (
    "[Subagent hand-back] The report follows:\n  {report}\nagentId: ag1\n"
    "<usage>subagent_tokens: 7\ntool_uses: 1</usage>"
)


def _lines(*records: Any) -> bytes:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records).encode()


def assistant(mid: str, *blocks: dict[str, Any], at: str = T0, **extra: Any) -> dict[str, Any]:
    usage = {"input_tokens": 10, "output_tokens": 5}
    message = {"id": mid, "role": "assistant", "content": list(blocks), "usage": usage}
    return {"type": "assistant", "sessionId": SID, "timestamp": at, "message": message, **extra}


def spawn(description: str = "worker-a", tid: str = "tu1") -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": tid,
        "name": "Agent",
        "input": {"description": description, "prompt": PROMPT},
    }


def launched(agent: str = "ag1") -> dict[str, Any]:
    result = {"type": "tool_result", "tool_use_id": "tu1", "content": f"launched\nagentId: {agent}"}
    return {
        "type": "user",
        "sessionId": SID,
        "timestamp": T0,
        "message": {"role": "user", "content": [result]},
        "toolUseResult": {"status": "async_launched", "agentId": agent},
    }


def foreground(report: str, *, is_error: bool = False) -> dict[str, Any]:
    text = FRAME.format(report=report)
    result = {
        "type": "tool_result",
        "tool_use_id": "tu1",
        "content": [{"type": "text", "text": text}],
    }
    if is_error:
        result["is_error"] = True
    return {
        "type": "user",
        "sessionId": SID,
        "timestamp": T2,
        "message": {"role": "user", "content": [result]},
        "toolUseResult": {} if is_error else {"status": "completed", "agentId": "ag1"},
    }


def notice_record(status: str = "completed") -> dict[str, Any]:
    return {
        "type": "user",
        "sessionId": SID,
        "timestamp": T2,
        "message": {"role": "user", "content": NOTICE.format(status=status)},
    }


def queued(status: str = "completed") -> dict[str, Any]:
    attachment = {"type": "queued_command", "prompt": NOTICE.format(status=status)}
    return {"type": "attachment", "sessionId": SID, "timestamp": T2, "attachment": attachment}


QUEUE_OP = {
    "type": "queue-operation",
    "operation": "enqueue",
    "content": NOTICE.format(status="completed"),
}
BLOB = {
    "type": "api-request-blob",
    "message": {
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": "tu1",
                "content": FRAME.format(report="ANSWER::a.txt::7"),
            }
        ]
    },
}
WRITE = assistant("m9", {"type": "tool_use", "id": "w", "name": "Write", "input": {}}, at=T2)


def subagent(
    report: str = "ANSWER::a.txt::7", *, session: str = SID, prompt: str = PROMPT
) -> bytes:
    base = {"sessionId": session, "agentId": "ag1", "isSidechain": True}
    return _lines(
        {**base, "type": "user", "timestamp": T1, "message": {"role": "user", "content": prompt}},
        {**assistant("c1", {"type": "text", "text": report}, at=T1), **base},
    )


META = json.dumps({"toolUseId": "tu1", "description": "worker-a", "spawnDepth": 1}).encode()


def score(parent: bytes, sub: bytes | None = None, answer: str = "7", meta: bytes = META):
    files = (
        (SubagentFile(SID, "ag1", lambda: io.BytesIO(sub), lambda: io.BytesIO(meta)),)
        if sub is not None
        else ()
    )
    artifacts = ClaudeCodeArtifacts(
        SID,
        lambda: io.BytesIO(parent),
        None,
        lambda: io.BytesIO(f"- a.txt: {answer}\n".encode()),
        files,
    )
    return score_claude_code(artifacts, MANIFEST)


def failed(result) -> set[str]:  # type: ignore[no-untyped-def]
    return {reason.split(":", 1)[0] for reason in result.failures}


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        pytest.param(
            (launched(), notice_record()), set(), id="background-notification-user-record"
        ),
        pytest.param((launched(), queued()), set(), id="queued-command-attachment-is-a-delivery"),
        pytest.param(
            (launched(), QUEUE_OP),
            {"receipts", "provenance"},
            id="queue-operation-is-not-a-delivery",
        ),
        pytest.param(
            (launched(), BLOB), {"receipts", "provenance"}, id="api-request-copy-is-not-a-delivery"
        ),
        pytest.param((foreground("ANSWER::a.txt::7"),), set(), id="foreground-hand-back"),
        pytest.param(
            (launched(), notice_record("failed")),
            {"provenance"},
            id="failed-notification-is-a-notice",
        ),
        pytest.param(
            (foreground("boom", is_error=True),), {"provenance"}, id="is-error-is-a-notice"
        ),
    ],
)
def test_deliveries(records: tuple[dict[str, Any], ...], expected: set[str]) -> None:
    parent = _lines(assistant("m1", spawn()), *records, WRITE)
    assert failed(score(parent, subagent())) == expected


def test_frame_usage_numbers_never_vouch_for_an_answer() -> None:
    """The frame holds ``subagent_tokens: 7``; the subagent itself reported nothing."""
    parent = _lines(assistant("m1", spawn()), foreground("no idea"), WRITE)
    assert failed(score(parent, subagent("no idea"))) == {"provenance"}


@pytest.mark.parametrize(
    ("sub", "meta", "expected"),
    [
        pytest.param(None, META, {"delegation", "provenance"}, id="no-subagent-transcript"),
        pytest.param(
            subagent(session="other"), META, {"provenance"}, id="transcript-of-another-session"
        ),
        pytest.param(
            subagent(prompt="something else"),
            META,
            {"provenance"},
            id="transcript-without-the-prompt",
        ),
        pytest.param(
            subagent(),
            json.dumps({"toolUseId": "tu1", "spawnDepth": 2}).encode(),
            {"delegation", "provenance"},
            id="meta-depth-2",
        ),
    ],
)
def test_subagent_transcript_must_show_the_work(
    sub: bytes | None, meta: bytes, expected: set[str]
) -> None:
    parent = _lines(assistant("m1", spawn()), launched(), notice_record(), WRITE)
    assert failed(score(parent, sub, meta=meta)) == expected


def test_wrong_name_fails_delegation() -> None:
    parent = _lines(assistant("m1", spawn("helper-1")), launched(), notice_record(), WRITE)
    assert failed(score(parent, subagent())) == {"delegation", "provenance"}


def test_split_message_usage_counted_once() -> None:
    parent = _lines(
        assistant("m1", {"type": "text", "text": "go"}),
        assistant("m1", spawn()),
        launched(),
        notice_record(),
        WRITE,
    )
    parsed = parse_parent_transcript(io.BytesIO(parent))
    assert (parsed.usage.assistant_messages, parsed.usage.tokens) == (2, 30)


def test_stream_two_results_and_subagent_events() -> None:
    init = {"type": "system", "subtype": "init", "session_id": SID}
    parent_msg = {
        "type": "assistant",
        "parent_tool_use_id": None,
        "message": assistant("m1")["message"],
    }
    child_msg = {
        "type": "assistant",
        "parent_tool_use_id": "tu1",
        "message": assistant("c1")["message"],
    }
    result = {"type": "result", "subtype": "success", "usage": {"input_tokens": 10}}
    raw = _lines(init, parent_msg, parent_msg, child_msg, result, init, result, "not json")
    parsed = parse_stream(io.BytesIO(raw))
    assert (parsed.events, parsed.usage.assistant_messages, parsed.malformed_lines) == (7, 1, 1)


def test_malformed_lines_are_counted_never_fatal() -> None:
    parent = _lines(assistant("m1", spawn()), "{torn", launched(), notice_record(), WRITE, "[]")
    result = score(parent, subagent() + b"\x00garbage\n")
    assert result.resolved
    assert (result.transcript_malformed_lines, result.child_session_malformed_lines) == (2, 1)


def test_the_last_result_is_the_runs_usage_and_work_after_it_cuts_it_short() -> None:
    def result(inp: int, out: int, cost: float) -> dict:
        usage = {"inputTokens": inp, "outputTokens": out, "cacheReadInputTokens": 7,
                 "cacheCreationInputTokens": 3, "thinkingTokens": 2}  # fmt: skip
        return {"type": "result", "modelUsage": {"m": usage}, "total_cost_usd": cost}

    msg = {"type": "assistant", "parent_tool_use_id": None, "message": assistant("m1")["message"]}
    done = parse_stream(io.BytesIO(_lines(msg, result(10, 1, 0.1), result(50, 5, 0.5))))
    assert done.reported is not None and not done.cut_short
    assert done.reported.total.total == 65 and done.reported.cost_usd == 0.5
    assert done.reported.total.reasoning_tokens == 2
    after = parse_stream(io.BytesIO(_lines(msg, result(10, 1, 0.1), msg)))
    assert after.cut_short
    bad = {"type": "result", "modelUsage": {"m": {"inputTokens": "x"}}}
    assert parse_stream(io.BytesIO(_lines(bad))).malformed_lines == 1
    none = parse_stream(io.BytesIO(_lines(msg)))
    assert none.reported is None and none.cut_short
