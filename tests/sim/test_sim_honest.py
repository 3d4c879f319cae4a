"""An honest sim run leaves every artifact where and how the real CLI does (CONTRACT §3-§4)."""

from __future__ import annotations

import itertools
import os
import resource
from pathlib import Path

import pytest
from simkit import SHARDS, SimLayout, SimResult, read_jsonl, rubric

#: Every test starts the simulated agent's real processes.
pytestmark = pytest.mark.slow


@pytest.fixture
def honest(sim: SimLayout) -> tuple[SimLayout, SimResult]:
    result = sim.run("honest")
    assert result.returncode == 0, result.stderr
    return sim, result


def test_ledger_is_keyed_on_the_sessions_realpath(honest: tuple[SimLayout, SimResult]) -> None:
    sim, _ = honest
    meta, *spawns = sim.ledger()
    assert meta["op"] == "meta" and meta["v"] == 1 and meta["sessionsDir"] == str(sim.sessions)
    assert [s["name"] for s in spawns] == [s["worker"] for s in SHARDS]
    for s in spawns:
        assert s["v"] == 1 and s["op"] == "spawn" and s["depth"] == 1
        assert s["childId"].startswith("sub-") and len(s["childId"]) == 12
        assert s["parent"] == str(sim.transcript_path())
        assert Path(s["child"]).is_file()
        assert isinstance(s["at"], str) and s["at"].endswith("Z")


def test_parent_file_name_is_not_its_session_id(honest: tuple[SimLayout, SimResult]) -> None:
    sim, _ = honest
    header, *entries = sim.transcript()
    assert header["type"] == "session" and header["version"] == 3 and header["rlmDepth"] == 0
    assert header["cwd"] == str(sim.repo)
    assert sim.transcript_path().stem != header["id"]
    assert entries[0]["type"] == "model_change" and entries[0]["parentId"] is None
    assert all(e["parentId"] == prev["id"] for prev, e in itertools.pairwise(entries))
    user = next(e for e in entries if e["type"] == "message")
    assert user["message"]["role"] == "user"


def test_child_sessions_live_under_the_header_id(honest: tuple[SimLayout, SimResult]) -> None:
    sim, _ = honest
    header_id = sim.transcript()[0]["id"]
    files = sim.child_files()
    assert len(files) == len(SHARDS)
    assert {str(f) for f in files} == {s["child"] for s in sim.spawns()}
    for f in files:
        assert f.parent.parent == sim.root / "session-artifacts" / header_id
        child_header, *entries = read_jsonl(f)
        assert child_header["id"] == f.stem
        assert child_header["parentSession"] == str(sim.transcript_path())
        assert child_header["rlmDepth"] == 1
        (info,) = [e for e in entries if e["type"] == "session_info"]
        task = next(e for e in entries if e["type"] == "custom_message")
        assert task["details"]["fromRelationship"] == "parent"
        assert task["details"]["from"]["sessionId"] == header_id
        usage = [
            e["message"]["usage"]
            for e in entries
            if e["type"] == "message" and e["message"]["role"] == "assistant"
        ]
        assert usage and all(u["totalTokens"] > 0 for u in usage)
        display = (f.parent / "rlm-subagent.json").read_text()
        assert f'"childId":"{f.parent.name}"' in display and info["name"] in display


def test_every_child_is_receipted_with_its_usage(honest: tuple[SimLayout, SimResult]) -> None:
    sim, _ = honest
    receipts = sim.receipts()
    by_session = {r["details"]["from"]["sessionId"]: r for r in receipts}
    assert set(by_session) == {f.stem for f in sim.child_files()}
    messages = sorted(r["details"]["message"] for r in receipts)
    assert messages == sorted(f"ANSWER::{s['file']}::{s['expected']}" for s in SHARDS)
    for r in receipts:
        assert r["details"]["from"]["sessionName"] in {s["worker"] for s in SHARDS}
    attributed = [e for e in sim.transcript() if e["type"] == "child_usage_attributed"]
    assert len(attributed) == len(SHARDS)
    assert all(e["childUsage"]["totalTokens"] > 0 for e in attributed)


def test_stdout_is_the_json_event_stream(honest: tuple[SimLayout, SimResult]) -> None:
    sim, result = honest
    events = result.events
    assert events[0] == sim.transcript()[0]
    assert [e["type"] for e in events[1:3]] == ["agent_start", "turn_start"]
    assert events[-1]["type"] == "agent_end"
    ends = [e["message"] for e in events if e["type"] == "message_end"]
    assistant = [m for m in ends if m["role"] == "assistant"]
    assert assistant and all(m["usage"]["totalTokens"] > 0 for m in assistant)
    assert assistant[-1]["stopReason"] == "stop"
    assert {m["stopReason"] for m in assistant[:-1]} == {"toolUse"}
    turn_ends = [e["message"] for e in events if e["type"] == "turn_end"]
    assert turn_ends == assistant  # turn_end repeats the message, it is not a new turn
    kinds = {e["type"] for e in events}
    assert {"tool_execution_start", "tool_execution_end", "rlm_child_update"} <= kinds
    children = {e["child"]["id"] for e in events if e["type"] == "rlm_child_update"}
    assert children == {s["childId"] for s in sim.spawns()}


def test_artifact_and_verdict(honest: tuple[SimLayout, SimResult]) -> None:
    sim, result = honest
    assert sim.bullets() == {s["file"]: str(s["expected"]) for s in SHARDS}
    assert rubric(sim) == dict.fromkeys(
        ("coverage", "delegation", "dedup", "receipts", "provenance"), True
    )
    assert result.stderr == ""


def test_only_the_daemon_and_its_catalog_outlive_the_cli(
    honest: tuple[SimLayout, SimResult],
) -> None:
    sim, _ = honest
    procs = sim.processes()
    assert len(procs) == 2, [p.cmdline() for p in procs]
    (daemon,) = [p for p in procs if "--sim-daemon" in p.cmdline()]
    assert [c.pid for c in daemon.children()] == [p.pid for p in procs if p.pid != daemon.pid]
    assert os.getsid(daemon.pid) == daemon.pid  # detached: its own session


def test_eight_shards_stay_cheap(sim: SimLayout) -> None:
    """Keep the sim quick: 8 concurrent child processes, daemon start included.

    Gated on CPU time (the CLI and every child it reaped), which a loaded CI box does not
    inflate; wall time (typically ~0.4 s on 2 cores) only gets a loose bound.
    """
    shards = [{"file": f"d-{i}.tsv", "worker": f"worker-{i}", "expected": i} for i in range(8)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = sim.run("honest", shards=shards)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert result.returncode == 0, result.stderr
    assert len(sim.child_files()) == 8
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu < 1.0, cpu
    assert result.elapsed < 5.0, result.elapsed
