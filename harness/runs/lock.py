"""One process at a time per run directory: an advisory ``flock`` on ``<run>/run.lock``.

The kernel drops the lock when its holder dies, however it dies (``kill -9`` included), so
a lock that can be taken means no live harness works on the run. The file keeps the
holder's pid for the refusal message; its presence alone means nothing.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from harness.errors import UsageError

LOCK_FILE = "run.lock"


class RunLockedError(UsageError):
    """Another live process is working on this run directory."""


def _holder(path: Path) -> str:
    try:
        pid = path.read_text(encoding="utf-8").strip()
    except OSError:
        pid = ""
    return f"process {pid}" if pid.isdigit() else "another process"


@contextlib.contextmanager
def hold_run_dir(run_dir: Path) -> Iterator[None]:
    """Hold ``run_dir``'s lock for the block; refuse (exit 2) if a live process holds it."""
    path = run_dir / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLockedError(
                f"{run_dir}: in use by {_holder(path)} (a run still in progress); "
                "wait for it to finish or stop it before resuming"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # releases the lock
