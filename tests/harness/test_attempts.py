"""harness.run.attempts and harness.run.breaker: an item the provider failed runs again, its
earlier attempts kept; K such attempts in a row stop the run."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from model_builders import make_item

from harness.errors import NotStarted
from harness.files import write_json_atomic
from harness.item.scoring import RESULT_FILE
from harness.model.item import ItemResult, RunFacts
from harness.plan import WorkItem
from harness.run.attempts import RetryPolicy, retry_wait, run_attempts
from harness.run.breaker import CircuitBreaker, stop_line
from harness.stats.provider import provider_health
from scorers import ProviderFault, ProviderFaults

LOST = "provider: 529 overloaded ×4 in the parent, gave up"


def lost(trial: int = 1, retry_after: float | None = None) -> ItemResult:
    base = make_item("fx", trial, False)
    fault = ProviderFault("parent", "overloaded", 529, "Overloaded", False)
    faults = ProviderFaults(4, {"overloaded": 4}, (fault,), LOST, retry_after)
    facts = dataclasses.replace(base.facts, error=LOST, provider_faults=faults)
    return dataclasses.replace(base, facts=facts)


def done(trial: int = 1) -> ItemResult:
    return make_item("fx", trial, True)


class Runs:
    """A stand-in executor: each attempt writes a bundle into the item dir and returns the
    next scripted outcome; it records the attempts it was asked for."""

    def __init__(self, item_dir: Path, outcomes: list[ItemResult | type[Exception]]) -> None:
        self.item_dir = item_dir
        self.outcomes = outcomes
        self.attempts: list[int] = []

    def __call__(self, work: WorkItem) -> ItemResult:
        self.attempts.append(work.attempt)
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, type):
            raise outcome
        self.item_dir.mkdir(parents=True, exist_ok=True)
        (self.item_dir / "stdout.jsonl").write_text(f"attempt {work.attempt}\n")
        write_json_atomic(self.item_dir / RESULT_FILE, outcome.to_dict())
        return outcome


def policy(
    retries: int, may: Callable[[], bool] = lambda: True, waits: list[float] | None = None
) -> RetryPolicy:
    seen = waits if waits is not None else []

    def wait(seconds: float) -> bool:
        seen.append(seconds)
        return True

    return RetryPolicy(retries, 10.0, may, wait)


@pytest.fixture
def work() -> WorkItem:
    from harness.agents import parse_agent
    from harness.fixtures import load_fixture

    tiny = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
    return WorkItem(load_fixture(tiny), parse_agent("sim"), "sim/honest", 1)


def test_a_provider_error_runs_again_and_every_attempt_is_kept(
    tmp_path: Path, work: WorkItem
) -> None:
    item = tmp_path / "items" / "fx__1"
    runs = Runs(item, [lost(), lost(), done()])
    waits: list[float] = []
    result = run_attempts(work, item, runs, policy(4, waits=waits))
    assert runs.attempts == [1, 2, 3]
    assert result.status == "resolved" and result.attempts == 3
    assert [a.attempt for a in result.earlier] == [1, 2]
    assert all(a.error == LOST and a.failed_requests == 4 for a in result.earlier)
    assert waits == [10.0, 20.0]  # the backoff doubles
    assert (item / "stdout.jsonl").read_text() == "attempt 3\n"
    for n in (1, 2):
        assert (item / "attempts" / str(n) / "stdout.jsonl").read_text() == f"attempt {n}\n"
    saved = json.loads((item / RESULT_FILE).read_text())
    assert saved["attempts"] == 3 and ItemResult.from_dict(saved) == result
    assert not (tmp_path / "items" / ".attempts-fx__1").exists()


def test_retries_stop_when_spent_and_the_last_provider_error_stands(
    tmp_path: Path, work: WorkItem
) -> None:
    item = tmp_path / "fx__1"
    result = run_attempts(work, item, Runs(item, [lost(), lost(), lost()]), policy(2))
    assert result.facts.lost_to_provider and result.attempts == 3
    assert sorted(p.name for p in (item / "attempts").iterdir()) == ["1", "2"]


@pytest.mark.parametrize(
    "outcome",
    [pytest.param(done(), id="resolved"), pytest.param(make_item("fx", 1, False), id="unresolved")],
)
def test_anything_but_a_provider_error_is_not_retried(
    tmp_path: Path, work: WorkItem, outcome: ItemResult
) -> None:
    item = tmp_path / "fx__1"
    runs = Runs(item, [outcome])
    result = run_attempts(work, item, runs, policy(3))
    assert runs.attempts == [1] and result == outcome and not (item / "attempts").exists()


def test_no_retry_once_the_run_starts_nothing_more(tmp_path: Path, work: WorkItem) -> None:
    item = tmp_path / "fx__1"
    runs = Runs(item, [lost()])
    result = run_attempts(work, item, runs, policy(3, may=lambda: False))
    assert runs.attempts == [1] and result.attempts == 1


def test_a_stop_during_the_wait_keeps_the_last_attempt_as_the_result(
    tmp_path: Path, work: WorkItem
) -> None:
    item = tmp_path / "fx__1"
    runs = Runs(item, [lost()])
    stopped = RetryPolicy(3, 10.0, lambda: True, lambda _s: False)
    result = run_attempts(work, item, runs, stopped)
    assert result.attempts == 1 and result.facts.lost_to_provider
    assert (item / "stdout.jsonl").read_text() == "attempt 1\n" and not (item / "attempts").exists()


def test_a_retry_that_never_started_leaves_the_earlier_attempt_in_place(
    tmp_path: Path, work: WorkItem
) -> None:
    """The run drained between the decision to retry and the slot: the first attempt is
    the item's result again, its files where they were."""
    item = tmp_path / "fx__1"
    runs = Runs(item, [lost(), lost(), NotStarted])
    result = run_attempts(work, item, runs, policy(3))
    assert result.attempts == 2 and [a.attempt for a in result.earlier] == [1]
    assert (item / "stdout.jsonl").read_text() == "attempt 2\n"
    assert (item / "attempts" / "1" / "stdout.jsonl").exists()


