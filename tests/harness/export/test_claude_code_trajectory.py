"""The Claude Code trajectory builder over the captured real runs
(tests/data/claude-code-runs, laid out as the adapter's bundles): its threads are the
evidence's, its spawn links the parent's own ``Agent`` calls, each result sits on its call's
turn, each thread's turns bill what the scorer tallied for it, and the records of one
message are one turn; written as ATIF, each reads back to its verdict. Plus the transcript
shapes the captures lack (thinking, broken lines, a call input that is no object, a result
of no call, a message with no id, copied subagent records)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from exportkit import exports_and_reads_back, results_on_their_calls

from harness.agents.claude_code import ClaudeCodeAdapter
from harness.agents.claude_code.collect import CONFIG_DIR
from harness.agents.claude_code.trajectory import build_swarm, read_transcript
from harness.model.trajectory import Swarm, Thread
from scorers.claude_code.parent import SPAWN_TOOLS, parse_parent_transcript
from scorers.records import RunEvidence
from scorers.tokens import NO_TOKENS, TokenUsage
from scorers.types import Manifest

DATA = Path(__file__).resolve().parents[2] / "data"
RUNS = DATA / "claude-code-runs"
MANIFEST = Manifest.from_dict(json.loads((DATA / "fixtures" / "tiny" / "fixture.json").read_text()))
ALL_RUNS = sorted(p.name for p in RUNS.iterdir() if p.is_dir())
#: Each capture's bundle, the adapter's evidence from it and the swarm built from both.
Bundles = Mapping[str, tuple[Path, RunEvidence, Swarm]]


def _bundle(run: str, root: Path) -> Path:
    """A capture laid out as the adapter collects an item (its config in ``CONFIG_DIR``)."""
    src, item = RUNS / run, root / run
    shutil.copytree(src / "config", item / CONFIG_DIR)
    if (src / "repo").is_dir():
        shutil.copytree(src / "repo", item / "repo")
    shutil.copy(src / "stdout.jsonl", item / "stdout.jsonl")
    return item


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bundles]:
    root = tmp_path_factory.mktemp("cc-bundles")
    built = {}
    for run in ALL_RUNS:
        item = _bundle(run, root)
        evidence = ClaudeCodeAdapter().evidence(item, {}, MANIFEST)
        built[run] = (item, evidence, build_swarm(item, {}, evidence))
    yield built


def usage_of(thread: Thread) -> TokenUsage:
    return sum((t.usage for t in thread.turns if t.usage is not None), NO_TOKENS)


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _transcripts(item: Path) -> tuple[Path, dict[str, Path]]:
    """The parent transcript of a bundle and its subagents' (agent id -> path)."""
    (project,) = (item / CONFIG_DIR / "projects").iterdir()
    (parent,) = project.glob("*.jsonl")
    subagents = project / parent.stem / "subagents"
    return parent, {
        f.name.removeprefix("agent-").removesuffix(".jsonl"): f
        for f in subagents.glob("agent-*.jsonl")
    }


@pytest.mark.parametrize("run", ALL_RUNS)
def test_every_child_session_is_one_thread(run: str, bundles: Bundles) -> None:
    _, evidence, swarm = bundles[run]
    assert evidence.session is not None
    assert swarm.parent.thread_id == evidence.session.header_id
    assert bool(evidence.child_sessions) is (run != "no-spawn")
    ids = [t.thread_id for t in swarm.children]
    for child in evidence.child_sessions:
        assert ids.count(child.child_id) == 1, child.child_id
    assert len(ids) == len({c.child_id for c in evidence.child_sessions})
    assert all(t.turns and t.label and t.label.startswith("worker-") for t in swarm.children)
    assert swarm.agent_version == "2.1.332"


