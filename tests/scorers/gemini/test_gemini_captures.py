"""The Gemini CLI scorer over real 0.61.0 captures (tests/data/gemini-runs): honest runs
resolve, every failure shape of an ``invoke_agent`` call maps to its receipt, usage is
what the client counted plus the thinking tokens it leaves out, edits are traced."""

from __future__ import annotations

import json

import pytest
from gm_runs import RUNS, inputs_of, manifest

from scorers.gemini import gemini_evidence, read_run, score_gemini
from scorers.gemini.evidence import UNSTARTED_PREFIX
from scorers.records import TokenUsage
from scorers.tokens import NO_TOKENS


def result_stats(run: str) -> dict[str, int]:
    lines = (RUNS / run / "stdout.jsonl").read_text().splitlines()
    return json.loads(lines[-1])["stats"]


@pytest.mark.parametrize(
    ("run", "model"), [("json-honest", "scripted-honest"), ("honest", "scripted-honest")]
)
def test_an_honest_run_resolves(run: str, model: str) -> None:
    score = score_gemini(inputs_of(RUNS / run, model), manifest(2))
    assert [c.name for c in score.checks if not c.passed] == []
    assert score.model_reached
    assert score.usage.complete
    assert score.usage.parent is not None and score.usage.children is not None
    assert score.efficiency.depth1_spawns == 2


def test_honest_spawns_carry_worker_names_and_replies_the_childs_own_result() -> None:
    evidence = gemini_evidence(inputs_of(RUNS / "honest"))
    assert evidence.session is not None
    spawns = evidence.depth1_spawns()
    assert [s.name for s in spawns] == ["w1", "w2"]
    assert {r.sender_session_id for r in evidence.session.replies} == {s.child_id for s in spawns}
    assert sorted(r.text for r in evidence.session.replies) == [
        "ANSWER::s1.txt::42",
        "ANSWER::s2.txt::42",
    ]
    sid = evidence.session.header_id
    for child in evidence.child_sessions:
        assert child.depth == 1 and child.parent_session == sid and child.worked
        assert child.tasks == frozenset({(sid, child.child_id)})


@pytest.mark.parametrize("run", ["honest", "edit-failures"])
def test_usage_is_the_clients_count_with_thinking_billed_as_output(run: str) -> None:
    """The client's own stats count input with its cached part and output without the
    thinking tokens (7 per response here); the bill is fresh input, cache reads, and
    output with thinking."""
    evidence = gemini_evidence(inputs_of(RUNS / run))
    assert evidence.session is not None
    total = evidence.session.usage.usage + evidence.session.child_usage
    stats = result_stats(run)
    responses = sum(
        1
        for path in (RUNS / run / "gemini-home" / "chats").rglob("*.jsonl")
        for m in {
            json.loads(line)["id"]: 1
            for line in path.read_text().splitlines()
            if '"type": "gemini"' in line or '"type":"gemini"' in line
        }
    )
    assert total.input_tokens == stats["input"]
    assert total.cache_read_tokens == stats["cached"]
    assert total.output_tokens == stats["output_tokens"] + 7 * responses
    assert total.reasoning_tokens == 7 * responses


def test_usage_per_thread_adds_up_and_names_the_model_asked() -> None:
    run = read_run(inputs_of(RUNS / "edit-failures", "scripted-failures"))
    evidence = gemini_evidence(inputs_of(RUNS / "edit-failures"))
    assert evidence.session is not None
    children = sum((c.usage for c in evidence.child_sessions), NO_TOKENS)
    assert children == evidence.session.child_usage
    ((model, usage),) = run.by_model()
    assert model == "scripted-failures"
    assert usage == evidence.session.usage.usage + children
    # The server said scripted-other for some responses; the record names what was asked.
    assert run.other_models() == ()


def test_failure_shapes_map_to_their_receipts() -> None:
    evidence = gemini_evidence(inputs_of(RUNS / "edit-failures"))
    session = evidence.session
    assert session is not None
    spawns = evidence.depth1_spawns()
    # not found starts nothing: four edges of five calls, the duplicate kept.
    assert [s.name for s in spawns] == ["w1", "w2", "w3", "w1"]
    by_name = {s.name: s.child_id for s in spawns}
    notices = {n.child_id: n for n in session.notices}
    assert "failed. Error:" in notices[by_name["w2"]].text
    assert "ERROR_NO_COMPLETE_TASK_CALL" in notices[by_name["w3"]].text
    (unstarted,) = [n for n in notices if n.startswith(UNSTARTED_PREFIX)]
    assert notices[unstarted].text == "Subagent 'no-such-agent' not found."
    assert all(n.kind == "failure" for n in notices.values())
    w1 = [s.child_id for s in spawns if s.name == "w1"]
    assert {r.sender_session_id for r in session.replies} == set(w1)


def test_a_child_whose_request_was_refused_carries_the_providers_fault() -> None:
    evidence = gemini_evidence(inputs_of(RUNS / "edit-failures"))
    w2 = next(s.child_id for s in evidence.depth1_spawns() if s.name == "w2")
    child = next(c for c in evidence.child_sessions if c.child_id == w2)
    (fault,) = child.faults
    assert (fault.kind, fault.status, fault.retried) == ("invalid_request", 400, False)
    assert not child.worked  # its record's messages were replaced by nothing
    assert not child.ended_in_fault  # a refused request is not the provider's passing mood


def test_failures_fail_dedup_and_provenance_not_receipts() -> None:
    score = score_gemini(inputs_of(RUNS / "edit-failures"), manifest(3))
    failing = {c.name for c in score.checks if not c.passed}
    assert failing == {"dedup", "provenance"}


def test_edits_of_children_and_parent_are_traced_repo_relative() -> None:
    evidence = gemini_evidence(inputs_of(RUNS / "edit-failures"))
    w1 = [s.child_id for s in evidence.depth1_spawns() if s.name == "w1"]
    writes = [(w.child_id, w.path, w.how, w.exact) for w in evidence.writes]
    assert writes[0] == (None, "ANSWERS.md", "write", True)
    for child in w1:
        assert (child, "src/mod1.py", "edit", True) in writes  # absolute file_path
        assert (child, "notes/w1.txt", "write", True) in writes  # relative file_path
    edit = next(w for w in evidence.writes if w.how == "edit")
    assert (edit.old, edit.new) == ("VALUE = 0", "VALUE = 42")


def test_a_parent_whose_request_was_refused_never_reached_the_model() -> None:
    score = score_gemini(inputs_of(RUNS / "parent-400"), manifest(2))
    assert not score.model_reached
    assert score.agent_error is not None and "400" in score.agent_error
    evidence = gemini_evidence(inputs_of(RUNS / "parent-400"))
    assert evidence.stream is not None and evidence.stream.final_fault is not None
    assert evidence.stream.final_fault.status == 400
    assert evidence.session is not None and evidence.session.usage.usage == TokenUsage()
