"""Shared test helpers: where the repo and the captured real runs are."""

from __future__ import annotations

import os
import shutil
import subprocess
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


# ------------------------------------------------------------------ the real agent CLI

#: Installing a client from the npm registry: about 400 MB unpacked, minutes with a cold cache.
INSTALL_TIMEOUT_S = 900


@pytest.fixture(scope="session")
def prime_agent_bin() -> Path:
    """The user's own prime-agent CLI from ``$PRIME_AGENT_BIN`` (it is not redistributed
    with the harness), or a skip saying why there is none."""
    configured = os.environ.get("PRIME_AGENT_BIN")
    if not configured:
        pytest.skip(
            "no real prime-agent: set PRIME_AGENT_BIN to your own CLI (it is not "
            "redistributed; tests/data/real-runs holds captures of real runs instead)"
        )
    path = Path(configured)
    if not (path.is_file() and os.access(path, os.X_OK)):
        pytest.skip(f"PRIME_AGENT_BIN={configured} is not an executable file")
    return path


#: Markers of tiers that are slow by nature: their tests belong to the slow tier too, so the
#: fast tier is simply ``-m "not slow"``.
SLOW_TIERS = ("reliability", "e2e", "statistics", "real_agent", "browser", "distributed")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in SLOW_TIERS):
            item.add_marker(pytest.mark.slow)


# ------------------------------------------------------------------ the real Claude Code


def claude_code_cache_bin() -> Path:
    """scripts/install-claude-code.sh's default target for the pinned version."""
    from harness.agents.claude_code.launch import CLAUDE_CODE_VERSION

    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / f"claude-code-{CLAUDE_CODE_VERSION}" / "node_modules" / ".bin" / "claude"


@pytest.fixture(scope="session")
def claude_code_bin() -> Path:
    """``$CLAUDE_CODE_BIN``, else the cache install, else run the install script (npm
    registry), else a skip saying why there is none."""
    configured = os.environ.get("CLAUDE_CODE_BIN")
    if configured:
        if not os.access(configured, os.X_OK):
            pytest.skip(f"CLAUDE_CODE_BIN={configured} is not executable")
        return Path(configured)
    cached = claude_code_cache_bin()
    if os.access(cached, os.X_OK):
        return cached
    if shutil.which("npm") is None:
        pytest.skip(f"no Claude Code: CLAUDE_CODE_BIN unset, {cached} absent, no npm")
    installer = REPO_ROOT / "scripts" / "install-claude-code.sh"
    done = subprocess.run(
        ["bash", str(installer)],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"installing Claude Code failed: {done.stderr.strip()[-300:]}")
    return Path(done.stdout.strip().splitlines()[-1])
