"""One bounded, all-settled scheduler for every work item of a run.

Items run on worker threads (each mostly waits on its agent process). A global cap and
optional per-provider caps bound how many *agents* run at once: an item prepares its
workspace first, takes a slot (``Slot.acquire``) just before launching its agent and gives
it back (``Slot.release``) as soon as the agent has exited, so preparing the next item and
cleaning up, collecting and scoring the last one overlap the running agents. A few items
(``MAX_PREFETCH``) may be preparing while all slots are busy.

An item whose execution raises becomes an errored result produced by ``on_error``; its
siblings go on. ``stop`` makes the scheduler launch nothing more (an item still waiting for
a slot raises :class:`NotStarted`); items already running are told through their cancel
event. Results come back sorted by key, so nothing depends on finishing order.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from harness.errors import NotStarted, Withdrawn

#: Items allowed to prepare (build their workspace) while every slot is busy, at most. Up to
#: a whole next wave is kept ready so that a freed slot never waits on a workspace build;
#: the cost is that many more (small) temp dirs at once.
MAX_PREFETCH = 8


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


W = TypeVar("W", bound=Keyed)
R = TypeVar("R")


class WorkSource(Protocol[W]):
    """Where the scheduler takes its next item when a slot frees: a fixed plan
    (:class:`PlannedWork`), or a planner that decides as results come in (``--trials
    auto``). Called under the scheduler's lock, from one thread at a time."""

    def take(self, has_room: Callable[[W], bool]) -> W | None:
        """The next item to start, among those ``has_room`` accepts; None when none now."""
        ...

    def exhausted(self) -> bool:
        """Nothing more will ever be taken (the run ends when the items in flight do)."""
        ...

    def remaining(self) -> list[W]:
        """Items planned but never taken (reported as not started)."""
        ...

    def confirm(self, item: W) -> bool:
        """``item`` (taken earlier, prepared since) is about to launch its agent: whether it
        still should. False withdraws it: it never becomes an item (a ``--trials auto``
        cell that decided while its next trial was preparing)."""
        ...


class PlannedWork(Generic[W]):
    """A fixed plan, taken in key order, skipping items whose provider is at its cap."""

    def __init__(self, items: Sequence[W]) -> None:
        keys = [w.key for w in items]
        if len(set(keys)) != len(keys):
            raise ValueError("work item keys must be unique")
        self._pending = list(items)

    def take(self, has_room: Callable[[W], bool]) -> W | None:
        chosen = next((w for w in self._pending if has_room(w)), None)
        if chosen is not None:
            self._pending.remove(chosen)
        return chosen

    def exhausted(self) -> bool:
        return not self._pending

    def remaining(self) -> list[W]:
        return list(self._pending)

    def confirm(self, item: W) -> bool:
        return True  # a fixed plan wants every item it handed out


def provider_of(model: str) -> str:
    """The provider of a model selector: its prefix before ``/`` (``anthropic/x`` -> ``anthropic``)."""
    return model.split("/", 1)[0] if "/" in model else model


class Slot:
    """One item's claim on the concurrency budget: acquire before the agent, release after
    (the :class:`harness.item.lifecycle.Slot` an item is handed)."""

    def __init__(self, scheduler: Scheduler[W, R], item: W, provider: str) -> None:
        self._scheduler = scheduler
        self._item = item
        self._provider = provider
        self._held = False
        self._finished = False  # past its agent (or given up): no longer counts as in flight
        self._lock = threading.Lock()
        #: The run-wide order in which the item took its slot (its agent's launch order),
        #: None before it took one.
        self.order: int | None = None

    def acquire(self) -> None:
        """Block until the global and provider caps allow one more agent; NotStarted on a
        stop, Withdrawn when the work source no longer wants the item."""
        with self._lock:
            if self._held:
                return
            # Only an item's first launch is confirmed: a retry is the same item, already
            # counted by its work source.
            first = self.order is None
            self.order = self._scheduler._take(self._item, self._provider, confirm=first)
            self._held = True

    def release(self) -> None:
        with self._lock:
            if self._held:
                self._held = False
                self._scheduler._give(self._provider)
            if not self._finished:
                self._finished = True
                self._scheduler._leave(self._provider)


