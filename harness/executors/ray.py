"""Run each item as a Ray task on a node that offers the agent's custom resource.

The whole item lifecycle (workspace, launch, process ownership, collection, bundle) runs
on the node, in :func:`harness.item.run_item`, exactly as locally. The bundle comes back as
one gzipped tarball through Ray's object store, is unpacked into a temp dir in the head's
run dir and renamed into place only when whole, then scored on the head with the same
``score_bundle`` as ``score ITEM_DIR``.

Before the first item is handed out, the run warms the workers (:meth:`RayExecutor.warm_up`):
a Ray worker is a process of its own per run, and a cold one starts Python, imports Ray,
this module and the agent's adapter first (seconds, more on a busy node), while the item's
slot waits. One warm-up task per item that can run at once holds a worker until all of them
have one, so each gets its own, and Ray hands those workers the items.

Scheduling stays on the head, and slots bound agents as they do locally: an item's task
asks the head for the item's slot (through the run's gate, :mod:`harness.executors.ray_gate`)
just before launching the agent, and says when the agent has exited; the head's scheduler
hands the slot out and takes it back. So ``--concurrency`` and the provider caps count
agents running across the whole cluster, and a node prepares an item or collects one while
the slots run agents. The custom resource (one unit per item) says which nodes run which
agent and how many items each holds at once (preparing, running its agent or collecting).

Stopping: a stopped run cancels each running task without force first, which interrupts
the task; the task then sets its item's cancel event and waits while the item stops its
agent, sweeps everything carrying its token and collects. A task still running after
``CANCEL_GRACE_S`` is cancelled with force, and a sweep task on every node ends whatever
still carries the run's token. A node that dies mid-item makes that item an error naming
the cause; its siblings go on, and ``--resume`` runs it again.

``ray`` is imported only here, and only when a Ray run starts (the ``ray`` extra).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import logging
import os
import shutil
import signal
import sys
import tarfile
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from harness.agents.base import AgentAdapter
from harness.agents.env import ITEM_TOKEN_VAR
from harness.errors import ExecutorError, NotStarted, UsageError, Withdrawn
from harness.executors.base import Executor
from harness.executors.ray_gate import GO, STOP, WITHDRAWN, Gate, RemoteSlot
from harness.files import write_json_atomic
from harness.fixtures import SHARDS_DIR
from harness.item.leftovers import stamp_dir
from harness.item.lifecycle import ItemOptions, Slot, run_item
from harness.item.processes import become_subreaper, reap_orphans, terminate
from harness.item.scoring import assess_bundle, facts_from_meta, make_result
from harness.item.story import write_story
from harness.item.workspace import RepoTemplates
from harness.model.item import ItemResult
from harness.plan import ExecutorSettings, WorkItem
from harness.pricing import PriceTable, load_library

#: How often the head checks a running task against the run's stop.
POLL_S = 0.2
#: After a cancel without force, how long a task gets to stop its agent, sweep (SIGTERM,
#: then SIGKILL after procs.TERM_GRACE_S, up to three rounds) and return: well above that.
CANCEL_GRACE_S = 20.0
#: How long the sweep tasks that back up a forced cancel may take on all nodes together.
SWEEP_TIMEOUT_S = 30.0
#: A bundle travels as one object. Collection caps bound it (ledger, transcripts, child
#: sessions, streams); Ray spills objects larger than its store to disk, so the real limit
#: is the head's object store plus spill space. Past this the item is refused as an error
#: rather than risk the head's memory.
MAX_BUNDLE_BYTES = 2 * 1024**3
#: Ray's switch for propagating a ``uv run`` driver's environment to workers.
RAY_UV_HOOK_VAR = "RAY_ENABLE_UV_RUN_RUNTIME_ENV"
#: Where a node unpacks fixtures and builds bundles (its own temp dir).
NODE_TMP_PREFIX = "swh-ray-"
#: The resource Ray gives the head node alone (one unit), where the run's gate lives.
HEAD_NODE_RESOURCE = "node:__internal_head__"
#: How long warming the workers may take before the items go anyway (to whatever workers
#: there are, as without a warm-up). A cold worker takes a few seconds to start, tens on a
#: loaded node; a worker that never comes (a node lost meanwhile, units another run holds)
#: must not hold up the run for longer.
WARM_TIMEOUT_S = 120.0


def _tar_dir(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=1) as tar:
        tar.add(folder, arcname=".")
    return buffer.getvalue()


def _untar(data: bytes, dest: Path) -> None:
    """Unpack with tarfile's ``data`` filter: no links out, no devices, no absolute paths."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")


