"""Executing a run: plan -> scheduler -> items through the executor -> report on disk."""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import json
import secrets
import signal
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness import __version__
from harness.errors import (
    EXIT_BUDGET,
    EXIT_INFRA,
    EXIT_INTERRUPTED,
    EXIT_RESOLVED,
    EXIT_UNRESOLVED,
    BundleError,
    HarnessError,
    ResumeMismatchError,
    StorageError,
    UsageError,
    is_storage_error,
    storage_cause,
)
from harness.executors import Executor, executor_for
from harness.files import write_json_atomic
from harness.fixtures import Fixture
from harness.item.leftovers import clean_leftovers, token_prefix
from harness.item.lifecycle import ItemOptions
from harness.item.processes import become_subreaper, reap_orphans
from harness.item.scoring import RESULT_FILE, make_result, read_result
from harness.item.workspace import RepoTemplates
from harness.model.item import ItemResult, RunFacts
from harness.model.report import (
    RunAgent,
    RunOptions,
    RunReport,
    SequentialOptions,
    load_report,
)
from harness.model.text import plural
from harness.plan import (
    RunConfig,
    WorkItem,
    agent_models,
    build_plan,
    effective_models,
    identity_hash,
    load_fixtures,
    plan_identity,
    restrict,
    run_conditions,
)
from harness.report.progress import Progress
from harness.run.attempts import run_attempts, run_policy
from harness.run.breaker import CircuitBreaker
from harness.run.budget import BudgetTracker, check_budget_plan
from harness.run.preflight import (
    require_agent,
    require_credentials,
    require_reachable,
    require_shared_cells,
    require_verified,
)
from harness.run.scheduler import Scheduler, provider_of
from harness.runs.catalog import RUN_FILE, owner_record
from harness.runs.lock import hold_run_dir
from scorers import score_nothing

if TYPE_CHECKING:  # the planner's statistics (scipy) load only for --trials auto
    from harness.run.sequential import SequentialPlanner


@dataclass(frozen=True)
class RunOutcome:
    run_dir: Path
    report: RunReport
    exit_code: int


def new_run_id() -> str:
    now = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{secrets.token_hex(3)}"


def errored_result(work: WorkItem, reason: str, item_dir: Path) -> ItemResult:
    """An item the harness could not run or score: scored as empty, kept out of rates."""
    empty = score_nothing(work.fixture.manifest)
    result = make_result(work, item_dir, empty, RunFacts(0.0, None, False, reason, None))
    with contextlib.suppress(OSError):
        write_json_atomic(item_dir / RESULT_FILE, result.to_dict())
    return result


