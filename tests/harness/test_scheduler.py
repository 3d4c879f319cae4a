"""The bounded, all-settled scheduler."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import pytest

from harness.run.scheduler import Scheduler, provider_of


@dataclass(frozen=True)
class W:
    key: str
    model: str = "p/m"


def _run(items, concurrency=2, caps=None, execute=None, stop_after=None):
    active = {"now": 0, "max": 0, "by": {}}
    lock = threading.Lock()
    sched: Scheduler[W, str] = Scheduler(
        concurrency, caps or {}, provider=lambda w: provider_of(w.model)
    )

    def default_execute(w: W, cancel: threading.Event, slot) -> str:
        slot.acquire()
        prov = provider_of(w.model)
        with lock:
            active["now"] += 1
            active["max"] = max(active["max"], active["now"])
            active["by"][prov] = active["by"].get(prov, 0) + 1
            active.setdefault("maxby", {})[prov] = max(
                active.get("maxby", {}).get(prov, 0), active["by"][prov]
            )
        time.sleep(0.05)
        with lock:
            active["now"] -= 1
            active["by"][prov] -= 1
        if stop_after is not None and w.key == stop_after:
            sched.stop()
        return f"ok:{w.key}"

    done, skipped = sched.run(items, execute or default_execute, lambda w, e: f"error:{w.key}:{e}")
    return done, skipped, active


def test_results_sorted_by_key_regardless_of_finishing_order() -> None:
    items = [W(k) for k in ("c", "a", "b", "e", "d")]

    def execute(w: W, cancel: threading.Event, slot) -> str:
        slot.acquire()
        time.sleep({"a": 0.15, "b": 0.0, "c": 0.1, "d": 0.05, "e": 0.0}[w.key])
        return w.key

    done, skipped, _ = _run(items, concurrency=5, execute=execute)
    assert [w.key for w, _ in done] == ["a", "b", "c", "d", "e"] and skipped == []


def test_concurrency_bound_is_respected() -> None:
    _, _, active = _run([W(str(i)) for i in range(12)], concurrency=3)
    assert active["max"] == 3


def test_provider_cap_bounds_items_per_provider() -> None:
    items = [W(f"a{i}", "anthropic/x") for i in range(6)] + [
        W(f"o{i}", "openai/y") for i in range(6)
    ]
    _, _, active = _run(items, concurrency=6, caps={"anthropic": 1})
    assert active["maxby"]["anthropic"] == 1
    assert active["maxby"]["openai"] >= 2


def test_all_settled_an_exception_becomes_an_errored_result() -> None:
    def execute(w: W, cancel: threading.Event, slot) -> str:
        slot.acquire()
        if w.key == "b":
            raise RuntimeError("boom")
        return "fine"

    done, _, _ = _run([W("a"), W("b"), W("c")], execute=execute)
    assert dict((w.key, r) for w, r in done) == {"a": "fine", "b": "error:b:boom", "c": "fine"}


def test_stop_launches_nothing_more() -> None:
    done, skipped, _ = _run([W(f"{i:02d}") for i in range(10)], concurrency=1, stop_after="01")
    assert [w.key for w, _ in done] == ["00", "01"]
    assert [w.key for w in skipped] == [f"{i:02d}" for i in range(2, 10)]


def test_duplicate_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="unique"):
        _run([W("a"), W("a")])


def test_provider_of() -> None:
    assert provider_of("anthropic/claude-sonnet-4-5") == "anthropic"
    assert provider_of("local") == "local"


def test_drain_starts_nothing_more_but_lets_running_items_finish() -> None:
    """A full disk drains: the item already running is not cancelled, nothing new starts."""
    sched: Scheduler[W, str] = Scheduler(2, {}, provider=lambda w: provider_of(w.model))
    b_running = threading.Event()
    seen_cancel: dict[str, bool] = {}

    def execute(w: W, cancel: threading.Event, slot) -> str:
        slot.acquire()
        if w.key == "a":
            assert b_running.wait(10)
            raise OSError(28, "No space left on device")
        b_running.set()
        time.sleep(0.3)  # still running when "a" fails and the scheduler drains
        seen_cancel[w.key] = cancel.is_set()
        return f"ok:{w.key}"

    def on_error(w: W, exc: BaseException) -> str:
        sched.drain()
        return f"error:{w.key}"

    done, skipped = sched.run([W(k) for k in "abcde"], execute, on_error)
    assert dict((w.key, r) for w, r in done) == {"a": "error:a", "b": "ok:b"}
    assert seen_cancel == {"b": False}
    assert [w.key for w in skipped] == ["c", "d", "e"]


def test_an_item_recorded_before_its_slot_frees_stops_the_next_one() -> None:
    """An item that fails in microseconds (its agent could not start) keeps its slot until
    on_done has recorded it: a breaker tripping there stops the very next item, however fast
    the items fail and however loaded the machine (no item slips past an uncounted one)."""
    recorded: list[str] = []

    def execute(w: W, cancel: threading.Event, slot) -> str:
        slot.acquire()
        return "could not start"  # no release: the scheduler frees the slot once recorded

    def on_done(w: W, result: str) -> None:
        time.sleep(0.02)  # recording is slower than failing: the race the order closes
        recorded.append(w.key)
        if len(recorded) == 2:
            sched.drain()

    for _ in range(5):
        recorded.clear()
        sched: Scheduler[W, str] = Scheduler(1, {}, provider=lambda w: provider_of(w.model))
        items = [W(f"{i:02d}") for i in range(10)]
        done, skipped = sched.run(items, execute, lambda w, e: "", on_done)
        assert [w.key for w, _ in done] == ["00", "01"]
        assert [w.key for w in skipped] == [f"{i:02d}" for i in range(2, 10)]


class _DecidesAfterFirst:
    """A work source that wants no item launched after its first (a decided cell)."""

    def __init__(self, items: list[W]) -> None:
        self._pending = list(items)
        self.launched: list[str] = []

    def take(self, has_room):
        return self._pending.pop(0) if self._pending else None

    def exhausted(self) -> bool:
        return not self._pending

    def remaining(self) -> list[W]:
        return list(self._pending)

    def confirm(self, item: W) -> bool:
        self.launched.append(item.key)
        return len(self.launched) == 1


def test_a_withdrawn_item_is_no_item_but_a_retry_is_never_withdrawn() -> None:
    """Only an item's first launch is confirmed with its work source: the retry of an item
    already launched (its slot taken again after a provider error) is the same item, and a
    decided cell must not cut it off (it became an error: a retried trial lost)."""
    source = _DecidesAfterFirst([W("a"), W("b")])
    attempts: list[str] = []

    def execute(w: W, cancel: threading.Event, slot) -> str:
        for _ in range(2):  # an attempt, then its retry
            slot.acquire()
            attempts.append(w.key)
            slot.release()
        return f"ok:{w.key}"

    sched: Scheduler[W, str] = Scheduler(1)
    done, skipped = sched.run(source, execute, lambda w, e: f"error:{w.key}:{e}")
    assert [r for _, r in done] == ["ok:a"] and skipped == []
    assert attempts == ["a", "a"]
