"""The ATIF export carries the edits as the tool calls they were: a prime-agent (or sim)
``ipython`` cell that ran ``await edit(...)`` is a tool call with its code as written, and
its result carries the edit skill's ``details.diffs`` (the one record of the exact change)
beside its text; a failed edit carries no diffs; the document stays valid ATIF."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atif import Trajectory

from harness.agents.prime_agent.trajectory import read_turns
from harness.export.atif import MAX_TEXT_CHARS, ItemFacts, write_trajectory
from harness.model.trajectory import Swarm, Thread
from scorers.records import ChildSession, LedgerParse, RunEvidence, SpawnEvent

PARENT = "runs/sessions/parent.jsonl"
CODE = 'r = await edit(path="pkg/alpha.py", old_str="RATE = 0", new_str="RATE = 37")\nprint(r)\n'
DIFF = {"path": "/w/repo/pkg/alpha.py", "oldStr": "RATE = 0", "newStr": "RATE = 37", "startLine": 3}


def _call(call_id: str, code: str, at: str) -> dict[str, Any]:
    block = {"type": "toolCall", "id": call_id, "name": "ipython", "arguments": {"code": code}}
    message = {"role": "assistant", "content": [block], "stopReason": "toolUse"}
    return {"type": "message", "timestamp": at, "message": message}


def _result(call_id: str, text: str, details: dict[str, Any], at: str) -> dict[str, Any]:
    message = {
        "role": "toolResult",
        "toolCallId": call_id,
        "toolName": "ipython",
        "content": [{"type": "text", "text": text}],
        "details": details,
        "isError": False,
    }
    return {"type": "message", "timestamp": at, "message": message}


def _session(path: Path, header: str, *records: dict[str, Any]) -> Path:
    lines = [{"type": "session", "id": header}, *records]
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def _child_file(tmp_path: Path, old_str: str = "RATE = 0") -> Path:
    """A child that edits its file (the skill's record: ``details.diffs``), then tries an
    edit whose old text is gone (the skill raised: no diffs)."""
    failed = CODE.replace('old_str="RATE = 0"', f'old_str="{old_str}"')
    return _session(
        tmp_path / "child.jsonl",
        "s-c-alpha",
        _call("call_1", CODE, "2026-12-07T06:50:58.000Z"),
        _result(
            "call_1",
            "Edited /w/repo/pkg/alpha.py\n",
            {"status": "ok", "stdout": "Edited /w/repo/pkg/alpha.py\n", "diffs": [DIFF]},
            "2026-12-07T06:51:00.000Z",
        ),
        _call("call_2", failed, "2026-12-07T06:51:01.000Z"),
        _result(
            "call_2",
            "ValueError: string not found in pkg/alpha.py",
            {"status": "error", "stdout": "", "diffs": []},
            "2026-12-07T06:51:02.000Z",
        ),
    )


def _document(tmp_path: Path, child_file: Path) -> dict[str, Any]:
    _, parent_turns = read_turns(
        _session(
            tmp_path / "parent.jsonl",
            "parent",
            _call("p_1", CODE, "2026-12-07T06:50:50.000Z"),  # the parent edits too
            _result("p_1", "Edited\n", {"diffs": [DIFF]}, "2026-12-07T06:50:51.000Z"),
        )
    )
    _, child_turns = read_turns(child_file)
    swarm = Swarm(Thread("parent", parent_turns), (Thread("c-alpha", child_turns),))
    spawn = SpawnEvent(
        "c-alpha", "children/c-alpha.jsonl", "s-c-alpha", PARENT, 1, "worker-alpha", "t"
    )
    evidence = RunEvidence(
        parent_paths=(PARENT,),
        ledger=LedgerParse((spawn,)),
        session=None,
        stream=None,
        answers=None,
        child_sessions=(ChildSession("c-alpha", ("c-alpha", "child.jsonl"), depth=1),),
        child_session_dirs=1,
    )
    facts = ItemFacts(
        run_id="r1", key="edits:sim/honest:1", fixture="edits", trial=1, status="resolved",
        agent="sim", agent_version=None, model="sim/honest", checks={}, signatures=(),
        usage={}, cost_usd=None, artifact="out.md",
    )  # fmt: skip
    doc: dict[str, Any] = json.loads(json.dumps(write_trajectory(swarm, evidence, facts)))
    Trajectory.model_validate(doc)
    return doc


def _calls_and_results(steps: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for step in steps:
        results = {
            r.get("source_call_id"): r for r in step.get("observation", {}).get("results", ())
        }
        out.extend((c, results[c["tool_call_id"]]) for c in step.get("tool_calls", ()))
    return out


def test_an_edit_cell_is_exported_with_its_code_and_its_diffs(tmp_path: Path) -> None:
    doc = _document(tmp_path, _child_file(tmp_path))
    (child,) = doc["subagent_trajectories"]
    (edit, edit_result), (failed, failed_result) = _calls_and_results(child["steps"])
    assert edit == {
        "tool_call_id": "call_1",
        "function_name": "ipython",
        "arguments": {"code": CODE},
    }
    assert edit_result["content"] == "Edited /w/repo/pkg/alpha.py\n"
    assert edit_result["extra"]["details"] == {"diffs": [DIFF]}
    assert failed["arguments"]["code"].startswith('r = await edit(path="pkg/alpha.py"')
    assert failed_result["content"].startswith("ValueError: string not found")
    assert "extra" not in failed_result  # a failed edit changed nothing: no diffs
    ((parent_edit, parent_result),) = _calls_and_results(doc["steps"])
    assert parent_edit["arguments"] == {"code": CODE}
    assert parent_result["extra"]["details"] == {"diffs": [DIFF]}


def test_a_huge_edit_is_cut_with_a_marker_and_stays_valid(tmp_path: Path) -> None:
    big = dict(DIFF, newStr="x" * (MAX_TEXT_CHARS * 2))
    child = _session(
        tmp_path / "child.jsonl",
        "s-c-alpha",
        _call("call_1", CODE, "2026-12-07T06:50:58.000Z"),
        _result("call_1", "Edited\n", {"diffs": [big]}, "2026-12-07T06:51:00.000Z"),
    )
    doc = _document(tmp_path, child)
    ((_, result),) = _calls_and_results(doc["subagent_trajectories"][0]["steps"])
    (kept,) = result["extra"]["details"]["diffs"]
    assert kept["oldStr"] == "RATE = 0" and kept["startLine"] == 3
    assert kept["newStr"].startswith("x" * MAX_TEXT_CHARS)
    assert kept["newStr"].endswith(
        f"[... cut by swarm-harness: {MAX_TEXT_CHARS * 2:,} characters in all]"
    )
