"""What a harness killed with SIGKILL leaves behind is found and ended by its token; a live
run's processes and dirs are never touched."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from harness.agents.env import ITEM_TOKEN_VAR
from harness.item.leftovers import (
    OWNER_FILE,
    TEMP_PREFIX,
    Owner,
    clean_leftovers,
    parse_token,
    temp_roots,
    token_prefix,
)

REPO = Path(__file__).resolve().parent.parent.parent
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"
#: Long enough that the killed run's agents are still running when the cleaner looks.
SLOW_S = 30
START_WAIT_S = 60.0


def test_token_round_trip_and_owner_liveness() -> None:
    me = Owner.current()
    assert me.alive()
    run, owner = parse_token(f"{token_prefix('20260101T000000Z-abc123', me)}-{'a' * 32}") or (
        "",
        me,
    )
    assert run == "20260101T000000Z-abc123" and owner == me
    assert parse_token("item-" + "a" * 32) is None  # an old or foreign token: never touched
    assert not Owner(me.pid, me.start + 1).alive()  # a reused pid is not the owner


def test_an_owner_stays_alive_when_the_reported_boot_time_moves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """/proc/stat's btime moves by a second when the wall clock is adjusted (seen on this
    machine: 1796135896 and ...897 within two minutes). psutil's create_time adds it, so a
    start taken from it made another harness process take a live run for dead and remove
    its temp dirs mid-run. The start is the process's own clock ticks since boot."""
    me = Owner.current()
    real = psutil.boot_time()
    monkeypatch.setattr(psutil, "boot_time", lambda: real + 1.0)
    monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: real + 1.0)  # type: ignore[attr-defined]
    assert Owner.current() == me and me.alive()


def _processes_of(owner_pid: int) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter():
        try:
            token = proc.environ().get(ITEM_TOKEN_VAR)
        except psutil.Error:
            continue
        parsed = parse_token(token) if token else None
        if parsed and parsed[1].pid == owner_pid:
            found.append(proc)
    return found


def _dirs_of(owner_pid: int) -> list[Path]:
    found = []
    for root in temp_roots():
        for entry in root.glob(TEMP_PREFIX + "*"):
            marker = entry / OWNER_FILE
            if marker.is_file() and f'"pid": {owner_pid},' in marker.read_text():
                found.append(entry)
    return found


@pytest.mark.reliability
def test_kill_9_leftovers_are_cleaned_by_the_next_harness(tmp_path: Path) -> None:
    harness = subprocess.Popen(
        [sys.executable, "-m", "harness", "run", "--fixture", str(TINY), "--agent",
         f"sim:slow={SLOW_S}", "--runs-dir", str(tmp_path / "runs")],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + START_WAIT_S
        while time.monotonic() < deadline and len(_processes_of(harness.pid)) < 2:
            time.sleep(0.2)  # the agent and its daemon (children come later)
        assert len(_processes_of(harness.pid)) >= 2, "the run never started its agent"
        assert _dirs_of(harness.pid)
        # A live run is never touched.
        assert clean_leftovers().killed == [] and _processes_of(harness.pid)
        os.kill(harness.pid, signal.SIGKILL)
        harness.wait()
        left = _processes_of(harness.pid)
        assert left, "nothing survived the harness: the test proves nothing"
        done = subprocess.run(
            [sys.executable, "-m", "harness", "clean"],
            cwd=REPO, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        print(done.stdout)
        assert "ended" in done.stdout and "removed" in done.stdout
        assert _processes_of(harness.pid) == []
        assert _dirs_of(harness.pid) == []
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
        for proc in _processes_of(harness.pid):
            proc.kill()


def test_the_version_checks_scratch_home_is_stamped_for_the_next_harness(
    tmp_path: Path,
) -> None:
    """``--version`` runs in a private scratch HOME (a node client takes seconds to answer):
    a harness killed meanwhile leaves it, so it carries its owner like every temp dir, and
    the next harness (or ``clean``) removes it."""
    from harness.item.leftovers import OWNER_FILE
    from harness.run.preflight import _version

    client = tmp_path / "client"
    client.write_text('#!/bin/sh\nls -A "$HOME"\n')
    client.chmod(0o755)
    said, error = _version([str(client)])
    assert error is None and said == OWNER_FILE
