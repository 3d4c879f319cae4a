"""``run --solo`` with the simulated agent end to end: each item's solo twin plays the sim's
``solo`` plan (reads every shard itself, spawns nobody) and is judged by coverage alone; its
wall time keeps to the sim's designed timing; ``solo-delegates`` is the twin that delegates
anyway. Real processes, the tiny fixtures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.agents import parse_agent
from harness.errors import EXIT_RESOLVED
from harness.model.item import ItemResult
from harness.plan import RunConfig
from harness.run.execute import RunOutcome, execute_run
from sim_agent.config import designed_speedup, slow_deadlines

FIXTURES = Path(__file__).resolve().parent.parent / "data" / "fixtures"
TINY = FIXTURES / "tiny"
TINY_EDIT = FIXTURES / "tiny-edit"
REPO_ROOT = Path(__file__).resolve().parents[2]
#: Beside a designed wall time: the harness's own work around a launch and a loaded CI box
#: only add to it (the sim sleeps until deadlines from its start), so only the upper bound
#: needs room.
SLOW_SLACK_S = 5.0
#: ``slow=S`` for the timing test: long enough that the designed times dwarf start-up.
SLOW_S = 1.0
#: A CLI run of two sim items: seconds; generous for a loaded box.
CLI_TIMEOUT_S = 120.0

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _run(tmp_path: Path, fixture: Path, model: str) -> RunOutcome:
    config = RunConfig(
        fixtures=(str(fixture),),
        models=(model,),
        agents=(parse_agent("sim"),),
        timeout_s=60.0,
        runs_dir=tmp_path / "runs",
        concurrency=2,
        solo=True,
    )
    return execute_run(config)


def _arms(items: tuple[ItemResult, ...] | list[ItemResult]) -> dict[str, ItemResult]:
    by_arm = {item.arm: item for item in items}
    assert sorted(by_arm) == ["solo", "swarm"] and len(items) == 2
    return by_arm


def _meta(run_dir: Path, item: ItemResult) -> dict[str, Any]:
    meta: dict[str, Any] = json.loads(
        (run_dir / "items" / item.item_dir / "item.json").read_text(encoding="utf-8")
    )
    return meta


def _judged_alone(item: ItemResult) -> None:
    """The twin spawned nobody and only the criterion for one agent alone judged it."""
    assert item.agent == "sim+solo" and item.status == "resolved"
    assert [(c.name, c.passed) for c in item.score.checks] == [("coverage", True)]
    assert item.score.total_spawns == 0 and item.score.child_session_dirs == 0


def test_cli_solo_runs_the_swarm_item_and_its_twin(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "harness", "run", "--fixture", str(TINY), "--agent", "sim"]
    argv += ["--model", "sim/honest", "--solo", "--json", "--runs-dir", str(tmp_path / "runs")]
    proc = subprocess.run(
        argv,
        cwd=REPO_ROOT,
        env={**os.environ, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == EXIT_RESOLVED, proc.stderr
    report = json.loads(proc.stdout)
    run_dir = tmp_path / "runs" / report["run_id"]
    by_arm = {i["agent"]: i for i in report["items"]}
    assert sorted(by_arm) == ["sim", "sim+solo"]
    assert by_arm["sim"]["status"] == by_arm["sim+solo"]["status"] == "resolved"
    solo_meta = json.loads(
        (run_dir / "items" / by_arm["sim+solo"]["item_dir"] / "item.json").read_text("utf-8")
    )
    assert solo_meta["arm"] == "solo" and solo_meta["collection"]["ledger_via"] == "none"
    assert [c["name"] for c in by_arm["sim+solo"]["score"]["checks"]] == ["coverage"]


def test_solo_twin_on_an_edit_fixture_makes_every_change_itself(tmp_path: Path) -> None:
    outcome = _run(tmp_path, TINY_EDIT, "sim/honest")
    by_arm = _arms(outcome.report.items)
    assert by_arm["swarm"].status == "resolved"
    _judged_alone(by_arm["solo"])
    meta = _meta(outcome.run_dir, by_arm["solo"])
    assert meta["arm"] == "solo" and meta["collection"]["ledger_via"] == "none"
    (row,) = [s for s in outcome.report.summary if s.swarm_vs_solo is not None]
    assert row.swarm_vs_solo is not None and row.swarm_vs_solo.pairs == 1


def test_solo_twin_keeps_the_designed_timing(tmp_path: Path) -> None:
    outcome = _run(tmp_path, TINY, f"sim/honest,slow={SLOW_S:g}")
    by_arm = _arms(outcome.report.items)
    _judged_alone(by_arm["solo"])
    shards = len(json.loads((TINY / "fixture.json").read_text(encoding="utf-8"))["shards"])
    swarm_s = slow_deadlines(shards, SLOW_S, alone=False)[-1]
    solo_s = slow_deadlines(shards, SLOW_S, alone=True)[-1]
    assert solo_s / swarm_s == pytest.approx(designed_speedup(shards, SLOW_S))
    for arm, designed in (("swarm", swarm_s), ("solo", solo_s)):
        wall = by_arm[arm].facts.wall_time_s
        assert wall is not None and designed <= wall < designed + SLOW_SLACK_S, arm


def test_solo_delegates_leaves_spawns_and_is_left_out(tmp_path: Path) -> None:
    outcome = _run(tmp_path, TINY, "sim/solo-delegates")
    by_arm = _arms(outcome.report.items)
    twin = by_arm["solo"]
    assert twin.score.total_spawns == len(
        json.loads((TINY / "fixture.json").read_text(encoding="utf-8"))["shards"]
    )
    meta = _meta(outcome.run_dir, twin)
    assert meta["arm"] == "solo" and meta["collection"]["ledger_via"] != "none"
    (row,) = [s for s in outcome.report.summary if s.swarm_vs_solo is not None]
    assert row.swarm_vs_solo is not None
    assert row.swarm_vs_solo.pairs == 0 and row.swarm_vs_solo.excluded["delegated"] == 1


def test_the_speedups_interval_holds_the_designed_ratio_and_the_multipliers_are_the_counts(
    tmp_path: Path,
) -> None:
    """Two 3-shard fixtures x 3 trials under ``slow=1``: the sim's designed speedup is
    (1 + 3) / 2 = 2. Each item's wall time is its designed time plus what a launch adds
    around it (a few hundredths of a second, measured here per item as wall minus design);
    the paired interval of every row and of the suite holds the designed ratio once that
    measured overhead is allowed for. The token multiplier is the counted tokens' ratio."""
    slow, shards = 1.0, 3
    config = RunConfig(
        fixtures=(str(TINY), "smoke-orders"),
        models=(f"sim/honest,slow={slow:g}",),
        agents=(parse_agent("sim"),),
        trials=3,
        timeout_s=60.0,
        runs_dir=tmp_path / "runs",
        concurrency=4,
        solo=True,
    )
    report = execute_run(config).report
    design = {
        "swarm": slow_deadlines(shards, slow, False)[-1],
        "solo": slow_deadlines(shards, slow, True)[-1],
    }
    overhead = [i.facts.wall_time_s - design[i.arm] for i in report.items]
    assert min(overhead) >= 0, "an item ended before its designed time"
    worst = max(overhead)
    # The ratio of means the designed times give, with each wall between its design and its
    # design plus the largest overhead seen.
    low, high = (
        design["solo"] / (design["swarm"] + worst),
        (design["solo"] + worst) / design["swarm"],
    )
    assert low <= designed_speedup(shards, slow) <= high
    rows = [s.swarm_vs_solo for s in report.summary if s.swarm_vs_solo is not None]
    suites = [o.swarm_vs_solo for o in report.overall if o.swarm_vs_solo is not None]
    assert len(rows) == 2 and len(suites) == 1
    for vs in (*rows, *suites):
        assert vs.pairs == (3 if vs in rows else 6) and sum(vs.excluded.values()) == 0
        ci = vs.speedup.ci
        assert ci is not None and ci[0] <= high and ci[1] >= low, (ci, low, high)
        assert vs.resolved_diff.value == 0.0
    # The multiplier is the tokens counted: the swarm's sum over the twins'.
    swarm = sum(i.score.tokens_used for i in report.items if i.arm == "swarm")
    solo = sum(i.score.tokens_used for i in report.items if i.arm == "solo")
    assert suites[0].tokens_ratio.value == pytest.approx(swarm / solo, rel=1e-12)
