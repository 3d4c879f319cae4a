"""The executor seam: the registry, the default, and Ray as an optional extra."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.agents import parse_agent
from harness.agents.base import AgentAdapter
from harness.cli.main import cli
from harness.errors import EXIT_USAGE
from harness.executors import DEFAULT_EXECUTOR, REGISTRY, ExecutorSettings, executor_for
from harness.executors.local import LocalExecutor
from harness.model.item import ItemResult
from harness.plan import RunConfig, WorkItem
from harness.report.progress import Progress
from harness.run.execute import execute_run

TINY = str(Path(__file__).resolve().parents[1] / "data" / "fixtures" / "tiny")


def test_local_is_the_default() -> None:
    assert (
        DEFAULT_EXECUTOR
        == "local"
        == RunConfig.__dataclass_fields__["executor"].default_factory().name
    )  # type: ignore[misc]
    assert isinstance(executor_for(ExecutorSettings()), LocalExecutor)
    assert set(REGISTRY) == {"local", "ray"}


@pytest.mark.slow
def test_harness_imports_without_ray() -> None:
    """The plain install has no ray: nothing but the ray executor may import it."""
    code = (
        "import sys; sys.modules['ray'] = None\n"
        "import harness.cli.main, harness.run.execute, harness.executors, harness.executors.ray\n"
        "assert sys.modules['ray'] is None\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_ray_executor_without_ray_is_a_usage_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    result = CliRunner().invoke(
        cli,
        ["run", "--fixture", "json-events", "--agent", "sim", "--executor", "ray",
         "--runs-dir", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == EXIT_USAGE, result.output
    assert "swarm-harness[ray]" in result.output
    assert not list(tmp_path.iterdir())  # nothing written


@pytest.mark.parametrize(("trials", "at_once"), [(6, 4), (1, 1)], ids=["in-flight", "items"])
def test_the_executor_warms_up_before_the_first_item(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trials: int, at_once: int
) -> None:
    """Ray's cold workers cost the first items' slots seconds each: the run lets its executor
    get ready for as many items as it may hold at once (the two slots and a wave prepared
    ahead, at most the items) before the first one takes a slot, and says what it did."""
    calls: list[tuple[object, ...]] = []

    def warm_up(
        self: LocalExecutor, agents: Sequence[AgentAdapter], at_once: int, stop: object
    ) -> str:
        calls.append(("warm up", tuple(a.name for a in agents), at_once))
        return "2 workers warmed"

    real = LocalExecutor.run_item

    def run_item(self: LocalExecutor, work: WorkItem, *args: Any) -> ItemResult:
        calls.append(("item", work.key))
        return real(self, work, *args)

    monkeypatch.setattr(LocalExecutor, "warm_up", warm_up)
    monkeypatch.setattr(LocalExecutor, "run_item", run_item)
    config = RunConfig(
        fixtures=(TINY,), models=(), agents=(parse_agent("sim"),), trials=trials,
        concurrency=2, runs_dir=tmp_path,
    )  # fmt: skip
    notes = io.StringIO()
    execute_run(config, Progress(notes, live=False))
    assert calls[0] == ("warm up", ("sim",), at_once)
    assert [c[0] for c in calls[1:]] == ["item"] * trials
    assert "2 workers warmed" in notes.getvalue()
