"""Shared test helpers: where the repo and the captured real runs are."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
REAL_RUNS = REPO_ROOT.parent / "shared" / "real-runs"


@pytest.fixture
def real_runs() -> Path:
    if not REAL_RUNS.is_dir():
        pytest.skip(f"captured real runs not found at {REAL_RUNS}")
    return REAL_RUNS
