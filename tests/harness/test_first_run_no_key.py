"""First-run paths as a new user meets them: no provider key anywhere and an empty HOME.

A placeholder key once set in every test process hid a ``selftest`` that refused the real
prime-agent "for want of credentials", though a selftest talks only to the scripted model
server and needs none. These run the CLI as a subprocess with an environment that holds
no provider variable at all, and a HOME with nothing in it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")

#: agent -> what its stand-in binary answers to ``--version`` (it then exits at once, like
#: a client that cannot do anything: every row errors, but the selftest runs).
STAND_INS = {
    "prime-agent": "0.8.0",
    "claude-code": "2.1.332 (Claude Code)",
    "opencode": "1.18.33",
    "codex": "codex-cli 0.171.0",
    "gemini": "0.61.0",
}


def bare_env(home: Path) -> dict[str, str]:
    """The environment of a user with no provider key and nothing in HOME."""
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_AUTH_TOKEN"))}
    env.pop("PRIME_AGENT_CODING_AGENT_DIR", None)
    env.update(HOME=str(home), TMPDIR=str(home.parent / "tmp"))
    (home.parent / "tmp").mkdir(exist_ok=True)
    return env


def harness(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def stand_in(tmp_path: Path, agent: str) -> Path:
    binary = tmp_path / agent
    binary.write_text(
        f'#!/bin/sh\nif [ "$1" = "--version" ]; then echo "{STAND_INS[agent]}"; fi\nexit 0\n'
    )
    binary.chmod(0o755)
    return binary


@pytest.mark.slow
@pytest.mark.parametrize("agent", sorted(STAND_INS))
def test_a_selftest_needs_no_provider_key(tmp_path: Path, agent: str) -> None:
    """The selftest runs (its rows fail: the stand-in answers nothing, exit 1); it is not
    refused for credentials (exit 3), and it leaves HOME as empty as it found it."""
    home = tmp_path / "home"
    home.mkdir()
    done = harness(
        bare_env(home), "selftest", "--agent", agent, "--script", "honest",
        "--agent-bin", str(stand_in(tmp_path, agent)), "--fixture", TINY,
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert "credentials" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0/1 rows hold" in done.stdout, done.stdout
    assert list(home.iterdir()) == []


@pytest.mark.parametrize(
    ("agent", "model", "key"),
    [("prime-agent", "anthropic/x", ""), ("gemini", "google/gemini-x", "GEMINI_API_KEY")],
)
def test_a_run_without_a_key_is_refused_and_says_which(
    tmp_path: Path, agent: str, model: str, key: str
) -> None:
    """The other side: a real run of the same stand-in needs credentials, and says so."""
    home = tmp_path / "home"
    home.mkdir()
    done = harness(
        bare_env(home), "run", "--agent", agent, "--model", model,
        "--agent-bin", str(stand_in(tmp_path, agent)), "--fixture", TINY,
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert done.returncode == 3 and f"{agent} has no credentials" in done.stderr
    assert key in done.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    assert list(home.iterdir()) == []


@pytest.mark.slow
def test_the_main_job_runs_with_no_key_and_an_empty_home(tmp_path: Path) -> None:
    """The README's main job, with the built-in simulated agent."""
    home = tmp_path / "home"
    home.mkdir()
    done = harness(
        bare_env(home), "run", "--fixture", "all", "--agent", "sim",
        "--runs-dir", str(tmp_path / "r"),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(home.iterdir()) == []
