"""Shared test helpers: where the repo and the captured real runs are."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Captures of the real prime-agent CLI (v0.8.0), copied from shared/real-runs so that every
#: clone runs these tests (see tests/data/real-runs/README.md).
REAL_RUNS = REPO_ROOT / "tests" / "data" / "real-runs"


@pytest.fixture
def real_runs() -> Path:
    assert REAL_RUNS.is_dir(), f"the checked-in captures are missing: {REAL_RUNS}"
    return REAL_RUNS
