"""The sim's edits exported as ATIF: each honest child's ``await edit(...)`` cell is a tool
call with its code, and its result carries the diffs the sim recorded, as prime-agent's
records do; the document is valid ATIF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atif import Trajectory
from simkit import SimLayout, read_jsonl
from test_sim_edits import SOLUTIONS, WORKERS, _diff, _run, edit_sim  # noqa: F401 (a fixture)

from harness.agents.prime_agent.trajectory import read_turns
from harness.export.atif import ItemFacts, write_trajectory
from harness.model.trajectory import Swarm, Thread
from scorers.records import ChildSession, LedgerParse, RunEvidence


def _worker(path: Path) -> str:
    (info,) = [e for e in read_jsonl(path) if e["type"] == "session_info"]
    return str(info["name"])


def test_each_childs_edit_is_a_tool_call_with_its_diffs(edit_sim: SimLayout) -> None:  # noqa: F811 (the fixture)
    _run(edit_sim, "honest")
    children = {_worker(p): p for p in edit_sim.child_files()}
    assert sorted(children) == sorted(WORKERS.values())
    _, parent_turns = read_turns(edit_sim.transcript_path())
    assert parent_turns  # the parent's own calls (its spawns) are there too
    threads = tuple(Thread(name, read_turns(path)[1]) for name, path in children.items())
    evidence = RunEvidence(
        parent_paths=(),
        ledger=LedgerParse(()),
        session=None,
        stream=None,
        answers=None,
        child_sessions=tuple(ChildSession(name, (name,), depth=1) for name in children),
        child_session_dirs=len(children),
    )
    facts = ItemFacts(
        run_id="r1", key="edits:sim/honest:1", fixture="edits", trial=1, status="resolved",
        agent="sim", agent_version=None, model="sim/honest", checks={}, signatures=(),
        usage={}, cost_usd=None, artifact="out.md",
    )  # fmt: skip
    swarm = Swarm(Thread("parent", parent_turns), threads)
    doc: dict[str, Any] = json.loads(json.dumps(write_trajectory(swarm, evidence, facts)))
    Trajectory.model_validate(doc)
    for child in doc["subagent_trajectories"]:
        shard = next(f for f, w in WORKERS.items() if w == child["trajectory_id"])
        diffs, codes = [], []
        for step in child["steps"]:
            calls = {c["tool_call_id"]: c for c in step.get("tool_calls", ())}
            for result in step.get("observation", {}).get("results", ()):
                details = result.get("extra", {}).get("details")
                if details is not None:
                    codes.append(calls[result["source_call_id"]]["arguments"]["code"])
                    diffs.extend(details["diffs"])
        assert diffs == [_diff(edit_sim, r) for r in SOLUTIONS[shard]], shard
        assert codes and all("await edit(" in code for code in codes)