def test_a_resume_counts_the_attempts_on_disk(tmp_path: Path, work: WorkItem) -> None:
    item = tmp_path / "fx__1"
    run_attempts(work, item, Runs(item, [lost(), lost()]), policy(1))  # the first run: 2
    runs = Runs(item, [done()])
    result = run_attempts(work, item, runs, policy(2))  # resumed
    assert runs.attempts == [3] and result.attempts == 3
    assert [a.attempt for a in result.earlier] == [1, 2]
    assert sorted(p.name for p in (item / "attempts").iterdir()) == ["1", "2"]


def test_a_resumed_item_stopped_before_it_started_is_not_started(
    tmp_path: Path, work: WorkItem
) -> None:
    item = tmp_path / "fx__1"
    run_attempts(work, item, Runs(item, [lost()]), policy(0))
    with pytest.raises(NotStarted):
        run_attempts(work, item, Runs(item, [NotStarted]), policy(2))
    assert (item / "stdout.jsonl").read_text() == "attempt 1\n"  # the earlier one, kept


def test_a_half_written_bundle_of_an_earlier_run_is_not_an_attempt(
    tmp_path: Path, work: WorkItem
) -> None:
    item = tmp_path / "fx__1"
    item.mkdir()
    (item / "stdout.jsonl").write_text("cut off\n")  # no result.json: killed mid-item
    result = run_attempts(work, item, Runs(item, [done()]), policy(2))
    assert result.attempts == 1 and (item / "stdout.jsonl").read_text() == "attempt 1\n"


def test_the_wait_honours_retry_after_and_a_ceiling() -> None:
    p = policy(5)
    assert retry_wait(p, 1, lost()) == 10.0
    assert retry_wait(p, 3, lost()) == 40.0
    assert retry_wait(p, 1, lost(retry_after=120.0)) == 120.0
    assert retry_wait(p, 20, lost()) == 900.0


