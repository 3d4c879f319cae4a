"""The one way the harness launches and ends processes.

``run_process`` starts a child in its own session with a scrubbed environment, sends its
output straight to files (nothing to drain, nothing interleaved on the console), enforces a
timeout and a cancel event by escalating SIGTERM -> SIGKILL to the whole process group, and
returns a frozen result.

``ProcessTracker`` answers "what did this item start?": the agent's environment carries a
per-item token, every process the agent's tree had is remembered while it runs, and at the
end ``sweep`` ends everything that carries the token, sits in the item's workdir, or was
ever seen below the agent, however detached it became.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from harness.agents.env import ITEM_TOKEN_VAR

#: Longest wait between checks of the timeout, the cancel event and the output caps. The
#: agent's exit itself is noticed at once (pidfd) where the platform allows.
POLL_INTERVAL_S = 0.05

#: How often the wait loop records the agent's process tree. Orphans reparent to us (we are a
#: subreaper) and carry the item token, so this only backs up the token for processes that
#: scrub their environment; half a second keeps its CPU cost negligible at concurrency 8.
OBSERVE_INTERVAL_S = 0.5

#: Grace between SIGTERM and SIGKILL. Agents flush their session files on SIGTERM in well
#: under a second; two seconds covers a loaded 2-core machine without stalling a run.
TERM_GRACE_S = 2.0

#: An agent that writes more than this to stdout or stderr is runaway: it is stopped so it
#: cannot fill the disk. Real runs write well under a megabyte.
MAX_OUTPUT_BYTES = 512 * 1024 * 1024

_PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Make orphaned descendants reparent to this process instead of init (Linux only).

    A daemon that double-forks into its own session then stays in our process tree, so the
    sweep can still find it even if it scrubbed its environment.
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class KilledProcess:
    """A process the harness had to end after the item's agent was done."""

    pid: int
    name: str
    cmdline: str
    signal: str  # "SIGTERM" or "SIGKILL"
    reason: str  # how it was attributed to the item: "token", "cwd", "tree", "orphan"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True)
class ProcessResult:
    """What happened to one launched process."""

    argv: tuple[str, ...]
    exit_code: int | None
    timed_out: bool
    cancelled: bool
    output_capped: bool
    wall_time_s: float
    start_error: str | None = None


