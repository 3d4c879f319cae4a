"""The Ray run's gate, as plain asyncio (on a cluster it is an actor; the distributed tier
runs it there): the warm-up barrier and an item's slot asked for from its node."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable

from harness.executors.ray_gate import GO, STOP, Gate

#: Long enough for a wait that should end to end, short enough to fail fast when it won't.
SETTLE_S = 1.0


async def _done(coro: Awaitable[object]) -> bool:
    """Whether ``coro`` finishes within SETTLE_S."""
    try:
        await asyncio.wait_for(coro, SETTLE_S)
    except TimeoutError:
        return False
    return True


def test_warm_up_tasks_that_arrive_before_the_head_says_how_many_are_counted() -> None:
    """The head's expect() and the tasks' arrive() race to the gate: an arrival first must
    still count, or the warm-up waits out its whole timeout."""

    async def scenario() -> tuple[bool, bool]:
        gate = Gate()
        early = asyncio.ensure_future(gate.arrive())
        await asyncio.sleep(0)
        gate.expect(2)
        late = await _done(gate.arrive())
        return late, await _done(early)

    assert asyncio.run(scenario()) == (True, True)


def test_warm_up_waits_for_every_task_until_opened() -> None:
    async def scenario() -> tuple[bool, bool]:
        gate = Gate()
        gate.expect(3)
        waiting = asyncio.ensure_future(gate.arrive())
        alone = await _done(asyncio.shield(waiting))
        gate.open()
        return alone, await _done(waiting)

    assert asyncio.run(scenario()) == (False, True)


def test_an_item_asks_the_head_answers_and_the_agent_ends() -> None:
    async def scenario() -> list[object]:
        gate = Gate()
        asked = asyncio.ensure_future(gate.asked("k"))
        ask = asyncio.ensure_future(gate.ask("k"))
        seen: list[object] = [await _done(asked)]
        gate.answer("k", GO)
        seen.append(await asyncio.wait_for(ask, SETTLE_S))
        ended = asyncio.ensure_future(gate.ended("k"))
        seen.append(await _done(asyncio.shield(ended)))
        gate.end("k")
        seen.append(await _done(ended))
        gate.forget("k")
        return seen

    assert asyncio.run(scenario()) == [True, GO, False, True]


def test_an_answer_given_before_the_item_asks_stands() -> None:
    """A stop reaches the gate before the node asks (it was still preparing): the node's
    ask then returns the stop at once, and a later answer does not replace it."""

    async def scenario() -> object:
        gate = Gate()
        gate.answer("k", STOP)
        gate.answer("k", GO)
        return await asyncio.wait_for(gate.ask("k"), SETTLE_S)

    assert asyncio.run(scenario()) == STOP
