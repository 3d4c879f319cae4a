"""The executor seam: the registry, the default, and Ray as an optional extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.errors import EXIT_USAGE
from harness.executors import DEFAULT_EXECUTOR, REGISTRY, ExecutorSettings, executor_for
from harness.executors.local import LocalExecutor
from harness.plan import RunConfig


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
