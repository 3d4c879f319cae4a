"""Pairing each swarm item with its solo twin (``run --solo``): who pairs, who is left out
and why, and that the figures are the paired statistics of exactly those pairs."""

from __future__ import annotations

import dataclasses

import pytest
from model_builders import make_item

from harness.model.item import ItemResult, RunFacts
from harness.stats.solo import paired_rate_diff, paired_ratio
from harness.stats.swarm_solo import solo_delegated, swarm_vs_solo


def _timed(item: ItemResult, wall: float, tokens: int, spawns: int = 0) -> ItemResult:
    score = dataclasses.replace(item.score, tokens_used=tokens, total_spawns=spawns)
    facts: RunFacts = dataclasses.replace(item.facts, wall_time_s=wall)
    return dataclasses.replace(item, score=score, facts=facts)


def _pair(fixture: str, trial: int, swarm: tuple[bool, float, int], solo: tuple[bool, float, int],
          spawns: int = 0) -> list[ItemResult]:  # fmt: skip
    a = _timed(make_item(fixture, trial, swarm[0], agent="sim"), swarm[1], swarm[2])
    b = _timed(make_item(fixture, trial, solo[0], agent="sim+solo"), solo[1], solo[2], spawns)
    return [a, b]


def test_pairs_by_fixture_model_and_trial_and_the_figures_are_theirs() -> None:
    items = [
        *_pair("fx", 1, (True, 10.0, 3000), (True, 30.0, 1000)),
        *_pair("fx", 2, (True, 12.0, 3300), (False, 33.0, 1200)),
        *_pair("fx", 3, (False, 11.0, 2900), (True, 29.0, 1100)),
        *_pair("gx", 1, (True, 20.0, 5000), (False, 50.0, 2000)),
        *_pair("gx", 2, (True, 21.0, 5200), (True, 48.0, 2100)),
    ]
    rows, overall = swarm_vs_solo(items)
    row = rows[("fx", "sim", "p/m")]
    assert row.pairs == 3 and row.solo_agent == "sim+solo"
    assert row.excluded == {"errored": 0, "delegated": 0, "unpaired": 0}
    speed = paired_ratio([30.0, 33.0, 29.0], [10.0, 12.0, 11.0])
    assert (row.speedup.value, row.speedup.ci) == (speed.value, speed.ci)
    assert row.speedup.value == pytest.approx(92 / 33)
    assert row.tokens_ratio.value == pytest.approx(9200 / 3300)
    diff = paired_rate_diff([True, True, False], [True, False, True])
    assert (row.resolved_diff.value, row.resolved_diff.ci) == (diff.value, diff.ci)
    # Over the suite the fixtures are the units.
    suite = overall[("sim", "p/m")]
    assert suite.pairs == 5
    clustered = paired_ratio(
        [30.0, 33.0, 29.0, 50.0, 48.0], [10.0, 12.0, 11.0, 20.0, 21.0], ["fx"] * 3 + ["gx"] * 2
    )
    assert (suite.speedup.value, suite.speedup.ci) == (clustered.value, clustered.ci)
    assert suite.cost_ratio.value is None  # unpriced items: no cost multiplier


def test_errored_delegating_and_unpaired_items_are_left_out_and_counted() -> None:
    items = [
        *_pair("fx", 1, (True, 10.0, 3000), (True, 30.0, 1000)),
        *_pair("fx", 2, (True, 10.0, 3000), (True, 30.0, 1000), spawns=3),  # delegated
        *_pair("fx", 3, (True, 10.0, 3000), (True, 30.0, 1000)),
        make_item("fx", 5, True, agent="sim"),  # its twin never ran
    ]
    items[4] = dataclasses.replace(
        items[4], facts=dataclasses.replace(items[4].facts, error="boom")
    )
    assert solo_delegated(items[3]) and not solo_delegated(items[1])
    row = swarm_vs_solo(items)[0][("fx", "sim", "p/m")]
    assert row.pairs == 1
    assert row.excluded == {"errored": 1, "delegated": 1, "unpaired": 1}


def test_a_run_without_twins_has_no_pairing() -> None:
    rows, overall = swarm_vs_solo([make_item("fx", 1, True, agent="sim")])
    assert rows == {} and overall == {}


def test_the_line_says_faster_the_tokens_and_the_gain_with_their_intervals() -> None:
    from harness.model.summary import Estimate, SwarmVsSolo
    from harness.model.text import solo_line

    vs = SwarmVsSolo(
        "sim+solo", 9, {"errored": 0, "delegated": 1, "unpaired": 0},
        Estimate(3.14, (2.41, 3.87)), Estimate(2.7, (2.1, 3.3)), Estimate(None, None),
        Estimate(0.12, (0.02, 0.22)),
    )  # fmt: skip
    assert solo_line(vs) == (
        "the swarm: 3.1x faster [2.4, 3.9], 2.7x the tokens [2.1, 3.3], resolved +12 pp "
        "[+2, +22] (9 pairs; left out: 1 delegated)"
    )
    slower = dataclasses.replace(
        vs, speedup=Estimate(0.6, None), excluded={"errored": 0, "delegated": 0, "unpaired": 0}
    )
    assert solo_line(slower).startswith("the swarm: 0.6x as fast [no interval], ")
    none = dataclasses.replace(vs, pairs=0)
    assert solo_line(none) == "the swarm against sim+solo: no pair to compare (1 delegated)"
