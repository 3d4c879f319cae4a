"""The real Claude Code client under the harness (``selftest --agent claude-code``).

One selftest run through the normal run path (adapter, launch, collection, scoring) pins
every scripted verdict, that nothing is created under the caller's HOME or TMPDIR, and
that nothing of the run is left running.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from realkit import processes_of_run, tree

from scripted_model.claude_scripts import CLAUDE_SCRIPTS

pytestmark = pytest.mark.real_agent

REPO = Path(__file__).resolve().parents[3]
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
#: Six scripted runs take about 10 s; the margin covers a loaded 2-core machine.
SELFTEST_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def selftest_run(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("cc-selftest")
    home, tmp, runs = base / "home", base / "tmp", base / "runs"
    for d in (home, tmp):
        d.mkdir()
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp)}
    done = subprocess.run(
        [sys.executable, "-m", "harness", "selftest", "--agent", "claude-code",
         "--agent-bin", str(claude_code_bin), "--fixture", str(TINY),
         "--concurrency", "3", "--runs-dir", str(runs)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=SELFTEST_TIMEOUT_S,
        check=False,
    )  # fmt: skip
    run_ids = [d.name for d in runs.iterdir()] if runs.is_dir() else []
    leftovers = [pid for run_id in run_ids for pid in processes_of_run(run_id)]
    return {"done": done, "home": home, "tmp": tmp, "runs": runs, "leftovers": leftovers}


def test_every_script_gets_its_expected_verdict(selftest_run: dict) -> None:
    done = selftest_run["done"]
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("tiny ")]
    assert sorted(r[1] for r in rows) == sorted(CLAUDE_SCRIPTS)
    assert all(r[-1] == "ok" for r in rows), done.stdout


def test_nothing_is_created_under_home_or_tmpdir(selftest_run: dict) -> None:
    assert tree(selftest_run["home"]) == []
    assert tree(selftest_run["tmp"]) == []


def test_nothing_of_the_run_is_left_running(selftest_run: dict) -> None:
    assert selftest_run["leftovers"] == []


def test_items_rescore_to_the_same_verdict(selftest_run: dict) -> None:
    """``score ITEM_DIR`` finds the adapter in item.json and re-scores the bundle."""
    import json

    (run,) = selftest_run["runs"].iterdir()
    report = json.loads((run / "report.json").read_text())
    for item in report["items"]:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "score", str(run / "items" / item["item_dir"])],
            cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        again = json.loads(done.stdout)
        assert (again["status"], again["failures"]) == (item["status"], item["failures"])
