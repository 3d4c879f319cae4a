"""Running an item again when the provider failed it (``run --retries N``).

An item whose run ended as a provider error (``facts.error`` begins ``provider: ``; see
:mod:`scorers.provider`) runs again (unless it ended on a fault no retry gets past: the
endpoint unreachable, the credentials refused) in a fresh workdir, up to N more times, after a wait:
``--retry-backoff`` seconds before the first retry, doubling before each next, at least
what the provider asked for (``retry-after``, where the agent recorded it), at most
:data:`harness.plan.MAX_RETRY_WAIT_S`. A retry starts only while the run still launches
items (not after Ctrl-C, a spent budget or the circuit breaker).

Every attempt is kept: while the next one runs, earlier attempts wait in a staging dir
beside the item's (``items/.attempts-<item>/<n>/``); when the item is done they move under
it (``items/<item>/attempts/<n>/``) and its ``result.json`` says how many attempts it took
and what each earlier one cost (``attempts``, ``earlier``). A resumed run treats an item's
earlier result on disk as its earlier attempt, so the count goes on across resumes.
"""

from __future__ import annotations

import contextlib
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from harness.errors import BundleError, NotStarted
from harness.files import write_json_atomic
from harness.item.scoring import RESULT_FILE, read_result
from harness.model.item import Attempt, ItemResult
from harness.plan import MAX_RETRY_WAIT_S, WorkItem

#: Where an item keeps its earlier attempts, below its own dir.
ATTEMPTS_DIR = "attempts"
#: The staging dir of an item's earlier attempts while the next one runs (beside it).
STAGING_PREFIX = ".attempts-"


@dataclass(frozen=True)
class RetryPolicy:
    """When an item runs again.

    ``may_retry`` is False once the run starts no more items; ``wait`` sleeps up to the
    given seconds and returns False when the run was stopped meanwhile; ``announce`` is told
    of each retry before its wait (the next attempt, the result it follows, the wait, the
    last attempt the item may get); ``attempted`` is told of every attempt that ran (its
    result), before the item decides whether to run again (the circuit breaker counts
    attempts).
    """

    retries: int
    backoff_s: float
    may_retry: Callable[[], bool]
    wait: Callable[[float], bool]
    announce: Callable[[WorkItem, ItemResult, float, int], None] = lambda *_: None
    attempted: Callable[[ItemResult], None] = lambda _: None


def run_policy(
    retries: int,
    backoff_s: float,
    halted: threading.Event,
    note: Callable[[str], None] | None = None,
    attempted: Callable[[ItemResult], None] = lambda _: None,
) -> RetryPolicy:
    """The policy of a run: retries while the scheduler still launches items (``halted``:
    set once it launches no more, on a stop, a drain or a tripped breaker; a wait ends the
    moment it is), each announced with ``note`` (the console's)."""

    def wait(seconds: float) -> bool:
        return not halted.wait(seconds)

    def announce(work: WorkItem, result: ItemResult, delay: float, last: int) -> None:
        if note is not None:
            note(
                f"{work.key}: {result.facts.error}; attempt {work.attempt} of {last} in {delay:.0f} s"
            )

    return RetryPolicy(retries, backoff_s, lambda: not halted.is_set(), wait, announce, attempted)


def retry_wait(policy: RetryPolicy, retry: int, result: ItemResult) -> float:
    """Seconds to wait before retry number ``retry`` (1: the first) of ``result``'s item."""
    asked = result.facts.provider_faults.retry_after_s if result.facts.provider_faults else None
    backoff = policy.backoff_s * 2.0 ** (retry - 1)
    return min(MAX_RETRY_WAIT_S, max(backoff, asked or 0.0))


def as_attempt(result: ItemResult, number: int) -> Attempt:
    """An earlier attempt's record, from its result."""
    return Attempt(
        attempt=number,
        error=result.facts.error,
        tokens=result.score.tokens_used,
        cost_usd=result.cost_usd,
        failed_requests=result.facts.failed_requests,
        wall_time_s=result.facts.wall_time_s,
        dir=f"{ATTEMPTS_DIR}/{number}",
        by_kind=dict(result.facts.provider_faults.by_kind)
        if result.facts.provider_faults
        else None,
    )


