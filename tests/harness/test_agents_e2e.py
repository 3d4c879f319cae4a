"""One run over several agents, end to end with the simulated agent (real runs, in
process): the report side by side, the plan, ``--resume``, ``--rerun-failed``, ``compare``
and ``--trials auto`` with the agent as a dimension."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.model.report import load_report
from harness.model.text import format_amount, format_per_resolved, format_per_resolved_ci

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.slow


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def runs_in(runs: Path) -> list[Path]:
    return sorted(p for p in runs.iterdir() if p.is_dir())


def two_agents(runs: Path, *extra: str) -> tuple[int, str, str]:
    return invoke(
        "run", "--fixture", TINY, "--agent", "sim", "--agent", "sim:no-spawn",
        "--runs-dir", str(runs), "--concurrency", "3", *extra,
    )  # fmt: skip


def test_one_run_puts_the_agents_side_by_side(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code, out, err = two_agents(runs, "--trials", "3")
    assert code == 1, err  # no-spawn never resolves
    (run,) = runs_in(runs)
    report = load_report(run)
    keys = sorted(i.key for i in report.items)
    assert keys == [f"tiny:sim:no-spawn:sim/no-spawn:{t}" for t in (1, 2, 3)] + [
        f"tiny:sim:sim/honest:{t}" for t in (1, 2, 3)
    ]
    assert [(a.agent, a.kind, a.models) for a in report.options.agents] == [
        ("sim", "sim", ("sim/honest",)),
        ("sim:no-spawn", "sim", ("sim/no-spawn",)),
    ]
    assert [(s.agent, s.resolved, s.n) for s in report.summary] == [
        ("sim", 3, 3),
        ("sim:no-spawn", 0, 3),
    ]
    side = report.agents
    assert side is not None and side.reference == "sim"
    assert [(s.agent, s.resolved) for s in side.standings] == [("sim", 3), ("sim:no-spawn", 0)]
    (versus,) = side.versus
    assert versus.agent == "sim:no-spawn"
    assert versus.comparison.overall.delta == -1.0
    assert versus.comparison.overall.verdict == "regressed"
    # Every figure the console prints for an agent is the report's.
    honest = side.standings[0]
    assert "agents side by side (reference sim):" in out
    assert "sim · sim/honest: 100.0% resolved" in out
    # 3 of 3 resolved: a cost per resolved item with a finite interval, the report's.
    per = honest.tokens_per_resolved
    assert per is not None and per.ci is not None and per.ci[1] is not None
    assert f"tokens per item, {format_per_resolved(per, 'tokens')}" in out
    (never,) = [line for line in out.splitlines() if "(0/3 over 1 fixture)" in line]
    assert never.endswith("tokens per item, no resolved item"), never
    assert "sim:no-spawn against sim: worse, -100.0 pp" in out
    assert "tiny x sim:no-spawn · sim/no-spawn: 0/3 resolved" in out
    md = (run / "report.md").read_text(encoding="utf-8")
    assert "## Agents side by side" in md and "### sim:no-spawn against sim" in md
    interval = format_per_resolved_ci(per, "tokens")
    assert f"| {format_amount(per.value, 'tokens')} ({interval}) |" in md
    assert "| tiny | sim:no-spawn | sim/no-spawn | 3 | 0 | 0 |" in md

    # `compare RUN` prints the same side by side, with any reference.
    code, out, err = invoke("compare", str(run), "--reference", "sim:no-spawn", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["reference"] == "sim:no-spawn"
    assert [v["agent"] for v in data["versus"]] == ["sim"]
    assert data["versus"][0]["comparison"]["overall"]["delta"] == 1.0


def test_two_runs_of_several_agents_compare_agent_by_agent(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert two_agents(runs, "--trials", "2")[0] == 1
    assert two_agents(runs, "--trials", "2")[0] == 1
    first, second = runs_in(runs)
    code, out, err = invoke("compare", str(first), str(second), "--json")
    assert code == 0, err
    cells = {(f["agent"], f["model"]): f["delta"] for f in json.loads(out)["fixtures"]}
    assert cells == {("sim", "sim/honest"): 0.0, ("sim:no-spawn", "sim/no-spawn"): 0.0}


def test_resume_and_rerun_keep_the_agents(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert two_agents(runs, "--trials", "1")[0] == 1
    (run,) = runs_in(runs)
    code, _, err = invoke("run", "--resume", str(run), "--trials", "2", "--runs-dir", str(runs))
    assert code == 1, err
    report = load_report(run)
    assert sorted((i.agent, i.trial) for i in report.items) == [
        ("sim", 1), ("sim", 2), ("sim:no-spawn", 1), ("sim:no-spawn", 2),
    ]  # fmt: skip
    code, _, err = invoke("run", "--rerun-failed", str(run), "--runs-dir", str(runs))
    assert code == 1, err
    rerun = next(p for p in runs_in(runs) if p != run)
    again = load_report(rerun)
    assert {i.agent for i in again.items} == {"sim:no-spawn"}
    assert [a.agent for a in again.options.agents] == ["sim", "sim:no-spawn"]
    assert again.agents is None  # one agent ran: nothing to put side by side


def test_trials_auto_pairs_each_agent_with_its_baseline(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    assert two_agents(runs, "--trials", "4")[0] == 1
    (base,) = runs_in(runs)
    code, _, err = two_agents(
        runs, "--trials", "auto", "--max-trials", "6", "--compare-baseline", str(base)
    )
    assert code == 1, err
    cand = next(p for p in runs_in(runs) if p != base)
    cells = {s.agent: s.sequential for s in load_report(cand).summary}
    assert cells["sim"] is not None and cells["sim"].baseline == (4, 4)
    assert cells["sim:no-spawn"] is not None and cells["sim:no-spawn"].baseline == (0, 4)
    assert all(c.question == "regression" for c in cells.values() if c is not None)


def test_dry_run_names_each_agent_and_its_models(tmp_path: Path) -> None:
    code, out, err = invoke(
        "run", "--fixture", TINY, "--agent", "sim", "--agent", "sim:no-spawn", "--dry-run",
        "--runs-dir", str(tmp_path),
    )  # fmt: skip
    assert code == 0, err + out
    assert "agent:   sim (" in out and "): sim/honest" in out
    assert "agent:   sim:no-spawn (" in out and "): sim/no-spawn" in out
    assert "tiny:sim:no-spawn:sim/no-spawn:1" in out
