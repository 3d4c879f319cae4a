"""Progress on stderr: a live line on a TTY, otherwise one line per finished item."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import TextIO

from harness.results import ItemResult


class Progress:
    def __init__(self, stream: TextIO | None = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self._lock = threading.Lock()
        self.total = self.done = self.resolved = self.errors = 0
        self._started = time.monotonic()
        self._fresh = 0

    def start(self, total: int, already: Sequence[ItemResult] = ()) -> None:
        self.total = total
        self._started = time.monotonic()
        for result in already:
            self._count(result)
        if already:
            self._emit(f"resuming: {len(already)} of {total} items kept from the earlier run")
        elif self.live:
            self._render()

    def _count(self, result: ItemResult) -> None:
        self.done += 1
        self.resolved += result.status == "resolved"
        self.errors += result.status == "error"

    def item_done(self, result: ItemResult) -> None:
        with self._lock:
            self._count(result)
            self._fresh += 1
            if self.live:
                self._render()
            else:
                extra = f" ({result.facts.error})" if result.facts.error else ""
                if result.facts.timed_out:
                    extra = f" (timed out after {result.facts.wall_time_s:.0f} s){extra}"
                self._emit(
                    f"[{self.done}/{self.total}] {result.key}: {result.status}"
                    f" in {result.facts.wall_time_s:.1f}s{extra}"
                )

    def _render(self) -> None:
        elapsed = time.monotonic() - self._started
        remaining = self.total - self.done
        eta = "?" if not self._fresh else f"{elapsed / self._fresh * remaining:.0f}s"
        line = (
            f"\r{self.done}/{self.total} done, {self.resolved} resolved, {self.errors} errors, "
            f"{elapsed:.0f}s elapsed, ETA {eta}"
        )
        self.stream.write(line + "\x1b[K")
        self.stream.flush()

    def _emit(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()