@contextlib.contextmanager
def _stop_on_signals(scheduler: Scheduler[Any, Any]) -> Iterator[list[int]]:
    """SIGINT/SIGTERM stop launching and cancel running items (main thread only)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handler(signum: int, _frame: object) -> None:
        received.append(signum)
        scheduler.stop()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _read_run_file(run_dir: Path) -> dict[str, Any]:
    run_file = run_dir / RUN_FILE
    try:
        data = json.loads(run_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResumeMismatchError(
            f"{run_file}: not a run directory this harness can resume ({exc})"
        ) from exc
    if not isinstance(data, dict):
        raise ResumeMismatchError(f"{run_file}: not a JSON object")
    return data


def stored_options(run_dir: Path) -> RunOptions:
    """The options a run was started with (for ``--resume`` defaults)."""
    from harness.model.legacy import upgrade_options

    run_file = run_dir / RUN_FILE
    options = _read_run_file(run_dir).get("options")
    try:
        if isinstance(options, dict):
            options = upgrade_options(options)
        return RunOptions.from_dict(options)
    except ValueError as exc:
        raise ResumeMismatchError(
            f"{run_file}: not a run directory this harness can resume ({exc})"
        ) from exc


def failed_keys(run_dir: Path) -> tuple[str, ...]:
    """The items of a finished run that did not resolve (errored and not started included),
    for ``--rerun-failed``; refused when there is none."""
    report = load_report(run_dir)
    keys = (*(i.key for i in report.items if i.status != "resolved"), *report.not_started)
    if not keys:
        raise UsageError(f"{run_dir}: nothing to re-run: every item resolved")
    return tuple(sorted(keys))


def kept_results(run_dir: Path) -> dict[str, ItemResult]:
    """The finished (non-errored) results on disk in ``run_dir``: what a resume keeps."""
    kept: dict[str, ItemResult] = {}
    for result_file in sorted((run_dir / "items").glob(f"*/{RESULT_FILE}")):
        with contextlib.suppress(BundleError):  # unreadable: the item runs again
            result = read_result(result_file.parent)
            if result.status != "error":
                kept[result.key] = result
    return kept


def _identity_diffs(old: dict[str, Any], new: dict[str, object]) -> str:
    """What differs between two identities, each as ``key: old -> new``."""
    keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    return "; ".join(f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in keys)


def _load_previous(
    run_dir: Path, identity: dict[str, object], trials: int | None
) -> dict[str, ItemResult]:
    """Finished (non-errored) results of a run being resumed, after checking its identity
    (the same plan, with as many trials or more: a resume can add trials; ``trials`` None:
    ``--trials auto``, whose cap may move)."""
    stored = _read_run_file(run_dir)
    if stored.get("identity_hash") != identity_hash(identity):
        raise ResumeMismatchError(
            f"{run_dir / RUN_FILE}: refusing to resume: this run differs from the original in "
            + _identity_diffs(dict(stored.get("identity") or {}), identity)
        )
    before = (stored.get("options") or {}).get("trials")
    if isinstance(before, int) and trials is not None and trials < before:
        raise ResumeMismatchError(
            f"{run_dir / RUN_FILE}: refusing to resume with --trials {trials}: the run has "
            f"{before} trials per fixture x model already (a resume keeps them; it can add "
            "trials, not drop them)"
        )
    return kept_results(run_dir)


def execute_run(
    config: RunConfig, progress: Progress | None = None, resume: Path | None = None
) -> RunOutcome:
    """Run every planned item (or the missing/errored ones of ``resume``) and write the report."""
    config.validate()
    # A wrong baseline is refused before anything runs.
    baseline = load_report(config.baseline) if config.baseline is not None else None
    fixtures = load_fixtures(config)
    require_verified(fixtures)  # an edit fixture whose hidden checks decide nothing
    plan = restrict(build_plan(fixtures, run_conditions(config), config.trials), config.only_keys)
    if config.baseline is not None and baseline is not None:  # and one with nothing in common
        require_shared_cells(config.baseline, baseline, plan)
    identity = plan_identity(config, fixtures)
    # A run that could only error is refused here (every agent's binary runs).
    versions = tuple(require_agent(agent).version for agent in config.agents)
    for agent in config.agents:  # and could authenticate
        require_credentials(agent, dict(config.extra_env), config.agent_home_source)
        require_reachable(agent, dict(config.extra_env), config.agent_home_source)
    if config.max_cost_usd is not None:
        from harness.pricing import unpriced_models

        unpriced = unpriced_models(effective_models(config), config.prices)
        check_budget_plan(unpriced, config.max_cost_usd, config.max_tokens)
    cleanup = clean_leftovers()  # what a harness killed earlier left behind (never a live run's)
    if cleanup.anything and progress is not None:
        progress.note(cleanup.summary())
    run_dir = resume if resume is not None else config.runs_dir / new_run_id()
    # Connected (or refused) before the run dir is made: an unreachable cluster writes nothing.
    with executor_for(config.executor) as executor:
        try:
            (run_dir / "items").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if not is_storage_error(exc):
                raise
            raise StorageError(_unwritable_message(exc, run_dir.parent)) from exc
        try:
            with hold_run_dir(run_dir):  # a second process on the same run dir is refused
                trials = None if config.sequential is not None else config.trials
                kept = _load_previous(run_dir, identity, trials) if resume is not None else {}
                return _execute_locked(
                    config, fixtures, plan, identity, run_dir, kept, progress, executor,
                    versions,
                )  # fmt: skip
        except OSError as exc:
            if not is_storage_error(exc, run_dir):
                raise
            raise StorageError(_storage_message(exc, run_dir, len(plan))) from exc


def _unwritable_message(exc: OSError, runs_dir: Path) -> str:
    """One line for a run directory that could not be made: nothing ran, and where to
    point the run instead."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        why = "has no room for a run (free space there, or give another --runs-dir)"
    else:
        why = "is not writable here (give one this user can write to)"
    return f"{storage_cause(exc)}; nothing ran: --runs-dir {runs_dir} {why}"


