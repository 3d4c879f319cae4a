"""The Codex trajectory builder over the captured runs (tests/data/codex-runs, both
multi-agent protocols): its threads are the evidence's, its spawn links the parent's own
``spawn_agent`` calls, each result sits on its call's turn, and each thread's turns bill
what the scorer tallied for it; written as ATIF, each reads back to its verdict. Plus the
rollout shapes the captures lack (reasoning, a model name, broken lines, a response billed
twice, a usage record that comes late)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from exportkit import exports_and_reads_back, results_on_their_calls

from harness.agents.codex import CodexAdapter
from harness.agents.codex.trajectory import build_swarm, read_rollout
from harness.model.trajectory import Swarm, Thread
from scorers.records import RunEvidence
from scorers.tokens import NO_TOKENS, TokenUsage
from scorers.types import Manifest

DATA = Path(__file__).resolve().parents[2] / "data"
RUNS = DATA / "codex-runs"
MANIFEST = Manifest.from_dict(json.loads((DATA / "fixtures" / "tiny" / "fixture.json").read_text()))
ALL_RUNS = sorted(p.name for p in RUNS.iterdir() if p.is_dir())
#: The captures in which the parent spawned no child.
NO_SPAWN = frozenset({"v1-no-spawn", "v2-no-spawn"})


@functools.cache
def built(run: str) -> tuple[RunEvidence, Swarm]:
    evidence = CodexAdapter().evidence(RUNS / run, {}, MANIFEST)
    return evidence, build_swarm(RUNS / run, {}, evidence)


def usage_of(thread: Thread) -> TokenUsage:
    return sum((t.usage for t in thread.turns if t.usage is not None), NO_TOKENS)


@pytest.mark.parametrize("run", ALL_RUNS)
def test_every_child_session_is_one_thread(run: str) -> None:
    evidence, swarm = built(run)
    assert evidence.session is not None
    assert swarm.parent.thread_id == evidence.session.header_id
    assert bool(evidence.child_sessions) is (run not in NO_SPAWN)
    ids = [t.thread_id for t in swarm.children]
    assert sorted(ids) == sorted(c.child_id for c in evidence.child_sessions)
    assert all(t.label for t in swarm.children)  # Codex nicknames every child


@pytest.mark.parametrize("run", ALL_RUNS)
def test_each_spawn_links_to_the_parents_spawn_agent_call(run: str) -> None:
    evidence, swarm = built(run)
    calls = {c.call_id: c for t in swarm.parent.turns for c in t.calls}
    sessions = {c.child_id for c in evidence.child_sessions}
    spawns = [e for e in evidence.depth1_spawns() if e.child_id in sessions]
    assert bool(spawns) is (run not in NO_SPAWN)
    for spawn in spawns:
        call = calls[swarm.spawned_by[spawn.child_id]]
        assert call.name == "spawn_agent"
    assert len(set(swarm.spawned_by.values())) == len(swarm.spawned_by)  # one call, one child


@pytest.mark.parametrize("run", ALL_RUNS)
def test_a_result_sits_on_the_turn_of_its_call(run: str) -> None:
    _, swarm = built(run)
    results = results_on_their_calls(swarm)
    assert results > 0


@pytest.mark.parametrize("run", ALL_RUNS)
def test_each_threads_turns_bill_what_the_scorer_tallied(run: str) -> None:
    evidence, swarm = built(run)
    assert evidence.session is not None
    assert usage_of(swarm.parent) == evidence.session.usage.usage
    assert usage_of(swarm.parent).total > 0
    children = {t.thread_id: t for t in swarm.children}
    for child in evidence.child_sessions:
        assert usage_of(children[child.child_id]) == child.usage
    failed = evidence.session.usage.failed_assistant_messages
    agent_turns = [t for t in swarm.parent.turns if t.source == "agent"]
    assert len(agent_turns) == evidence.session.usage.assistant_messages
    assert sum(t.error is not None for t in agent_turns) == failed


@pytest.mark.parametrize("run", ALL_RUNS)
def test_a_child_starts_with_its_spawn_message(run: str) -> None:
    _, swarm = built(run)
    calls = {c.call_id: c for t in swarm.parent.turns for c in t.calls}
    assert swarm.parent.turns and swarm.parent.turns[0].source == "user"
    for child in swarm.children:
        assert child.turns
        first = child.turns[0]
        message = calls[swarm.spawned_by[child.thread_id]].arguments["message"]
        assert first.source == "user"
        assert message in first.text


@pytest.mark.parametrize("run", ALL_RUNS)
def test_a_run_exports_and_reads_back_to_its_verdict(run: str) -> None:
    evidence, swarm = built(run)
    doc = exports_and_reads_back(evidence, swarm, MANIFEST, "codex", run)
    assert doc["agent"]["version"] == "0.171.0"


def test_a_child_that_failed_ends_in_an_agent_turn_with_the_error() -> None:
    evidence, swarm = built("v1-child-fails")
    failed = [c for c in evidence.child_sessions if c.ended_in_fault or not c.worked]
    assert failed
    children = {t.thread_id: t for t in swarm.children}
    last = children[failed[0].child_id].turns[-1]
    assert last.source == "agent" and last.usage is None
    assert last.error is not None and "scripted failure 400" in last.error


def test_the_parent_hears_its_children_as_user_turns() -> None:
    for run, marker in (("v1-honest", "<subagent_notification>"), ("v2-honest", "FINAL_ANSWER")):
        _, swarm = built(run)
        heard = [t for t in swarm.parent.turns if t.source == "user" and marker in t.text]
        assert len(heard) == len(swarm.children), run
    _, swarm = built("v1-honest")
    assert swarm.agent_version == "0.171.0"


def _line(kind: str, payload: Mapping[str, object], at: str = "2026-01-01T00:00:00.000Z") -> bytes:
    return json.dumps({"timestamp": at, "type": kind, "payload": payload}).encode() + b"\n"


def _usage(rid: str, tokens: int) -> bytes:
    usage = {
        "input_tokens": tokens,
        "cached_input_tokens": tokens // 2,
        "output_tokens": 10,
        "reasoning_output_tokens": 4,
    }
    return _line("token_usage_record", {"response_id": rid, "usage": usage})


def test_a_rollout_reads_past_what_it_cannot_use() -> None:
    data = b"".join(
        [
            _line("session_meta", {"id": "t1", "cli_version": "9.9.9"}),
            b"{not json\n",
            _line("turn_context", {"model": "gpt-test"}),
            _line("response_item", {"type": "message", "role": "user", "content": "task"}),
            _line(
                "response_item",
                {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
            ),
            _line(
                "response_item",
                {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "ls -l"},
            ),
            _usage("r1", 100),
            _usage("r1", 100),  # the same response recorded twice is billed once
            _line(
                "response_item", {"type": "function_call_output", "call_id": "c1", "output": "ok"}
            ),
            _line(
                "response_item", {"type": "function_call_output", "call_id": "zz", "output": "?"}
            ),
            _line("event_msg", {"type": "task_complete", "error": {"message": "boom"}}),
        ]
    )
    read = read_rollout(data)
    assert read.rollout.id == "t1" and read.version == "9.9.9"
    user, agent, orphan, failed = read.turns
    assert (user.source, user.text) == ("user", "task")
    assert agent.model == "gpt-test" and agent.reasoning == "think"
    assert [(c.call_id, dict(c.arguments)) for c in agent.calls] == [("c1", {"input": "ls -l"})]
    assert [(r.call_id, r.content) for r in agent.results] == [("c1", "ok")]
    assert agent.usage == TokenUsage(50, 10, 50, 0, 4)
    assert orphan.source == "system" and orphan.results[0].call_id == "zz"
    assert (failed.source, failed.error, failed.usage) == ("agent", "boom", None)


def test_a_usage_record_that_comes_late_bills_its_own_response() -> None:
    message = {"type": "message", "role": "assistant", "content": [{"text": "done"}]}
    note = {"type": "message", "role": "user", "content": "<subagent_notification>{}"}
    data = b"".join(
        [
            _line("response_item", message),
            _line("response_item", note),  # a message to the model before the record
            _usage("r1", 100),
            _usage("r2", 60),  # a response whose items were not written
        ]
    )
    agent, heard, bare = read_rollout(data).turns
    assert (agent.text, agent.usage) == ("done", TokenUsage(50, 10, 50, 0, 4))
    assert heard.source == "user"
    assert (bare.source, bare.text, bare.usage) == ("agent", "", TokenUsage(30, 10, 30, 0, 4))
