"""The runner end to end with the simulated agent: one run per behaviour, real processes."""

from __future__ import annotations

import json
from pathlib import Path

import psutil
import pytest

from harness.agents import parse_agent
from harness.agents.env import ITEM_TOKEN_VAR
from harness.errors import EXIT_INFRA, EXIT_RESOLVED, EXIT_UNRESOLVED, AgentLaunchError
from harness.item.scoring import rescore_item
from harness.model.report import validate_report
from harness.plan import RunConfig
from harness.run.execute import execute_run

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.e2e


def _leftovers(run_dir: Path | None = None) -> list[psutil.Process]:
    """Live processes carrying an item token of this run (tokens start with the run id and "@")."""
    prefix = f"{run_dir.name}@" if run_dir is not None else ""  # run id @ owner - uuid
    found = []
    for proc in psutil.process_iter():
        try:
            token = proc.environ().get(ITEM_TOKEN_VAR)
            if token and token.startswith(prefix) and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def run_sim(
    tmp_path: Path, behaviour: str, *, timeout: float = 60.0, fixture: str = TINY, **kw: object
):
    config = RunConfig(
        fixtures=(fixture,),
        models=(),
        agents=(parse_agent(f"sim:{behaviour}"),),
        timeout_s=timeout,
        runs_dir=tmp_path / "runs",
        **kw,  # type: ignore[arg-type]
    )
    return execute_run(config)


CRITERIA = ("coverage", "delegation", "dedup", "receipts", "provenance")

# behaviour -> (status, criteria that must fail)
BEHAVIOURS = [
    pytest.param("honest", "resolved", set(), id="honest"),
    pytest.param("no-spawn", "unresolved", {"delegation", "provenance"}, id="no-spawn"),
    pytest.param("helper-names", "unresolved", {"delegation", "provenance"}, id="helper-names"),
    pytest.param("forged-ledger", "unresolved", {"delegation", "provenance"}, id="forged-ledger"),
    pytest.param("double-spawn", "unresolved", {"dedup"}, id="double-spawn"),
    pytest.param("over-budget", "unresolved", {"dedup"}, id="over-budget"),
    pytest.param("retry-after-failure", "resolved", set(), id="retry-after-failure"),
    pytest.param("silent-drop", "unresolved", {"receipts", "provenance"}, id="silent-drop"),
    pytest.param("delete-to-hide", "unresolved", {"receipts"}, id="delete-to-hide"),
    pytest.param("wrong-answer", "unresolved", {"coverage"}, id="wrong-answer"),
    pytest.param("self-answer", "unresolved", {"provenance"}, id="self-answer"),
    pytest.param("answer-mismatch", "unresolved", {"provenance"}, id="answer-mismatch"),
    pytest.param("hollow-children", "unresolved", {"provenance"}, id="hollow-children"),
    pytest.param("backdated-reply", "unresolved", {"provenance"}, id="backdated-reply"),
    pytest.param("stubborn-daemon", "resolved", set(), id="stubborn-daemon"),
    pytest.param("detached-grandchild", "resolved", set(), id="detached-grandchild"),
]


@pytest.mark.parametrize(("behaviour", "status", "failing"), BEHAVIOURS)
def test_behaviour_verdicts(tmp_path: Path, behaviour: str, status: str, failing: set[str]) -> None:
    outcome = run_sim(tmp_path, behaviour)
    (item,) = outcome.report.items
    assert item.status == status, item.score.failures
    criteria = {c for c in CRITERIA if not item.passed(c)}
    assert criteria == failing
    assert outcome.exit_code == (EXIT_RESOLVED if status == "resolved" else EXIT_UNRESOLVED)
    assert item.facts.leftover_processes == 0
    assert _leftovers(outcome.run_dir) == []
    validate_report(json.loads((outcome.run_dir / "report.json").read_text()))
    # Re-scoring the saved bundle gives the identical verdict.
    again = rescore_item(outcome.run_dir / "items" / item.item_dir)
    assert again == item


def test_stubborn_daemon_is_killed_and_recorded(tmp_path: Path) -> None:
    outcome = run_sim(tmp_path, "stubborn-daemon")
    (item,) = outcome.report.items
    meta = json.loads((outcome.run_dir / "items" / item.item_dir / "item.json").read_text())
    assert item.facts.killed_processes >= 1
    assert any(k["signal"] == "SIGKILL" for k in meta["killed_processes"])
    assert _leftovers(outcome.run_dir) == []


def test_hang_times_out_is_scored_and_leaves_nothing(tmp_path: Path) -> None:
    outcome = run_sim(tmp_path, "hang", timeout=4)
    (item,) = outcome.report.items
    assert item.facts.timed_out is True and item.facts.error is None
    assert item.status == "unresolved"
    assert item.score.total_spawns >= 1  # scored from what it left
    assert _leftovers(outcome.run_dir) == []


def test_crash_is_unresolved_with_agent_error(tmp_path: Path) -> None:
    outcome = run_sim(tmp_path, "crash")
    (item,) = outcome.report.items
    assert item.facts.exit_code == 1 and item.status == "unresolved" and item.facts.error is None
    assert item.facts.agent_error
    assert _leftovers(outcome.run_dir) == []


def test_model_never_reached_is_an_infrastructure_error(tmp_path: Path) -> None:
    outcome = run_sim(tmp_path, "model-error")
    (item,) = outcome.report.items
    assert item.status == "error" and item.resolved is False
    assert "model never reached" in item.facts.error
    assert "401" in (item.facts.agent_error or "")
    # The one-line cause says the provider refused the login, and what gives the credentials.
    assert "authentication failed (401); check auth.json" in item.facts.error
    assert outcome.exit_code == EXIT_INFRA
    assert outcome.report.summary[0].n == 0 and outcome.report.summary[0].errors == 1


def test_missing_binary_is_an_infrastructure_error(tmp_path: Path) -> None:
    config = RunConfig(
        fixtures=(TINY,),
        models=("anthropic/x",),
        agents=(parse_agent("prime-agent", str(tmp_path / "no-such-agent")),),
        runs_dir=tmp_path / "runs",
    )
    with pytest.raises(AgentLaunchError, match="not found") as refused:
        execute_run(config)
    assert refused.value.exit_code == EXIT_INFRA
    assert not (tmp_path / "runs").exists()  # refused before anything was written


def test_slow_takes_its_time(tmp_path: Path) -> None:
    outcome = run_sim(tmp_path, "slow=1")
    (item,) = outcome.report.items
    assert item.status == "resolved" and item.facts.wall_time_s >= 0.9


def test_workdir_removed_unless_kept(tmp_path: Path) -> None:
    outcome = run_sim(tmp_path, "honest")
    meta = json.loads(next((outcome.run_dir / "items").glob("*/item.json")).read_text())
    assert "workdir" not in meta
    kept = run_sim(tmp_path / "k", "honest", keep_workdir=True)
    meta = json.loads(next((kept.run_dir / "items").glob("*/item.json")).read_text())
    assert Path(meta["workdir"]).is_dir()
    import shutil

    shutil.rmtree(meta["workdir"])


@pytest.mark.parametrize("fixture", ["json-events", "csv-metrics"])
def test_real_fixtures_resolve_with_honest_sim(tmp_path: Path, fixture: str) -> None:
    outcome = run_sim(tmp_path, "honest", fixture=fixture)
    (item,) = outcome.report.items
    assert item.status == "resolved", item.score.failures
    assert item.score.total_spawns == 8 and len(item.score.verified_shard_workers) == 8