def _storage_message(exc: OSError, run_dir: Path, planned: int) -> str:
    """One line for a disk that filled up: what could not be written, what is kept, how to
    go on."""
    if not run_dir.is_dir():
        return f"{storage_cause(exc)}; what finished in it is gone with it"
    if not (run_dir / RUN_FILE).is_file():
        return f"{storage_cause(exc)}; nothing ran"
    kept = len(kept_results(run_dir))
    return (
        f"{storage_cause(exc)}; {kept} of {plural(planned, 'item')} finished and kept in "
        f"{run_dir}; free space, then resume with --resume {run_dir}"
    )


def run_options(
    config: RunConfig, fixtures: list[Fixture], versions: tuple[str | None, ...] = ()
) -> RunOptions:
    """The run's options as run.json and the report record them (``versions``: what each
    agent's binary said to ``--version``, in ``config.agents`` order)."""
    agents = tuple(
        RunAgent(
            agent=agent.label(),
            kind=agent.name,
            options=agent.options,
            binary=agent.binary,
            version=versions[n] if n < len(versions) else None,
            models=models,
        )
        for n, (agent, models) in enumerate(agent_models(config))
    )
    first = agents[0]
    return RunOptions(
        fixtures=config.fixtures,
        fixture_paths=tuple(str(fx.path) for fx in fixtures),
        agent_kind=first.kind,
        agent_options=first.options,
        agent_bin=first.binary,
        agent_version=first.version,
        models=effective_models(config),
        agent=", ".join(a.agent for a in agents),
        agents=agents,
        seed=config.agents[0].seed,
        trials=config.trials,
        concurrency=config.concurrency,
        executor=config.executor.name,
        provider_caps=dict(config.provider_caps),
        timeout_s=config.timeout_s,
        keep_workdir=config.keep_workdir,
        baseline=str(config.baseline) if config.baseline else None,
        threshold=config.threshold,
        fail_on=config.fail_on,
        only_keys=config.only_keys,
        solo=config.solo,
        origin=config.origin,
        sequential=(
            None
            if config.sequential is None
            else SequentialOptions(
                config.sequential.min_trials,
                config.sequential.max_trials,
                config.sequential.precision,
            )
        ),
        cost_threshold=config.cost_threshold,
        prices_file=config.prices.source if config.prices is not None else None,
        max_cost_usd=config.max_cost_usd,
        max_tokens=config.max_tokens,
        retries=config.retries,
        retry_backoff_s=config.retry_backoff_s,
        max_provider_errors=config.max_provider_errors,
        agent_env=_agent_env(config),
        selftest=config.selftest,
    )


def _agent_env(config: RunConfig) -> dict[str, dict[str, str]] | None:
    """``--agent-env`` as run.json records it: per agent label, name -> value."""
    if not config.agent_env:
        return None
    found: dict[str, dict[str, str]] = {}
    for label, name, value in config.agent_env:
        found.setdefault(label, {})[name] = value
    return found


