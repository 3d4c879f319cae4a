"""Where a Ray run's tasks meet its head: one small actor per run, the gate.

Warm-up tasks wait at it until every one has a worker of its own (:meth:`Gate.arrive`).
An item's task asks it for the item's slot just before launching the agent and tells it
when the agent has exited (:class:`RemoteSlot`); the head, which holds the run's scheduler,
takes the slot when the task asks and gives it back when the agent is done. So
``--concurrency`` and the provider caps bound agents across the cluster, as they do
locally, and a node prepares its next item's workspace, or collects its last one, while the
cluster's slots run agents.

Imported only by the Ray executor (``ray`` is imported lazily, inside the node's calls).
"""

from __future__ import annotations

import asyncio
from typing import Any

from harness.errors import NotStarted, Withdrawn

#: What the head answers a task asking for its item's slot.
GO = "go"
#: The run was stopped (or drained) before the agent launched: the item is not started.
STOP = "stop"
#: A ``--trials auto`` cell was decided meanwhile: the item is withdrawn.
WITHDRAWN = "withdrawn"


class Gate:
    """The run's meeting point (a Ray actor, async: each call waits without a thread).

    Every item is known by a key of its own (one per attempt); its entries are forgotten
    once the head has its result.
    """

    def __init__(self) -> None:
        self._arrivals = 0
        self._all_in = asyncio.Event()
        self._parties: int | None = None
        self._asked: dict[str, asyncio.Event] = {}
        self._answered: dict[str, asyncio.Event] = {}
        self._answers: dict[str, str] = {}
        self._ended: dict[str, asyncio.Event] = {}

    # --- warm-up ---------------------------------------------------------------------------

    def expect(self, parties: int) -> None:
        """The warm-up waits for ``parties`` tasks (some may have arrived already: the
        head's call and the tasks' race to the gate)."""
        self._parties = parties
        if self._arrivals >= parties:
            self._all_in.set()

    async def arrive(self) -> None:
        """A warm-up task has a worker: wait until all have (or the warm-up is over)."""
        self._arrivals += 1
        if self._parties is not None and self._arrivals >= self._parties:
            self._all_in.set()
        await self._all_in.wait()

    def open(self) -> None:
        """The warm-up is over (done, timed out or stopped): no task waits any longer."""
        self._all_in.set()

    # --- an item's slot ----------------------------------------------------------------------

    @staticmethod
    def _event(table: dict[str, asyncio.Event], key: str) -> asyncio.Event:
        event = table.get(key)
        if event is None:
            event = table[key] = asyncio.Event()
        return event

    async def ask(self, key: str) -> str:
        """The node: may the item's agent launch? Waits for the head's answer."""
        self._event(self._asked, key).set()
        await self._event(self._answered, key).wait()
        return self._answers[key]

    async def asked(self, key: str) -> None:
        """The head: wait until the item's task asks for its slot."""
        await self._event(self._asked, key).wait()

    def answer(self, key: str, answer: str) -> None:
        """The head: ``GO``, ``STOP`` or ``WITHDRAWN`` (the first answer stands)."""
        self._answers.setdefault(key, answer)
        self._event(self._answered, key).set()

    def end(self, key: str) -> None:
        """The node: the item's agent has exited."""
        self._event(self._ended, key).set()

    async def ended(self, key: str) -> None:
        """The head: wait until the item's agent has exited."""
        await self._event(self._ended, key).wait()

    def forget(self, key: str) -> None:
        for table in (self._asked, self._answered, self._answers, self._ended):
            table.pop(key, None)


class RemoteSlot:
    """An item's slot, held by the head and asked for from the node through the gate
    (a :class:`harness.item.lifecycle.Slot`)."""

    def __init__(self, gate: Any, key: str) -> None:
        self._gate = gate
        self._key = key

    def acquire(self) -> None:
        import ray

        answer = ray.get(self._gate.ask.remote(self._key))
        if answer == WITHDRAWN:
            raise Withdrawn
        if answer != GO:
            raise NotStarted

    def release(self) -> None:
        self._gate.end.remote(self._key)  # not waited for: the head hears it
