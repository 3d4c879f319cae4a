"""Helpers of the real-agent tests: what a run left behind."""

from __future__ import annotations

from pathlib import Path

import psutil

from harness.procs import ITEM_TOKEN_VAR


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
