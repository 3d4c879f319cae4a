"""The default executor: every item runs in this process's threads, on this machine."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import ClassVar

from harness.executors.base import Executor
from harness.item.lifecycle import ItemOptions, Slot, run_item
from harness.model.item import ItemResult
from harness.plan import WorkItem


class LocalExecutor(Executor):
    name: ClassVar[str] = "local"

    def run_item(
        self,
        work: WorkItem,
        opts: ItemOptions,
        item_dir: Path,
        cancel: threading.Event,
        slot: Slot,
    ) -> ItemResult:
        return run_item(work, opts, item_dir, cancel, slot)
