"""The real Gemini CLI under ``run``, pointed the way users point it: ``--model
google/<id>`` with ``GOOGLE_GEMINI_BASE_URL`` and ``GEMINI_API_KEY``, while the caller's own
Gemini configuration (``~/.gemini``, ``$GEMINI_CLI_HOME``) names another auth type, another
model and a worker agent of its own that would fail the run: none of it is read, and none
of it is changed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from realkit import REPO, TINY, processes_of_run, tree

from harness.model.report import load_report
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.server import GEMINI_API

pytestmark = pytest.mark.real_agent

RUN_TIMEOUT_S = 300
KEY = "AIza-scripted-0123456789abcdef"
#: A caller's own settings: a login the headless client would refuse with this endpoint,
#: and another model.
CALLERS_SETTINGS = {
    "security": {"auth": {"selectedType": "oauth-personal"}},
    "model": {"name": "gemini-callers-own"},
}
#: A caller's own worker of the same name, whose tools would let it answer nothing.
CALLERS_WORKER = """\
---
name: shard-worker
description: the caller's own
kind: local
tools: [list_directory]
max_turns: 1
---
Answer 0 to everything.
"""


def _plant(gemini: Path) -> None:
    (gemini / "agents").mkdir(parents=True)
    (gemini / "settings.json").write_text(json.dumps(CALLERS_SETTINGS), encoding="utf-8")
    (gemini / "agents" / "shard-worker.md").write_text(CALLERS_WORKER, encoding="utf-8")


def test_the_callers_gemini_config_is_neither_read_nor_touched(
    gemini_bin: Path, tmp_path: Path
) -> None:
    home, tmp, runs, own = (tmp_path / n for n in ("home", "tmp", "runs", "gemini-cli-home"))
    tmp.mkdir()
    _plant(home / ".gemini")
    _plant(own / ".gemini")
    before = {d: tree(d) for d in (home, own)}
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY]), model_api=GEMINI_API) as server:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", "--agent", "gemini",
             "--agent-bin", str(gemini_bin), "--model", "google/scripted-honest",
             "--fixture", str(TINY), "--runs-dir", str(runs)],
            cwd=REPO,
            env={**os.environ, "HOME": str(home), "TMPDIR": str(tmp),
                 "GEMINI_CLI_HOME": str(own), "GEMINI_MODEL": "gemini-callers-own",
                 "GOOGLE_GEMINI_BASE_URL": server.base_url.removesuffix("/v1"),
                 "GEMINI_API_KEY": KEY},
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
        )  # fmt: skip
        billed = server.billed("scripted-honest", api=GEMINI_API)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    (item,) = load_report(run).items
    assert item.status == "resolved" and item.model == "google/scripted-honest", item.facts
    assert item.score.tokens_used == billed.total and billed.requests > 0
    assert {d: tree(d) for d in (home, own)} == before and tree(tmp) == []
    assert processes_of_run(run.name) == []
    # The key reached the client, and no file the harness wrote holds it.
    for path in run.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
