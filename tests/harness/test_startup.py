"""The CLI starts without the heavy libraries: scipy, numpy and polars load only for the
statistics that need them (``--trials auto``, the report), the price data only when an item
is priced; and a command loads its own module, not every other command's. A real
subprocess per command, its imports read from ``-X importtime``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")
HEAVY = ("scipy", "numpy", "polars")
PRICES = "genai_prices"

pytestmark = pytest.mark.slow


def imported(*args: str) -> set[str]:
    """The top-level packages ``python -m harness ARGS`` imported."""
    return {name.split(".")[0] for name in modules(*args)}


def modules(*args: str) -> set[str]:
    """Every module ``python -m harness ARGS`` imported."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "harness", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 3), done.stderr[-2000:]
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(("--help",), id="help"),
        pytest.param(("run", "--help"), id="run-help"),
        pytest.param(("score", "--help"), id="score-help"),
        pytest.param(("fixtures", "list"), id="fixtures-list"),
    ],
)
def test_a_command_that_prices_nothing_loads_no_heavy_library(args: tuple[str, ...]) -> None:
    assert imported(*args) & {*HEAVY, PRICES} == set()


def test_a_dry_run_loads_no_statistics_library() -> None:
    """It prices the plan's models (so the price data may load), but computes nothing."""
    names = imported("run", "--fixture", TINY, "--agent", "sim", "--dry-run")
    assert names & set(HEAVY) == set()
    assert "harness" in names  # the probe saw the imports at all


def test_re_scoring_an_item_loads_only_what_scoring_needs(tmp_path: Path) -> None:
    """``score ITEM_DIR`` of a capped ledger must take well under a second, start included:
    the other commands' modules (run, report, export, ...), the plan, the fixture loader
    (only ``--fixture`` needs it) and YAML (only ``--prices``) were half of its start.
    Read from ``sys.modules`` at exit (``-X importtime`` misses ``importlib`` imports)."""
    subprocess.run(
        [sys.executable, "-m", "harness", "run", "--fixture", TINY, "--agent", "sim",
         "--runs-dir", str(tmp_path / "runs")],
        cwd=REPO, capture_output=True, check=True, timeout=300,
    )  # fmt: skip
    (item,) = (tmp_path / "runs").glob("*/items/*")
    out = tmp_path / "modules.json"
    probe = (
        "import atexit, json, runpy, sys\n"
        f"atexit.register(lambda: open({str(out)!r}, 'w').write(json.dumps(list(sys.modules))))\n"
        f"sys.argv = ['harness', 'score', {str(item)!r}]\n"
        "runpy.run_module('harness', run_name='__main__')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    names = set(json.loads(out.read_text()))
    assert "scorers.prime_agent.ledger" in names  # the probe saw the score run
    commands = {n for n in names if n.startswith("harness.cli.") and n.endswith("_cmd")}
    assert commands == {"harness.cli.score_cmd"}
    assert names & {"harness.plan", "harness.fixtures", "yaml"} == set()
