"""``--trials auto`` end to end with the simulated agent: a collapse is caught early and
fails the gate, the same agent stays quiet, a run without a baseline ends at a rate known
to the precision, and an interrupted auto run resumes its sequences."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.errors import EXIT_BUDGET, EXIT_RESOLVED, EXIT_UNRESOLVED
from harness.plan import RunConfig, SequentialSettings
from harness.report.progress import Progress
from harness.run.execute import RunOutcome, execute_run

pytestmark = pytest.mark.e2e

FIXTURES = ("csv-metrics", "json-events")


def run(
    tmp_path: Path,
    behaviour: str,
    *,
    trials: int = 20,
    auto: SequentialSettings | None = None,
    seed: int = 0,
    resume: Path | None = None,
    fixtures: tuple[str, ...] = FIXTURES,
    concurrency: int = 2,
    progress: Progress | None = None,
    **kw: object,
) -> RunOutcome:
    config = RunConfig(
        fixtures=fixtures,
        models=(),
        agents=(parse_agent(f"sim:{behaviour}", None, seed),),
        trials=auto.max_trials if auto else trials,
        concurrency=concurrency,
        timeout_s=60.0,
        runs_dir=tmp_path / "runs",
        sequential=auto,
        **kw,  # type: ignore[arg-type]
    )
    return execute_run(config, progress, resume=resume)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sim:flaky=0.9, 12 fixed trials per fixture."""
    return run(tmp_path_factory.mktemp("base"), "flaky=0.9", trials=12).run_dir


def test_a_collapse_is_regressed_well_before_the_cap(tmp_path: Path, baseline: Path) -> None:
    out = run(
        tmp_path, "flaky=0.05", auto=SequentialSettings(max_trials=20), baseline=baseline,
        fail_on="regression",
    )  # fmt: skip
    assert out.exit_code == EXIT_UNRESOLVED
    for s in out.report.summary:
        assert s.stop_reason == "decided" and s.sequential is not None
        # Decided on the first 10 trials by trial number (the outcomes are seeded), long
        # before the cap; how many more were launched meanwhile depends on how long the
        # earliest ones took on this machine, so only "before the cap" is pinned for it.
        assert s.sequential.status == "regressed", s.sequential
        assert s.sequential.decided_at is not None and s.sequential.decided_at <= 10, s.sequential
        assert s.sequential.launched < 20, s.sequential
        assert s.n == s.sequential.launched  # every launched trial was scored and reported
    cmp = out.report.comparison
    assert cmp is not None and cmp.sequential is not None
    assert cmp.sequential.status == "regressed" and len(cmp.sequential.regressed_cells) == 2
    assert any("sequential verdict regressed" in r for r in cmp.gate.reasons)
    assert len(out.report.items) < 2 * 20 and not out.report.not_started


class DecisionClock(Progress):
    """The console's progress, also noting when each cell decided (Unix time)."""

    def __init__(self) -> None:
        super().__init__(io.StringIO(), live=False)
        self.decided: list[float] = []

    def note(self, line: str) -> None:
        if " decided after " in line:
            self.decided.append(time.time())
        super().note(line)


def agent_launches(run_dir: Path) -> list[tuple[int, float]]:
    """Each item's trial and when its agent started (Unix time): its start, plus the time
    it spent preparing its workspace and waiting for a slot (item.json)."""
    launches = []
    for meta in sorted(run_dir.glob("items/*/item.json")):
        item = json.loads(meta.read_text(encoding="utf-8"))
        phases = item["phases_s"]
        launch = item["started_at"] + phases["workspace"] + phases["slot_wait"]
        launches.append((int(meta.parent.name.rsplit("__", 1)[-1]), launch))
    return launches


#: How much later than the decision a launch may be stamped: a trial confirmed just before
#: the decision starts its agent a moment after it (the scheduler's check and the launch are
#: microseconds apart); a trial launched for nothing used to start one or more seconds later.
LAUNCH_STAMP_SLACK_S = 0.5