@dataclass
class Scheduler(Generic[W, R]):
    concurrency: int
    provider_caps: Mapping[str, int] = field(default_factory=dict)
    provider: Callable[[W], str] = field(default=lambda w: "")
    stop_event: threading.Event = field(default_factory=threading.Event)
    prefetch: int | None = None  # default: min(concurrency, MAX_PREFETCH)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._cond = threading.Condition()
        self._running: dict[str, int] = {}
        self._active = 0
        self._in_flight = 0  # items preparing, waiting for a slot or running their agent
        self._in_flight_by: dict[str, int] = {}
        self._taken = 0  # slots handed out so far
        self._draining = threading.Event()
        self._source: WorkSource[W] | None = None  # set by run()

    @property
    def in_flight_limit(self) -> int:
        """How many items may be in flight at once: preparing, waiting for a slot or
        running their agent (the slots, and a wave prepared ahead)."""
        prefetch = min(self.concurrency, MAX_PREFETCH) if self.prefetch is None else self.prefetch
        return self.concurrency + prefetch

    def stop(self) -> None:
        """Start nothing more and cancel the running items (Ctrl-C)."""
        self.stop_event.set()
        self.drain()

    @property
    def draining(self) -> bool:
        """Whether the scheduler starts nothing more (stopped, or drained)."""
        return self._draining.is_set()

    @property
    def halted(self) -> threading.Event:
        """Set the moment the scheduler starts nothing more (for waits that end then)."""
        return self._draining

    def drain(self) -> None:
        """Start nothing more; the running items finish (a full disk: the next item would
        fail the same way, the running ones may not)."""
        self._draining.set()
        with self._cond:
            self._cond.notify_all()

    def _take(self, item: W, provider: str, confirm: bool = True) -> int:
        cap = self.provider_caps.get(provider)
        with self._cond:
            while True:
                if self._draining.is_set():
                    raise NotStarted
                if self._active < self.concurrency and (
                    cap is None or self._running.get(provider, 0) < cap
                ):
                    # Asked at the last moment: what finished while the item prepared and
                    # waited may have made it pointless (its cell decided).
                    source = self._source
                    if confirm and source is not None and not source.confirm(item):
                        raise Withdrawn
                    self._active += 1
                    self._running[provider] = self._running.get(provider, 0) + 1
                    self._taken += 1
                    self._cond.notify_all()  # the launcher waits for the slots to fill
                    return self._taken
                self._cond.wait(timeout=0.5)

    def _give(self, provider: str) -> None:
        with self._cond:
            self._active -= 1
            self._running[provider] -= 1
            self._cond.notify_all()

    def _leave(self, provider: str) -> None:
        """An item no longer waits for or holds a slot: another may start preparing."""
        with self._cond:
            self._in_flight -= 1
            self._in_flight_by[provider] -= 1
            self._cond.notify_all()

    def run(
        self,
        items: Sequence[W] | WorkSource[W],
        execute: Callable[[W, threading.Event, Slot], R],
        on_error: Callable[[W, BaseException], R],
        on_done: Callable[[W, R], None] | None = None,
    ) -> tuple[list[tuple[W, R]], list[W]]:
        """Run every item (of a plan, or as a source hands them out); return (finished
        sorted by key, not started because of a stop or drain)."""
        source: WorkSource[W] = PlannedWork(items) if isinstance(items, Sequence) else items
        self._source = source
        done: list[tuple[W, R]] = []
        not_started: list[W] = []
        lock = threading.Lock()
        threads: list[threading.Thread] = []

        def worker(item: W, slot: Slot) -> None:
            # A slot still held here is released only once the item is recorded: on_done
            # may stop the run (a breaker, a budget), and the next item must see that.
            try:
                try:
                    result = execute(item, self.stop_event, slot)
                except Withdrawn:
                    return  # never an item: neither a result nor "not started"
                except NotStarted:
                    with lock:
                        not_started.append(item)
                    return
                except BaseException as exc:  # all-settled: one item's failure is its own
                    result = on_error(item, exc)
                with lock:
                    done.append((item, result))
                if on_done is not None:
                    with contextlib.suppress(Exception):  # a progress printer must never kill a run
                        on_done(item, result)
            finally:
                slot.release()

        limit = self.in_flight_limit
        while not self._draining.is_set():
            with self._cond:
                chosen = None
                while chosen is None and not self._draining.is_set():
                    if source.exhausted():
                        break
                    # Fill the slots first; prepare ahead only while every slot is busy, so
                    # the first wave is not slowed down by preparing the second.
                    filling = self._in_flight < self.concurrency
                    ahead = self._active >= self.concurrency and self._in_flight < limit
                    if filling or ahead:
                        # Skipping providers at their cap (counting items still preparing),
                        # so a capped provider never holds the places of others.
                        chosen = source.take(self._has_room)
                    if chosen is None:
                        self._cond.wait(timeout=0.5)
                if chosen is None:
                    break
                prov = self.provider(chosen)
                self._in_flight += 1
                self._in_flight_by[prov] = self._in_flight_by.get(prov, 0) + 1
            slot = Slot(self, chosen, self.provider(chosen))
            thread = threading.Thread(
                target=worker, args=(chosen, slot), name=f"item:{chosen.key}", daemon=True
            )
            threads.append(thread)
            thread.start()
        for thread in threads:
            while thread.is_alive():  # short joins keep the main thread responsive to signals
                thread.join(0.2)
        done.sort(key=lambda pair: pair[0].key)
        return done, sorted([*source.remaining(), *not_started], key=lambda w: w.key)

    def _has_room(self, item: W) -> bool:
        prov = self.provider(item)
        cap = self.provider_caps.get(prov)
        return cap is None or self._in_flight_by.get(prov, 0) < cap
