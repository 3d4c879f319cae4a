"""harness.run.budget: the refusal before a run, and the tracker that stops new items."""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from collections.abc import Iterator

import pytest
from model_builders import make_item

from harness.errors import EXIT_USAGE, UsageError
from harness.model.item import ItemCost, ItemResult
from harness.run.budget import BudgetTracker, check_budget_plan


def spent(usd: float | None, tokens: int, trial: int = 0) -> ItemResult:
    """A finished item that spent ``tokens`` and cost ``usd`` (None: its model has no
    price)."""
    base = make_item("fx", trial, True)
    score = dataclasses.replace(base.score, tokens_used=tokens)
    cost = ItemCost(
        usd=usd,
        source="none" if usd is None else "genai-prices",
        detail=(),
        unpriced=("sim/honest",) if usd is None else (),
        complete=True,
    )
    return dataclasses.replace(base, score=score, cost=cost)


# --- the plan ---------------------------------------------------------------------------------


def test_a_usd_budget_for_unpriced_models_is_refused() -> None:
    with pytest.raises(UsageError) as info:
        check_budget_plan(["scripted/b", "sim/a"], 5.0, None)
    assert info.value.exit_code == EXIT_USAGE
    assert str(info.value) == (
        "--max-cost 5: no price is known for scripted/b, sim/a, so what their items spend "
        "cannot be counted in USD; give their prices with --prices FILE, or add "
        "--max-tokens N to bound them by tokens"
    )


def test_the_refusal_shows_the_limit_as_given() -> None:
    with pytest.raises(UsageError, match=r"^--max-cost 0\.25: no price is known for sim/a, so"):
        check_budget_plan(["sim/a"], 0.25, None)


@pytest.mark.parametrize(
    ("unpriced", "max_cost", "max_tokens"),
    [
        (["sim/a"], 5.0, 1_000_000),  # tokens bound the unpriced items
        ([], 5.0, None),  # every model has a price
        (["sim/a"], None, None),  # no USD budget: nothing to refuse
        (["sim/a"], None, 10),
    ],
)
def test_plans_that_can_be_counted_pass(
    unpriced: list[str], max_cost: float | None, max_tokens: int | None
) -> None:
    check_budget_plan(unpriced, max_cost, max_tokens)


# --- the tracker ------------------------------------------------------------------------------


def test_nothing_spent() -> None:
    budget = BudgetTracker(1.0, 1_000)
    assert budget.add([]) is False
    status = budget.status()
    assert (status.spent_usd, status.spent_tokens, status.unpriced_items) == (0.0, 0, 0)
    assert not status.exhausted and status.reason is None
    assert (status.max_cost_usd, status.max_tokens) == (1.0, 1_000)


def test_usd_budget_runs_out_on_reaching_the_limit() -> None:
    budget = BudgetTracker(1.0, None)
    assert budget.add([spent(0.40, 1_000), spent(0.35, 2_000)]) is False
    status = budget.status()
    assert status.spent_usd == pytest.approx(0.75) and status.spent_tokens == 3_000
    assert not status.exhausted
    assert budget.add([spent(0.25, 10)]) is True  # exactly $1.00: reaching it is enough
    status = budget.status()
    assert status.exhausted and status.reason == "spent $1.00 of $1.00"
    json.dumps(status.to_dict())


def test_usd_limit_reached_through_float_sums() -> None:
    """Ten items of $0.10 add up to 0.9999999999999999 in floats: the $1 is spent."""
    budget = BudgetTracker(1.0, None)
    exhausted = [budget.add([spent(0.1, 1)]) for _ in range(10)]
    assert exhausted == [False] * 9 + [True]
    assert budget.status().spent_usd < 1.0  # the float sum really is below


def test_usd_budget_overshoot_is_kept() -> None:
    budget = BudgetTracker(0.5, None)
    assert budget.add([spent(0.3, 1), spent(0.4, 1)]) is True
    status = budget.status()
    assert status.spent_usd == pytest.approx(0.7)
    assert status.reason == "spent $0.7000 of $0.5000"


