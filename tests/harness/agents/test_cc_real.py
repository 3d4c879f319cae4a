"""The real Claude Code client against the scripted Messages server, outside the runner.

Launched with ``harness.item.processes.run_process``, collected with ``locate``, scored with
``score_claude_code``, on the honest script: the pieces the runner joins, each on its own,
and the bill to the cache read and write. Every script's verdict, tokens and cost through
the runner are the selftest's (test_selftest_real.py), not repeated here. The client comes from ``$CLAUDE_CODE_BIN``, else the install
script's cache dir, else the install script (npm registry); otherwise the test skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from cc_kit import agent_env, prepare
from realkit import assert_score_is_the_bill

from harness.agents.claude_code.collect import locate, scorer_inputs
from harness.agents.claude_code.launch import (
    agent_argv,
)
from harness.item.processes import run_process
from scorers.claude_code import score_claude_code
from scorers.types import Manifest
from scripted_model import Oracle, ScriptedModelServer
from scripted_model.claude_scripts import CLAUDE_SCRIPTS

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
#: A scripted run takes 5-10 s; the margin covers a loaded 2-core machine.
RUN_TIMEOUT_S = 180

pytestmark = pytest.mark.real_agent


@pytest.fixture(scope="module")
def server() -> ScriptedModelServer:
    with ScriptedModelServer(Oracle.from_fixture_dirs([TINY])) as srv:
        yield srv  # type: ignore[misc]


@pytest.mark.parametrize("name", ["honest"], ids=str)
def test_script_verdict(
    name: str, claude_code_bin: Path, server: ScriptedModelServer, tmp_path: Path
) -> None:
    script = CLAUDE_SCRIPTS[name]
    paths = prepare(tmp_path / "work.d_x")  # "." and "_" exercise the project folder name
    shutil.copytree(TINY / "shards", paths.repo / "shards")
    subprocess.run(["git", "init", "-q", str(paths.repo)], check=True)
    env = agent_env(os.environ, paths, "tok", f"http://127.0.0.1:{server.port}", "scripted-no-key")
    task = (TINY / "task.txt").read_text()
    result = run_process(
        agent_argv(claude_code_bin, task, name),
        env=env,
        cwd=paths.repo,
        timeout_s=RUN_TIMEOUT_S,
        stdout_path=paths.stdout,
        stderr_path=paths.stderr,
    )
    assert result.exit_code == 0 and not result.timed_out, paths.stderr.read_text()[-500:]
    located = locate(paths, "combined-index.md")
    assert located.parent is not None and not located.notes, located.notes  # computed folder
    manifest = Manifest.from_dict(json.loads((TINY / "fixture.json").read_text()))
    score = score_claude_code(scorer_inputs(located), manifest)
    # The client's own account of its usage (its transcripts under-count output).
    assert_score_is_the_bill(score, script, server)
