"""Score the captured real Codex runs (tests/data/codex-runs), inputs built by hand.

Each run gets the verdict its script calls for under both multi-agent protocols, its tokens
equal what the scripted server billed (in total, and split into the root thread and the
threads below it; a run whose children Codex aborted is marked a lower bound), the faults
it counted are the ones served, and damaged or forged input is counted or caught, never
fatal.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cx_runs import (
    ALL_RUNS,
    MANIFEST,
    RUNS,
    capture,
    dump,
    inputs,
    lines,
    rollouts,
    root_rollout,
)

from scorers import assess_evidence
from scorers.codex import codex_evidence, score_codex
from scorers.score import score_evidence

#: What the scripted server charges per million tokens (scripted_model.server's prices).
PRICES = {"input": 3.0, "output": 15.0, "cache_read": 0.3, "cache_write": 3.75}


def test_both_protocols_have_every_script() -> None:
    scripts = {p: {capture(r)["script"] for r in ALL_RUNS if r.startswith(p)} for p in ("v1", "v2")}
    assert scripts["v1"] == scripts["v2"] and len(scripts["v1"]) == 9, scripts
    assert {capture(r)["codex_version"] for r in ALL_RUNS} == {"0.171.0"}


@pytest.mark.parametrize("run", ALL_RUNS)
def test_capture_gets_its_scripts_verdict(run: str) -> None:
    expected = capture(run)
    score = score_codex(inputs(run), MANIFEST)
    assert score.resolved is (expected["expected_status"] == "resolved"), score.failures
    assert set(score.failed_criteria) == set(expected["expected_failing"]), score.failures


@pytest.mark.parametrize("run", ALL_RUNS)
def test_tokens_and_their_price_are_the_bill(run: str) -> None:
    billed = capture(run)["billed"]
    evidence = codex_evidence(inputs(run))
    score = score_evidence(evidence, MANIFEST)
    usage = score.usage
    assert usage is not None and usage.parent is not None and usage.children is not None
    parent_before, children_before = _earlier_tokens(run)
    earlier = parent_before + children_before
    if capture(run)["script"] == "no-wait":
        # Codex aborted the last children mid-request (the server billed their answers).
        assert not usage.complete and any("ended mid-answer or aborted" in g for g in usage.gaps)
        assert score.tokens_used + earlier < billed["tokens"]
        return
    assert usage.complete, usage.gaps
    assert score.tokens_used + earlier == billed["tokens"]
    assert usage.children.total + children_before == billed["child_tokens"]
    assert usage.parent.total + parent_before == billed["parent_tokens"]
    total = usage.total
    usd = (
        total.input_tokens * PRICES["input"]
        + total.output_tokens * PRICES["output"]
        + total.cache_read_tokens * PRICES["cache_read"]
        + total.cache_write_tokens * PRICES["cache_write"]
    ) / 1e6
    if not earlier:
        assert usd == pytest.approx(billed["usd"], rel=1e-12)
    # Cached input and reasoning are subsets Codex reports inside its totals: counted once.
    assert total.cache_read_tokens > 0 and 0 < (total.reasoning_tokens or 0) < total.output_tokens


def _earlier_tokens(run: str) -> tuple[int, int]:
    """The parent's and the children's tokens in the run's earlier attempts (their bundles
    under attempts/)."""
    parent = children = 0
    for attempt in sorted((RUNS / run / "attempts").glob("*")):
        usage = score_codex(inputs(attempt), MANIFEST).usage
        assert usage is not None and usage.parent is not None and usage.children is not None
        parent += usage.parent.total
        children += usage.children.total
    return parent, children


def test_spawns_carry_the_worker_names_in_both_protocols() -> None:
    for run in ("v1-honest", "v2-honest"):
        evidence = codex_evidence(inputs(run))
        assert sorted(e.name for e in evidence.depth1_spawns()) == sorted(
            s.worker for s in MANIFEST.shards
        ), run
        assert all(s.worked and s.tasks for s in evidence.child_sessions), run


def test_every_end_is_one_receipt_however_often_it_was_heard() -> None:
    """v1: each child's end comes as its wait_agent status and as a notification."""
    root = lines(root_rollout("v1-honest").read_bytes())
    heard = sum(
        "<subagent_notification>" in json.dumps(r) for r in root if r["type"] == "response_item"
    )
    evidence = codex_evidence(inputs("v1-honest"))
    assert evidence.session is not None
    assert heard == 3 and len(evidence.session.replies) == 3
    assert {r.sender_session_id for r in evidence.session.replies} == {
        c.child_id for c in evidence.child_sessions
    }


def test_a_child_refused_by_the_provider_is_a_failure_notice() -> None:
    """v1: the parent hears ``errored``; v2 delivers no final answer for it. Either way the
    child never worked, and its one refused request (a 400: not the provider's mood, so
    not a fault the child gave up on) is counted."""
    for run in ("v1-child-fails", "v2-child-fails"):
        evidence = codex_evidence(inputs(run))
        assert evidence.session is not None
        if run.startswith("v1"):
            (notice,) = evidence.session.notices
            assert notice.kind == "failure"
        (failed,) = [c for c in evidence.child_sessions if c.faults]
        (fault,) = failed.faults
        assert (fault.kind, fault.status, fault.retried) == ("invalid_request", 400, False), run
        assert not failed.worked and not failed.ended_in_fault, run


