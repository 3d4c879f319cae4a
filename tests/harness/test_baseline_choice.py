"""Which run a comparison is made against, and when there is nothing to compare.

``--compare-baseline latest`` once picked a selftest (Claude Code's scripted run) as the
baseline of a sim run, compared the two and passed the gate: a wrong answer with exit 0.
A selftest is never a comparison's ``latest``; two runs whose agent *and* model differ are
compared only cell by matching cell, and a comparison with no cell in common is refused
(exit 2, before anything runs); stdout names the baseline.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.errors import EXIT_USAGE
from harness.runs.catalog import OLD_SELFTEST_FILE, RUN_FILE, latest_run
from harness.stats.compare import agent_kind, pair_runs, shared_cells

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "tests" / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.e2e


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


def sim_run(runs: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return harness("run", "--agent", "sim", "--fixture", TINY, "--runs-dir", str(runs), *extra)


def newest(runs: Path) -> Path:
    return max((p for p in runs.iterdir() if p.is_dir()), key=lambda p: p.name)


def as_another_agent(run_dir: Path, agent: str, model: str) -> None:
    """Rewrite a finished run as if another agent had run another model (a selftest's
    shape: Claude Code on a scripted model)."""
    path = run_dir / "report.json"
    report = json.loads(path.read_text())
    report["options"].update(agent=agent, agent_kind=agent, models=[model])
    for item in report["items"]:
        item.update(agent=agent, model=model)
    path.write_text(json.dumps(report))


@pytest.mark.parametrize(
    ("marker", "why"),
    [
        pytest.param(RUN_FILE, "marked in run.json at its start", id="run-json"),
        pytest.param(
            OLD_SELFTEST_FILE, "its outcome file (a selftest of an earlier version)", id="outcome"
        ),
    ],
)
def test_latest_for_a_comparison_is_never_a_selftest(tmp_path: Path, marker: str, why: str) -> None:
    runs = tmp_path / "runs"
    assert sim_run(runs).returncode == 0
    evaluation = newest(runs)
    assert sim_run(runs).returncode == 0
    selftest = newest(runs)
    if marker == RUN_FILE:
        data = json.loads((selftest / RUN_FILE).read_text())
        data["options"]["selftest"] = True
        (selftest / RUN_FILE).write_text(json.dumps(data))
    else:
        (selftest / OLD_SELFTEST_FILE).write_text('{"rows": 1, "hold": 1, "ok": true}')
    assert latest_run(runs) == selftest, why  # show, report, export: the newest run
    assert latest_run(runs, for_comparison=True) == evaluation, why
    done = sim_run(runs, "--compare-baseline", "latest")
    assert done.returncode == 0, done.stderr
    assert f"baseline: run {evaluation.name} (sim, model sim/honest, " in done.stdout


def test_a_selftest_run_is_marked_as_one_from_its_start(tmp_path: Path) -> None:
    from harness.agents import parse_agent
    from harness.plan import RunConfig
    from harness.run.execute import execute_run

    config = RunConfig(
        fixtures=(TINY,), models=(), agents=(parse_agent("sim", None),),
        runs_dir=tmp_path, selftest=True,
    )  # fmt: skip
    outcome = execute_run(config)
    assert json.loads((outcome.run_dir / RUN_FILE).read_text())["options"]["selftest"] is True
    plain = execute_run(
        RunConfig(fixtures=(TINY,), models=(), agents=config.agents, runs_dir=tmp_path)
    )
    assert json.loads((plain.run_dir / RUN_FILE).read_text())["options"]["selftest"] is False


def test_a_baseline_of_another_agent_and_model_is_refused_before_the_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert sim_run(runs).returncode == 0
    other = newest(runs)
    as_another_agent(other, "claude-code", "scripted/honest")
    before = sorted(p.name for p in runs.iterdir())
    done = sim_run(runs, "--compare-baseline", str(other), "--fail-on", "regression")
    assert done.returncode == EXIT_USAGE, done.stdout + done.stderr
    assert f"run {other.name} (claude-code, model scripted/honest, " in done.stderr
    assert "shares no fixture x agent x model" in done.stderr
    assert sorted(p.name for p in runs.iterdir()) == before  # nothing ran
    dry = sim_run(runs, "--compare-baseline", str(other), "--dry-run")
    assert dry.returncode == EXIT_USAGE and "nothing to compare" in dry.stderr
    # The compare command refuses the same pair.
    assert sim_run(runs).returncode == 0
    done = harness("compare", str(other), str(newest(runs)))
    assert done.returncode == EXIT_USAGE and "share no fixture x agent x model" in done.stderr


def test_a_baseline_of_another_model_is_compared_and_named(tmp_path: Path) -> None:
    """One axis differing is a comparison people make on purpose (two models, two agents)."""
    runs = tmp_path / "runs"
    assert sim_run(runs).returncode == 0
    other = newest(runs)
    as_another_agent(other, "sim", "sim/wrong-answer")
    done = sim_run(runs, "--compare-baseline", str(other))
    assert done.returncode == 0, done.stderr
    assert f"baseline: run {other.name} (sim, model sim/wrong-answer, " in done.stdout
    assert "vs baseline: " in done.stdout


@pytest.mark.parametrize(
    ("base", "cand", "shared"),
    [
        pytest.param(("f", "sim", "sim/a"), ("f", "sim", "sim/b"), 1, id="model-differs"),
        pytest.param(("f", "pa", "m"), ("f", "pb", "m"), 1, id="agent-differs"),
        pytest.param(
            ("f", "claude-code", "scripted/a"), ("f", "sim", "sim/a"), 0, id="both-differ"
        ),
        pytest.param(("f", "sim", "sim/a"), ("g", "sim", "sim/a"), 0, id="fixture-differs"),
        pytest.param(
            ("f", "sim:honest", "sim/honest"),
            ("f", "sim:flaky=0.5", "sim/flaky=0.5"),
            1,
            id="two-behaviours-of-one-agent",
        ),
    ],
)
def test_cells_are_matched_on_at_most_one_differing_axis(
    base: tuple[str, str, str], cand: tuple[str, str, str], shared: int
) -> None:
    assert len(shared_cells([base], [cand])) == shared
    pair = pair_runs({base[1]}, {base[2]}, {cand[1]}, {cand[2]})
    # Never a wildcard on both axes when the agents are of two kinds.
    if agent_kind(base[1]) != agent_kind(cand[1]) and base[2] != cand[2]:
        assert pair.by_agent and pair.by_model
