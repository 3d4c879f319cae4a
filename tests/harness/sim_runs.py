"""Small simulated runs on the tiny fixture, shared by the report-browsing tests."""

from __future__ import annotations

from pathlib import Path

from harness.agents import parse_agent
from harness.plan import RunConfig
from harness.run.execute import execute_run

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")


def sim_run(
    runs_dir: Path, behaviour: str, trials: int = 2, baseline: Path | None = None, seed: int = 0
) -> Path:
    """Run ``sim:<behaviour>`` on the tiny fixture; return the run dir."""
    config = RunConfig(
        fixtures=(TINY,),
        models=(),
        agents=(parse_agent(f"sim:{behaviour}", seed=seed),),
        trials=trials,
        concurrency=2,
        runs_dir=runs_dir,
        baseline=baseline,
    )
    return execute_run(config).run_dir
