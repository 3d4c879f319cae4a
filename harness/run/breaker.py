"""The circuit breaker: ``run --max-provider-errors K`` stops a run the world is failing.

After attempts of K items in a row (as they finish) end as errors that every next attempt
would repeat (the provider failed them, or the agent could not even start), no new item
starts and no pending retry runs (a retry waiting out its backoff stops waiting); running
items finish and are kept, the report says why, and the run exits 3 so it can be resumed
once the provider (or the binary) is back. Attempts, not finished items: with retries on,
an item whose first attempt failed frees its slot for the backoff, and counting only items
that used up their retries let a dead endpoint start every item of the run before the row
was long enough. K items, not K attempts: one unlucky item's own retries failing in a row
(a provider failing half its requests) are not an outage. Any other outcome (a resolved or unresolved attempt, an error of another kind)
breaks the row, unless its agent was launched before the row's first one: an attempt that
started while the world was still well and finished after the failures began says nothing
about the world now. An attempt that ended on a fault no retry gets past (the endpoint
unreachable, the credentials refused) trips it at once: every next attempt would fail the
same way, and there is no passing trouble to wait out. K = 0: never.

Stops a provider outage (or a binary removed mid-run) from burning the whole suite's time
and money on items that can only fail the same way.
"""

from __future__ import annotations

import threading
from collections import Counter

from harness.model.item import MODEL_NEVER_REACHED, PROVIDER_ERROR_PREFIX, ItemResult
from harness.model.text import plural

#: How an item's error begins when its agent could not be started.
START_ERROR_PREFIX = "agent could not start: "


def _repeats(result: ItemResult) -> str | None:
    """The kind of a run-stopping error (``provider`` or ``start``), or None."""
    error = result.facts.error
    if error is None:
        return None
    if error.startswith(PROVIDER_ERROR_PREFIX) or result.facts.fatal_fault is not None:
        return "provider"
    if error.startswith(START_ERROR_PREFIX):
        return "start"
    return None


def _cause(result: ItemResult) -> str:
    """The provider's failure in a few words (``529 overloaded``), from the item's faults."""
    faults = result.facts.provider_faults
    found = [f for f in faults.evidence if not f.retried] if faults else []
    if not found and faults is not None:
        found = list(faults.evidence)
    if not found:
        return "a provider error"
    kinds = Counter((f.status, f.kind.replace("_", " ")) for f in found)
    (status, kind), _ = kinds.most_common(1)[0]
    return f"{status} {kind}" if status is not None else kind


class CircuitBreaker:
    """Counts run-stopping errors in a row, attempt by attempt (thread-safe: attempts
    finish on worker threads)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.reason: str | None = None
        self._row: list[ItemResult] = []
        self._row_began: int | None = None  # the launch order of the row's first item
        self._lock = threading.Lock()

    @property
    def tripped(self) -> bool:
        return self.reason is not None

    def record(self, result: ItemResult, order: int | None = None) -> bool:
        """Count one finished attempt (``order``: when its agent was launched, in the run's
        order; None when unknown); True the moment the breaker trips (once)."""
        with self._lock:
            kind = _repeats(result)
            same = bool(self._row) and kind is not None and _repeats(self._row[-1]) == kind
            if same:
                self._row.append(result)
            elif (
                self._row
                and order is not None
                and self._row_began is not None
                and (order < self._row_began)
            ):
                return False  # launched before the row began: stale news
            else:
                self._row = [] if kind is None else [result]
                self._row_began = order
            if self.reason is not None or not self.limit:
                return False
            fatal = result.facts.fatal_fault if kind == "provider" else None
            if fatal is not None:
                self.reason = self._fatal(fatal, result)
                return True
            items = len({r.key for r in self._row})
            if items < self.limit:
                return False
            self.reason = self._explain(kind or "", len(self._row), items, result)
            return True

    @staticmethod
    def _fatal(kind: str, last: ItemResult) -> str:
        cause = (last.facts.error or "").removeprefix(PROVIDER_ERROR_PREFIX)
        cause = cause.removeprefix(f"{MODEL_NEVER_REACHED}: ")
        what = "provider refused the credentials" if kind == "auth" else "provider unreachable"
        return f"{what}: {cause}; no retry gets past it"

    @staticmethod
    def _explain(kind: str, count: int, items: int, last: ItemResult) -> str:
        row = (
            f"{plural(count, 'attempt')}{f' (of {items} items)' if items != count else ''} in a row"
        )
        if kind == "start":
            cause = (last.facts.error or "").removeprefix(START_ERROR_PREFIX)
            return f"agent unusable: {row} could not start ({cause})"
        return f"provider unreachable: {row} failed with {_cause(last)}"


def stop_line(reason: str, not_started: int, run_dir: str) -> str:
    """The one stderr line a tripped breaker prints: what happened and how to go on."""
    return f"{reason}; {plural(not_started, 'item')} not started; resume with --resume {run_dir}"


__all__ = ["START_ERROR_PREFIX", "CircuitBreaker", "stop_line"]