@pytest.mark.parametrize("run", ALL_RUNS)
def test_each_spawn_links_to_the_parents_agent_call(run: str, bundles: Bundles) -> None:
    _, evidence, swarm = bundles[run]
    calls = {c.call_id: c for t in swarm.parent.turns for c in t.calls}
    sessions = {c.child_id for c in evidence.child_sessions}
    spawns = [e for e in evidence.depth1_spawns() if e.child_id in sessions]
    assert bool(spawns) is (run != "no-spawn")
    for spawn in spawns:
        call = calls[swarm.spawned_by[spawn.child_id]]
        assert call.name in SPAWN_TOOLS
        assert call.arguments["description"] == spawn.name
    assert len(set(swarm.spawned_by.values())) == len(swarm.spawned_by)  # one call, one child


@pytest.mark.parametrize("run", ALL_RUNS)
def test_a_result_sits_on_the_turn_of_its_call(run: str, bundles: Bundles) -> None:
    _, _, swarm = bundles[run]
    results = results_on_their_calls(swarm)
    calls = sum(len(t.calls) for th in (swarm.parent, *swarm.children) for t in th.turns)
    assert results == calls > 0  # every call of these runs got its answer


@pytest.mark.parametrize("run", ALL_RUNS)
def test_each_threads_turns_bill_what_the_scorer_tallied(run: str, bundles: Bundles) -> None:
    item, evidence, swarm = bundles[run]
    assert evidence.session is not None
    parent, _ = _transcripts(item)
    with parent.open("rb") as stream:
        tallied = parse_parent_transcript(stream).usage
    assert usage_of(swarm.parent) == tallied.usage == evidence.session.usage.usage
    assert usage_of(swarm.parent).total > 0
    children = {t.thread_id: t for t in swarm.children}
    for child in evidence.child_sessions:
        assert usage_of(children[child.child_id]) == child.usage
        assert child.usage.total > 0
    agent_turns = [t for t in swarm.parent.turns if t.source == "agent"]
    assert len(agent_turns) == tallied.assistant_messages
    assert sum(t.error is not None for t in agent_turns) == tallied.failed_assistant_messages


def _message_ids(path: Path, *, sidechains: bool) -> list[str]:
    return [
        str(r["message"]["id"])
        for r in _records(path)
        if r.get("type") == "assistant" and (sidechains or r.get("isSidechain") is not True)
    ]


@pytest.mark.parametrize("run", ALL_RUNS)
def test_the_records_of_one_message_are_one_turn(run: str, bundles: Bundles) -> None:
    item, _, swarm = bundles[run]
    parent, subagents = _transcripts(item)
    threads = [(swarm.parent, _message_ids(parent, sidechains=False))]
    children = {t.thread_id: t for t in swarm.children}
    threads += [(children[a], _message_ids(p, sidechains=True)) for a, p in subagents.items()]
    split = 0
    for thread, ids in threads:
        agent_turns = [t for t in thread.turns if t.source == "agent"]
        assert len(agent_turns) == len(set(ids)), thread.thread_id
        split += len(ids) - len(set(ids))
    # the client wrote one record per content block (no-spawn's messages have one each)
    assert (split > 0) is (run != "no-spawn")


def test_a_background_childs_answer_reaches_the_parent_as_a_user_turn(bundles: Bundles) -> None:
    """Honest: two children ran in the background (their notifications were queued while
    the parent's turn ran), one in the foreground (its answer is its spawn call's result)."""
    _, _, swarm = bundles["honest"]
    heard = [
        t for t in swarm.parent.turns if t.source == "user" and "<task-notification>" in t.text
    ]
    assert len(heard) == 2 and all("ANSWER::" in t.text for t in heard)
    spawning = next(t for t in swarm.parent.turns if t.calls and t.calls[0].name == "Agent")
    answers = [r.content for r in spawning.results if "[Subagent hand-back]" in r.content]
    assert len(answers) == 1 and "ANSWER::shard-a.txt::3" in answers[0]
    assert (
        swarm.parent.turns[0].source == "user"
        and "Spawn one subagent" in swarm.parent.turns[0].text
    )


