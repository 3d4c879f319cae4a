"""Running one work item end to end: workspace -> agent -> cleanup -> bundle -> score."""

from __future__ import annotations

import os
import re
import shutil
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import __version__
from harness.agents import adapter_for_meta
from harness.agents.base import AgentAdapter, ItemSpec
from harness.bundle import write_json_atomic
from harness.errors import BundleError, HarnessError
from harness.fixtures import Fixture
from harness.fsread import open_regular
from harness.launch import base_env, secret_values
from harness.leftovers import stamp_dir
from harness.procs import ProcessResult, ProcessTracker, run_process
from harness.results import ItemResult, RunFacts
from harness.scheduler import NotStarted, Slot
from harness.workspace import RepoTemplates, build_item_paths, make_workdir
from scorers import ItemScore
from scorers.types import Manifest

#: After an agent's leftovers acknowledged their stop (e.g. a daemon's shutdown) they exit
#: within milliseconds; give them this long before anything still running is counted as a
#: process the harness had to kill.
STOP_EXIT_WAIT_S = 1.0

#: Version of item.json's layout. 2: ``agent_kind``/``agent_options`` name the adapter that
#: wrote the bundle (absent: prime-agent), ``agent_stop`` replaces ``daemon_shutdown``.
ITEM_META_SCHEMA_VERSION = 2

#: How much of stderr's tail is quoted as the agent's error when it exits non-zero.
STDERR_QUOTE_BYTES = 2000


@dataclass(frozen=True)
class WorkItem:
    """One unit of work: a fixture, a model (condition) and a trial number (1-based)."""

    fixture: Fixture
    model: str
    trial: int

    @property
    def key(self) -> str:
        return f"{self.fixture.manifest.name}:{self.model}:{self.trial}"

    @property
    def dir_name(self) -> str:
        return item_dir_name(self.key)


