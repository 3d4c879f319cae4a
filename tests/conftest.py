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

#: The packaged real CLI beside the repo (CI has ``../shared``); install.sh puts it here.
SHARED_AGENT = REPO_ROOT.parent / "shared" / "prime-agent"
#: install.sh fetches node and a kernel venv: about 25 s with warm caches, minutes cold.
INSTALL_TIMEOUT_S = 900


def _agent_version() -> str:
    version_file = SHARED_AGENT / "VERSION"
    if version_file.is_file():
        for line in version_file.read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "version" and value.strip():
                return value.strip()
    return "0.8.0"


def agent_cache_dir() -> Path:
    """install.sh's default target: ``${XDG_CACHE_HOME:-~/.cache}/prime-agent-<version>``."""
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / f"prime-agent-{_agent_version()}"


def locate_real_agent() -> tuple[Path | None, str]:
    """``$PRIME_AGENT_BIN``, else the cache install, else install ``../shared/prime-agent``.

    Returns the binary, or None and the reason it is unavailable.
    """
    configured = os.environ.get("PRIME_AGENT_BIN")
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path, ""
        return None, f"PRIME_AGENT_BIN={configured} is not an executable file"
    cached = agent_cache_dir() / "bin" / "prime-agent"
    if cached.is_file() and os.access(cached, os.X_OK):
        return cached, ""
    installer = SHARED_AGENT / "install.sh"
    if not installer.is_file():
        return None, f"no real prime-agent: PRIME_AGENT_BIN unset, {cached} and {installer} absent"
    done = subprocess.run(
        ["bash", str(installer), str(agent_cache_dir())],
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0 or not cached.is_file():
        tail = (done.stderr or done.stdout).strip()[-500:]
        return None, f"installing {installer} failed (exit {done.returncode}): {tail}"
    return cached, ""


@pytest.fixture(scope="session")
def real_agent_bin() -> Path:
    """The real prime-agent CLI, or a skip saying why there is none."""
    binary, reason = locate_real_agent()
    if binary is None:
        pytest.skip(reason)
    return binary


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
