"""Finding and ending what a dead harness left behind (``kill -9``, a crash, a power cut).

A live harness ends every process its items start (``procs.ProcessTracker``) and removes
their temp dirs. One that dies abruptly cannot, so each run stamps its owner into what it
leaves around:

- every item's process token (``SWARM_HARNESS_ITEM_TOKEN``, inherited by everything the
  agent starts) is ``<run id>@<owner pid>.<owner start>-<uuid>``;
- every temp dir it creates (``swh-*``) holds ``.swh-owner.json`` with the same owner.

The owner is dead when no process has its pid, the process there is a zombie, or it
started at another time (the pid was reused). Only then is anything touched: a live run's
processes and dirs are never ended or removed, and a token or dir without an owner stamp
(older harness versions, ``--keep-workdir``) is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from harness.agents.env import ITEM_TOKEN_VAR
from harness.item.processes import KilledProcess, terminate

#: Name of the owner stamp inside a temp dir.
OWNER_FILE = ".swh-owner.json"
#: Prefix of every temp dir the harness creates (``workspace.WORKDIR_PREFIX``).
TEMP_PREFIX = "swh-"

_TOKEN = re.compile(r"(?P<run>.+)@(?P<pid>\d+)\.(?P<start>\d+)-[0-9a-f]{32}\Z")


@dataclass(frozen=True)
class Owner:
    """A harness process: its pid and its start time (centiseconds since the epoch)."""

    pid: int
    start: int

    @classmethod
    def current(cls) -> Owner:
        return cls(os.getpid(), _start_of(psutil.Process()))

    def alive(self) -> bool:
        try:
            proc = psutil.Process(self.pid)
            return proc.status() != psutil.STATUS_ZOMBIE and _start_of(proc) == self.start
        except psutil.Error:
            return False


def _start_of(proc: psutil.Process) -> int:
    """When the process started, as a number that never changes for it: its start in clock
    ticks since boot (``/proc/<pid>/stat`` field 22), so a reused pid almost never matches.

    Not psutil's ``create_time``: that adds the boot time ``/proc/stat`` reports *now*,
    which moves when the wall clock is adjusted (NTP), so two harness processes could
    disagree about a live owner's start and one would take the other's live run for dead
    (a concurrent run's temp dirs removed under it). Without /proc: ``create_time`` in
    centiseconds."""
    try:
        raw = Path(f"/proc/{proc.pid}/stat").read_bytes()
        return int(raw[raw.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return round(proc.create_time() * 100)


def token_prefix(run_id: str, owner: Owner | None = None) -> str:
    """The per-run prefix of item tokens (``item.ItemOptions.token_prefix``)."""
    owner = owner or Owner.current()
    return f"{run_id}@{owner.pid}.{owner.start}"


def parse_token(token: str) -> tuple[str, Owner] | None:
    """(run id, owner) of a token this harness wrote; None for any other token."""
    found = _TOKEN.match(token)
    if found is None:
        return None
    return found.group("run"), Owner(int(found.group("pid")), int(found.group("start")))


def stamp_dir(path: Path, run_id: str | None = None, owner: Owner | None = None) -> None:
    """Record in a temp dir which harness process owns it."""
    owner = owner or Owner.current()
    data = {"run_id": run_id, "pid": owner.pid, "start": owner.start}
    (path / OWNER_FILE).write_text(json.dumps(data), encoding="utf-8")


def _dir_owner(path: Path) -> Owner | None:
    try:
        data = json.loads((path / OWNER_FILE).read_text(encoding="utf-8"))
        return Owner(int(data["pid"]), int(data["start"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class Cleanup:
    """What :func:`clean_leftovers` ended and removed, and what it left for live owners."""

    killed: list[KilledProcess] = field(default_factory=list)
    removed_dirs: list[Path] = field(default_factory=list)
    live_runs: list[str] = field(default_factory=list)

    @property
    def anything(self) -> bool:
        return bool(self.killed or self.removed_dirs)

    def summary(self) -> str:
        return (
            f"ended {len(self.killed)} process(es) and removed {len(self.removed_dirs)} temp "
            "dir(s) left by a harness that died"
        )


def temp_roots() -> list[Path]:
    """Where the harness creates temp dirs: the temp dir, and /tmp for short socket paths."""
    roots = [Path(tempfile.gettempdir()).resolve(), Path("/tmp").resolve()]
    return list(dict.fromkeys(r for r in roots if r.is_dir()))


def find_orphans() -> tuple[dict[int, tuple[psutil.Process, str]], set[str]]:
    """Processes whose token names a dead owner (with their descendants); live run ids."""
    me = os.getpid()
    protected = {me, *(p.pid for p in psutil.Process(me).parents())}
    found: dict[int, tuple[psutil.Process, str]] = {}
    live: set[str] = set()
    verdicts: dict[Owner, bool] = {}
    children: dict[int, list[psutil.Process]] = {}
    for proc in psutil.process_iter(["ppid"]):
        children.setdefault(proc.info["ppid"], []).append(proc)
        if proc.pid in protected:
            continue
        try:
            token = proc.environ().get(ITEM_TOKEN_VAR)
        except psutil.Error:
            continue
        parsed = parse_token(token) if token else None
        if parsed is None:
            continue
        run_id, owner = parsed
        if owner not in verdicts:
            verdicts[owner] = owner.alive()
        if verdicts[owner]:
            live.add(run_id)
        else:
            found[proc.pid] = (proc, f"dead run {run_id}")
    stack = list(found)
    while stack:  # whatever they started belongs to the dead run too
        for child in children.get(stack.pop(), ()):
            if child.pid not in found and child.pid not in protected:
                found[child.pid] = (child, found.get(child.info["ppid"], (None, "tree"))[1])
                stack.append(child.pid)
    return found, live


def clean_leftovers(roots: list[Path] | None = None) -> Cleanup:
    """End the processes and remove the temp dirs of every harness run whose owner died."""
    found, live = find_orphans()
    killed = terminate(found) if found else []
    removed: list[Path] = []
    for root in temp_roots() if roots is None else roots:
        with contextlib.suppress(OSError):
            for entry in sorted(root.glob(TEMP_PREFIX + "*")):
                if entry.is_symlink() or not entry.is_dir():
                    continue
                owner = _dir_owner(entry)
                if owner is None or owner.alive():
                    continue
                shutil.rmtree(entry, ignore_errors=True)
                if not entry.exists():
                    removed.append(entry)
    return Cleanup(killed, removed, sorted(live))
