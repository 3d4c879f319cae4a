"""``runs prune``: which old run directories to delete, and deleting them safely.

A run is removed only when every given rule says so (beyond the newest ``keep`` and
older than ``older_than``). Never removed: a running run (or one whose lock a live
process holds), the baseline or origin of a run that is kept (its comparison would point
nowhere), and anything that is not a run directory of this runs dir (a symlink, a stray
folder). Planning is separate from deleting so the default is a dry run.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import UsageError
from harness.runs.catalog import RunInfo, list_runs
from harness.runs.lock import RunLockedError, hold_run_dir

_AGE = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_age(text: str) -> dt.timedelta:
    """``30d``, ``12h``, ``2w``, ``90m``, ``45s`` as a duration; anything else refused."""
    match = _AGE.match(text)
    if match is None:
        raise UsageError(
            f"--older-than {text!r}: expected a number and a unit s, m, h, d or w (30d)"
        )
    return dt.timedelta(seconds=int(match.group(1)) * _UNIT_S[match.group(2)])


@dataclass(frozen=True)
class Kept:
    """A run a rule selected that is kept anyway, and why."""

    run: RunInfo
    why: str


@dataclass(frozen=True)
class PrunePlan:
    remove: tuple[RunInfo, ...]
    kept: tuple[Kept, ...]


def _created(info: RunInfo) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(info.created_at)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def plan_prune(
    runs_dir: Path,
    keep: int | None,
    older_than: dt.timedelta | None,
    now: dt.datetime | None = None,
) -> PrunePlan:
    """What ``runs prune`` would remove under ``runs_dir``, and what it keeps that a rule
    selected (with the reason)."""
    if keep is None and older_than is None:
        raise UsageError("runs prune: give --keep N, --older-than AGE or both")
    if keep is not None and keep < 0:
        raise UsageError(f"--keep {keep}: must be 0 or more")
    now = now or dt.datetime.now(dt.UTC)
    runs = list_runs(runs_dir)  # oldest first
    newest = {r.run_id for r in runs[len(runs) - keep :]} if keep else set()
    selected = []
    for info in runs:
        if info.run_id in newest:
            continue
        if older_than is not None:
            created = _created(info)
            if created is None or now - created < older_than:
                continue
        selected.append(info)
    chosen = {r.run_id for r in selected}
    needed: dict[str, str] = {}
    for info in runs:
        if info.run_id not in chosen:
            if info.baseline_id:
                needed.setdefault(info.baseline_id, f"the baseline of kept run {info.run_id}")
            if info.origin:
                needed.setdefault(info.origin, f"the origin of kept run {info.run_id}")
    remove, kept = [], []
    for info in selected:
        if info.status == "running":
            kept.append(Kept(info, "running"))
        elif info.path.is_symlink() or info.path.parent.resolve() != runs_dir.resolve():
            kept.append(Kept(info, "not a directory of this runs dir"))
        elif info.run_id in needed:
            kept.append(Kept(info, needed[info.run_id]))
        else:
            remove.append(info)
    return PrunePlan(tuple(remove), tuple(kept))


def dir_size(path: Path) -> int:
    """Bytes of the regular files under ``path`` (symlinks not followed)."""
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue
            total += st.st_size
    return total


def remove_runs(runs: Sequence[RunInfo]) -> tuple[list[RunInfo], list[Kept]]:
    """Delete each run dir while holding its lock (a run resumed meanwhile is left alone);
    the ones removed and the ones that could not be."""
    removed, failed = [], []
    for info in runs:
        try:
            with hold_run_dir(info.path):
                shutil.rmtree(info.path)
        except RunLockedError:
            failed.append(Kept(info, "in use by a live process"))
        except OSError as exc:
            failed.append(Kept(info, f"could not be removed: {exc.strerror or exc}"))
        else:
            removed.append(info)
    return removed, failed
