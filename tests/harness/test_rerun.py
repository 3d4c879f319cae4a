"""Going on from a finished run: ``--rerun-failed`` runs its failures again as a new run;
``--resume`` with a larger ``--trials`` adds trials to it (real sim runs, in process)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.model.report import load_report

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")

pytestmark = pytest.mark.slow


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def only_run(runs: Path, but: frozenset[Path] = frozenset()) -> Path:
    (found,) = [p for p in runs.iterdir() if p.is_dir() and p not in but]
    return found


def stamps(run_dir: Path) -> dict[str, int]:
    return {p.parent.name: p.stat().st_mtime_ns for p in (run_dir / "items").glob("*/result.json")}


def test_rerun_failed_runs_only_the_failures_as_a_new_run(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code, _, err = invoke(
        "run", "--fixture", TINY, "--agent", "sim", "--model", "sim/honest",
        "--model", "sim/no-spawn", "--trials", "2", "--runs-dir", str(runs),
    )  # fmt: skip
    assert code == 1, err
    first = only_run(runs)
    failed = sorted(i.key for i in load_report(first).items if i.status != "resolved")
    assert len(failed) == 2 and all("no-spawn" in k for k in failed)

    code, out, err = invoke("run", "--rerun-failed", "latest", "--runs-dir", str(runs))
    assert code == 1, err  # no-spawn fails again: the gate still says so
    second = only_run(runs, frozenset({first}))
    report = load_report(second)
    assert sorted(i.key for i in report.items) == failed
    assert report.options.origin == first.name
    assert sorted(report.options.only_keys) == failed
    assert report.options.trials == 2 and report.options.agent_kind == "sim"
    assert f"re-ran 2 items that failed in {first.name}" in out
    assert "a re-run of the 2 items" in (second / "report.md").read_text(encoding="utf-8")
    assert "tiny x sim/honest" not in out  # the resolved model was not run again
    assert f"<td>{first.name}</td>" in (runs / "index.html").read_text(encoding="utf-8")

    # A re-run is a run like any other: it resumes with the same items.
    code, out, err = invoke("run", "--resume", str(second), "--runs-dir", str(runs))
    assert code == 1, err
    assert sorted(i.key for i in load_report(second).items) == failed


def test_rerun_failed_refuses_a_run_with_nothing_to_rerun(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code, _, err = invoke("run", "--fixture", TINY, "--agent", "sim", "--runs-dir", str(runs))
    assert code == 0, err
    first = only_run(runs)
    code, _, err = invoke("run", "--rerun-failed", str(first), "--runs-dir", str(runs))
    assert code == 2 and "nothing to re-run: every item resolved" in err
    assert [p for p in runs.iterdir() if p.is_dir()] == [first]
    code, _, err = invoke(
        "run", "--rerun-failed", str(first), "--resume", str(first), "--runs-dir", str(runs)
    )
    assert code == 2 and "give one" in err


def test_resume_with_more_trials_adds_them_and_keeps_the_rest(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    code, _, err = invoke(
        "run", "--fixture", TINY, "--agent", "sim", "--trials", "2", "--runs-dir", str(runs)
    )
    assert code == 0, err
    run_dir = only_run(runs)
    before = stamps(run_dir)
    assert len(before) == 2

    code, out, err = invoke(
        "run", "--resume", str(run_dir), "--trials", "4", "--runs-dir", str(runs)
    )
    assert code == 0, err
    report = load_report(run_dir)
    assert len(report.items) == 4 and report.options.trials == 4
    assert "tiny x sim/honest: 4/4 resolved" in out
    after = stamps(run_dir)
    assert {k: after[k] for k in before} == before  # the first two trials were kept as they were
    stored = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    assert stored["options"]["trials"] == 4

    code, _, err = invoke("run", "--resume", str(run_dir), "--trials", "3", "--runs-dir", str(runs))
    assert code == 2 and "--trials 3" in err and "4 trials" in err
    assert stamps(run_dir) == after
