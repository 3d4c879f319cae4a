"""Provider faults: how a failed request is named, what prime-agent's files show of them,
and the rule that tells a run the provider ended from one the agent failed."""

from __future__ import annotations

import pytest
from scorer_builders import (
    ANSWERS,
    CORRECT_ARTIFACT,
    MANIFEST,
    WORKERS,
    Run,
    Stream,
    child_session,
    honest_run,
)

from scorers import assess_evidence
from scorers.faults import classify, fault_from_error
from scorers.prime_agent import collect_evidence
from scorers.provider import ProviderFaults

OVERLOADED = '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        pytest.param(429, "", "rate_limited", id="429"),
        pytest.param(None, "429 Too Many Requests", "rate_limited", id="429-in-words"),
        pytest.param(None, "Rate limited: too many requests", "rate_limited", id="rate-words"),
        pytest.param(529, "", "overloaded", id="529"),
        pytest.param(
            None,
            "API Error: 529 Overloaded. This is a server-side issue",
            "overloaded",
            id="cc-529",
        ),
        pytest.param(None, "AI_APICallError: Overloaded", "overloaded", id="oc-overloaded"),
        pytest.param(500, "", "server_error", id="500"),
        pytest.param(503, "", "server_error", id="503"),
        pytest.param(None, "APIError 502: bad gateway", "server_error", id="502-in-words"),
        pytest.param(401, "", "auth", id="401"),
        pytest.param(None, "401 Unauthorized: invalid x-api-key", "auth", id="401-in-words"),
        pytest.param(400, "", "invalid_request", id="400"),
        pytest.param(None, "Request timed out.", "timeout", id="timeout"),
        pytest.param(None, "Connection error.", "connection", id="connection"),
        pytest.param(
            None, "Cannot connect to API: connect ECONNREFUSED", "unreachable", id="refused"
        ),
        pytest.param(
            None,
            "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)",
            "unreachable",
            id="cc-dns",
        ),
        pytest.param(None, "getaddrinfo EAI_AGAIN api.example", "unreachable", id="getaddrinfo"),
        pytest.param(None, "fetch failed", "connection", id="fetch-failed"),
        pytest.param(
            None,
            "Cannot connect to API: The socket connection was closed unexpectedly",
            "stream_cut",
            id="closed-mid-flight",
        ),
        pytest.param(None, "terminated", "stream_cut", id="terminated"),
        pytest.param(None, "stream disconnected before completion", "stream_cut", id="stream"),
        # A Gemini API route names a stream; a refusal quoting it is not a cut stream.
        pytest.param(
            None,
            "no route /v1/v1beta/models/m:streamGenerateContent?alt=sse (not_found)",
            "invalid_request",
            id="route-names-a-stream",
        ),
        pytest.param(None, "boom", "unknown", id="unknown"),
    ],
)
def test_a_failed_request_is_named_by_its_status_else_its_words(
    status: int | None, text: str, kind: str
) -> None:
    assert classify(status, text) == kind


def test_a_fault_keeps_the_status_its_message_opens_with() -> None:
    fault = fault_from_error("parent", "529 Overloaded")
    assert (fault.status, fault.kind, fault.retried) == (529, "overloaded", False)


def _faults(run: Run) -> tuple[bool, ProviderFaults]:
    score, faults = assess_evidence(collect_evidence(run.artifacts()), MANIFEST)
    return score.resolved, faults


def test_a_healthy_run_has_no_faults() -> None:
    resolved, faults = _faults(honest_run())
    assert resolved and faults == ProviderFaults()


def test_faults_the_agent_got_past_are_counted_and_the_run_stays_resolved() -> None:
    """``recovers``: each child's first try refused, retried, answered. Counted (the
    agent's recovery is orchestration quality), never an error."""
    run = honest_run()
    run.children = []
    for worker in WORKERS:
        data = child_session(f"sub-{worker}", stops=("error", "toolUse", "stop"))
        run.present(f"sub-{worker}", data=data)
    resolved, faults = _faults(run)
    assert resolved
    assert faults.failed_requests == 3 and faults.by_kind == {"unknown": 3}
    assert all(f.retried for f in faults.evidence) and faults.gave_up is None


def _parent_gives_up(error: str, tries: int = 3) -> Run:
    """The children reported; the parent's request that would write the answer failed
    ``tries`` times with ``error``, then the turn ended: no artifact."""
    run = honest_run()
    run.artifact = None
    for _ in range(tries):
        run.stream.assistant(0, stop="error", error=error)  # type: ignore[union-attr]
    return run


