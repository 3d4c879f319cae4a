"""Running one work item end to end: workspace -> agent -> cleanup -> bundle -> score."""

from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from harness import __version__
from harness.agents.base import ItemSpec
from harness.agents.env import secret_values
from harness.errors import HarnessError, NotStarted
from harness.files import write_json_atomic
from harness.item.leftovers import stamp_dir
from harness.item.processes import ProcessResult, ProcessTracker, run_process
from harness.item.scoring import (
    ITEM_META_SCHEMA_VERSION,
    assess_bundle,
    facts_from_meta,
    make_result,
    manifest_dict,
)
from harness.item.story import write_story
from harness.item.tree import collect_tree
from harness.item.workspace import RepoTemplates, base_env, build_item_paths, make_workdir
from harness.model.item import ItemResult
from harness.plan import WorkItem
from harness.pricing import PriceTable

#: After an agent's leftovers acknowledged their stop (e.g. a daemon's shutdown) they exit
#: within milliseconds; give them this long before anything still running is counted as a
#: process the harness had to kill.
STOP_EXIT_WAIT_S = 1.0


class Phases:
    """Where an item's time went: seconds per phase, in the order they ran (item.json's
    ``phases_s``; ``agent`` is the agent's own, every other phase the harness's)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        #: When the item started (Unix time; item.json's ``started_at``), to lay a run's
        #: items on one time axis.
        self.started_at = time.time()
        self._mark = time.perf_counter()

    def end(self, phase: str) -> None:
        """The phase that ran since the last mark has ended."""
        now = time.perf_counter()
        self.seconds[phase] = round(self.seconds.get(phase, 0.0) + now - self._mark, 4)
        self._mark = now


class Slot(Protocol):
    """One item's claim on the run's concurrency budget (the scheduler hands it out):
    acquired just before the agent starts, released as soon as it has exited."""

    def acquire(self) -> None:
        """Block until one more agent may run; raise :class:`NotStarted` on a stop."""

    def release(self) -> None: ...


@dataclass(frozen=True)
class ItemOptions:
    """What every item of a run shares (the agent is the item's own: :class:`WorkItem`)."""

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
    #: The user's prices (``--prices FILE``), tried before the price library's.
    prices: PriceTable | None = None
    #: ``--agent-env``: (agent label, NAME, VALUE) set in that agent's own environment.
    agent_env: tuple[tuple[str, str, str], ...] = ()


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
    # Not parents=True: a run dir removed mid-run must fail here, not be made again.
    phases = Phases()
    item_dir.mkdir(exist_ok=True)
    agent = work.agent
    root = make_workdir(agent.longest_socket)
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
        "attempt": work.attempt,
        "agent": agent.label(),
        "agent_kind": agent.name,
        "agent_options": agent.options,
        "arm": agent.arm,
        "process_token": token,
        "timeout_s": opts.timeout_s,
    }
    proc: ProcessResult | None = None
    start_error: str | None = None
    swept = False
    try:
        paths = build_item_paths(root, work.fixture.path, opts.templates)
        env, set_names = base_env({**os.environ, **dict(opts.extra_env)}, paths, token)
        spec = ItemSpec(
            key=work.key,
            model=work.model,
            task_text=agent.prompt(work.fixture),
            manifest=work.fixture.manifest,
            credentials_source=opts.agent_home_source,
            attempt=work.attempt,
        )
        launch = agent.prepare(paths, spec, env, token)
        own = {n: v for label, n, v in opts.agent_env if label == agent.label()}
        if own:  # the agent's own settings, after it built its environment
            launch.env.update(own)
            launch = dataclasses.replace(launch, env_set=[*launch.env_set, *sorted(own)])
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
        phases.end("workspace")
        if slot is not None:
            slot.acquire()
            phases.end("slot_wait")
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
                stdin_path=launch.stdin,
            )
            start_error = proc.start_error
        phases.end("agent")
        if slot is not None and start_error is None:
            slot.release()  # the agent CLI has exited: its model work is over
        # An agent that could not start keeps its slot until the item is recorded (the
        # scheduler releases it then): an item failing in milliseconds must not let the next
        # ones past a circuit breaker that has not counted it yet.
        quiet = False
        if proc is not None:
            early = proc.timed_out or proc.cancelled or proc.exit_code != 0
            stopped = agent.stop(launch, early, lambda: bool(tracker.find()))
            meta["agent_stop"] = {"status": stopped.status, "detail": stopped.detail}
            quiet = stopped.clean and tracker.wait_quiet(STOP_EXIT_WAIT_S)
        killed = [] if quiet else tracker.sweep()
        leftover = len(tracker.find()) if killed else 0
        swept = True
        meta["killed_processes"] = [k.to_dict() for k in killed]
        meta["leftover_processes"] = leftover
        phases.end("stop")
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
        phases.end("collect")
        if work.fixture.manifest.kind == "edit":
            try:  # the final tree and its hidden checks, while the repo still exists
                collect_tree(work.fixture, paths.repo, item_dir, root / "final-tree")
            except Exception as exc:  # never lose the item over its edits.json
                meta["collection"]["notes"].append(f"edits.json not written: {exc}")
            phases.end("checks")
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
        phases.end("cleanup")
    meta.update(
        start_error=start_error,
        exit_code=proc.exit_code if proc else None,
        timed_out=bool(proc and proc.timed_out),
        cancelled=bool(proc and proc.cancelled),
        output_capped=bool(proc and proc.output_capped),
        wall_time_s=round(proc.wall_time_s, 3) if proc else 0.0,
    )
    assessed = assess_bundle(item_dir, meta)
    score = assessed.score
    facts = facts_from_meta(meta, assessed, item_dir)
    phases.end("score")
    meta["phases_s"] = phases.seconds
    meta["started_at"] = round(phases.started_at, 3)
    write_json_atomic(item_dir / "item.json", meta)
    result = make_result(work, item_dir, score, facts, opts.prices)
    write_json_atomic(item_dir / "result.json", result.to_dict())
    write_story(item_dir, meta)  # while the next agent works, not when the report is due
    return result