def test_the_breaker_trips_on_k_in_a_row_and_anything_else_breaks_the_row() -> None:
    breaker = CircuitBreaker(3)
    assert [breaker.record(r) for r in (lost(1), lost(2), done(3), lost(4), lost(5))] == [False] * 5
    assert breaker.record(lost(6)) and breaker.tripped
    assert breaker.reason == "provider unreachable: 3 attempts in a row failed with 529 overloaded"
    assert not breaker.record(lost(7))  # it trips once
    assert stop_line(breaker.reason, 12, "runs/x") == (
        "provider unreachable: 3 attempts in a row failed with 529 overloaded; 12 items not "
        "started; resume with --resume runs/x"
    )


def test_the_breaker_counts_an_agent_that_cannot_start() -> None:
    breaker = CircuitBreaker(2)
    gone = "agent could not start: /opt/agent: no such file"
    items = [
        dataclasses.replace(done(n), facts=RunFacts(0.0, None, False, gone, None)) for n in (1, 2)
    ]
    assert [breaker.record(r) for r in items] == [False, True]
    assert (
        breaker.reason
        == "agent unusable: 2 attempts in a row could not start (/opt/agent: no such file)"
    )


def test_an_item_launched_before_the_row_began_does_not_break_it() -> None:
    """Finishing order is not launch order: an item launched while the world was well (its
    agent ran, it resolved) that is recorded after two newer items could not start says
    nothing about now; one launched after the row began does break it."""
    gone = "agent could not start: /opt/agent: no such file"
    failed = dataclasses.replace(done(2), facts=RunFacts(0.0, None, False, gone, None))
    another = dataclasses.replace(done(3), facts=RunFacts(0.0, None, False, gone, None))
    breaker = CircuitBreaker(2)
    assert not breaker.record(failed, order=3)
    assert not breaker.record(done(1), order=2)  # launched before the row: stale news
    assert breaker.record(another, order=4) and breaker.tripped
    fresh = CircuitBreaker(2)
    assert not fresh.record(failed, order=3)
    assert not fresh.record(done(1), order=4)  # ran after the row began, and resolved
    assert not fresh.record(failed, order=5) and not fresh.tripped
    unknown = CircuitBreaker(2)  # no launch order (an item that failed before its agent)
    assert [unknown.record(r) for r in (failed, done(1), failed)] == [False] * 3


def test_one_items_own_retries_failing_in_a_row_are_not_an_outage() -> None:
    """A provider failing half its requests fails one item's attempts three times in a row
    now and then: that is one unlucky item, not K items in a row; a second and third item
    failing next are."""
    breaker = CircuitBreaker(3)
    assert not any(breaker.record(lost(1)) for _ in range(4))
    assert not breaker.record(lost(2))
    assert breaker.record(lost(3)) and breaker.reason == (
        "provider unreachable: 6 attempts (of 3 items) in a row failed with 529 overloaded"
    )


def test_a_breaker_of_zero_never_trips() -> None:
    breaker = CircuitBreaker(0)
    assert not any(breaker.record(lost(n)) for n in range(10))


def test_provider_health_adds_every_attempt() -> None:
    item = lost()
    attempt = dataclasses.replace(item, attempts=1)
    from harness.run.attempts import as_attempt

    retried = dataclasses.replace(done(2), attempts=2, earlier=(as_attempt(attempt, 1),))
    health = provider_health([retried, lost(3), done(4)])
    assert (health.failed_requests, health.by_kind) == (8, {"overloaded": 8})
    assert (health.items_with_faults, health.items_retried, health.retries, health.items_lost) == (
        2,
        1,
        1,
        1,
    )
    assert health.retry_tokens == item.score.tokens_used and not health.healthy
    assert provider_health([done(1)]).healthy