@contextlib.contextmanager
def _interrupts_cancel(cancel: threading.Event) -> Iterator[None]:
    """While the block runs, an interrupt of the task sets ``cancel`` instead of raising.

    ``ray.cancel(force=False)`` interrupts the task's main thread (``interrupt_main``, a
    simulated SIGINT), and does so more than once. A KeyboardInterrupt landing while the
    item stops its agent and collects would cut the clean-up short: the scratch dir would
    be removed while the item still writes its bundle there, and the item would make it
    again, ownerless, and leave it behind. So the interrupt only asks the item to stop.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: object) -> None:
        cancel.set()

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _run_on_node(
    work: WorkItem, opts: ItemOptions, fixture_tar: bytes, template_tar: bytes, slot: Slot
) -> tuple[str, bytes, dict[str, float]]:
    """The Ray task: the item's whole lifecycle on this node; returns the node's id, the
    bundle tarball and where the task's time went (seconds: ``unpack`` the fixture and its
    committed repo, the ``item``, ``pack`` the bundle, and the whole ``task``; one clock, the
    node's). The repo is the head's template (``.git`` included), copied as a local run
    copies it: no git process per item on the node. ``slot`` is the item's slot on the head
    (:class:`RemoteSlot`), taken just before the agent launches.

    The item runs in a thread while this (the task's main) thread waits; a cancel without
    force becomes the item's own cancel (:func:`_interrupts_cancel`). Only once the item
    has stopped and its scratch dir is gone does the task end as cancelled.
    """
    task_started = time.perf_counter()
    become_subreaper()  # a detached daemon of the agent stays in this worker's tree
    cancel = threading.Event()
    failure: list[BaseException] = []
    returned: tuple[str, bytes, dict[str, float]] | None = None
    with _interrupts_cancel(cancel):
        scratch = Path(tempfile.mkdtemp(prefix=NODE_TMP_PREFIX))
        # Owned by this worker process: a task killed mid-item (a forced cancel, a lost
        # node) never reaches the clean-up below, and `clean` (or the next run) removes the
        # dir once its owner is gone.
        stamp_dir(scratch, opts.token_prefix.partition("@")[0])
        try:
            fixture_dir = scratch / "fixture"
            _untar(fixture_tar, fixture_dir)
            fixture = dataclasses.replace(
                work.fixture,
                path=fixture_dir,
                shard_paths=tuple(
                    fixture_dir / SHARDS_DIR / s.file for s in work.fixture.manifest.shards
                ),
            )
            local = dataclasses.replace(work, fixture=fixture)
            template = scratch / "template"
            _untar(template_tar, template)
            templates = RepoTemplates()
            templates.adopt(fixture_dir, template)
            node_opts = dataclasses.replace(opts, templates=templates)
            item_dir = scratch / "bundle"
            item_started = time.perf_counter()

            def body() -> None:
                try:
                    run_item(local, node_opts, item_dir, cancel, slot)
                except BaseException as exc:  # handed to the waiting thread
                    failure.append(exc)

            thread = threading.Thread(target=body, name=f"item:{work.key}", daemon=True)
            thread.start()
            try:
                while thread.is_alive():
                    thread.join(POLL_S)
            finally:
                reap_orphans()
            if not cancel.is_set() and not failure:
                import ray

                item_ended = time.perf_counter()
                data = _tar_dir(item_dir)
                packed = time.perf_counter()
                spent = {
                    "unpack": item_started - task_started,
                    "item": item_ended - item_started,
                    "pack": packed - item_ended,
                    "task": packed - task_started,
                }
                returned = ray.get_runtime_context().get_node_id(), data, spent
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    if cancel.is_set():
        raise KeyboardInterrupt  # what a cancelled task ends with: the head sees it cancelled
    if failure:
        raise failure[0]
    assert returned is not None
    return returned


def _warm_worker(agents: tuple[AgentAdapter, ...], gate: Any) -> tuple[str, int]:
    """A warm-up task: its worker has imported this module (as an item's task does) and,
    unpickling ``agents``, their adapters and scorers; it loads the price library. It then
    waits at the ``gate`` until every warm-up task has a worker: one that finished early
    would be handed the next warm-up task, and the run's first items would start cold
    workers after all. Returns the node's id and the worker's pid."""
    import ray

    load_library()  # an item's result is priced on the node too
    ray.get(gate.arrive.remote())
    return ray.get_runtime_context().get_node_id(), os.getpid()


def _sweep_node(prefix: str) -> int:
    """End every process on this node carrying a token of the run ``prefix`` names."""
    import psutil

    found = {}
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if proc.environ().get(ITEM_TOKEN_VAR, "").startswith(prefix + "-"):
                found[proc.pid] = (proc, "token")
    return len(terminate(found)) if found else 0


class RayExecutor(Executor):
    name: ClassVar[str] = "ray"

    def __init__(self, settings: ExecutorSettings) -> None:
        super().__init__(settings)
        self._ray: Any = None
        self._remote_item: Any = None
        self._remote_sweep: Any = None
        self._remote_warm: Any = None
        self._gate: Any = None
        self._fixture_refs: dict[Path, Any] = {}
        self._lock = threading.Lock()
        self._stdout: contextlib.AbstractContextManager[Any] = contextlib.nullcontext()

    def __enter__(self) -> RayExecutor:
        # Under `uv run`, Ray would re-create the driver's uv project on every worker (and
        # refuses when the cwd is outside it). Nodes run their own installed harness instead.
        # Read when ray is imported, so set before.
        os.environ.setdefault(RAY_UV_HOOK_VAR, "0")
        try:
            import ray
        except ImportError:
            raise UsageError(
                "--executor ray needs Ray, which is an optional extra: install "
                "swarm-harness[ray] (in a checkout: uv sync --extra ray)"
            ) from None
        address = self.settings.ray_address or os.environ.get("RAY_ADDRESS") or "auto"
        try:
            ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorError(
                f"--ray-address {address}: cannot join a Ray cluster: {exc}"
            ) from exc
        self._ray = ray
        # stdout carries only the result (with --json, exactly report.json); Ray's driver
        # prints cluster notices (a raylet died, ...) on stdout: send them to stderr.
        self._stdout = contextlib.redirect_stdout(sys.stderr)
        self._stdout.__enter__()
        # max_retries=0: a lost item is reported and re-run by --resume, never silently twice.
        self._remote_item = ray.remote(max_retries=0, num_cpus=0)(_run_on_node)
        self._remote_sweep = ray.remote(max_retries=0, num_cpus=0)(_sweep_node)
        self._remote_warm = ray.remote(max_retries=0, num_cpus=0)(_warm_worker)
        self._gate = self._start_gate()
        return self

    def _start_gate(self) -> Any:
        """The run's gate, an actor on the cluster's head node: every item waits on it, so it
        must not live on a node that can be lost mid-run while the cluster goes on."""
        ray = self._ray
        # An async actor: its calls wait (an item's ask, a warm-up's arrival) without a
        # thread each, up to Ray's 1,000 at once (a few per item in flight).
        gate = ray.remote(num_cpus=0, max_restarts=0)(Gate)
        if HEAD_NODE_RESOURCE in ray.cluster_resources():
            gate = gate.options(resources={HEAD_NODE_RESOURCE: 0.001})
        return gate.remote()

    def __exit__(self, *exc_info: object) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None
            self._stdout.__exit__(None, None, None)

    def resource(self, work: WorkItem) -> str:
        """The custom resource a node must offer to run ``work`` (default: its agent's name)."""
        return self._resource_of(work.agent)

    def _resource_of(self, agent: AgentAdapter) -> str:
        return self.settings.ray_resource or agent.name

    def warm_up(
        self, agents: Sequence[AgentAdapter], at_once: int, stop: threading.Event
    ) -> str | None:
        """Start a worker per item of each resource the run may hold at once (at most
        ``at_once``, at most the units the cluster offers), each with this module, the
        agents' adapters and the price library loaded, and wait until all have started (at
        most ``WARM_TIMEOUT_S``, or until ``stop``)."""
        ray = self._ray
        by_resource: dict[str, list[AgentAdapter]] = {}
        for agent in agents:
            by_resource.setdefault(self._resource_of(agent), []).append(agent)
        offered = ray.cluster_resources()
        counts = {r: min(at_once, int(offered.get(r, 0))) for r in by_resource}
        parties = sum(counts.values())
        if parties == 0:
            return None
        started = time.perf_counter()
        gate = self._gate
        expected = gate.expect.remote(parties)
        refs = [expected] + [
            self._remote_warm.options(resources={resource: 1}).remote(
                tuple(by_resource[resource]), gate
            )
            for resource, count in counts.items()
            for _ in range(count)
        ]
        deadline = started + WARM_TIMEOUT_S
        ready: list[Any] = []
        try:
            while not stop.is_set() and time.perf_counter() < deadline:
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=POLL_S)
                if len(ready) == len(refs):
                    break
        finally:
            gate.open.remote()  # the tasks still waiting at it go
            for ref in refs[1:]:
                if ref not in ready:
                    ray.cancel(ref)  # one still waiting for a worker never gets one
        workers = set()
        for ref in ready:
            if ref != expected:
                with contextlib.suppress(ray.exceptions.RayError):
                    workers.add(ray.get(ref))
        return (
            f"ray: {len(workers)} of {parties} workers warmed in "
            f"{time.perf_counter() - started:.1f} s"
        )

    def _fixture_refs_of(self, work: WorkItem, templates: RepoTemplates | None) -> Any:
        """The fixture's files and its committed repo (built once on the head), put in the
        object store once per run."""
        with self._lock:
            refs = self._fixture_refs.get(work.fixture.path)
            if refs is None:
                own = templates if templates is not None else RepoTemplates()
                try:
                    template = _tar_dir(own.repo_for(work.fixture.path))
                finally:
                    if templates is None:
                        own.close()
                refs = (self._ray.put(_tar_dir(work.fixture.path)), self._ray.put(template))
                self._fixture_refs[work.fixture.path] = refs
            return refs

    def run_item(
        self,
        work: WorkItem,
        opts: ItemOptions,
        item_dir: Path,
        cancel: threading.Event,
        slot: Slot,
    ) -> ItemResult:
        ray = self._ray
        resource = self.resource(work)
        # The head's template cache is local: nodes get its repos through the object store.
        remote_opts = dataclasses.replace(opts, templates=None)
        key = uuid.uuid4().hex  # the item's name at the gate (this attempt's)
        submitted = time.perf_counter()
        fixture_ref, template_ref = self._fixture_refs_of(work, opts.templates)
        ref = self._remote_item.options(resources={resource: 1}).remote(
            work, remote_opts, fixture_ref, template_ref, RemoteSlot(self._gate, key)
        )
        try:
            refused = self._hold_slot(ref, key, slot, cancel)
            done = self._wait(ref, cancel, opts.token_prefix)
            if refused is not None:
                raise refused  # its task has ended, its agent never launched
            try:
                node, data, spent = ray.get(done)
                round_trip = time.perf_counter() - submitted
            except ray.exceptions.TaskCancelledError:
                raise ExecutorError(
                    "interrupted: the run was stopped before this item finished"
                ) from None
            except ray.exceptions.RayTaskError as exc:  # the item itself raised on the node
                raise ExecutorError(f"item failed on its Ray node: {_first_line(exc)}") from None
            except ray.exceptions.RayError as exc:  # node died, worker crashed, object lost
                raise ExecutorError(f"item lost with its Ray node: {_first_line(exc)}") from None
        finally:
            self._gate.forget.remote(key)
        if len(data) > MAX_BUNDLE_BYTES:
            raise ExecutorError(f"bundle of {len(data)} bytes, over {MAX_BUNDLE_BYTES}")
        # Ray's own share: submission, scheduling, the result's transfer.
        timing = {k: round(v, 4) for k, v in {**spent, "ray": round_trip - spent["task"]}.items()}
        return _land_bundle(work, data, item_dir, node, opts.prices, timing)

    def _hold_slot(
        self, ref: Any, key: str, slot: Slot, cancel: threading.Event
    ) -> NotStarted | None:
        """Take the item's slot when its task asks for it (at the gate) and give it back
        when its agent has exited. An agent that could not start keeps it, as locally: the
        scheduler releases it once the item is recorded. Returns what a stop or a
        withdrawal before the agent launched made of the item (the task is told, and ends
        without running it); None once the agent launched, or when the task ended first."""
        gate = self._gate
        if not self._until(gate.asked.remote(key), ref, cancel):
            if not cancel.is_set():
                return None  # the task ended (failed) before asking
            gate.answer.remote(key, STOP)
            return NotStarted()
        try:
            slot.acquire()
        except NotStarted as exc:  # the run stopped, or (Withdrawn) the item's cell decided
            gate.answer.remote(key, WITHDRAWN if isinstance(exc, Withdrawn) else STOP)
            return exc
        gate.answer.remote(key, GO)
        if self._until(gate.ended.remote(key), ref, cancel):
            slot.release()
        return None

    def _until(self, signal: Any, ref: Any, cancel: threading.Event) -> bool:
        """Wait for the gate's ``signal``: True when it came, False when the task ``ref``
        ended first or the run was stopped."""
        ray = self._ray
        while not cancel.is_set():
            ready, _ = ray.wait([signal, ref], num_returns=1, timeout=POLL_S)
            if ready:
                return bool(ray.wait([signal], timeout=0)[0])
        return False

    def _wait(self, ref: Any, cancel: threading.Event, prefix: str) -> Any:
        ray = self._ray
        while True:
            ready, _ = ray.wait([ref], timeout=POLL_S)
            if ready:
                return ref
            if cancel.is_set():
                break
        ray.cancel(ref, force=False)  # the item stops its agent and sweeps its processes
        ready, _ = ray.wait([ref], timeout=CANCEL_GRACE_S)
        if not ready:
            ray.cancel(ref, force=True)
            self.sweep(prefix)
        return ref

    def sweep(self, prefix: str) -> int:
        """End processes of the run on every live node; how many there were."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self._ray
        refs = [
            self._remote_sweep.options(
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)
            ).remote(prefix)
            for node in ray.nodes()
            if node.get("Alive")
        ]
        ready, _ = ray.wait(refs, num_returns=len(refs), timeout=SWEEP_TIMEOUT_S)
        total = 0
        for ref in ready:
            with contextlib.suppress(ray.exceptions.RayError):
                total += ray.get(ref)
        return total


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text.splitlines()[0][:300]}"


def _land_bundle(
    work: WorkItem,
    data: bytes,
    item_dir: Path,
    node: str,
    prices: PriceTable | None = None,
    timing: dict[str, float] | None = None,
) -> ItemResult:
    """Unpack a returned bundle next to ``item_dir``, score it, then rename it into place.

    A crash or a bad tarball leaves at most a hidden ``.incoming-*`` dir, never a
    half-written item dir.
    """
    incoming = item_dir.parent / f".incoming-{item_dir.name}-{uuid.uuid4().hex[:8]}"
    try:
        incoming.mkdir(parents=True)
        try:
            _untar(data, incoming)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ExecutorError(f"bundle of {work.key} came back unreadable: {exc}") from exc
        meta_file = incoming / "item.json"
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        meta["fixture_path"] = str(work.fixture.path)  # the node's copy was a temp dir
        meta["executor"] = {"name": "ray", "node_id": node}
        if timing is not None:  # where the item's slot time went outside its phases_s
            meta["executor"]["timing_s"] = timing
        assessed = assess_bundle(incoming, meta)
        score = assessed.score
        facts = facts_from_meta(meta, assessed, incoming)
        write_json_atomic(meta_file, meta)
        result = make_result(work, item_dir, score, facts, prices)
        write_json_atomic(incoming / "result.json", result.to_dict())
        write_story(incoming, meta)
        old = None
        if item_dir.exists():  # an errored attempt being resumed
            old = item_dir.parent / f".replaced-{item_dir.name}-{uuid.uuid4().hex[:8]}"
            item_dir.rename(old)
        incoming.rename(item_dir)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return result
    finally:
        shutil.rmtree(incoming, ignore_errors=True)
