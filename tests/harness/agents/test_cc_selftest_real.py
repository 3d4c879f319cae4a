"""The real Claude Code client under the harness (``selftest --agent claude-code``).

One selftest run through the normal run path (adapter, launch, collection, scoring) pins
every scripted verdict, that nothing is created under the caller's HOME or TMPDIR, and
that nothing of the run is left running.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from realkit import REPO, selftest_in_fresh_home, tree

from scripted_model.claude_scripts import CLAUDE_SCRIPTS

pytestmark = pytest.mark.real_agent

#: Six scripted runs take about 10 s; the margin covers a loaded 2-core machine.
SELFTEST_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def selftest_run(claude_code_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    base = tmp_path_factory.mktemp("cc-selftest")
    return selftest_in_fresh_home(base, "claude-code", claude_code_bin, SELFTEST_TIMEOUT_S)


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
