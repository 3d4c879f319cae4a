"""The sim's solo twin (``solo``): the parent reads every shard itself, one after another,
spawns nobody, and under ``slow=S`` keeps to the designed timing; ``solo-delegates``
delegates anyway. Real sim processes on the ``sim`` workdir (edit fixtures:
``test_sim_edits.py``)."""

from __future__ import annotations

import pytest
from simkit import SHARDS, SimLayout

from sim_agent.config import (
    FLAGS,
    PLANS,
    SimUsageError,
    designed_speedup,
    parse_behaviours,
    slow_deadlines,
    twin_behaviours,
)

#: Generous beside the designed wall time: a loaded CI box starts Python slowly, and only the
#: lower bound (a deadline the sim sleeps until) is exact.
SLOW_SLACK_S = 5.0


def _cells(sim: SimLayout) -> list[str]:
    """The code of each ``ipython`` call in the parent's transcript, in order."""
    return [
        block["arguments"]["code"]
        for e in sim.transcript()
        if e["type"] == "message" and e["message"]["role"] == "assistant"
        for block in e["message"]["content"]
        if block.get("type") == "toolCall"
    ]


# --- the twin's behaviours ------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "twin"),
    [
        pytest.param("honest", "solo", id="honest"),
        pytest.param("no-spawn,slow=2", "solo,slow=2", id="plan-replaced-modifiers-kept"),
        pytest.param("slow=2,flaky=0.5,recovers", "solo,slow=2,flaky=0.5,recovers", id="mods"),
        pytest.param("honest,detached-grandchild", "solo", id="no-child-to-detach-from"),
        pytest.param(
            "solo-delegates,detached-grandchild",
            "solo,solo-delegates,detached-grandchild",
            id="delegating-twin-keeps-child-modifiers",
        ),
        pytest.param("model-error,slow=1", "model-error,slow=1", id="provider-plans-kept"),
        pytest.param("noop", "noop", id="noop-kept"),
    ],
)
def test_twin_behaviours(spec: str, twin: str) -> None:
    assert parse_behaviours(twin_behaviours(spec)) == parse_behaviours(twin)


def test_every_valid_spec_has_a_valid_twin() -> None:
    valued = ("slow=1", "flaky=0.5", "throttled=0.1")
    for plan in PLANS:
        for modifier in (*FLAGS, *valued):
            spec = f"{plan},{modifier}"
            try:
                parse_behaviours(spec)
            except SimUsageError:
                continue
            parse_behaviours(twin_behaviours(spec))  # raises if the twin cannot play


def test_solo_has_no_child_to_detach_a_grandchild_from() -> None:
    with pytest.raises(SimUsageError, match="needs a child process"):
        parse_behaviours("solo,detached-grandchild")
    assert parse_behaviours("solo,solo-delegates,detached-grandchild").detached_grandchild


# --- the designed timing --------------------------------------------------------------


def test_slow_deadlines_put_the_shards_side_by_side_or_one_after_another() -> None:
    assert slow_deadlines(3, 2.0, alone=False) == (0.5, 1.5, 2.0)
    assert slow_deadlines(3, 2.0, alone=True) == (0.5, 1.5, 2.5, 3.5, 4.0)
    assert slow_deadlines(3, 0.0, alone=True) == (0.0,) * 5


@pytest.mark.parametrize(("shards", "speedup"), [(1, 1.0), (2, 1.5), (3, 2.0), (8, 4.5)])
def test_designed_speedup_is_one_plus_shards_over_two(shards: int, speedup: float) -> None:
    assert designed_speedup(shards, 1.5) == pytest.approx(speedup)


@pytest.mark.parametrize(("shards", "slow"), [(3, 0.0), (0, 1.0)], ids=["no-slow", "no-shard"])
def test_designed_speedup_needs_slow_and_a_shard(shards: int, slow: float) -> None:
    with pytest.raises(ValueError):
        designed_speedup(shards, slow)


# --- real runs ------------------------------------------------------------------------


@pytest.mark.slow
def test_solo_reads_every_shard_itself_one_cell_each(sim: SimLayout) -> None:
    result = sim.run("solo")
    assert result.returncode == 0, result.stderr
    assert not sim.ledger_path().exists()  # spawned nobody
    assert sim.child_files() == [] and sim.receipts() == []
    cells = _cells(sim)
    reads = [c for c in cells if "read_text()" in c and "write_text" not in c]
    assert [next(s["file"] for s in SHARDS if repr(s["file"]) in c) for c in reads] == [
        s["file"] for s in SHARDS
    ]  # one cell per shard, in order
    assert "write_text" in cells[-1]
    assert sim.bullets() == {s["file"]: str(s["expected"]) for s in SHARDS}


@pytest.mark.slow
def test_solo_delegates_spawns_as_honest(sim: SimLayout) -> None:
    result = sim.run("solo,solo-delegates")
    assert result.returncode == 0, result.stderr
    assert sorted(s["name"] for s in sim.spawns()) == sorted(s["worker"] for s in SHARDS)
    assert len(sim.receipts()) == len(SHARDS)


@pytest.mark.slow
def test_solo_with_slow_takes_its_designed_time(sim: SimLayout) -> None:
    slow = 0.4
    designed = slow_deadlines(len(SHARDS), slow, alone=True)[-1]  # 0.1 + 3 x 0.2 + 0.1
    result = sim.run(f"solo,slow={slow}")
    assert result.returncode == 0, result.stderr
    # The sim sleeps until deadlines counted from its own start, which the test's clock
    # started before: it cannot be done sooner; later only by a loaded machine.
    assert designed <= result.elapsed < designed + SLOW_SLACK_S
