"""Running an edit fixture's hidden checks on a final tree, SWE-bench style and no weaker.

``run_checks`` builds, under ``work_dir``::

    repo/     a fresh copy of the fixture's shipped repo files (the workspace builder's own
              copy), with ONLY the declared editable files taken from the agent's final repo
    hidden/   the shards' check files, outside the copy
    home/ tmp/  the checks' private HOME and TMPDIR

and runs every shard's checks in ONE process (``checks_runner.py``, by path, under
``python -I -S -B``) with a scrubbed environment, the network refused, each shard under its
own alarm and the whole process under the item's limit. Nothing else the agent wrote (a
``conftest.py``, ``sitecustomize.py``, a ``.pth`` file, edited checks, a fake ``unittest``,
a changed ``pyproject.toml``) is in the copy, so none of it can change an outcome.

A shard that defeats its alarm (a check that swallows it, or blocks in C) is cut from
outside: the runner is killed, that shard is ``timed out``, and the shards it had not
reached run in a fresh process, a bounded number of times.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import stat
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from harness.agents.env import ITEM_TOKEN_VAR
from harness.files import open_regular
from harness.item.processes import ProcessResult, ProcessTracker, run_process
from harness.item.workspace import copy_shipped_tree
from scorers.records import ShardChecks
from scorers.types import Manifest

RUNNER = Path(__file__).resolve().with_name("checks_runner.py")

#: One shard's checks: a unit test imports a module, calls a function or runs a short script.
#: An honest shard takes a few milliseconds here; 10 s is a wide margin on a loaded 2-core
#: machine, and caps what one hanging shard costs the item.
SHARD_LIMIT_S = 10.0
#: All of one item's checks, the runner's restarts included: a 120-shard item's honest checks
#: take well under a second; two minutes lets about twelve shards hang to their limit before
#: the rest are reported not run, and caps what a tree whose every check hangs costs a run.
CHECKS_LIMIT_S = 120.0
#: Past a shard's alarm, how long the harness waits for the runner to report the shard cut
#: before it kills the runner itself (the alarm was swallowed, or a C call ignored it).
ALARM_GRACE_S = 2.0
#: Runner processes per item: the first, and one more after each shard that had to be cut
#: from outside. More such shards than this and the rest are reported not run.
MAX_RUNNER_STARTS = 10
#: The runner writes its results line by line and holds nothing else worth a flush.
KILL_GRACE_S = 0.5
#: How often the harness looks at the results for a shard past its limit.
WATCH_INTERVAL_S = 0.05
#: The end of a shard's output kept in edits.json (a traceback and unittest's summary).
TAIL_CHARS = 2000
#: The end of the runner's stderr quoted when it could not start or died.
ERROR_CHARS = 1000
#: What the checks' shell commands find: the system's, never the caller's PATH.
CHECKS_PATH = "/usr/local/bin:/usr/bin:/bin"

OUTCOMES = frozenset({"passed", "failed", "timed out", "error"})

#: A declared file as the final repo holds it.
DeclaredState = Literal["regular", "missing", "not a regular file"]


@dataclass(frozen=True)
class ChecksRun:
    """Every shard's checks on one final tree; ``error`` when they could not run at all."""

    shards: tuple[ShardChecks, ...]
    error: str | None = None
    seconds: float = 0.0


def declared_state(repo: Path, rel: str) -> DeclaredState:
    """How ``repo`` holds the repo-relative ``rel``, without following any symlink (at the
    file or at any folder above it): a path leaving the repo is never a regular file."""
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        return "not a regular file"
    here = repo
    for i, part in enumerate(parts):
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return "missing"
        except OSError:
            return "not a regular file"
        last = i == len(parts) - 1
        if (last and not stat.S_ISREG(mode)) or (not last and not stat.S_ISDIR(mode)):
            return "not a regular file"  # a symlink (file or folder), a fifo, a device
    return "regular"


