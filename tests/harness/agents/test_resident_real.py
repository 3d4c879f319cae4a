"""The resident drive's deadline with the user's own prime-agent CLI (``$PRIME_AGENT_BIN``;
skipped without one): a parent that never stops polling, under a short ``--timeout``, is
timed out, and nothing of it is left running or written outside the item. The verdicts of
every script under both drives are the selftest's (test_selftest_real.py).
"""

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
from scripted_model.server import PROVIDER

pytestmark = pytest.mark.real_agent

#: Long enough for the parent to spawn and start polling on a loaded machine.
DEADLINE_S = 40


def test_a_parent_that_never_stops_polling_is_timed_out_with_nothing_left(
    prime_agent_bin: Path, tmp_path: Path
) -> None:
    home, tmp, agent_home, runs = (tmp_path / d for d in ("home", "tmp", "agent", "runs"))
    for d in (home, tmp, agent_home):
        d.mkdir()
    with ScriptedModelServer(Oracle.from_fixture_dirs([Path(TINY)])) as server:
        (agent_home / "models.json").write_text(json.dumps(server.models_json()))
        done = subprocess.run(
            [sys.executable, "-m", "harness", "run", "--fixture", str(TINY),
             "--agent", "prime-agent:resident", "--agent-bin", str(prime_agent_bin),
             "--model", f"{PROVIDER}/poll-forever", "--timeout", str(DEADLINE_S),
             "--retries", "0", "--runs-dir", str(runs)],
            cwd=REPO, capture_output=True, text=True, timeout=DEADLINE_S * 5,
            env={**os.environ, "HOME": str(home), "TMPDIR": str(tmp),
                 "PRIME_AGENT_CODING_AGENT_DIR": str(agent_home)},
        )  # fmt: skip
    run_dir = next(d for d in runs.iterdir() if d.is_dir() and d.name != "latest")
    report = load_report(run_dir)
    (item,) = report.items
    assert item.facts.timed_out, (item.status, done.stdout, done.stderr[-2000:])
    meta = json.loads((run_dir / "items" / item.item_dir / "item.json").read_text())
    assert meta["drive"] == "resident" and meta["exit_code"] == 143, meta
    assert meta["collection"]["resident"]["outcome"] == "stopped"
    assert processes_of_run(run_dir.name) == []
    assert tree(home) == [] and tree(tmp) == []
