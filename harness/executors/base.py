"""The executor interface: run one work item's whole lifecycle somewhere, return its result.

The head (the ``run`` process) plans, schedules, reports and does the statistics; an
executor only decides *where* an item's workspace, agent, process ownership, collection and
bundle happen. Its result's bundle is always in the head's run directory, scored there with
the same ``score_bundle`` the ``score`` command uses.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, ClassVar

from harness.item.lifecycle import ItemOptions, Slot
from harness.model.item import ItemResult
from harness.plan import ExecutorSettings, WorkItem

if TYPE_CHECKING:
    from harness.agents.base import AgentAdapter


class Executor(ABC):
    """Runs items. Used as a context manager around a run: ``__enter__`` connects or starts
    what it needs, ``__exit__`` lets go of it."""

    name: ClassVar[str]

    def __init__(self, settings: ExecutorSettings) -> None:
        self.settings = settings

    def __enter__(self) -> Executor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def warm_up(
        self, agents: Sequence[AgentAdapter], at_once: int, stop: threading.Event
    ) -> str | None:
        """Get ready to hold up to ``at_once`` items of ``agents`` at a time (preparing,
        running their agent or waiting for a slot) before the first one is handed out; give
        up early when ``stop`` is set. A line saying what was done, or None when there was
        nothing to do (a local run starts nothing ahead)."""
        return None

    @abstractmethod
    def run_item(
        self,
        work: WorkItem,
        opts: ItemOptions,
        item_dir: Path,
        cancel: threading.Event,
        slot: Slot,
    ) -> ItemResult:
        """Run ``work`` to a scored result whose bundle is in ``item_dir`` (on the head).

        ``slot`` bounds agents in flight across the whole run (``--concurrency`` and the
        provider caps); ``cancel`` is set when the run is stopped. Never leaves a process of
        the item running, wherever it ran. Raises ``NotStarted`` if stopped before starting.
        """
