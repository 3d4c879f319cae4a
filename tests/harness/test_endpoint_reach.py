"""The endpoint nobody can reach: refused before a run, not minutes of near-silence.

With ``ANTHROPIC_BASE_URL`` at a local port where nothing listens, a Claude Code run was
still going at 180 s (the client's own ten retries, then the harness's), and the client's
words ("Can't reach the API server ... ENOTFOUND") were never shown. The pre-run check opens
a TCP connection to each endpoint an agent will call (no request, no credentials) and a run
that cannot is refused with exit 3 and no run directory; ``--dry-run`` lists the check.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import EXIT_INFRA
from harness.run.preflight import unreachable

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")


@pytest.fixture
def listening() -> Iterator[int]:
    """A local port something listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def dead_port() -> int:
    """A local port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_listening_endpoint_is_reachable(listening: int) -> None:
    assert unreachable(f"http://127.0.0.1:{listening}/v1") is None


def test_nothing_listening_is_named(dead_port: int) -> None:
    why = unreachable(f"http://127.0.0.1:{dead_port}")
    assert why == f"connection refused: nothing listens at 127.0.0.1:{dead_port}"


def test_a_name_that_does_not_resolve_is_named() -> None:
    why = unreachable("https://no-such-host.invalid/v1")
    assert why is not None and why.startswith("its name does not resolve (no-such-host.invalid")


def claude_run(
    binary: Path | str, base_url: str, runs: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "ANTHROPIC_API_KEY": "sk-ant-placeholder-key-0000",
        "ANTHROPIC_BASE_URL": base_url,
    }
    return subprocess.run(
        [sys.executable, "-m", "harness", "run", "--agent", "claude-code", "--agent-bin",
         str(binary), "--model", "anthropic/claude-sonnet-4-5", "--fixture", TINY,
         "--runs-dir", str(runs), *extra],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def stand_in(tmp_path: Path) -> Path:
    binary = tmp_path / "claude"
    binary.write_text('#!/bin/sh\necho "2.1.332 (Claude Code)"\n')
    binary.chmod(0o755)
    return binary


def test_a_run_against_a_dead_endpoint_is_refused_before_anything_runs(
    tmp_path: Path, dead_port: int
) -> None:
    runs = tmp_path / "runs"
    done = claude_run(stand_in(tmp_path), f"http://127.0.0.1:{dead_port}", runs)
    assert done.returncode == EXIT_INFRA, done.stdout + done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == (
        f"error: claude-code's endpoint cannot be reached: http://127.0.0.1:{dead_port}: "
        f"connection refused: nothing listens at 127.0.0.1:{dead_port}; fix the network or "
        "the endpoint variable before a run (`run --dry-run` lists every check)"
    )
    assert not runs.exists() or not any(runs.iterdir())
    dry = claude_run(stand_in(tmp_path), f"http://127.0.0.1:{dead_port}", runs, "--dry-run")
    assert dry.returncode == EXIT_INFRA
    assert (
        f"FAIL endpoint reachable: http://127.0.0.1:{dead_port}: connection refused" in dry.stdout
    )


def test_a_reachable_endpoint_passes_the_check(tmp_path: Path, listening: int) -> None:
    dry = claude_run(stand_in(tmp_path), f"http://127.0.0.1:{listening}", tmp_path, "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"ok   endpoint reachable: http://127.0.0.1:{listening}" in dry.stdout


@pytest.mark.real_agent
def test_real_claude_code_at_a_dead_port_is_refused_in_seconds(
    tmp_path: Path, dead_port: int, claude_code_bin: Path
) -> None:
    """The issue's case with the real client: refused in seconds, where the run went on
    for minutes (at 180 s it was still running)."""
    started = time.monotonic()
    done = claude_run(claude_code_bin, f"http://127.0.0.1:{dead_port}", tmp_path / "runs")
    took = time.monotonic() - started
    assert done.returncode == EXIT_INFRA and "endpoint cannot be reached" in done.stderr
    assert took < 60, took  # the client's own retries alone took 204 s