def test_token_budget_runs_out_on_reaching_the_limit() -> None:
    budget = BudgetTracker(None, 3_000)
    assert budget.add([spent(0.1, 1_000)]) is False
    assert budget.add([spent(None, 1_999)]) is False  # unpriced items count their tokens
    assert budget.status().spent_tokens == 2_999
    assert budget.add([spent(None, 1)]) is True
    status = budget.status()
    assert status.exhausted and status.reason == "used 3,000 of 3,000 tokens"
    assert status.spent_usd == pytest.approx(0.1)


def test_unpriced_items_exhaust_a_usd_only_budget() -> None:
    """An unpriced item spent an unknown amount: never counted as free."""
    budget = BudgetTracker(100.0, None)
    assert budget.add([spent(0.10, 100)]) is False
    assert budget.add([spent(None, 5_000)]) is True
    status = budget.status()
    assert status.unpriced_items == 1 and status.spent_usd == pytest.approx(0.10)
    assert status.reason == "1 item without a price under a USD budget: spending unknown"


def test_unpriced_items_are_bounded_by_max_tokens() -> None:
    budget = BudgetTracker(100.0, 10_000)
    assert budget.add([spent(0.10, 100), spent(None, 5_000)]) is False
    status = budget.status()
    assert (status.unpriced_items, status.spent_tokens) == (1, 5_100)
    assert not status.exhausted
    assert budget.add([spent(None, 4_900)]) is True
    assert budget.status().reason == "used 10,000 of 10,000 tokens"


def test_unpriced_items_without_tokens_spent_nothing() -> None:
    budget = BudgetTracker(1.0, None)
    assert budget.add([spent(None, 0)]) is False
    assert budget.status().unpriced_items == 0


def test_every_reason_is_given() -> None:
    budget = BudgetTracker(0.5, 100)
    assert budget.add([spent(0.6, 100)]) is True
    assert budget.status().reason == "spent $0.6000 of $0.5000; used 100 of 100 tokens"


def test_no_limits_never_run_out() -> None:
    budget = BudgetTracker(None, None)
    assert budget.add([spent(1e6, 10**9), spent(None, 10**9)]) is False
    status = budget.status()
    assert status.spent_tokens == 2 * 10**9 and status.unpriced_items == 1
    assert not status.exhausted


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Threads switch every microsecond: a read-modify-write without its lock would lose
    updates."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.mark.usefixtures("fast_switching")
def test_many_threads_adding() -> None:
    threads, per_thread = 16, 500
    budget = BudgetTracker(1e9, 10**12)
    priced, unpriced = spent(0.125, 7), spent(None, 3)  # 0.125: float sums stay exact
    start = threading.Barrier(threads)
    results: list[bool] = []

    def worker() -> None:
        start.wait()
        for _ in range(per_thread):
            results.append(budget.add([priced]))
            results.append(budget.add([unpriced]))
            budget.status()

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    status = budget.status()
    adds = threads * per_thread
    assert status.spent_tokens == adds * (7 + 3)
    assert status.spent_usd == adds * 0.125
    assert status.unpriced_items == adds
    assert not any(results)


@pytest.mark.usefixtures("fast_switching")
def test_threads_see_the_budget_run_out_once_reached() -> None:
    """A limit of N tokens and items of one token each: an add answers after counting its
    own item, so only the first N - 1 items counted can be told the budget is intact; every
    later one is told it ran out."""
    limit, threads, per_thread = 1_000, 8, 250
    budget = BudgetTracker(None, limit)
    item = spent(None, 1)
    answers: list[bool] = []
    start = threading.Barrier(threads)

    def worker() -> None:
        start.wait()
        for _ in range(per_thread):
            answers.append(budget.add([item]))

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert budget.status().spent_tokens == len(answers) == threads * per_thread == 2 * limit
    assert answers.count(False) <= limit - 1
    assert budget.status().exhausted
