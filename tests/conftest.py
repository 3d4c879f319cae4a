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


#: Markers of tiers that are slow by nature: their tests belong to the slow tier too, so the
#: fast tier is simply ``-m "not slow"``.
SLOW_TIERS = ("reliability", "e2e", "statistics")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in SLOW_TIERS):
            item.add_marker(pytest.mark.slow)
