"""The Gemini scripts whose verdict rests on what the real Gemini CLI (``GEMINI_BIN``, 0.61.0)
does, played by it against the scripted server offline, without the harness: what the
client did (its artifact, the subagents it ran and what their ``invoke_agent`` calls
returned, the files changed) and that the tokens its chat records hold are the server's
bill. Every script's verdict through the harness is the selftest's (tests/harness/agents/
test_selftest_real.py and its edit and solo twins); these pin the client's side of the
three that depend on it most: a subagent that never calls ``complete_task``, one whose
request fails, and a child changing a file of another shard's. Skipped when the client can be neither found nor installed.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from gemini_helpers import Run, run_client

from scripted_model import Oracle, ScriptedModelServer
from scripted_model.server import GEMINI_API

pytestmark = pytest.mark.real_agent

DATA = Path(__file__).resolve().parent.parent / "data" / "fixtures"
TINY = DATA / "tiny"
TINY_EDIT = DATA / "tiny-edit"
ALL = "- shard-a.txt: 3\n- shard-b.txt: 5\n- shard-c.txt: 6\n"


def _play(
    binary: Path, tmp_path: Path, fixture: Path, script: str, solo: bool = False
) -> tuple[Run, Any]:
    with ScriptedModelServer(Oracle.from_fixture_dirs([fixture])) as srv:
        run = run_client(binary, tmp_path, fixture, f"scripted-{script}", srv.port, solo)
        bill = srv.billed(api=GEMINI_API)
    assert run.rc == 0, run.stderr[-2000:]
    return run, bill


def _invokes(run: Run) -> list[tuple[str, str]]:
    """(worker line, what came back) of every invoke_agent call of the parent."""
    found = []
    for name, records in run.chats().items():
        if not name.startswith("session-"):
            continue
        for rec in records:
            for call in rec.get("toolCalls") or []:
                if call.get("name") == "invoke_agent":
                    out = call["result"][0]["functionResponse"]["response"]["output"]
                    found.append((call["args"]["prompt"].split("\n", 1)[0], out))
    return found


def _children(run: Run) -> int:
    return sum(1 for name in run.chats() if not name.startswith("session-"))


def _tokens_are_the_bill(run: Run, bill: Any) -> None:
    tokens = [m["tokens"] for m in run.messages()]
    assert sum(t["input"] - t["cached"] for t in tokens) == bill.input_tokens
    assert sum(t["cached"] for t in tokens) == bill.cache_read_tokens
    assert sum(t["output"] + t["thoughts"] for t in tokens) == bill.output_tokens
    assert len(tokens) == bill.requests


def _artifact(run: Run) -> str:
    path = run.repo / "combined-index.md"
    return path.read_text() if path.exists() else ""


@pytest.mark.parametrize(
    ("script", "artifact", "children"),
    [
        pytest.param("silent-child", ALL.split("\n", 1)[1], 3, id="silent-child"),
        # The failing child's first request fails: the client makes its file all the same.
        pytest.param("child-fails", ALL.split("\n", 1)[1], 3, id="child-fails"),
    ],
)
def test_script_on_a_read_fixture(
    gemini_bin: Path, tmp_path: Path, script: str, artifact: str, children: int
) -> None:
    run, bill = _play(gemini_bin, tmp_path, TINY, script)
    assert _artifact(run) == artifact
    assert _children(run) == children
    _tokens_are_the_bill(run, bill)
    ((worker, heard), *_) = _invokes(run)
    assert worker == "Worker: worker-shard-a"
    if script == "silent-child":
        assert "Termination Reason: ERROR_NO_COMPLETE_TASK_CALL" in heard
    else:
        assert heard.startswith("Subagent 'shard-worker' failed. Error:")


def _changed(run: Run) -> set[str]:
    out = subprocess.run(
        ["git", "status", "--porcelain"], cwd=run.repo, capture_output=True, text=True, check=True
    ).stdout
    return {line[3:] for line in out.splitlines()}


@pytest.mark.parametrize(("script", "solo"), [pytest.param("edit-wrong-lane", False)])
def test_script_on_an_edit_fixture(
    gemini_bin: Path, tmp_path: Path, script: str, solo: bool
) -> None:
    run, bill = _play(gemini_bin, tmp_path, TINY_EDIT, script, solo)
    assert _artifact(run) == "- double.md: 42\n- square.md: 169\n"
    assert {"calc/double.py", "calc/square.py", "calc/__init__.py"} <= _changed(run)
    _tokens_are_the_bill(run, bill)
    edits = [
        c for m in run.messages() for c in m.get("toolCalls") or [] if c.get("name") == "replace"
    ]
    assert edits and all(c.get("status") == "success" for c in edits)
    square = (run.repo / "calc" / "square.py").read_text()
    assert ("changed by another shard's worker" in square) == (script == "edit-wrong-lane")
