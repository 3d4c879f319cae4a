"""The ``sim`` fixture: a prepared workdir whose processes are all killed at teardown."""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from simkit import SHARDS, SimLayout, wait_gone


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimLayout]:
    """A fresh workdir with three shards; kills everything the test started, at teardown."""
    # Unix socket paths are capped at ~107 bytes; tmp_path can be longer than that.
    sock_dir = Path(tempfile.mkdtemp(prefix="sim-", dir="/tmp"))
    layout = SimLayout(root=tmp_path / "w", socket=sock_dir / "d.sock")
    for d in (layout.repo, layout.sessions, layout.home):
        d.mkdir(parents=True)
    for s in SHARDS:
        (layout.repo / s["file"]).write_text(s["text"], encoding="utf-8")
    try:
        yield layout
    finally:
        leftovers = layout.processes()
        for proc in leftovers:
            with contextlib.suppress(psutil.NoSuchProcess):
                proc.kill()
        for proc in leftovers:
            wait_gone(proc.pid)  # not psutil.wait_procs: an orphan's zombie may linger
        shutil.rmtree(sock_dir, ignore_errors=True)
