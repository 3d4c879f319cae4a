"""The ``--trials auto`` planner: launch order, errored trials, the cap, frozen decisions,
provider room and a resume's gaps."""

from __future__ import annotations

from pathlib import Path

import pytest
from model_builders import make_item

from harness.agents import parse_agent
from harness.fixtures import load_fixture
from harness.plan import SequentialSettings, WorkItem
from harness.run.scheduler import Scheduler
from harness.run.sequential import SequentialPlanner, baseline_counts

TINY = Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny"
MODEL = "p/m"
AGENT = parse_agent("sim:honest")


@pytest.fixture(scope="module")
def fixture():  # type: ignore[no-untyped-def]
    return load_fixture(TINY)


def planner(fixture, baseline=None, kept=(), **settings):  # type: ignore[no-untyped-def]
    name = fixture.manifest.name
    counts = {(name, AGENT.label(), MODEL): baseline} if baseline is not None else None
    return SequentialPlanner(
        [fixture], [(AGENT, [MODEL])], SequentialSettings(**settings), 0.05, counts, kept
    )


def take(p: SequentialPlanner) -> WorkItem:
    work = p.take(lambda w: True)
    assert work is not None
    return work


def result(fixture, trial: int, resolved: bool, status: str | None = None):  # type: ignore[no-untyped-def]
    return make_item(fixture.manifest.name, trial, resolved, model=MODEL, status=status)


def cell(p: SequentialPlanner):  # type: ignore[no-untyped-def]
    (only,) = p.outcomes().values()
    return only


def test_outcomes_enter_in_launch_order_not_completion_order(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, baseline=(12, 12), max_trials=10)
    first, second = take(p), take(p)
    assert (first.trial, second.trial) == (1, 2)
    p.record(result(fixture, 2, False))  # the second finishes first
    assert cell(p).trials == 0  # waits for trial 1
    p.record(result(fixture, 1, False))
    assert cell(p).trials == 2


def test_a_collapse_is_decided_and_the_cell_stops_launching(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, baseline=(12, 12), max_trials=20)
    lines = []
    while not p.exhausted():
        work = take(p)
        line = p.record(result(fixture, work.trial, False))
        if line:
            lines.append(line)
    c = cell(p)
    assert c.status == "regressed" and c.stop_reason == "decided"
    assert c.launched == c.decided_at < 20 and len(lines) == 1 and "regressed" in lines[0]
    assert p.take(lambda w: True) is None


def test_a_decision_is_frozen_and_trials_in_flight_still_count(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, baseline=(12, 12), max_trials=20)
    works = [take(p) for _ in range(8)]  # eight in flight at once
    for w in works:
        p.record(result(fixture, w.trial, w.trial > 4))  # 4 failures decide; then passes
    c = cell(p)
    assert c.status == "regressed" and c.decided_at is not None and c.decided_at < 8
    assert c.trials == 8  # the in-flight ones entered the sequence after the decision


def test_errored_trials_are_left_out_and_count_against_the_cap(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, max_trials=5)
    for _ in range(5):
        work = take(p)
        p.record(result(fixture, work.trial, False, status="error"))
    assert p.exhausted()  # an agent that always errors cannot run forever
    c = cell(p)
    assert c.trials == 0 and c.launched == 5 and c.stop_reason == "stopped"


def test_undecided_at_the_cap_says_cap(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, baseline=(6, 12), max_trials=6)
    while not p.exhausted():
        work = take(p)
        p.record(result(fixture, work.trial, work.trial % 2 == 0))
    assert cell(p).stop_reason == "cap" and cell(p).status == "cap"


def test_without_a_baseline_the_rate_question_can_end_precise(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, max_trials=60, precision=0.10)
    while not p.exhausted():
        p.record(result(fixture, take(p).trial, True))
    c = cell(p)
    assert c.question == "rate" and c.stop_reason == "precise" and c.trials < 60
    assert c.upper - c.lower <= 0.2


def test_a_provider_without_room_gets_nothing(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, max_trials=5)
    assert p.take(lambda w: False) is None and not p.exhausted()


def test_a_resume_runs_its_gaps_first_and_continues_the_sequence(fixture) -> None:  # type: ignore[no-untyped-def]
    kept = [result(fixture, t, t != 2) for t in (1, 2, 4)]  # trial 3 was interrupted
    p = planner(fixture, baseline=(9, 12), kept=kept, max_trials=20)
    assert cell(p).trials == 2  # 4 waits for 3
    assert take(p).trial == 3
    assert take(p).trial == 5
    p.record(result(fixture, 3, True))
    assert cell(p).trials == 4


def test_replaying_a_run_gives_the_same_decision_as_living_it(fixture) -> None:  # type: ignore[no-untyped-def]
    outcomes = iter([True, False, True, False, False, True, False, False, False, False] * 2)
    live = planner(fixture, baseline=(11, 12), max_trials=20)
    kept = []
    while not live.exhausted():
        item = result(fixture, take(live).trial, next(outcomes))
        live.record(item)
        kept.append(item)
    again = planner(fixture, baseline=(11, 12), kept=kept, max_trials=20)
    assert cell(again) == cell(live) and again.exhausted()


def test_baseline_counts_match_cells_as_the_comparison_does() -> None:
    items = [make_item("a", t, t != 3, model="x/base") for t in (1, 2, 3)]
    items.append(make_item("a", 4, False, model="x/base", status="error"))
    assert baseline_counts(items, ["sim:b"], ["x/cand"]) == {("a", "sim:b", "x/cand"): (2, 3)}
    assert baseline_counts(items, ["b"], ["x/base", "x/other"]) == {("a", "b", "x/base"): (2, 3)}
    # Another agent on another model: no cell in common.
    assert baseline_counts(items, ["b"], ["x/cand"]) == {("a", "sim:honest", "x/base"): (2, 3)}
    # Several agents: matched by name; the baseline's one agent is one of the candidate's.
    assert baseline_counts(items, ["sim:honest", "c"], ["x/base"]) == {
        ("a", "sim:honest", "x/base"): (2, 3)
    }


def test_the_scheduler_runs_a_planner_until_it_is_exhausted(fixture) -> None:  # type: ignore[no-untyped-def]
    p = planner(fixture, baseline=(12, 12), max_trials=20)
    scheduler: Scheduler[WorkItem, object] = Scheduler(concurrency=3)

    def execute(work, cancel, slot):  # type: ignore[no-untyped-def]
        slot.acquire()
        return result(fixture, work.trial, False)

    done, not_started = scheduler.run(
        p,
        execute,
        lambda w, e: None,
        lambda w, r: p.record(r),  # type: ignore[arg-type,return-value]
    )
    assert not not_started and len(done) == cell(p).launched < 20
    assert sorted(w.trial for w, _ in done) == list(range(1, len(done) + 1))
    assert cell(p).status == "regressed"


def test_the_console_line_names_the_trial_that_decided_not_the_results_in(fixture) -> None:  # type: ignore[no-untyped-def]
    """Results that arrived out of order are folded in at once: the decision was made at
    its trial, and the line says that one (as report.json's ``decided_at``)."""
    p = planner(fixture, baseline=(12, 12), max_trials=20)
    works = [take(p) for _ in range(12)]
    for work in works[1:]:  # every later trial first: nothing enters before trial 1
        assert p.record(result(fixture, work.trial, False)) is None
    line = p.record(result(fixture, works[0].trial, False))
    decided = cell(p).decided_at
    assert line is not None and decided is not None and decided < 12
    assert f"decided after {decided} trials" in line