def item_dir_name(key: str) -> str:
    """A filesystem-safe, readable and unique directory name for an item key."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", key.replace(":", "__"))


@dataclass(frozen=True)
class ItemOptions:
    agent: AgentAdapter
    timeout_s: float
    keep_workdir: bool = False
    #: Prefix of every item's process token (the run id), so a run's processes are findable.
    token_prefix: str = "item"
    #: The run's cache of committed fixture repos (None: build each repo afresh).
    templates: RepoTemplates | None = None
    #: Where the agent's credentials/model definitions come from (None: the user's own).
    agent_home_source: Path | None = None
    #: Variables added to the caller's environment (as if the caller had set them).
    extra_env: tuple[tuple[str, str], ...] = ()


def run_item(
    work: WorkItem,
    opts: ItemOptions,
    item_dir: Path,
    cancel: threading.Event | None = None,
    slot: Slot | None = None,
) -> ItemResult:
    """Run the agent on one item and score what it left. Never leaves a process behind.

    ``slot`` is acquired just before the agent is launched and released as soon as the agent
    CLI has exited (its model work is over): preparing the workspace, and the daemon
    shutdown, sweep, collection and scoring, overlap other items' agents. A stop while
    waiting for the slot raises ``NotStarted`` and leaves nothing behind.
    """
    item_dir.mkdir(parents=True, exist_ok=True)
    root = make_workdir()
    if not opts.keep_workdir:  # a kept workdir is the user's; a cleaner must never take it
        stamp_dir(root, opts.token_prefix.partition("@")[0])
    token = f"{opts.token_prefix}-{uuid.uuid4().hex}"
    tracker = ProcessTracker(token=token, workdir=root)
    meta: dict[str, Any] = {
        "schema_version": ITEM_META_SCHEMA_VERSION,
        "harness_version": __version__,
        "key": work.key,
        "fixture": work.fixture.manifest.name,
        "fixture_path": str(work.fixture.path),
        "fixture_hash": work.fixture.content_hash(),
        "model": work.model,
        "trial": work.trial,
        "agent": opts.agent.label(),
        "agent_kind": opts.agent.name,
        "agent_options": opts.agent.options,
        "process_token": token,
    }
    proc: ProcessResult | None = None
    start_error: str | None = None
    swept = False
    agent = opts.agent
    try:
        paths = build_item_paths(root, work.fixture.path, opts.templates)
        env, set_names = base_env({**os.environ, **dict(opts.extra_env)}, paths, token)
        spec = ItemSpec(
            key=work.key,
            model=work.model,
            task_text=agent.task_text(work.fixture),
            manifest=work.fixture.manifest,
            credentials_source=opts.agent_home_source,
        )
        launch = agent.prepare(paths, spec, env, token)
        try:
            prefix = agent.resolve_command()
        except HarnessError as exc:
            start_error = str(exc)
            prefix = []
        argv = [*prefix, *launch.argv]
        meta.update(
            command=argv,
            env_set=sorted({*set_names, *launch.env_set}),
            env_removed=sorted(set(os.environ) - set(launch.env)),
            **launch.record,
        )
        stdout, stderr = root / "stdout.jsonl", root / "stderr.txt"
        if slot is not None:
            slot.acquire()
        if start_error is None:
            proc = run_process(
                argv,
                env=launch.env,
                cwd=paths.repo,
                timeout_s=opts.timeout_s,
                stdout_path=stdout,
                stderr_path=stderr,
                tracker=tracker,
                cancel=cancel,
            )
            start_error = proc.start_error
        if slot is not None:
            slot.release()  # the agent CLI has exited: its model work is over
        quiet = False
        if proc is not None:
            early = proc.timed_out or proc.cancelled or proc.exit_code != 0
            stopped = agent.stop(launch, early)
            meta["agent_stop"] = {"status": stopped.status, "detail": stopped.detail}
            quiet = stopped.clean and tracker.wait_quiet(STOP_EXIT_WAIT_S)
        killed = [] if quiet else tracker.sweep()
        leftover = len(tracker.find()) if killed else 0
        swept = True
        meta["killed_processes"] = [k.to_dict() for k in killed]
        meta["leftover_processes"] = leftover
        secrets = secret_values(launch.env, launch.credential_files)
        collected = agent.collect(
            launch,
            item_dir,
            stdout if stdout.exists() else None,
            stderr if stderr.exists() else None,
            secrets,
        )
        meta["collection"] = {
            **collected.record,
            "notes": list(collected.notes),
            "capped": list(collected.capped),
            "truncated": list(collected.truncated),
        }
        meta["manifest"] = manifest_dict(work.fixture.manifest)
        if opts.keep_workdir:
            meta["workdir"] = str(root)
    except NotStarted:
        shutil.rmtree(item_dir, ignore_errors=True)
        raise
    finally:
        if not swept:  # a harness exception mid-item: still leave nothing running
            tracker.sweep()
        if not opts.keep_workdir:
            shutil.rmtree(root, ignore_errors=True)
    meta.update(
        start_error=start_error,
        exit_code=proc.exit_code if proc else None,
        timed_out=bool(proc and proc.timed_out),
        cancelled=bool(proc and proc.cancelled),
        output_capped=bool(proc and proc.output_capped),
        wall_time_s=round(proc.wall_time_s, 3) if proc else 0.0,
    )
    score = score_bundle(item_dir, meta)
    facts = facts_from_meta(meta, score, item_dir)
    write_json_atomic(item_dir / "item.json", meta)
    result = make_result(work, item_dir, score, facts)
    write_json_atomic(item_dir / "result.json", result.to_dict())
    return result


def make_result(work: WorkItem, item_dir: Path, score: ItemScore, facts: RunFacts) -> ItemResult:
    return ItemResult(
        key=work.key,
        fixture=work.fixture.manifest.name,
        model=work.model,
        trial=work.trial,
        item_dir=item_dir.name,
        score=score,
        facts=facts,
    )


def manifest_dict(manifest: Manifest) -> dict[str, Any]:
    return {
        "name": manifest.name,
        "artifact": manifest.artifact,
        "shards": [
            {"file": s.file, "worker": s.worker, "question": s.question, "expected": s.expected}
            for s in manifest.shards
        ],
    }


def score_bundle(
    item_dir: Path, meta: dict[str, Any], manifest: Manifest | None = None
) -> ItemScore:
    """Score an item bundle exactly as ``score ITEM_DIR`` does, with the adapter that
    wrote it (named in item.json)."""
    if manifest is None:
        try:
            manifest = Manifest.from_dict(meta["manifest"])
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"{item_dir / 'item.json'}: manifest: missing or invalid") from exc
    try:
        adapter = adapter_for_meta(meta)
    except HarnessError as exc:
        raise BundleError(f"{item_dir / 'item.json'}: agent_kind: {exc}") from exc
    return adapter.score(item_dir, meta, manifest)


def _stderr_tail(item_dir: Path) -> str | None:
    path = item_dir / "stderr.txt"
    try:
        with open_regular(path) as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - STDERR_QUOTE_BYTES))
            text = fh.read().decode("utf-8", errors="replace").strip()
    except OSError:
        return None
    return text or None


def facts_from_meta(meta: dict[str, Any], score: ItemScore, item_dir: Path) -> RunFacts:
    """Decide whether the launch ever got going (CONTRACT §5: errors are not failures).

    Uses only what item.json records, so re-scoring a bundle decides the same way.
    """
    killed = len(meta.get("killed_processes") or [])
    leftover = int(meta.get("leftover_processes") or 0)
    wall = float(meta.get("wall_time_s") or 0.0)
    exit_code = meta.get("exit_code")
    timed_out = bool(meta.get("timed_out"))
    if meta.get("start_error"):
        return RunFacts(
            0.0,
            None,
            False,
            f"agent could not start: {meta['start_error']}",
            None,
            killed,
            leftover,
        )
    agent_error = score.agent_error
    error: str | None = None
    capped = (meta.get("collection") or {}).get("capped") or []
    if meta.get("cancelled"):
        error = "interrupted: the run was stopped before this item finished"
    elif capped:
        error = "collection hit a cap, the evidence is incomplete: " + "; ".join(capped)
    elif not timed_out and not score.model_reached:
        if score.failed_assistant_messages > 0:
            error = "model never reached: every assistant message ended in error"
        elif exit_code not in (0, None):
            error = f"agent exited {exit_code} before reaching the model"
        else:
            # Exit 0 with no model reply at all (a wrong binary such as /bin/true, or a CLI
            # that never got to its model): the environment failed, not the agent.
            error = f"agent exited {exit_code} without any model reply"
    if exit_code not in (0, None) and not timed_out and agent_error is None:
        agent_error = _stderr_tail(item_dir)
    if meta.get("output_capped"):
        agent_error = agent_error or "agent output exceeded the harness's cap; it was stopped"
    return RunFacts(wall, exit_code, timed_out, error, agent_error, killed, leftover)
