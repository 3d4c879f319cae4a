"""The captured real opencode runs (tests/data/opencode-runs) read into the export's model:
one thread per child session the evidence knows, each spawn linked to the parent's ``task``
call, results on their call's turn, tokens that add up to the scorer's, turns in time
order, written as ATIF that re-scores to the same verdict; and a damaged store read
without raising."""

from __future__ import annotations

import datetime as dt
import gzip
import shutil
import sqlite3
import sys
from functools import reduce
from pathlib import Path

import pytest
from exportkit import exports_and_reads_back, results_on_their_calls

from harness.agents.opencode import OpenCodeAdapter
from harness.agents.opencode.collect import Bundle
from harness.agents.opencode.trajectory import build_swarm
from harness.model.trajectory import Swarm, Thread
from scorers.records import RunEvidence
from scorers.tokens import NO_TOKENS, TokenUsage

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scorers" / "opencode"))
from oc_runs import ALL_RUNS, MANIFEST, RUNS

Built = dict[str, tuple[RunEvidence, Swarm]]


def _bundle(run: str, item_dir: Path) -> Path:
    """The run's capture laid out as the collector leaves a bundle."""
    bundle = Bundle(item_dir)
    bundle.db.parent.mkdir(parents=True)
    bundle.db.write_bytes(gzip.decompress((RUNS / run / "opencode.db.gz").read_bytes()))
    shutil.copyfile(RUNS / run / "stdout.jsonl", bundle.stdout)
    answer = RUNS / run / MANIFEST.artifact
    if answer.is_file():
        bundle.artifact(MANIFEST.artifact).parent.mkdir()
        shutil.copyfile(answer, bundle.artifact(MANIFEST.artifact))
    return item_dir


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Every capture's evidence (by the adapter, as a run scores it) and swarm."""
    root = tmp_path_factory.mktemp("oc-bundles")
    adapter = OpenCodeAdapter()
    found: Built = {}
    for run in ALL_RUNS:
        item_dir = _bundle(run, root / run)
        evidence = adapter.evidence(item_dir, {}, MANIFEST)
        found[run] = (evidence, build_swarm(item_dir, {}, evidence))
    return found


def _usage(thread: Thread) -> TokenUsage:
    return reduce(lambda a, t: a + (t.usage or NO_TOKENS), thread.turns, NO_TOKENS)


@pytest.mark.parametrize("run", ALL_RUNS)
def test_every_child_session_is_one_thread(built: Built, run: str) -> None:
    evidence, swarm = built[run]
    ids = [t.thread_id for t in swarm.children]
    assert sorted(ids) == sorted(c.child_id for c in evidence.child_sessions)
    assert len(set(ids)) == len(ids)
    assert evidence.session is not None
    assert swarm.parent.thread_id == evidence.session.header_id
    assert all(t.turns for t in swarm.children)


@pytest.mark.parametrize("run", ALL_RUNS)
def test_every_spawn_with_a_session_names_its_task_call(built: Built, run: str) -> None:
    evidence, swarm = built[run]
    sessions = {c.child_id for c in evidence.child_sessions}
    calls = {c.call_id: c.name for t in swarm.parent.turns for c in t.calls}
    for spawn in evidence.depth1_spawns():
        if spawn.child_id in sessions:
            call_id = swarm.spawned_by.get(spawn.child_id)
            assert call_id is not None and calls.get(call_id) == "task", spawn


@pytest.mark.parametrize("run", ALL_RUNS)
def test_results_sit_on_the_turn_of_their_call(built: Built, run: str) -> None:
    _, swarm = built[run]
    results_on_their_calls(swarm)


@pytest.mark.parametrize("run", ALL_RUNS)
def test_turn_tokens_add_up_to_the_scorers(built: Built, run: str) -> None:
    evidence, swarm = built[run]
    threads = {t.thread_id: t for t in swarm.children}
    for child in evidence.child_sessions:
        assert _usage(threads[child.child_id]) == child.usage, child.child_id
    assert evidence.session is not None
    assert _usage(swarm.parent) == evidence.session.usage.usage


@pytest.mark.parametrize("run", ALL_RUNS)
def test_turns_are_in_time_order(built: Built, run: str) -> None:
    _, swarm = built[run]
    for thread in (swarm.parent, *swarm.children):
        ats = [t.at for t in thread.turns]
        assert None not in ats
        moments = [dt.datetime.fromisoformat(a) for a in ats if a is not None]
        assert moments == sorted(moments), thread.thread_id


@pytest.mark.parametrize("run", ALL_RUNS)
def test_a_capture_exports_and_reads_back_to_its_verdict(built: Built, run: str) -> None:
    evidence, swarm = built[run]
    doc = exports_and_reads_back(evidence, swarm, MANIFEST, "opencode", run)
    assert doc["agent"]["version"] == "1.18.33"


def test_what_the_honest_run_shows(built: Built) -> None:
    """The parent's one message with three ``task`` calls carries the children's answers
    as their results; each child is labelled with its session's title."""
    evidence, swarm = built["honest"]
    assert swarm.agent_version == "1.18.33"
    spawning = next(t for t in swarm.parent.turns if len(t.calls) == 3)
    assert spawning.model == "scripted/honest" and spawning.usage is not None
    assert [c.name for c in spawning.calls] == ["task"] * 3
    assert set(swarm.spawned_by.values()) == {c.call_id for c in spawning.calls}
    assert evidence.session is not None and len(evidence.session.replies) == 3
    by_call = {r.call_id: r.content for r in spawning.results}
    for reply in evidence.session.replies:  # the child's final text, framed
        said = by_call[swarm.spawned_by[reply.sender_session_id]]
        assert reply.text and f"<task_result>\n{reply.text}\n</task_result>" in said
    assert sorted(t.label or "" for t in swarm.children) == [
        f"worker-events-0{n} (@general subagent)" for n in (1, 2, 3)
    ]
    assert swarm.parent.turns[0].source == "user" and "subagent" in swarm.parent.turns[0].text


def test_a_failed_call_is_an_errored_turn(built: Built) -> None:
    _, swarm = built["root-401"]
    sources = [t.source for t in swarm.parent.turns]
    assert sources == ["user", "agent"]
    assert swarm.parent.turns[1].error == "APIError 401: scripted failure 401"


def test_a_damaged_store_is_read_without_raising(tmp_path: Path) -> None:
    item_dir = _bundle("honest", tmp_path / "item")
    db = Bundle(item_dir).db
    con = sqlite3.connect(db)
    try:
        con.execute("UPDATE part SET data = '{broken' WHERE rowid % 2 = 0")
        con.execute("UPDATE message SET data = '[1]' WHERE rowid = 2")
        con.execute("UPDATE part SET data = json_set(data, '$.state', 7) WHERE rowid = 3")
        con.commit()
    finally:
        con.close()
    evidence = OpenCodeAdapter().evidence(item_dir, {}, MANIFEST)
    swarm = build_swarm(item_dir, {}, evidence)
    assert swarm.parent.turns and len(swarm.children) == len(evidence.child_sessions)
    db.write_bytes(db.read_bytes()[:5000])  # cut mid-table
    assert build_swarm(item_dir, {}, evidence).parent.thread_id == swarm.parent.thread_id