def _take_declared(manifest: Manifest, final_repo: Path, copy: Path) -> None:
    """Over the shipped copy, each declared file as the final repo left it: copied when it is
    a regular file there, removed from the copy when it is gone or anything else."""
    for rel in manifest.editable:
        state = declared_state(final_repo, rel)
        target = copy / rel
        if state == "regular":
            target.parent.mkdir(parents=True, exist_ok=True)
            with open_regular(final_repo / rel) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst)
        elif declared_state(copy, rel) == "regular":
            target.unlink()


def _copy_checks(fixture_dir: Path, manifest: Manifest, hidden: Path) -> list[dict[str, Any]]:
    """The shards' check files into ``hidden`` (regular files only); the plan's shards. A
    check that is missing or not a regular file stays absent and errors its shard."""
    shards = []
    for shard in manifest.shards:
        paths = []
        for rel in shard.checks:
            target = hidden / rel
            if declared_state(fixture_dir, rel) == "regular" and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(fixture_dir / rel, target, follow_symlinks=False)
            paths.append(str(target))
        shards.append({"shard": shard.file, "checks": paths})
    return shards


class _Watch:
    """Follows one runner's results file; cancels the runner when a shard outlives its
    alarm by ``ALARM_GRACE_S`` (the alarm did not cut it)."""

    def __init__(self, results: Path, cancel: threading.Event, shard_limit_s: float) -> None:
        self.results, self.cancel = results, cancel
        self.limit_s = shard_limit_s + ALARM_GRACE_S
        self.stop = threading.Event()
        self.cut = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        seen, running_since = 0, None
        while not self.stop.wait(WATCH_INTERVAL_S):
            try:
                lines = self.results.read_text(encoding="utf-8").splitlines()
            except OSError:
                continue
            if len(lines) != seen:
                seen = len(lines)
                running_since = time.monotonic() if lines[-1].startswith('{"start"') else None
            if running_since is not None and time.monotonic() - running_since > self.limit_s:
                self.cut = True
                self.cancel.set()
                return

    def close(self) -> None:
        self.stop.set()
        self._thread.join()