def test_a_parent_that_failed_ends_in_an_agent_turn_with_the_error(bundles: Bundles) -> None:
    _, _, swarm = bundles["parent-500-after-spawn"]
    last = swarm.parent.turns[-1]
    assert (last.source, last.text, last.model) == ("agent", "", None)
    assert last.error is not None and "500" in last.error


@pytest.mark.parametrize("run", ALL_RUNS)
def test_a_run_exports_and_reads_back_to_its_verdict(run: str, bundles: Bundles) -> None:
    _, evidence, swarm = bundles[run]
    doc = exports_and_reads_back(evidence, swarm, MANIFEST, "claude-code", run)
    assert doc["agent"]["version"] == "2.1.332"


def _line(record: Mapping[str, object]) -> bytes:
    return json.dumps({"timestamp": "2026-01-01T00:00:00.000Z", **record}).encode() + b"\n"


def _assistant(mid: str | None, block: Mapping[str, object], **extra: object) -> bytes:
    message: dict[str, object] = {
        "role": "assistant",
        "model": "m1",
        "content": [block],
        "usage": {"input_tokens": 10, "output_tokens": 2, "cache_read_input_tokens": 5},
    }
    if mid is not None:
        message["id"] = mid
    return _line({"type": "assistant", "version": "9.9.9", "message": message, **extra})


def _user(content: object, **extra: object) -> bytes:
    return _line({"type": "user", "message": {"role": "user", "content": content}, **extra})


def test_a_transcript_reads_past_what_it_cannot_use() -> None:
    data = b"".join(
        [
            b"{not json\n",
            b"[1, 2]\n",
            _user("the task"),
            _user("<system-reminder>context</system-reminder>", isMeta=True),
            _assistant("m-1", {"type": "thinking", "thinking": "think"}),
            _assistant("m-1", {"type": "tool_use", "id": "c1", "name": "Bash", "input": "ls"}),
            _user([{"type": "tool_result", "tool_use_id": "c1", "content": "ok"}]),
            _assistant("m-1", {"type": "text", "text": "after"}),
            _user(
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": "zz",
                        "content": [{"type": "text", "text": "?"}],
                    }
                ]
            ),
            _assistant(None, {"type": "text", "text": "a"}),
            _assistant(None, {"type": "text", "text": "b"}),
            _assistant("m-2", {"type": "text", "text": "copied"}, isSidechain=True),
            _line({"type": "assistant", "message": "not an object"}),
        ]
    )
    read = read_transcript(data, sidechains=False)
    assert read.version == "9.9.9"
    task, agent, orphan, first, second = read.turns
    assert (task.source, task.text) == ("user", "the task")
    assert (agent.source, agent.text, agent.reasoning, agent.model) == (
        "agent",
        "after",
        "think",
        "m1",
    )
    assert [(c.call_id, c.name, dict(c.arguments)) for c in agent.calls] == [
        ("c1", "Bash", {"input": "ls"})
    ]
    assert [(r.call_id, r.content) for r in agent.results] == [("c1", "ok")]
    assert agent.usage == TokenUsage(10, 2, 5, 0)  # three records, billed once
    assert (orphan.source, orphan.results[0].call_id, orphan.results[0].content) == (
        "system",
        "zz",
        "?",
    )
    assert (first.text, second.text) == ("a", "b")  # no id: each record its own message
    copied = read_transcript(data, sidechains=True).turns
    assert [t.text for t in copied if t.source == "agent"][-1] == "copied"


def test_an_empty_bundle_is_a_parent_with_no_turns(tmp_path: Path) -> None:
    evidence = ClaudeCodeAdapter().evidence(tmp_path, {}, MANIFEST)
    swarm = build_swarm(tmp_path, {}, evidence)
    assert (swarm.parent.thread_id, swarm.parent.turns, swarm.children) == ("parent", (), ())
    assert (dict(swarm.spawned_by), swarm.agent_version) == ({}, None)
