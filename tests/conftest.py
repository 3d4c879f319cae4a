"""Shared test helpers: where the repo and the captured real runs are."""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Variables that give an agent provider credentials: the tests run as a user who has none
#: (see below).
PROVIDER_KEY_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")

# The harness, the sim and the scripted servers run as real subprocesses in hundreds of
# tests. An environment with PYTHONDONTWRITEBYTECODE (this machine's, and so CI's) makes
# each of them compile every module it imports again, most of a second per start
# (benchmarks/bench_startup.py); without it the first start writes the bytecode and the
# rest read it. Python writes it atomically, so side-by-side starts are safe.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# The tests run in the environment a new user has: no provider key at all. A placeholder key
# once set here for every test process hid a selftest that refused the real prime-agent for
# want of one; a test that needs credentials (a stand-in prime-agent binary run as a user
# with a key would run it) asks for them (the ``prime_agent_key`` fixture).
for _var in [v for v in os.environ if v.endswith(PROVIDER_KEY_SUFFIXES)]:
    del os.environ[_var]
# And this process: pytest's assertion rewriter caches the test modules it rewrote only
# when bytecode may be written (it reads the flag at each import, so the test modules
# collected after this conftest are cached); without it every session parsed and compiled
# them all again, about 4 s of the fast tier's collection.
sys.dont_write_bytecode = False
#: Captures of the real prime-agent CLI (v0.8.0), copied from shared/real-runs so that every
#: clone runs these tests (see tests/data/real-runs/README.md).
REAL_RUNS = REPO_ROOT / "tests" / "data" / "real-runs"


def _harness_temp_dirs() -> set[Path]:
    from harness.item.leftovers import TEMP_PREFIX, temp_roots

    return {p for root in temp_roots() for p in root.glob(TEMP_PREFIX + "*") if p.is_dir()}


@pytest.fixture(scope="session", autouse=True)
def no_ownerless_temp_dirs() -> Iterator[None]:
    """The session leaves no harness temp dir without its owner stamp: `clean` removes a
    dead run's stamped dirs, but nobody ever removes one without a stamp."""
    from harness.item.leftovers import OWNER_FILE

    before = _harness_temp_dirs()
    yield

    def unstamped() -> list[Path]:
        return sorted(p for p in _harness_temp_dirs() - before if not (p / OWNER_FILE).exists())

    left = unstamped()
    if left:  # another harness on this machine may be between creating a dir and stamping it
        time.sleep(2.0)
        left = [p for p in unstamped() if p in left]
    assert left == [], f"tests left temp dirs no one will remove: {[str(p) for p in left]}"


#: The placeholder key of the tests that run a stand-in prime-agent as a user with a key
#: would; long enough to be redacted like any credential.
PLACEHOLDER_KEY = ("SWARM_HARNESS_TESTS_API_KEY", "placeholder-key-for-the-tests")


@pytest.fixture
def prime_agent_key(monkeypatch: pytest.MonkeyPatch) -> str:
    """A provider key in this test's environment (and so its subprocesses'), for a stand-in
    prime-agent that a run without one would refuse; its value."""
    name, value = PLACEHOLDER_KEY
    monkeypatch.setenv(name, value)
    return value


@pytest.fixture
def real_runs() -> Path:
    assert REAL_RUNS.is_dir(), f"the checked-in captures are missing: {REAL_RUNS}"
    return REAL_RUNS


# ------------------------------------------------------------------ the real agent CLI


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


#: Tiers whose tests start a real agent client, a Ray cluster or a browser: under xdist
#: (``--dist loadgroup``) they share one group, so one worker runs them one at a time and
#: they never starve each other (each wants most of a core for seconds).
HEAVY_TIERS = ("real_agent", "browser", "distributed")


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in SLOW_TIERS):
            item.add_marker(pytest.mark.slow)
        # Every other test goes with its module, so a module's shared set-up (a baseline
        # run, a built report) is made once, on one worker.
        heavy = any(item.get_closest_marker(name) for name in HEAVY_TIERS)
        item.add_marker(pytest.mark.xdist_group("heavy" if heavy else item.nodeid.split("::")[0]))


# ------------------------------------------------------------------ the real Claude Code


def _pinned_client(variable: str, label: str, install_module: str) -> Path:
    """``$<variable>``, else the pinned client installed the way users install it (``agents
    install``: reused when present, else from the npm registry), else a skip saying why
    there is none."""
    import importlib

    from harness.errors import HarnessError

    configured = os.environ.get(variable)
    if configured:
        if not os.access(configured, os.X_OK):
            pytest.skip(f"{variable}={configured} is not executable")
        return Path(configured)
    installer = importlib.import_module(install_module)
    cached = installer.client_path(installer.default_dir())
    if not os.access(cached, os.X_OK) and shutil.which("npm") is None:
        pytest.skip(f"no {label}: {variable} unset, {cached} absent, no npm")
    try:
        return Path(installer.install())
    except HarnessError as exc:
        pytest.skip(f"installing {label} failed: {exc}")


@pytest.fixture(scope="session")
def claude_code_bin() -> Path:
    """The real Claude Code client (see :func:`_pinned_client`)."""
    return _pinned_client("CLAUDE_CODE_BIN", "Claude Code", "harness.agents.claude_code.install")


# ------------------------------------------------------------------ the real opencode


@pytest.fixture(scope="session")
def opencode_bin() -> Path:
    """The real opencode client, with its ripgrep (see :func:`_pinned_client`)."""
    return _pinned_client("OPENCODE_BIN", "opencode", "harness.agents.opencode.install")


# ------------------------------------------------------------------ the real Codex


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The real Codex client's native executable (see :func:`_pinned_client`)."""
    return _pinned_client("CODEX_BIN", "Codex", "harness.agents.codex.install")


# ------------------------------------------------------------------ the real Gemini CLI


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    """The real Gemini CLI (see :func:`_pinned_client`)."""
    return _pinned_client("GEMINI_BIN", "Gemini CLI", "harness.agents.gemini.install")