def _read_results(path: Path) -> tuple[bool, str | None, dict[str, ShardChecks]]:
    """Whether the runner got ready, the shard it started last without a result, and the
    results it wrote (a torn last line is ignored)."""
    ready, running, done = False, None, {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        lines = []
    for line in lines:
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if row.get("ready"):
            ready = True
        elif "start" in row:
            running = str(row["start"])
        elif "shard" in row:
            shard = str(row["shard"])
            outcome = row.get("outcome")
            done[shard] = ShardChecks(
                shard=shard,
                outcome=outcome if outcome in OUTCOMES else "error",
                tests=int(row.get("tests", 0)),
                failures=int(row.get("failures", 0)),
                tail=str(row.get("tail", ""))[-TAIL_CHARS:],
                seconds=float(row.get("seconds", 0.0)),
            )
            running = None
    return ready, running, done


def _tail(path: Path) -> str:
    try:
        return path.read_bytes()[-ERROR_CHARS:].decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _start_runner(
    work_dir: Path,
    start: int,
    plan: dict[str, Any],
    env: dict[str, str],
    tracker: ProcessTracker,
    deadline: float,
) -> tuple[ProcessResult, bool]:
    """Run the runner once on ``plan`` (its ``start``-th process) until it exits, the
    item's ``deadline`` passes, or a shard outlives its alarm; and whether it was cut so."""
    plan_path = work_dir / f"plan-{start}.json"
    results = Path(plan["results"])
    results.touch()
    plan_path.write_text(json.dumps(plan), encoding="utf-8")
    cancel = threading.Event()
    watch = _Watch(results, cancel, float(plan["shard_limit_s"]))
    try:
        proc = run_process(
            [sys.executable, "-I", "-S", "-B", str(RUNNER), str(plan_path)],
            env=env,
            cwd=Path(plan["root"]),
            timeout_s=max(deadline - time.monotonic(), 0.0),
            stdout_path=work_dir / f"runner-{start}.out",
            stderr_path=work_dir / f"runner-{start}.err",
            tracker=tracker,
            cancel=cancel,
            term_grace_s=KILL_GRACE_S,
        )
    finally:
        watch.close()
    return proc, watch.cut


def run_checks(
    fixture_dir: Path,
    manifest: Manifest,
    final_repo: Path | None,
    work_dir: Path,
    limit_s: float = CHECKS_LIMIT_S,
    *,
    shard_limit_s: float = SHARD_LIMIT_S,
) -> ChecksRun:
    """Run every shard's hidden checks on ``final_repo`` (None: the fixture as shipped) in a
    fresh copy under ``work_dir`` (created; the caller removes it). Never raises for what
    the checks or the tree do; ``error`` says when the runner could not start at all."""
    started = time.monotonic()
    deadline = started + limit_s
    work_dir.mkdir(parents=True, exist_ok=True)
    copy, hidden, home, tmp = (work_dir / d for d in ("repo", "hidden", "home", "tmp"))
    copy_shipped_tree(fixture_dir, copy)
    if final_repo is not None:
        _take_declared(manifest, final_repo, copy)
    for d in (hidden, home, tmp):
        d.mkdir()
    pending = _copy_checks(fixture_dir, manifest, hidden)
    if not pending:
        return ChecksRun((), None, 0.0)
    token = f"checks-{uuid.uuid4().hex}"
    env = {
        "PATH": CHECKS_PATH,
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(tmp),
        ITEM_TOKEN_VAR: token,
    }
    tracker = ProcessTracker(token=token, workdir=work_dir)
    plan: dict[str, Any] = {
        "root": str(copy),
        "checks_root": str(hidden),
        "shard_limit_s": shard_limit_s,
        "tail_chars": TAIL_CHARS,
    }
    found: dict[str, ShardChecks] = {}
    error: str | None = None
    try:
        for start in range(1, MAX_RUNNER_STARTS + 1):
            plan = {**plan, "shards": pending, "results": str(work_dir / f"results-{start}.jsonl")}
            proc, cut = _start_runner(work_dir, start, plan, env, tracker, deadline)
            results = Path(plan["results"])
            ready, running, done = _read_results(results)
            found.update(done)
            stderr = _tail(work_dir / f"runner-{start}.err")
            if not ready:
                if proc.timed_out:  # the item's limit came first: its shards were not run
                    break
                why = proc.start_error or f"exit code {proc.exit_code}: {stderr}"
                if start == 1:
                    error = f"the checks runner could not start: {why}"
                    return ChecksRun((), error, round(time.monotonic() - started, 3))
                break
            if running is not None:
                if proc.timed_out or cut:
                    limit = (
                        f"the item's checks limit of {limit_s:g} s"
                        if proc.timed_out
                        else (f"the shard's limit of {shard_limit_s:g} s")
                    )
                    tail = f"cut at {limit} (the checks process was killed)"
                    found[running] = ShardChecks(running, "timed out", tail=tail)
                else:
                    tail = f"the checks process ended (exit code {proc.exit_code}) while "
                    found[running] = ShardChecks(running, "error", tail=tail + f"it ran\n{stderr}")
            pending = [p for p in pending if p["shard"] not in found]
            if not pending or proc.timed_out or (running is None and not done):
                break
    finally:
        tracker.sweep(KILL_GRACE_S)
    spent = time.monotonic() >= deadline
    if spent:
        not_run = ShardChecks(
            "", "timed out", tail=f"not run: the item's checks limit of {limit_s:g} s was spent"
        )
    else:
        not_run = ShardChecks("", "error", tail="not run: the checks runner stopped before it")
    for entry in pending:
        found.setdefault(entry["shard"], dataclasses.replace(not_run, shard=entry["shard"]))
    shards = tuple(found[s.file] for s in manifest.shards if s.file in found)
    return ChecksRun(shards, error, round(time.monotonic() - started, 3))
