"""The CLI starts without the heavy libraries: scipy, numpy and polars load only for the
statistics that need them (``--trials auto``, the report), the price data only when an item
is priced. A real subprocess per command, its imports read from ``-X importtime``."""

from __future__ import annotations

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
            names.add(line.rsplit("|", 1)[1].strip().split(".")[0])
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
