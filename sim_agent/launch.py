"""How the sim starts its own processes: ``agent.py`` in an internal mode, or ``sleep``.

Every process inherits the caller's environment unchanged, so the harness can find all of
them (daemon, catalog, children, stray grandchildren) by what it put in that environment.

Processes start with ``os.posix_spawn`` rather than :mod:`subprocess`: importing
subprocess (with selectors, signal, threading) costs a short-lived sim process more CPU
than the spawns themselves. Like ``Popen(close_fds=True, restore_signals=True)``, a
spawned process gets only the descriptors it is handed and default SIGPIPE/SIGXFSZ.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import NoReturn

AGENT_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent.py")

#: Internal modes of agent.py; never part of the real CLI's argv.
MODE_DAEMON = "--sim-daemon"
MODE_CHILD = "--sim-child"
MODE_SLEEP = "--sim-sleep"
MODE_WORKER = "--sim-worker"

#: The catalog process: a plain ``sleep`` (it never wakes up by itself; ~68 years).
CATALOG_ARGV = ("sleep", "2147483647")


def sim_argv(mode: str, *args: str) -> list[str]:
    # -S skips site-packages: the sim is stdlib-only and each child starts twice as fast.
    return [sys.executable, "-S", AGENT_SCRIPT, mode, *args]


def spawn(
    argv: list[str],
    *,
    cwd: str | None = None,
    stdin: int | None = None,
    stdout: int | None = None,
    stderr: int | None = None,
    quiet: bool = False,
    new_session: bool = False,
    default_sigterm: bool = False,
    search_path: bool = False,
    env: Mapping[str, str] | None = None,
) -> int:
    """Start ``argv``; returns its pid. The caller reaps it (``os.waitpid``) if it can.

    ``stdin``/``stdout``/``stderr`` are descriptors handed over as 0, 1 and 2; the rest is
    inherited, or /dev/null with ``quiet``. Signal dispositions and mask are inherited
    unless ``default_sigterm``, which starts the process with SIGTERM at its default and
    nothing blocked, whatever this process does with SIGTERM at the moment. ``env``
    replaces this process's environment.
    """
    actions: list[tuple[object, ...]] = []
    for target, fd in ((0, stdin), (1, stdout), (2, stderr)):
        if fd is not None:
            actions.append((os.POSIX_SPAWN_DUP2, fd, target))
        elif quiet:
            flags = os.O_RDONLY if target == 0 else os.O_WRONLY
            actions.append((os.POSIX_SPAWN_OPEN, target, os.devnull, flags, 0))
    # close_fds: descriptors this process itself inherited without O_CLOEXEC stay behind
    # (the ones it opens are non-inheritable, as Python makes them).
    actions.extend((os.POSIX_SPAWN_CLOSE, fd) for fd in sorted(_inheritable_fds() - {0, 1, 2}))
    setsigdef: tuple[int, ...] = (signal.SIGPIPE, signal.SIGXFSZ)
    if default_sigterm:
        setsigdef = (*setsigdef, signal.SIGTERM)
    environ = os.environ if env is None else env
    here = _enter(cwd)
    spawn = os.posix_spawnp if search_path else os.posix_spawn
    try:
        if default_sigterm:  # and nothing blocked, whatever this process blocks now
            return spawn(
                argv[0],
                argv,
                environ,
                file_actions=actions,
                setsid=new_session,
                setsigdef=setsigdef,
                setsigmask=(),
            )
        return spawn(
            argv[0], argv, environ, file_actions=actions, setsid=new_session, setsigdef=setsigdef
        )
    finally:
        _leave(here)


def spawn_detached(argv: list[str], cwd: str, ignore_sigterm: bool = False) -> int:
    """Start ``argv`` in its own session with stdio on /dev/null, as the product's daemon is.

    Returns its pid; nobody reaps it here (it outlives the process that started it). With
    ``ignore_sigterm`` the process ignores SIGTERM from its first instruction on (an
    ignored disposition survives exec), not only once its Python has started: a SIGTERM
    sent right after the launch must not win that race.
    """
    if not ignore_sigterm:
        return spawn(argv, cwd=cwd, quiet=True, new_session=True)
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        return spawn(argv, cwd=cwd, quiet=True, new_session=True)
    finally:
        signal.signal(signal.SIGTERM, previous)


def spawn_catalog() -> int:
    """The daemon's catalog process: same session, stdio on /dev/null, dies on SIGTERM.

    A plain ``sleep`` (no Python start-up to pay); a sleeping python if there is none.
    Explicitly at SIGTERM's default: a stubborn daemon ignores it, a catalog must not.
    """
    try:
        return spawn(list(CATALOG_ARGV), quiet=True, default_sigterm=True, search_path=True)
    except OSError:
        return spawn(sim_argv(MODE_SLEEP), quiet=True, default_sigterm=True)


def wait_exit_code(pid: int) -> int:
    """Block until ``pid`` (our child) exits; its code as ``Popen.returncode`` has it."""
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def _inheritable_fds() -> set[int]:
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:  # pragma: no cover - no procfs: nothing known to close
        return set()
    found = set()
    for name in names:
        fd = int(name)
        try:
            if os.get_inheritable(fd):
                found.add(fd)
        except OSError:  # the descriptor listdir itself used, now closed
            continue
    return found


def _enter(cwd: str | None) -> int | None:
    """chdir to ``cwd`` for a spawn (posix_spawn has no cwd); returns how to come back.

    The sim's spawning processes (CLI, child, daemon before its first client) run one
    thread, so nothing else can see the moment in another directory.
    """
    if cwd is None:
        return None
    here = os.open(".", getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY)
    try:
        os.chdir(cwd)
    except BaseException:
        os.close(here)
        raise
    return here


def _leave(here: int | None) -> None:
    if here is not None:
        try:
            os.fchdir(here)
        finally:
            os.close(here)


def sleep_forever(ignore_sigterm: bool) -> NoReturn:
    """The body of a stray tool process (or of a catalog where there is no ``sleep``)."""
    import time

    # Explicit both ways: a stubborn daemon's catalog would otherwise inherit SIG_IGN.
    signal.signal(signal.SIGTERM, signal.SIG_IGN if ignore_sigterm else signal.SIG_DFL)
    while True:
        time.sleep(3600)