def test_an_item_written_before_attempts_reads_as_one_attempt() -> None:
    data = done().to_dict()
    del data["attempts"], data["earlier"], data["facts"]["provider_faults"]
    item = ItemResult.from_dict(data)
    assert item.attempts == 1 and item.earlier == () and item.facts.provider_faults is None
    with pytest.raises(ValueError, match="attempts"):
        ItemResult.from_dict({**done().to_dict(), "attempts": 0})


UNREACHABLE = (
    "provider: endpoint unreachable ×1 in the parent, gave up (API Error: Can't reach the API "
    "server — check your internet or DNS (ENOTFOUND))"
)


def unreachable(trial: int = 1) -> ItemResult:
    """Lost to an endpoint nobody can reach (what Claude Code records, in its words)."""
    base = make_item("fx", trial, False)
    words = "API Error: Can't reach the API server — check your internet or DNS (ENOTFOUND)"
    fault = ProviderFault("parent", "unreachable", None, words, False)
    faults = ProviderFaults(1, {"unreachable": 1}, (fault,), UNREACHABLE)
    return dataclasses.replace(
        base, facts=dataclasses.replace(base.facts, error=UNREACHABLE, provider_faults=faults)
    )


def test_a_fault_no_retry_gets_past_is_not_retried(tmp_path: Path, work: WorkItem) -> None:
    """DNS failure, connection refused, 401/403: the next attempt fails the same way after
    the same wait (a Claude Code run against a dead endpoint took minutes per attempt)."""
    item_dir = tmp_path / "item"
    runs = Runs(item_dir, [unreachable(), done()])
    result = run_attempts(work, item_dir, runs, policy(3))
    assert runs.attempts == [1] and result.facts.error == UNREACHABLE
    assert result.facts.fatal_fault == "unreachable" and lost().facts.fatal_fault is None


def test_the_breaker_trips_at_the_first_fault_no_retry_gets_past() -> None:
    breaker = CircuitBreaker(3)
    assert breaker.record(unreachable()) and breaker.reason == (
        "provider unreachable: endpoint unreachable ×1 in the parent, gave up (API Error: "
        "Can't reach the API server — check your internet or DNS (ENOTFOUND)); no retry gets "
        "past it"
    )
    assert not CircuitBreaker(0).record(unreachable())  # 0: never


def refused(trial: int = 1) -> ItemResult:
    """A run that never reached the model: the provider refused the key."""
    base = make_item("fx", trial, False, status="error")
    error = "model never reached: authentication failed (401); check ANTHROPIC_API_KEY"
    fault = ProviderFault("parent", "auth", 401, "401 Unauthorized: invalid x-api-key", False)
    faults = ProviderFaults(1, {"auth": 1}, (fault,), None)
    facts = dataclasses.replace(base.facts, error=error, provider_faults=faults)
    return dataclasses.replace(base, facts=facts)


def test_refused_credentials_stop_the_run_at_the_first_item() -> None:
    """401/403: every next item would be refused the same way."""
    assert refused().facts.fatal_fault == "auth"
    breaker = CircuitBreaker(3)
    assert breaker.record(refused()) and breaker.reason == (
        "provider refused the credentials: authentication failed (401); check "
        "ANTHROPIC_API_KEY; no retry gets past it"
    )


def test_show_says_a_repeated_fault_once_with_its_count() -> None:
    """A client's retries of one request are one line with their count (show printed the
    same "fault parent: unknown (retried)" line six times), and the final fault's words
    are kept whole enough to act on."""
    from harness.report.show import fault_lines

    retried = ProviderFault("parent", "unknown", None, "retried:  unknown", True)
    words = "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)"
    final = ProviderFault("parent", "unreachable", None, words, False)
    faults = ProviderFaults(7, {"unknown": 6, "unreachable": 1}, (retried,) * 6 + (final,))
    assert fault_lines(faults) == [
        "    fault parent: unknown (retried): retried: unknown (×6)",
        f"    fault parent: unreachable (final): {words}",
    ]
