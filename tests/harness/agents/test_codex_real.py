"""The real Codex client under ``run``, pointed the way users point it: ``--model
openai/<id>`` with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``, while the caller's own Codex
configuration (``~/.codex``, ``$CODEX_HOME``) names another provider that would fail: none
of it is read, and none of it is changed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from realkit import REPO, TINY, processes_of_run, tree

from harness.model.report import load_report
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.server import CODEX_RESPONSES_API

pytestmark = pytest.mark.real_agent

RUN_TIMEOUT_S = 300
#: A caller's own Codex configuration: another provider, at a port nothing listens on.
CALLERS_CONFIG = """\
model = "gpt-callers-own"
model_provider = "elsewhere"
[model_providers.elsewhere]
name = "elsewhere"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
"""


def test_the_callers_codex_config_is_neither_read_nor_touched(
    codex_bin: Path, tmp_path: Path
) -> None:
    home, tmp, runs, own = (tmp_path / n for n in ("home", "tmp", "runs", "codex-home"))
    for d in (home / ".codex", tmp, own):
        d.mkdir(parents=True)
    for config in (home / ".codex" / "config.toml", own / "config.toml"):
        config.write_text(CALLERS_CONFIG, encoding="utf-8")
    before = {d: tree(d) for d in (home, own)}
    with ScriptedModelServer(
        Oracle.from_fixture_dirs([TINY]), model_api=CODEX_RESPONSES_API
    ) as server:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", "--agent", "codex",
             "--agent-bin", str(codex_bin), "--model", "openai/scripted-honest",
             "--fixture", str(TINY), "--runs-dir", str(runs)],
            cwd=REPO,
            env={**os.environ, "HOME": str(home), "TMPDIR": str(tmp), "CODEX_HOME": str(own),
                 "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-scripted-0123456789"},
            capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
        )  # fmt: skip
        billed = server.billed("scripted-honest")
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    (run,) = [d for d in runs.iterdir() if d.is_dir()]
    (item,) = load_report(run).items
    assert item.status == "resolved" and item.model == "openai/scripted-honest"
    assert item.score.tokens_used == billed.total and item.cost_usd is None  # no price known
    assert {d: tree(d) for d in (home, own)} == before and tree(tmp) == []
    assert processes_of_run(run.name) == []
    # The key reached the client, and no file the harness wrote holds it.
    for path in run.rglob("*"):
        if path.is_file():
            assert b"sk-scripted-0123456789" not in path.read_bytes(), path
