"""One bounded, all-settled scheduler for every work item of a run.

Items run on worker threads (each mostly waits on its agent process). A global cap and
optional per-provider caps bound how many run at once. An item whose execution raises
becomes an errored result produced by ``on_error``; its siblings go on. ``stop`` makes the
scheduler launch nothing more; items already running are told through their cancel event.
Results come back sorted by key, so nothing depends on finishing order.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


W = TypeVar("W", bound=Keyed)
R = TypeVar("R")


def provider_of(model: str) -> str:
    """The provider of a model selector: its prefix before ``/`` (``anthropic/claude`` -> ``anthropic``)."""
    return model.split("/", 1)[0] if "/" in model else model


@dataclass
class Scheduler(Generic[W, R]):
    concurrency: int
    provider_caps: Mapping[str, int] = field(default_factory=dict)
    provider: Callable[[W], str] = field(default=lambda w: "")  # type: ignore[assignment]
    stop_event: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        self._cond = threading.Condition()
        self._running: dict[str, int] = {}
        self._active = 0

    def stop(self) -> None:
        self.stop_event.set()
        with self._cond:
            self._cond.notify_all()

    def run(
        self,
        items: Sequence[W],
        execute: Callable[[W, threading.Event], R],
        on_error: Callable[[W, BaseException], R],
        on_done: Callable[[W, R], None] | None = None,
    ) -> tuple[list[tuple[W, R]], list[W]]:
        """Run every item; return (finished sorted by key, not started because of stop)."""
        keys = [w.key for w in items]
        if len(set(keys)) != len(keys):
            raise ValueError("work item keys must be unique")
        pending = list(items)
        done: list[tuple[W, R]] = []
        done_lock = threading.Lock()
        threads: list[threading.Thread] = []

        def worker(item: W, prov: str) -> None:
            try:
                result = execute(item, self.stop_event)
            except BaseException as exc:  # all-settled: one item's failure is its own
                result = on_error(item, exc)
            with done_lock:
                done.append((item, result))
            if on_done is not None:
                with contextlib.suppress(Exception):  # a progress printer must never kill a run
                    on_done(item, result)
            with self._cond:
                self._active -= 1
                self._running[prov] -= 1
                self._cond.notify_all()

        while pending and not self.stop_event.is_set():
            with self._cond:
                chosen = None
                while chosen is None and not self.stop_event.is_set():
                    if self._active < self.concurrency:
                        chosen = next((w for w in pending if self._fits(w)), None)
                    if chosen is None:
                        self._cond.wait(timeout=0.5)
                if chosen is None:
                    break
                pending.remove(chosen)
                prov = self.provider(chosen)
                self._active += 1
                self._running[prov] = self._running.get(prov, 0) + 1
            thread = threading.Thread(
                target=worker, args=(chosen, prov), name=f"item:{chosen.key}", daemon=True
            )
            threads.append(thread)
            thread.start()
        for thread in threads:
            while thread.is_alive():  # short joins keep the main thread responsive to signals
                thread.join(0.2)
        done.sort(key=lambda pair: pair[0].key)
        return done, sorted(pending, key=lambda w: w.key)

    def _fits(self, item: W) -> bool:
        prov = self.provider(item)
        cap = self.provider_caps.get(prov)
        return cap is None or self._running.get(prov, 0) < cap
