"""Provider faults in Claude Code's files: captured real runs under a fault plan, and one
synthetic transcript per fact (``../shared/agents/claude-code-faults.md``)."""

from __future__ import annotations

import io
import json
from typing import Any

from test_cc_captures import MANIFEST, RUNS, capture_artifacts

from scorers import assess_evidence
from scorers.claude_code import ClaudeCodeArtifacts, SubagentFile, collect_evidence

SID = "s-1"


def assess(artifacts: ClaudeCodeArtifacts):  # type: ignore[no-untyped-def]
    return assess_evidence(collect_evidence(artifacts), MANIFEST)


def test_a_retried_529_per_subagent_is_counted_and_the_run_resolves() -> None:
    """``child-529-first``: each subagent's first request got 529 and was retried (a second
    api-request record with the same digest). Three faults, resolved; the one foreground
    subagent's retry is named by stream-json, the background ones' cause is on no file,
    so the usage is flagged a lower bound although it equals the bill here."""
    score, faults = assess(capture_artifacts(RUNS / "child-529-first"))
    assert score.resolved
    assert faults.failed_requests == 3 and faults.gave_up is None
    assert faults.by_kind == {"overloaded": 1, "unknown": 2}
    assert {f.session for f in faults.evidence} == {
        "a12e508ace3499961",
        "a1c23758903e84fe9",
        "a2c5879695f7e736a",
    }
    assert all(f.retried for f in faults.evidence)
    assert score.tokens_used == 90_189  # what the server billed (HOW.txt)
    assert score.usage is not None and not score.usage.complete
    assert score.usage.gaps == (
        "2 model requests ended mid-answer or aborted with no usage recorded "
        "(the provider may have billed them)",
    )


def test_a_parent_that_failed_fast_after_its_children_reported_lost_to_the_provider() -> None:
    """``parent-500-after-spawn``: the request that would write the index got 500 with
    ``x-should-retry: false``; the client did not retry, its last result is an API error,
    no index. Unresolved, but the provider's doing: ``provider: ...``."""
    score, faults = assess(capture_artifacts(RUNS / "parent-500-after-spawn"))
    assert not score.resolved and score.failed_criteria == ("coverage", "provenance")
    assert faults.failed_requests == 1 and faults.by_kind == {"server_error": 1}
    (fault,) = faults.evidence
    assert (fault.session, fault.status, fault.retried) == ("parent", 500, False)
    assert fault.message.startswith("API Error: 500 Internal server error (scripted fault)")
    assert faults.gave_up == "provider: 500 server error ×1 in the parent, gave up"
    assert score.tokens_used == 60_857 and score.usage is not None and score.usage.complete


def test_the_captures_without_faults_have_none() -> None:
    for name in ("honest", "no-spawn", "double-spawn"):
        _, faults = assess(capture_artifacts(RUNS / name))
        assert faults.failed_requests == 0, name


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in records)


def _request(rid: str, digest: str, base: str | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "type": "api-request",
        "sessionId": SID,
        "id": rid,
        "requestDigest": digest,
        "base": base,
        **extra,
    }


