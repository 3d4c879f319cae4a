"""How the sim starts its own processes: always ``agent.py`` in an internal mode.

Every process inherits the caller's environment unchanged, so the harness can find all of
them (daemon, catalog, children, stray grandchildren) by what it put in that environment.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import subprocess

AGENT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent.py")

#: Internal modes of agent.py; never part of the real CLI's argv.
MODE_DAEMON = "--sim-daemon"
MODE_CHILD = "--sim-child"
MODE_SLEEP = "--sim-sleep"


def sim_argv(mode: str, *args: str) -> list[str]:
    # -S skips site-packages: the sim is stdlib-only and each child starts twice as fast.
    return [sys.executable, "-S", AGENT_SCRIPT, mode, *args]


def spawn_detached(
    argv: list[str], cwd: str, ignore_sigterm: bool = False
) -> subprocess.Popen[bytes]:
    """Start ``argv`` in its own session with stdio on /dev/null, as the product's daemon is.

    With ``ignore_sigterm`` the process ignores SIGTERM from its first instruction on (an
    ignored disposition survives exec), not only once its Python has started: a SIGTERM
    sent right after the launch must not win that race.
    """
    import signal
    import subprocess  # lazily: most children never start a process

    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN) if ignore_sigterm else None
    try:
        return subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def sleep_forever(ignore_sigterm: bool) -> NoReturn:
    """The body of a catalog process or a stray tool process."""
    import signal
    import time

    # Explicit both ways: a stubborn daemon's catalog would otherwise inherit SIG_IGN.
    signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore_sigterm else signal.SIG_DFL)
    while True:
        time.sleep(3600)