@dataclass
class ProcessTracker:
    """Remembers every process seen in an item's tree, to end them all later."""

    token: str
    workdir: Path
    seen: dict[int, float] = field(default_factory=dict)  # pid -> create_time
    #: Nothing born before the item started can belong to it: those are never inspected.
    born_after: float = field(default_factory=lambda: time.time() - 1.0)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def observe_tree(self, root_pid: int) -> None:
        """Record ``root_pid`` and all its current descendants."""
        try:
            root = psutil.Process(root_pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        with self._lock:
            for proc in procs:
                with contextlib.suppress(psutil.Error):
                    self.seen.setdefault(proc.pid, proc.create_time())

    def find(self) -> dict[int, tuple[psutil.Process, str]]:
        """Every live process attributable to this item, with the reason (one /proc scan)."""
        me = os.getpid()
        protected = {me, *(p.pid for p in psutil.Process(me).parents())}
        table: dict[int, psutil.Process] = {}
        children: dict[int, list[int]] = {}
        for proc in psutil.process_iter(["create_time", "ppid", "status"]):
            if proc.info["status"] == psutil.STATUS_ZOMBIE or proc.pid in protected:
                continue
            table[proc.pid] = proc
            children.setdefault(proc.info["ppid"], []).append(proc.pid)
        found: dict[int, tuple[psutil.Process, str]] = {}
        with self._lock:
            seen = dict(self.seen)
        for pid, created in seen.items():
            known = table.get(pid)
            if known is not None and known.info["create_time"] == created:
                found[pid] = (known, "tree")
        workdir = str(self.workdir)
        with _managed_lock:
            managed = set(_managed)
        own_session = os.getsid(0)
        for pid, proc in table.items():
            created = proc.info["create_time"]
            if pid in found or created is None or created < self.born_after:
                continue  # nothing born before the item started can be the item's
            reason = _attribution(proc, self.token, workdir)
            if reason is None and proc.info["ppid"] == me and pid not in managed:
                reason = _orphan(proc, own_session)
            if reason:
                found[pid] = (proc, reason)
        # Descendants of anything found belong to the item too.
        stack = list(found)
        while stack:
            for child in children.get(stack.pop(), ()):
                if child not in found:
                    found[child] = (table[child], "tree")
                    stack.append(child)
        return {pid: v for pid, v in found.items() if _alive(v[0])}

    def wait_quiet(self, timeout_s: float) -> bool:
        """Give processes that were told to stop (daemon shutdown) time to exit by themselves.

        True when nothing attributable to the item is left running.
        """
        found = self.find()
        if found:
            procs = [proc for proc, _ in found.values()]
            _, alive = psutil.wait_procs(procs, timeout=timeout_s)  # reaps our own children
            reap_orphans()
            if alive:
                return False
            found = self.find()
        return not found

    def sweep(self, grace_s: float = TERM_GRACE_S) -> list[KilledProcess]:
        """End every process attributable to the item: SIGTERM, then SIGKILL after a grace."""
        killed: list[KilledProcess] = []
        for _ in range(3):  # a dying process may still spawn; look again until quiet
            found = self.find()
            if not found:
                break
            killed.extend(terminate(found, grace_s))
        return killed


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _attribution(proc: psutil.Process, token: str, workdir: str) -> str | None:
    try:
        if proc.environ().get(ITEM_TOKEN_VAR) == token:
            return "token"
    except psutil.Error:
        pass
    try:
        cwd = proc.cwd()
        if cwd == workdir or cwd.startswith(workdir + os.sep):
            return "cwd"
    except psutil.Error:
        pass
    return None


def _orphan(proc: psutil.Process, own_session: int) -> str | None:
    """An orphan reparented to us (we are a subreaper) that scrubbed its environment.

    It carries no token at all; one born during the item is taken as the item's. Our own
    helpers (git) run in our session; agents and everything they start never do.
    """
    try:
        if os.getsid(proc.pid) != own_session and ITEM_TOKEN_VAR not in proc.environ():
            return "orphan"
    except (psutil.Error, OSError):
        pass
    return None


def _describe(proc: psutil.Process) -> tuple[str, str]:
    try:
        name = proc.name()
    except psutil.Error:
        name = "?"
    try:
        cmdline = " ".join(proc.cmdline())[:200]
    except psutil.Error:
        cmdline = ""
    return name, cmdline


def terminate(
    found: Mapping[int, tuple[psutil.Process, str]], grace_s: float = TERM_GRACE_S
) -> list[KilledProcess]:
    """SIGTERM every process, SIGKILL the ones still alive after ``grace_s``, reap our own."""
    described = {pid: _describe(proc) for pid, (proc, _) in found.items()}
    procs = [proc for proc, _ in found.values()]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    gone, alive = psutil.wait_procs(procs, timeout=grace_s)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    _, still = psutil.wait_procs(alive, timeout=grace_s)
    killed_hard = {p.pid for p in alive}
    result = []
    for pid, (_, reason) in found.items():
        name, cmdline = described[pid]
        sig = "SIGKILL" if pid in killed_hard else "SIGTERM"
        result.append(KilledProcess(pid, name, cmdline, sig, reason))
    reap_orphans()
    del gone, still
    return result


#: Pids of processes started by ``run_process`` that subprocess itself will reap.
_managed: set[int] = set()
_managed_lock = threading.Lock()


def reap_orphans() -> None:
    """Collect exit statuses of orphans reparented to us (we are a subreaper), not Popen's."""
    try:
        children = psutil.Process().children()
    except psutil.Error:
        return
    with _managed_lock:
        managed = set(_managed)
    for child in children:
        if child.pid in managed:
            continue
        with contextlib.suppress(psutil.Error, ChildProcessError, OSError):
            if child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def run_process(
    argv: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    timeout_s: float,
    stdout_path: Path,
    stderr_path: Path,
    tracker: ProcessTracker | None = None,
    cancel: threading.Event | None = None,
    term_grace_s: float = TERM_GRACE_S,
    stdin_path: Path | None = None,
) -> ProcessResult:
    """Run ``argv`` in its own session; stop it on timeout or cancel (SIGTERM, then SIGKILL).
    Its stdin is ``stdin_path`` (read to its end, then closed) or /dev/null.

    Never raises for the child's behaviour; a child that cannot be started at all is
    reported in ``start_error``.
    """
    start = time.monotonic()
    # Launch and register under the lock that every orphan search takes first: between its
    # fork and exec a child is in its own session without the item's token, and another
    # item's sweep must not mistake it for an orphan (seen with short-lived agents).
    with (
        open(stdin_path or os.devnull, "rb") as inp,
        open(stdout_path, "wb") as out,
        open(stderr_path, "wb") as err,
        _managed_lock,
    ):
        try:
            proc = subprocess.Popen(
                list(argv),
                env=dict(env),
                cwd=cwd,
                stdin=inp,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            return ProcessResult(tuple(argv), None, False, False, False, 0.0, str(exc))
        _managed.add(proc.pid)
    timed_out = cancelled = capped = False
    deadline = start + timeout_s
    next_observe = start
    exited = _exit_waiter(proc.pid)
    try:
        while proc.poll() is None:
            if tracker is not None and time.monotonic() >= next_observe:
                tracker.observe_tree(proc.pid)
                next_observe = time.monotonic() + OBSERVE_INTERVAL_S
            now = time.monotonic()
            if now >= deadline:
                timed_out = True
            elif cancel is not None and cancel.is_set():
                cancelled = True
            elif _too_big(stdout_path) or _too_big(stderr_path):
                capped = True
            if timed_out or cancelled or capped:
                _stop(proc, term_grace_s)
                break
            exited(POLL_INTERVAL_S)
    finally:
        if proc.poll() is None:  # harness exception mid-wait: never leave it running
            _stop(proc, term_grace_s)
        with _managed_lock:
            _managed.discard(proc.pid)
    wall = time.monotonic() - start
    return ProcessResult(tuple(argv), proc.returncode, timed_out, cancelled, capped, wall)


def _exit_waiter(pid: int) -> Callable[[float], None]:
    """A wait that returns as soon as ``pid`` exits (pidfd on Linux), else after a timeout."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return time.sleep
    poller = select.poll()
    poller.register(fd, select.POLLIN)

    def wait(timeout_s: float) -> None:
        poller.poll(int(timeout_s * 1000))

    weakref.finalize(wait, os.close, fd)
    return wait


def _too_big(path: Path) -> bool:
    try:
        return path.stat().st_size > MAX_OUTPUT_BYTES
    except OSError:
        return False


def _stop(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    _signal_group(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=grace_s)


def run_quick(
    argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout_s: float = 60.0
) -> subprocess.CompletedProcess[bytes]:
    """Run a short helper command (git) to completion with a scrubbed env; raise on failure."""
    return subprocess.run(
        list(argv),
        env=dict(env),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout_s,
        check=True,
    )
