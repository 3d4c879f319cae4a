"""The Gemini CLI trajectory builder over the captured runs (tests/data/gemini-runs): its
threads are the evidence's, its spawn links the parent's own ``invoke_agent`` calls, each
result sits on its call's turn, each thread's turns bill what the scorer tallied for it,
and written as ATIF each reads back to its verdict."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from exportkit import exports_and_reads_back, results_on_their_calls

from harness.agents.gemini.trajectory import build_swarm
from harness.model.trajectory import Swarm, Thread
from scorers.gemini import GeminiInputs, gemini_evidence
from scorers.records import RunEvidence
from scorers.tokens import NO_TOKENS, TokenUsage
from scorers.types import Manifest, Shard

RUNS = Path(__file__).resolve().parents[2] / "data" / "gemini-runs"
ALL_RUNS = sorted(p.name for p in RUNS.iterdir() if p.is_dir())
SPAWNING = [r for r in ALL_RUNS if r != "parent-400"]
MANIFEST = Manifest(
    "gemini-capture",
    "ANSWERS.md",
    tuple(Shard(f"s{k}.txt", f"w{k}", "q", 42) for k in (1, 2, 3)),
)


def inputs_of(run: Path) -> GeminiInputs:
    chats = run / "gemini-home" / "chats"
    stdout, answers = run / "stdout.jsonl", run / "repo" / "ANSWERS.md"
    return GeminiInputs(
        chats=tuple(
            (p.relative_to(chats).as_posix(), lambda p=p: p.open("rb"))
            for p in sorted(chats.rglob("*.jsonl"))
        ),
        stdout=(lambda: stdout.open("rb")) if stdout.is_file() else None,
        artifact=(lambda: answers.open("rb")) if answers.is_file() else None,
        workers=("w1", "w2", "w3"),
    )


@functools.cache
def built(run: str) -> tuple[RunEvidence, Swarm]:
    evidence = gemini_evidence(inputs_of(RUNS / run))
    return evidence, build_swarm(RUNS / run, {}, evidence)


def usage_of(thread: Thread) -> TokenUsage:
    return sum((t.usage for t in thread.turns if t.usage is not None), NO_TOKENS)


@pytest.mark.parametrize("run", ALL_RUNS)
def test_every_child_session_is_one_thread(run: str) -> None:
    evidence, swarm = built(run)
    assert evidence.session is not None
    assert swarm.parent.thread_id == evidence.session.header_id
    assert sorted(t.thread_id for t in swarm.children) == sorted(
        c.child_id for c in evidence.child_sessions
    )
    names = {s.child_id: s.name for s in evidence.depth1_spawns()}
    assert all(t.label == names[t.thread_id] for t in swarm.children)


@pytest.mark.parametrize("run", SPAWNING)
def test_each_spawn_links_to_the_parents_invoke_agent_call(run: str) -> None:
    _, swarm = built(run)
    calls = {c.call_id: c for t in swarm.parent.turns for c in t.calls}
    for child in swarm.children:
        call = calls[swarm.spawned_by[child.thread_id]]
        assert call.name == "invoke_agent"
        first = child.turns[0]
        if first.source == "user":
            assert first.text == call.arguments["prompt"]
        else:  # its record's history was replaced by nothing: only its failure is left
            assert first.error is not None
    assert len(set(swarm.spawned_by.values())) == len(swarm.spawned_by)


@pytest.mark.parametrize("run", SPAWNING)
def test_a_result_sits_on_the_turn_of_its_call(run: str) -> None:
    _, swarm = built(run)
    assert results_on_their_calls(swarm) > 0


@pytest.mark.parametrize("run", ALL_RUNS)
def test_each_threads_turns_bill_what_the_scorer_tallied(run: str) -> None:
    evidence, swarm = built(run)
    assert evidence.session is not None
    assert usage_of(swarm.parent) == evidence.session.usage.usage
    children = {t.thread_id: t for t in swarm.children}
    for child in evidence.child_sessions:
        assert usage_of(children[child.child_id]) == child.usage
    agent_turns = [t for t in swarm.parent.turns if t.source == "agent"]
    assert len(agent_turns) == evidence.session.usage.assistant_messages
    failed = evidence.session.usage.failed_assistant_messages
    assert sum(t.error is not None for t in agent_turns) == failed


def test_a_child_whose_request_was_refused_ends_in_an_agent_turn_with_the_error() -> None:
    evidence, swarm = built("edit-failures")
    w2 = next(s.child_id for s in evidence.depth1_spawns() if s.name == "w2")
    last = next(t for t in swarm.children if t.thread_id == w2).turns[-1]
    assert last.source == "agent" and last.error is not None and "400" in last.error


@pytest.mark.parametrize("run", ALL_RUNS)
def test_a_run_exports_and_reads_back_to_its_verdict(run: str) -> None:
    evidence, swarm = built(run)
    doc = exports_and_reads_back(evidence, swarm, MANIFEST, "gemini", run)
    assert json.dumps(doc)