def _assistant(mid: str, text: str = "ok", **extra: Any) -> dict[str, Any]:
    message = {
        "id": mid,
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    return {"type": "assistant", "sessionId": SID, "message": message, **extra}


def _api_error(text: str, status: int) -> dict[str, Any]:
    record = _assistant(
        "err-1", text, isApiErrorMessage=True, apiErrorStatus=status, error="server_error"
    )
    record["message"]["usage"] = {"input_tokens": 0, "output_tokens": 0}
    return record


def _artifacts(parent: bytes, stdout: bytes = b"") -> ClaudeCodeArtifacts:
    return ClaudeCodeArtifacts(
        SID, lambda: io.BytesIO(parent), (lambda: io.BytesIO(stdout)) if stdout else None
    )


def test_retried_failures_are_requests_beyond_one_per_digest_named_by_the_stream() -> None:
    """Two wire attempts of one request and three of another: three failures, two named
    by the parent's ``system/api_retry`` events (529 and a cut stream), one not."""
    parent = _lines(
        _request("r1", "d1"),
        _request("r2", "d1", "r1"),
        _assistant("m1"),
        _request("r3", "d2", "r2"),
        _request("r4", "d2", "r3"),
        _request("r5", "d2", "r4"),
        _assistant("m2"),
        _request("x1", "dx", agentId="a-sub"),  # a subagent's request copied here: not ours
    )
    stdout = _lines(
        {
            "type": "system",
            "subtype": "api_retry",
            "attempt": 1,
            "error_status": 529,
            "error": "overloaded",
        },
        {
            "type": "system",
            "subtype": "api_retry",
            "attempt": 1,
            "error_status": None,
            "error": "unknown",
        },
    )
    evidence = collect_evidence(_artifacts(parent, stdout))
    faults = evidence.session.usage.faults if evidence.session else ()
    assert [(f.kind, f.status, f.retried) for f in faults] == [
        ("overloaded", 529, True),
        ("unknown", None, True),
        ("unknown", None, True),
    ]
    assert evidence.session is not None and evidence.session.usage.unseen_calls == 2


def test_an_unretried_failure_is_the_synthetic_api_error_message() -> None:
    parent = _lines(_request("r1", "d1"), _api_error("API Error: 529 Overloaded. Try again.", 529))
    evidence = collect_evidence(_artifacts(parent))
    assert evidence.session is not None
    (fault,) = evidence.session.usage.faults
    assert (fault.kind, fault.status, fault.retried) == ("overloaded", 529, False)
    assert evidence.session.usage.ended_in_fault


def test_a_failed_turn_followed_by_a_successful_one_did_not_end_in_a_fault() -> None:
    """The last ``result`` decides: a late notification started a turn that succeeded."""
    parent = _lines(
        _request("r1", "d1"),
        _api_error("API Error: 500 Internal server error", 500),
        _request("r2", "d2"),
        _assistant("m2"),
    )
    failed = {
        "type": "result",
        "is_error": True,
        "terminal_reason": "api_error",
        "api_error_status": 500,
        "modelUsage": {},
    }
    ok = {"type": "result", "is_error": False, "terminal_reason": "completed", "modelUsage": {}}
    stdout = _lines(failed, ok)
    evidence = collect_evidence(_artifacts(parent, stdout))
    assert evidence.session is not None and not evidence.session.usage.ended_in_fault
    assert evidence.stream is not None and evidence.stream.final_fault is None
    stdout = _lines(ok, failed)
    evidence = collect_evidence(_artifacts(parent, stdout))
    assert evidence.session is not None and evidence.session.usage.ended_in_fault


def test_a_subagents_retries_are_its_own() -> None:
    sub = _lines(
        {**_request("s1", "e1"), "agentId": "ag1"},
        {**_request("s2", "e1", "s1"), "agentId": "ag1"},
        {**_assistant("sm1", "ANSWER::a.txt::7"), "agentId": "ag1"},
    )
    stdout = _lines(
        {
            "type": "tool_progress",
            "subagent_retry": {
                "agent_id": "ag1",
                "attempt": 1,
                "error_status": 429,
                "error_category": "rate_limit",
            },
        }
    )
    artifacts = ClaudeCodeArtifacts(
        SID,
        lambda: io.BytesIO(_lines(_request("r1", "d1"), _assistant("m1"))),
        lambda: io.BytesIO(stdout),
        None,
        (SubagentFile(SID, "ag1", lambda: io.BytesIO(sub)),),
    )
    evidence = collect_evidence(artifacts)
    (child,) = evidence.child_sessions
    assert [(f.session, f.kind, f.status) for f in child.faults] == [("ag1", "rate_limited", 429)]
    assert child.unseen_calls == 0 and not child.ended_in_fault


def test_an_endpoint_nobody_can_reach_is_the_providers_and_quoted_in_the_clients_words() -> None:
    """``claude-code-unreachable/dns`` and ``/refused``: Claude Code against a name that
    does not resolve and a port where nothing listens (apart from ``claude-code-runs``: no
    model ever answered them). The run is lost to the provider (kept out
    of the rates), of a kind no retry gets past, and its error quotes the client's words
    (they were never shown: the user read "connection failed" and minutes of silence)."""
    for name, words in (
        ("dns", "Can't reach the API server — check your internet or DNS (ENOTFOUND)"),
        ("refused", "Connection refused — a firewall or proxy may be blocking it"),
    ):
        score, faults = assess(capture_artifacts(RUNS.parent / "claude-code-unreachable" / name))
        assert not score.resolved
        assert faults.gave_up is not None and faults.gave_up.startswith(
            "provider: endpoint unreachable ×1 in the parent, gave up ("
        ), faults.gave_up
        assert words in faults.gave_up
        final = [f for f in faults.evidence if not f.retried]
        assert [f.kind for f in final] == ["unreachable"]
