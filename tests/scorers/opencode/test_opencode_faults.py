"""Provider faults in opencode's files: the database keeps a request's last failure, the
client's log every failed attempt (``stream error`` lines)."""

from __future__ import annotations

import dataclasses
import io

import pytest
from oc_runs import MANIFEST, inputs, query

from scorers import assess_evidence
from scorers.opencode import opencode_evidence
from scorers.opencode.log import parse_log
from scorers.opencode.usage import retry_after

LINE = (
    'timestamp=2026-12-02T03:05:11.088Z level=ERROR run=991cf81b message="stream error" '
    "providerID=scripted modelID=honest session.id={sid} small=false agent=general "
    'mode=subagent error.error="AI_APICallError: {text}"\n'
)


def _log(sid: str, text: str, count: int) -> bytes:
    other = 'timestamp=x level=WARN message="background dependency install failed"\n'
    return (other + LINE.format(sid=sid, text=text) * count).encode()


def test_the_log_parser_reads_stream_errors_and_nothing_else() -> None:
    data = _log("ses_a", 'Overloaded \\"scripted\\"', 2) + b"garbage \xff line\n"
    errors = parse_log(io.BytesIO(data))
    assert [(e.session, e.text) for e in errors] == [
        ("ses_a", 'AI_APICallError: Overloaded "scripted"'),
        ("ses_a", 'AI_APICallError: Overloaded "scripted"'),
    ]
    assert errors[0].at == "2026-12-02T03:05:11.088Z"


def _child(run: str) -> str:
    ((sid,),) = query(run, "SELECT id FROM session WHERE title LIKE 'worker-events-01%'")
    return str(sid)


def _root(run: str) -> str:
    ((sid,),) = query(run, "SELECT id FROM session WHERE parent_id IS NULL")
    return str(sid)


def _assess(run: str, log: bytes | None):  # type: ignore[no-untyped-def]
    files = inputs(run)
    if log is not None:
        files = dataclasses.replace(files, log=lambda: io.BytesIO(log))
    return assess_evidence(opencode_evidence(files), MANIFEST)


def test_a_child_lost_after_five_retries_is_six_faults_and_the_providers_doing() -> None:
    """``child-500``: child 1's request got 500 six times (1 + 5 retries, ~70 s); the
    database keeps the last, the log all six. The parent went on without events-01."""
    run = "child-500"
    score, faults = _assess(run, _log(_child(run), "scripted failure 500", 6))
    assert score.failed_criteria == ("coverage", "provenance")
    assert faults.failed_requests == 6 and faults.by_kind == {"server_error": 6}
    assert [f.retried for f in faults.evidence] == [True] * 5 + [False]
    assert faults.evidence[-1].status == 500  # the database's record keeps the status
    assert faults.gave_up == (
        "provider: 500 server error ×6 in 1 child (worker-events-01), gave up; "
        "the parent went on without their shards"
    )


def test_without_the_log_only_the_last_failure_is_known() -> None:
    _, faults = _assess("child-500", None)
    assert faults.failed_requests == 1 and faults.gave_up is not None


@pytest.mark.parametrize(
    ("run", "gave_up"),
    [
        pytest.param("root-500", "provider: 500 server error ×1 in the parent, gave up", id="500"),
        pytest.param(
            "dead-server", "provider: connection failed ×1 in the parent, gave up", id="dead-server"
        ),
        pytest.param("root-401", None, id="401-is-not-the-providers-mood"),
    ],
)
def test_a_root_that_never_got_an_answer(run: str, gave_up: str | None) -> None:
    score, faults = _assess(run, None)
    assert not score.model_reached
    assert faults.failed_requests == 1 and faults.gave_up == gave_up


def test_retries_the_agent_got_past_leave_the_run_resolved() -> None:
    run = "honest"
    score, faults = _assess(run, _log(_root(run), "Overloaded", 2))
    assert score.resolved
    assert faults.failed_requests == 2 and faults.by_kind == {"overloaded": 2}
    assert faults.gave_up is None and all(f.retried for f in faults.evidence)


def test_a_background_child_aborted_with_no_tokens_is_no_fault() -> None:
    """``background``: ``run`` exited and aborted the children (``MessageAbortedError``):
    the agent's own doing, not the provider's."""
    _, faults = _assess("background", None)
    assert faults.failed_requests == 0


@pytest.mark.parametrize(
    ("headers", "wait"),
    [
        pytest.param({"retry-after": "3"}, 3.0, id="seconds"),
        pytest.param({"retry-after-ms": "1500", "retry-after": "9"}, 1.5, id="ms-first"),
        pytest.param({"retry-after": "Wed, 21 Oct 2026 07:28:00 GMT"}, None, id="date-not-read"),
        pytest.param({}, None, id="none"),
    ],
)
def test_the_wait_a_provider_asked_for(headers: dict[str, str], wait: float | None) -> None:
    assert retry_after(headers) == wait