@pytest.mark.parametrize("concurrency", [1, 4, 8])
def test_a_decided_cell_launches_nothing_more(
    tmp_path: Path, baseline: Path, concurrency: int
) -> None:
    """Once a cell decides, only the trials whose agents were already running finish: a
    trial still preparing (the scheduler readies up to a wave ahead) is withdrawn and never
    becomes an item, unless a later trial's agent got its slot first (then it launches, so
    the trial numbers have no gap: it was in flight). Once, 7 decided trials came with
    14-16 launched at concurrency 4."""
    clock = DecisionClock()
    out = run(
        tmp_path, "flaky=0.05", auto=SequentialSettings(max_trials=20), baseline=baseline,
        fixtures=("csv-metrics",), concurrency=concurrency, progress=clock,
    )  # fmt: skip
    (s,) = out.report.summary
    cell = s.sequential
    assert cell is not None and cell.status == "regressed" and cell.decided_at is not None
    (decided,) = clock.decided
    launches = agent_launches(out.run_dir)
    before = max(trial for trial, t in launches if t <= decided + LAUNCH_STAMP_SLACK_S)
    late = [
        (trial, t - decided)
        for trial, t in launches
        if t > decided + LAUNCH_STAMP_SLACK_S and trial > before
    ]
    assert late == [], f"agents launched after the decision (trial, s): {late}; {cell}"
    trials = sorted(trial for trial, _ in launches)
    assert trials == list(range(1, len(trials) + 1))  # launch order without a gap
    assert s.n == cell.launched == len(out.report.items)  # each launched trial is an item
    assert not out.report.not_started and not out.report.interrupted


def test_the_same_agent_is_not_called_regressed(tmp_path: Path, baseline: Path) -> None:
    out = run(
        tmp_path, "flaky=0.9", auto=SequentialSettings(max_trials=20), baseline=baseline,
        fail_on="regression", seed=5,
    )  # fmt: skip
    cmp = out.report.comparison
    assert cmp is not None and cmp.sequential is not None
    assert cmp.sequential.status != "regressed" and out.exit_code == EXIT_RESOLVED
    assert {s.stop_reason for s in out.report.summary} <= {"cap", "decided"}


def test_without_a_baseline_the_rate_is_known_to_the_precision(tmp_path: Path) -> None:
    out = run(tmp_path, "honest", auto=SequentialSettings(max_trials=60, precision=0.10))
    for s in out.report.summary:
        assert s.stop_reason == "precise" and s.sequential is not None
        assert s.sequential.question == "rate" and s.n < 60
        assert s.sequential.upper - s.sequential.lower <= 0.2 + 1e-9


def test_fixed_trials_carry_no_stop_reason(tmp_path: Path) -> None:
    out = run(tmp_path, "honest", trials=2)
    assert all(s.stop_reason is None and s.sequential is None for s in out.report.summary)
    assert out.report.options.sequential is None


def test_an_interrupted_auto_run_resumes_its_sequences(tmp_path: Path, baseline: Path) -> None:
    auto = SequentialSettings(max_trials=20)
    first = run(
        tmp_path, "flaky=0.05", auto=auto, baseline=baseline, max_tokens=30_000,
    )  # fmt: skip
    assert first.exit_code == EXIT_BUDGET
    kept = {i.key for i in first.report.items}
    done = run(
        tmp_path, "flaky=0.05", auto=auto, baseline=baseline, max_tokens=10**9,
        resume=first.run_dir, fail_on="regression",
    )  # fmt: skip
    assert done.exit_code == EXIT_UNRESOLVED
    assert kept <= {i.key for i in done.report.items}  # the first session's trials stay
    for s in done.report.summary:
        assert s.stop_reason == "decided" and s.sequential is not None
        trials = sorted(i.trial for i in done.report.items if i.fixture == s.fixture)
        assert trials == list(range(1, len(trials) + 1))  # launch order without a gap
