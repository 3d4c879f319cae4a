"""Run progress on stderr, as items start and finish.

The scheme (README, "Console output"): stderr carries progress, stdout the result.

- Every finished item prints one line on stderr the moment it finishes:
  ``[3/8] key: unresolved in 12.3s — <cause first>``.
- On a terminal a status line below those redraws every second: done/total, resolved,
  errors, elapsed, ETA, and the running items with their own elapsed time, so a run never
  looks hung. Without a terminal there is no status line, only the item lines.
- stdout gets the per-fixture summary, the comparison and the report path at the end;
  item lines are never repeated there.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Sequence
from typing import TextIO

from harness.model.item import ItemResult
from harness.model.text import format_duration, item_cause

#: How often the status line redraws on a terminal: often enough that elapsed times visibly
#: tick, rarely enough to cost nothing.
REDRAW_INTERVAL_S = 1.0
#: Running items named on the status line before it says "+N more".
MAX_RUNNING_SHOWN = 3
#: Status line width when the terminal size is unknown.
FALLBACK_WIDTH = 100


def item_line(result: ItemResult, done: int, total: int) -> str:
    """The line of one finished item, its cause first when it did not resolve."""
    line = f"[{done}/{total}] {result.key}: {result.status} in {result.facts.wall_time_s:.1f}s"
    if result.attempts > 1:
        line += f" (attempt {result.attempts})"
    cause = item_cause(result)
    return f"{line} — {cause}" if cause else line


class Progress:
    def __init__(
        self,
        stream: TextIO | None = None,
        live: bool | None = None,
    ) -> None:
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self._lock = threading.Lock()
        self.total = self.done = self.resolved = self.errors = 0
        self._started = time.monotonic()
        self._fresh = 0
        self._running: dict[str, float] = {}
        self._status_shown = False
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # --- events -------------------------------------------------------------------------

    def note(self, line: str) -> None:
        """A one-off message (e.g. leftovers cleaned up)."""
        with self._lock:
            self._emit(line)

    def start(self, total: int, already: Sequence[ItemResult] = ()) -> None:
        with self._lock:
            self.total = total
            self._started = time.monotonic()
            for result in already:
                self._count(result)
            if already:
                self._emit(f"resuming: {len(already)} of {total} items kept from the earlier run")
            if self.live:
                self._draw_status()
        if self.live and self._ticker is None:
            self._ticker = threading.Thread(target=self._tick, name="progress", daemon=True)
            self._ticker.start()

    def item_started(self, key: str) -> None:
        with self._lock:
            self._running[key] = time.monotonic()

    def item_done(self, result: ItemResult) -> None:
        with self._lock:
            self._running.pop(result.key, None)
            self._count(result)
            self._fresh += 1
            self._emit(item_line(result, self.done, self.total))

    def finish(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=2 * REDRAW_INTERVAL_S)
            self._ticker = None
        with self._lock:
            self._clear_status()

    # --- rendering ----------------------------------------------------------------------

    def _count(self, result: ItemResult) -> None:
        self.done += 1
        self.resolved += result.status == "resolved"
        self.errors += result.status == "error"

    def _tick(self) -> None:
        while not self._stop.wait(REDRAW_INTERVAL_S):
            with self._lock:
                self._draw_status()

    def status_text(self) -> str:
        now = time.monotonic()
        elapsed = now - self._started
        remaining = self.total - self.done
        eta = format_duration(elapsed / self._fresh * remaining) if self._fresh else "?"
        text = (
            f"{self.done}/{self.total} done, {self.resolved} resolved, {self.errors} errors, "
            f"{format_duration(elapsed)} elapsed, ETA {eta}"
        )
        if self._running:
            oldest = sorted(self._running.items(), key=lambda kv: kv[1])
            shown = ", ".join(
                f"{key} {format_duration(now - t)}" for key, t in oldest[:MAX_RUNNING_SHOWN]
            )
            more = len(oldest) - MAX_RUNNING_SHOWN
            text += f" | running: {shown}" + (f" +{more} more" if more > 0 else "")
        return text

    def _draw_status(self) -> None:
        if not self.live:
            return
        width = shutil.get_terminal_size((FALLBACK_WIDTH, 24)).columns - 1
        self.stream.write("\r" + self.status_text()[:width] + "\x1b[K")
        self.stream.flush()
        self._status_shown = True

    def _clear_status(self) -> None:
        if self._status_shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._status_shown = False

    def _emit(self, line: str) -> None:
        self._clear_status()
        self.stream.write(line + "\n")
        self.stream.flush()
        if self.live and not self._stop.is_set() and self.total:
            self._draw_status()