def test_a_529_on_each_childs_first_request_is_counted_from_the_log() -> None:
    run = "v1-honest-child-529-first"
    assessment = assess_evidence(codex_evidence(inputs(run)), MANIFEST)
    faults = assessment.faults
    assert faults.failed_requests == capture(run)["billed"]["faults_served"] == 3
    assert faults.by_kind == {"overloaded": 3} and faults.gave_up is None
    assert all(f.retried and f.status == 529 for f in faults.evidence)
    # The rollouts alone keep no trace of a request Codex retried and got past.
    assert (
        assess_evidence(codex_evidence(inputs(run, log=False)), MANIFEST).faults.failed_requests
        == 0
    )


def test_a_parent_that_gave_up_on_a_429_is_the_providers_failure() -> None:
    attempt = RUNS / "v1-honest-parent-429-write" / "attempts" / "1"
    said = json.loads((attempt / "harness.json").read_text())
    for log in (True, False):  # the rollout's final error alone says it too
        assessment = assess_evidence(codex_evidence(inputs(attempt, log=log)), MANIFEST)
        assert (
            assessment.faults.gave_up
            == said["error"]
            == "provider: 429 rate limited ×1 in the parent, gave up"
        )
        (fault,) = assessment.faults.evidence
        assert (fault.kind, fault.status, fault.retried) == ("rate_limited", 429, False)


# --- damaged input ---------------------------------------------------------------------


def test_no_rollouts_leave_no_session_and_stdout_counts_the_parent() -> None:
    evidence = codex_evidence(inputs("v1-honest", edit=lambda _p, _b: None))
    assert evidence.session is None and evidence.child_sessions == ()
    assert evidence.stream is not None and evidence.stream.usage.tokens > 0
    score = score_evidence(evidence, MANIFEST)
    assert "delegation" in score.failed_criteria


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda b: b[: len(b) // 2], id="cut-mid-line"),
        pytest.param(lambda b: b.replace(b'{"timestamp"', b"{garbage", 5), id="garbled-lines"),
        pytest.param(lambda b: b"\x00\xff" * 100 + b, id="binary-prefix"),
        pytest.param(lambda b: b"", id="empty"),
    ],
)
def test_a_damaged_root_rollout_is_counted_never_fatal(damage: object) -> None:
    root = root_rollout("v1-honest")
    edited = inputs(
        "v1-honest",
        edit=lambda p, b: damage(b) if p == root else b,  # type: ignore[operator]
    )
    evidence = codex_evidence(edited)
    score = score_evidence(evidence, MANIFEST)
    assert not score.resolved or evidence.session is not None


def test_a_response_recorded_twice_is_billed_once() -> None:
    root = root_rollout("v1-honest")

    def twice(path: Path, data: bytes) -> bytes:
        if path != root:
            return data
        records = lines(data)
        usage = next(r for r in records if r["type"] == "token_usage_record")
        return dump([*records, usage])

    again = score_codex(inputs("v1-honest", edit=twice), MANIFEST)
    assert again.tokens_used == score_codex(inputs("v1-honest"), MANIFEST).tokens_used


# --- forged input ----------------------------------------------------------------------


def _swap_answers(data: bytes) -> bytes:
    """The root's record with the first two children's answers exchanged wherever it heard
    them (wait outputs and notifications): each child's words credited to the other."""
    text = data.decode()
    a, b = "ANSWER::shard-a.txt::3", "ANSWER::shard-b.txt::5"
    return text.replace(a, "\0").replace(b, a).replace("\0", b).encode()


@pytest.mark.parametrize("run", ["v1-honest", "v2-honest"])
def test_a_childs_answer_moved_to_another_child_fails_provenance(run: str) -> None:
    root = root_rollout(run)
    forged = score_codex(
        inputs(run, edit=lambda p, b: _swap_answers(b) if p == root else b), MANIFEST
    )
    assert "provenance" in forged.failed_criteria, forged.failures


@pytest.mark.parametrize("run", ["v1-honest", "v2-honest"])
def test_a_spawn_whose_child_left_no_rollout_fails_delegation(run: str) -> None:
    root = root_rollout(run)
    child = next(p for p in rollouts(RUNS / run) if p != root)
    forged = score_codex(inputs(run, edit=lambda p, b: None if p == child else b), MANIFEST)
    assert "delegation" in forged.failed_criteria, forged.failures


def test_a_refused_spawn_is_no_child() -> None:
    """A spawn Codex refused (its thread limit) starts nobody: not a duplicate, not a child."""
    root = root_rollout("v1-honest")

    def refuse_first(path: Path, data: bytes) -> bytes:
        if path != root:
            return data
        records = lines(data)
        first = next(
            r
            for r in records
            if r["type"] == "response_item" and r["payload"].get("type") == "function_call_output"
        )
        first["payload"]["output"] = "collab spawn failed: agent thread limit reached"
        return dump(records)

    evidence = codex_evidence(inputs("v1-honest", edit=refuse_first))
    assert len(evidence.depth1_spawns()) == 2


def test_a_child_still_running_is_not_heard_from() -> None:
    """A wait that reports children still ``running`` (and no notification) is no receipt."""
    root = root_rollout("v1-honest")

    def running(path: Path, data: bytes) -> bytes | None:
        if path != root:
            return data
        kept = [r for r in lines(data) if "<subagent_notification>" not in json.dumps(r)]
        return dump(kept).replace(b'\\"completed\\"', b'\\"running\\"')

    forged = score_codex(inputs("v1-honest", edit=running), MANIFEST)
    assert "receipts" in forged.failed_criteria, forged.failures