def _staging(item_dir: Path) -> Path:
    return item_dir.parent / f"{STAGING_PREFIX}{item_dir.name}"


def _stage(item_dir: Path, number: int) -> None:
    """Move the item's dir (and the attempts it holds) aside as attempt ``number``."""
    staging = _staging(item_dir)
    staging.mkdir(exist_ok=True)
    held = item_dir / ATTEMPTS_DIR
    if held.is_dir():
        for old in held.iterdir():
            old.rename(staging / old.name)
        held.rmdir()
    item_dir.rename(staging / str(number))


def _unstage(item_dir: Path) -> None:
    """Move the staged attempts under the item's dir (which holds the last attempt)."""
    staging = _staging(item_dir)
    if staging.is_dir():
        staging.rename(item_dir / ATTEMPTS_DIR)


def _restore(item_dir: Path, number: int) -> None:
    """Make staged attempt ``number`` the item's dir again (a retry that never started)."""
    staging = _staging(item_dir)
    shutil.rmtree(item_dir, ignore_errors=True)
    (staging / str(number)).rename(item_dir)
    if any(staging.iterdir()):
        staging.rename(item_dir / ATTEMPTS_DIR)
    else:
        staging.rmdir()


def _previous(item_dir: Path) -> tuple[list[Attempt], ItemResult | None]:
    """What an item's dir holds from an earlier run (a resume): its attempts so far, and
    the last one's result, staged aside. A dir without a readable result (an item cut off
    mid-run) is removed: nothing in it was finished."""
    if not item_dir.exists():
        return [], None
    try:
        result = read_result(item_dir)
    except BundleError:
        shutil.rmtree(item_dir, ignore_errors=True)
        return [], None
    _stage(item_dir, result.attempts)
    return [*result.earlier, as_attempt(result, result.attempts)], result


def _finish(item_dir: Path, result: ItemResult, number: int, earlier: list[Attempt]) -> ItemResult:
    _unstage(item_dir)
    if number == 1 and not earlier:
        return result
    final = replace(result, attempts=number, earlier=tuple(earlier))
    with contextlib.suppress(OSError):  # the result in memory is the record; disk follows
        write_json_atomic(item_dir / RESULT_FILE, final.to_dict())
    return final


def run_attempts(
    work: WorkItem,
    item_dir: Path,
    run_once: Callable[[WorkItem], ItemResult],
    policy: RetryPolicy,
) -> ItemResult:
    """Run ``work`` (via ``run_once``, into ``item_dir``) until it ends otherwise than as a
    provider error or its retries are spent; its last attempt's result, counting them."""
    earlier, last = _previous(item_dir)
    number = len(earlier) + 1
    retries = policy.retries
    while True:
        try:
            result = run_once(replace(work, attempt=number))
        except NotStarted:
            if last is not None:
                _restore(item_dir, number - 1)
            if retries == policy.retries:  # nothing ran in this run: the item did not start
                raise
            assert last is not None
            return _finish(item_dir, last, number - 1, earlier[:-1])
        policy.attempted(result)
        # A fault no retry gets past (the endpoint unreachable, the key refused) is not
        # retried: the next attempt would fail the same way, after the same wait.
        retriable = result.facts.lost_to_provider and result.facts.fatal_fault is None
        if not (retriable and retries > 0 and policy.may_retry()):
            return _finish(item_dir, result, number, earlier)
        delay = retry_wait(policy, policy.retries - retries + 1, result)
        policy.announce(replace(work, attempt=number + 1), result, delay, number + retries)
        _stage(item_dir, number)
        earlier.append(as_attempt(result, number))
        if not policy.wait(delay) or not policy.may_retry():
            _restore(item_dir, number)
            return _finish(item_dir, result, number, earlier[:-1])
        last, number, retries = result, number + 1, retries - 1


__all__ = [
    "ATTEMPTS_DIR",
    "STAGING_PREFIX",
    "RetryPolicy",
    "as_attempt",
    "retry_wait",
    "run_attempts",
]