def _execute_locked(
    config: RunConfig,
    fixtures: list[Fixture],
    plan: list[WorkItem],
    identity: dict[str, object],
    run_dir: Path,
    kept: dict[str, ItemResult],
    progress: Progress | None,
    executor: Executor,
    versions: tuple[str | None, ...],
) -> RunOutcome:
    run_id = run_dir.name
    started = dt.datetime.now(dt.UTC)
    items_dir = run_dir / "items"
    options = run_options(config, fixtures, versions)
    write_json_atomic(
        run_dir / RUN_FILE,
        {
            "run_id": run_id,
            "harness_version": __version__,
            "identity": identity,
            "identity_hash": identity_hash(identity),
            "options": options.to_dict(),
            "created_at": started.isoformat(),
            "owner": owner_record(),  # `runs list` tells a running run from a killed one
        },
    )
    planner = _planner(config, fixtures, kept) if config.sequential is not None else None
    todo: list[WorkItem] | SequentialPlanner = (
        planner if planner is not None else [w for w in plan if w.key not in kept]
    )
    become_subreaper()
    templates = RepoTemplates()
    opts = ItemOptions(
        timeout_s=config.timeout_s,
        keep_workdir=config.keep_workdir,
        token_prefix=token_prefix(run_id),
        templates=templates,
        agent_home_source=config.agent_home_source,
        extra_env=config.extra_env,
        prices=config.prices,
        agent_env=config.agent_env,
    )
    scheduler: Scheduler[WorkItem, ItemResult] = Scheduler(
        concurrency=config.concurrency,
        provider_caps=dict(config.provider_caps),
        provider=lambda w: provider_of(w.model),
    )
    budget = None
    if config.max_cost_usd is not None or config.max_tokens is not None:
        budget = BudgetTracker(config.max_cost_usd, config.max_tokens)
        if budget.add(kept.values()):  # a resume whose kept items spent it already
            scheduler.drain()
    if progress is not None:
        progress.start(total=len(plan), already=list(kept.values()))

    breaker = CircuitBreaker(config.max_provider_errors)

    def attempted(result: ItemResult, order: int | None) -> None:
        """Every attempt counts towards the breaker as it ends (a retry's first attempt
        too): a tripped breaker stops new items and the pending retries at once."""
        if breaker.record(result, order):
            scheduler.drain()
            if progress is not None and breaker.reason is not None:
                progress.note(f"stopping: {breaker.reason}")

    def execute(work: WorkItem, cancel: threading.Event, slot: Any) -> ItemResult:
        if progress is not None:
            progress.item_started(work.key)
        item_dir = items_dir / work.dir_name
        policy = run_policy(
            config.retries,
            config.retry_backoff_s,
            scheduler.halted,
            progress.note if progress is not None else None,
            lambda result: attempted(result, slot.order),
        )
        return run_attempts(
            work, item_dir, lambda w: executor.run_item(w, opts, item_dir, cancel, slot), policy
        )

    full_disk: list[str] = []

    def on_error(work: WorkItem, exc: BaseException) -> ItemResult:
        if isinstance(exc, OSError) and is_storage_error(exc, run_dir):
            # Every next item would fail the same way: stop launching, keep what finished.
            full_disk.append(storage_cause(exc))
            scheduler.drain()
            return errored_result(work, full_disk[-1], items_dir / work.dir_name)
        return errored_result(
            work, f"harness error: {type(exc).__name__}: {exc}", items_dir / work.dir_name
        )

    def on_done(work: WorkItem, result: ItemResult) -> None:
        if _removed(run_dir):  # every next item would only make it again (raised below)
            scheduler.drain()
        if budget is not None and budget.add([result]):
            scheduler.drain()  # start nothing more; the running items finish
        decided = planner.record(result) if planner is not None else None
        if decided is not None and progress is not None:
            progress.note(decided)
        if progress is not None:
            progress.item_done(result)

    with templates, _stop_on_signals(scheduler) as received:
        # Before the first item takes a slot: what the executor starts ahead (Ray's
        # workers) is then not waited for while slots are held.
        at_once = scheduler.in_flight_limit
        if isinstance(todo, list):
            at_once = min(at_once, len(todo))
        warmed = executor.warm_up(config.agents, at_once, scheduler.stop_event)
        if warmed is not None and progress is not None:
            progress.note(warmed)
        finished, not_started = scheduler.run(todo, execute, on_error, on_done)
    reap_orphans()
    if _removed(run_dir):
        raise StorageError(
            f"the run directory {run_dir} was removed mid-run; nothing more is written there "
            f"(items still running then may have left parts of their bundles in it)"
        )
    # The statistics and renderers (numpy, scipy) load when the items are done, not
    # before the first item starts.
    from harness.report.write import write_report
    from harness.stats.build import build_report

    spent = budget.status() if budget is not None else None
    out_of_budget = bool(not_started) and spent is not None and spent.exhausted
    stopped = bool(not_started) and (out_of_budget or breaker.tripped)
    interrupted = bool(received) or bool(full_disk) or (bool(not_started) and not stopped)
    if progress is not None:
        progress.finish()
    report = build_report(
        run_id=run_id,
        results=[*kept.values(), *(r for _, r in finished)],
        interrupted=interrupted,
        not_started=[w.key for w in not_started],
        options=options,
        baseline=config.baseline,
        threshold=config.threshold,
        cost_threshold=config.cost_threshold,
        started_at=started,
        sequential=planner.outcomes() if planner is not None else None,
        stopped=breaker.reason,
        shared_only=config.compare_shared_only,
    )
    report = replace(report, budget=spent)
    if full_disk:
        report = replace(report, notes=(*report.notes, f"stopped early: {full_disk[0]}"))
    if breaker.reason is not None:
        report = replace(report, notes=(*report.notes, f"stopped early: {breaker.reason}"))
    write_report(run_dir, report)
    _refresh_index(run_dir.parent)
    infra = bool(full_disk) or (breaker.tripped and not report.interrupted)
    code = EXIT_INFRA if infra else exit_code_for(report, config.fail_on)
    return RunOutcome(run_dir, report, code)