def test_a_parent_whose_last_call_failed_at_the_provider_lost_to_the_provider() -> None:
    resolved, faults = _faults(_parent_gives_up(OVERLOADED, tries=4))
    assert not resolved
    assert faults.by_kind == {"overloaded": 4}
    assert faults.gave_up == "provider: 529 overloaded ×4 in the parent, gave up"
    assert [f.retried for f in faults.evidence] == [True, True, True, False]


def test_a_request_the_provider_refuses_stays_the_agents() -> None:
    """A request the provider refuses as malformed is the agent's doing, not a passing
    throttle: the harness does not retry it as if it were."""
    resolved, faults = _faults(_parent_gives_up("400 Bad Request: prompt is too long"))
    assert not resolved and faults.failed_requests == 3 and faults.gave_up is None


def test_refused_credentials_are_not_a_provider_error_to_retry() -> None:
    """A wrong key is no passing throttle: never "lost to the provider" (which the harness
    retries); a run that never reached the model for it is an infrastructure error of its
    own ("model never reached: authentication failed"), which stops the run at once."""
    resolved, faults = _faults(_parent_gives_up("401 Unauthorized: invalid x-api-key"))
    assert not resolved and faults.failed_requests == 3 and faults.gave_up is None


def test_a_failed_turn_followed_by_one_that_succeeded_is_not_giving_up() -> None:
    """The last call is what counts: a parent that failed once, then did its work badly
    with a healthy provider, failed on its own."""
    run = honest_run()
    run.stream = Stream().assistant(0, stop="error", error=OVERLOADED)
    for _ in WORKERS:
        run.stream.assistant(1000)
    run.stream.assistant(500, stop="stop")
    run.artifact = CORRECT_ARTIFACT.replace("3 words", "4 words")  # its own mistake
    resolved, faults = _faults(run)
    assert not resolved and faults.failed_requests == 1 and faults.gave_up is None


def _lost_child(wrong_elsewhere: bool = False) -> Run:
    """The first child's every try failed (529): the parent went on and left its shard
    out (``wrong_elsewhere``: and got another shard wrong on its own)."""
    run = honest_run()
    run.children = []
    first, *rest = WORKERS
    run.present(f"sub-{first}", data=child_session(f"sub-{first}", stops=("error",) * 3))
    run.present(*(f"sub-{w}" for w in rest))
    lines = [line for line in CORRECT_ARTIFACT.splitlines(keepends=True) if "shard-a" not in line]
    text = "".join(lines)
    run.artifact = text.replace("5 words", "9 words") if wrong_elsewhere else text
    return run


def test_children_lost_to_the_provider_that_explain_every_failure_lose_the_run_to_it() -> None:
    resolved, faults = _faults(_lost_child())
    assert not resolved
    assert faults.gave_up is not None and faults.gave_up.startswith("provider: ")
    assert "in 1 child (worker-shard-a)" in faults.gave_up
    assert "the parent went on without their shards" in faults.gave_up


def test_a_failure_the_lost_children_do_not_explain_stays_the_agents() -> None:
    resolved, faults = _faults(_lost_child(wrong_elsewhere=True))
    assert not resolved and faults.failed_requests == 3 and faults.gave_up is None


def test_an_aborted_request_with_no_usage_is_no_fault_but_makes_the_usage_a_lower_bound() -> None:
    """Teardown's abort is the agent's own doing, not the provider's; but a billed request
    may hide behind it (``real-runs/billed-early-exit-undercount``)."""
    run = honest_run()
    run.stream.assistant(0, stop="aborted", error="Request was aborted")  # type: ignore[union-attr]
    score, faults = assess_evidence(collect_evidence(run.artifacts()), MANIFEST)
    assert faults.failed_requests == 0
    assert score.usage is not None and not score.usage.complete
    assert score.usage.gaps == (
        "1 model request ended mid-answer or aborted with no usage recorded "
        "(the provider may have billed them)",
    )


def test_a_refusal_with_a_status_billed_nothing_and_leaves_the_usage_whole() -> None:
    run = honest_run()
    run.stream = Stream().assistant(0, stop="error", error=OVERLOADED)
    for _ in WORKERS:
        run.stream.assistant(1000)
    run.stream.assistant(500, stop="stop")
    score, faults = assess_evidence(collect_evidence(run.artifacts()), MANIFEST)
    assert score.resolved and faults.failed_requests == 1
    assert score.usage is not None and score.usage.complete


def test_answers_are_unchanged_by_the_faults() -> None:
    """The rubric's verdicts are the same with or without faults: they are reported beside
    it, never inside it."""
    assert ANSWERS  # the builders' answers are what the honest run reports
    plain = honest_run().score()
    run = honest_run()
    run.children = []
    for worker in WORKERS:
        run.present(
            f"sub-{worker}", data=child_session(f"sub-{worker}", stops=("error", "toolUse", "stop"))
        )
    assert run.score().checks == plain.checks
