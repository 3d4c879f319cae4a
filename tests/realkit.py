"""Helpers of the real-agent tests: what a run left behind."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest

from harness.agents.env import ITEM_TOKEN_VAR
from harness.pricing import PriceTable, item_cost
from scorers import ItemScore
from scripted_model import ScriptedModelServer
from scripted_model.server import PRICES_PER_MTOK


def tree(root: Path) -> list[str]:
    """Every path under ``root``, relative (empty: nothing was created there)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def processes_of_run(run_id: str) -> list[int]:
    """Processes still carrying an item token of this run in their environment."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            token = proc.environ().get(ITEM_TOKEN_VAR, "")
        except (psutil.Error, OSError):
            continue
        if token.startswith(run_id):
            found.append(proc.pid)
    return found


REPO = Path(__file__).resolve().parent.parent
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"


def selftest_in_fresh_home(
    base: Path,
    agent: str,
    binary: Path,
    timeout_s: float,
    fixture: str = str(TINY),
    options: Sequence[str] = (),
) -> dict:
    """``harness selftest --agent AGENT`` on ``fixture`` (default: the tiny one) at
    concurrency 3 (and ``options``), with HOME and TMPDIR pointed at fresh dirs; what it
    printed, those dirs, and any process of the run still alive afterwards."""
    home, tmp, runs = base / "home", base / "tmp", base / "runs"
    for d in (home, tmp):
        d.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "harness", "selftest", "--agent", agent,
         "--agent-bin", str(binary), "--fixture", fixture,
         "--concurrency", "3", "--runs-dir", str(runs), *options],
        cwd=REPO, env={**os.environ, "HOME": str(home), "TMPDIR": str(tmp)},
        capture_output=True, text=True, timeout=timeout_s, check=False,
    )  # fmt: skip
    run_ids = [d.name for d in runs.iterdir()] if runs.is_dir() else []
    leftovers = [pid for run_id in run_ids for pid in processes_of_run(run_id)]
    return {"done": done, "home": home, "tmp": tmp, "runs": runs, "leftovers": leftovers}


def assert_score_is_the_bill(score: ItemScore, script: Any, server: ScriptedModelServer) -> None:
    """A scripted run's score: the script's expected verdict, and every token the server
    billed for the script counted (cache reads and writes apart), priced at the server's
    prices to the bill's price."""
    failing = {reason.split(":", 1)[0] for reason in score.failures}
    assert score.resolved is (script.expected_status == "resolved"), score.failures
    assert failing == set(script.expected_failing), score.failures
    bill = server.billed(script.name)
    usage = score.usage
    assert usage is not None and usage.complete, usage
    assert score.tokens_used == bill.total, (score.tokens_used, bill)
    assert (usage.total.cache_read_tokens, usage.total.cache_write_tokens) == (
        bill.cache_read_tokens,
        bill.cache_write_tokens,
    )
    prices = PriceTable.from_mapping({script.name: dict(PRICES_PER_MTOK)}, "server prices")
    cost = item_cost(usage, f"scripted/{script.name}", prices)
    assert cost.usd == pytest.approx(bill.usd, rel=1e-12) and cost.complete, (cost, bill)