def _removed(run_dir: Path) -> bool:
    """Whether the run's own dir is gone (or replaced): its run.json no longer there."""
    return not (run_dir / RUN_FILE).is_file()


def _planner(
    config: RunConfig, fixtures: list[Fixture], kept: dict[str, ItemResult]
) -> SequentialPlanner:
    """The ``--trials auto`` planner, each cell rebuilt from the kept items of a resume."""
    from harness.run.sequential import SequentialPlanner, baseline_counts

    assert config.sequential is not None
    conditions = run_conditions(config)
    counts = None
    if config.baseline is not None:
        counts = baseline_counts(
            load_report(config.baseline).items,
            [agent.label() for agent in config.agents],
            effective_models(config),
        )
    return SequentialPlanner(
        fixtures, conditions, config.sequential, config.threshold, counts, kept.values()
    )


def _refresh_index(runs_dir: Path) -> None:
    """Rewrite the runs index with this run in it; a view, so a failure only warns."""
    from harness.runs.index import write_index

    try:
        write_index(runs_dir)
    except (OSError, HarnessError) as exc:
        warnings.warn(f"{runs_dir}/index.html not written: {exc}", stacklevel=2)


def exit_code_for(report: RunReport, fail_on: str) -> int:
    """0 all resolved; 1 unresolved (or a failed gate: --fail-on regression, cost); 3 infra
    (every item errored, and nothing unresolved); 4 the budget ran out with items not
    started; 130 interrupted."""
    from harness.model.comparison import fail_on_parts
    from harness.stats.compare import gate_failed

    if report.interrupted:
        return EXIT_INTERRUPTED
    if report.budget is not None and report.budget.exhausted and report.not_started:
        return EXIT_BUDGET
    parts = fail_on_parts(fail_on)
    statuses = {item.status for item in report.swarm_items}  # a solo twin only informs
    if "none" in parts:  # report only: no result fails the run, but nothing ran is no result
        return EXIT_INFRA if statuses == {"error"} else EXIT_RESOLVED
    gates = tuple(p for p in parts if p in ("regression", "cost"))
    if gates:
        # No evidence is no pass: the gate fails on a missing fixture or an empty candidate.
        if statuses == {"error"}:
            return EXIT_INFRA
        if gate_failed(report.comparison, gates):
            return EXIT_UNRESOLVED
    if "unresolved" not in parts:
        return EXIT_RESOLVED
    if "unresolved" in statuses:
        return EXIT_UNRESOLVED
    if "error" in statuses:
        return EXIT_INFRA
    return EXIT_RESOLVED
