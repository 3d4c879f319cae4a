"""The comparison gate end to end: what a CI job gating on ``--fail-on regression`` sees.

Real runs of the harness with the simulated agent (a real subprocess each), then the gate's
exit code, its one-line reason on stderr and what report.md says.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from model_builders import make_item, make_options

from harness.model.item import ItemResult
from harness.model.report import RunReport
from harness.model.text import item_cause
from harness.report.markdown import render_markdown
from harness.stats.build import build_report
from harness.stats.compare import compare, gate

REPO = Path(__file__).resolve().parent.parent.parent
TINY = REPO / "tests" / "data" / "fixtures" / "tiny"

pytestmark = pytest.mark.e2e


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", *args],
        cwd=REPO,
        env=os.environ.copy(),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def two_fixtures(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """``tiny`` and a renamed copy: a two-fixture suite that runs in a second."""
    root = tmp_path_factory.mktemp("fixtures")
    paths = []
    for name in ("tiny-a", "tiny-b"):
        shutil.copytree(TINY, root / name)
        manifest = json.loads((root / name / "fixture.json").read_text())
        manifest["name"] = name
        (root / name / "fixture.json").write_text(json.dumps(manifest))
        paths.append(str(root / name))
    return paths


def _run(
    runs: Path, fixtures: list[str], behaviour: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    args = ["run", "--agent", f"sim:{behaviour}", "--trials", "3", "--concurrency", "3"]
    for fx in fixtures:
        args += ["--fixture", fx]
    return harness(*args, "--runs-dir", str(runs), *extra)


def _run_dir(runs: Path) -> Path:
    (only,) = [p for p in runs.iterdir() if p.is_dir()]
    return only


@pytest.mark.parametrize("count", [1, 2], ids=["one-fixture", "two-fixtures"])
def test_total_collapse_fails_the_gate(tmp_path: Path, two_fixtures: list[str], count: int) -> None:
    fixtures = two_fixtures[:count]
    assert _run(tmp_path / "base", fixtures, "honest").returncode == 0
    baseline = _run_dir(tmp_path / "base")
    proc = _run(
        tmp_path / "cand",
        fixtures,
        "wrong-answer",
        "--compare-baseline",
        str(baseline),
        "--fail-on",
        "regression",
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "vs baseline: regressed (-100.0 pp" in proc.stdout
    assert "gate fails: overall verdict regressed" in proc.stdout
    report = json.loads((_run_dir(tmp_path / "cand") / "report.json").read_text())
    assert report["comparison"]["overall"]["verdict"] == "regressed"
    assert all(f["verdict"] == "regressed" for f in report["comparison"]["fixtures"])


def test_an_equal_candidate_passes_the_gate(tmp_path: Path, two_fixtures: list[str]) -> None:
    _run(tmp_path / "base", two_fixtures, "honest")
    proc = _run(
        tmp_path / "cand",
        two_fixtures,
        "honest",
        "--compare-baseline",
        str(_run_dir(tmp_path / "base")),
        "--fail-on",
        "regression",
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_fixture_missing_from_the_candidate_fails_the_gate(
    tmp_path: Path, two_fixtures: list[str]
) -> None:
    _run(tmp_path / "base", two_fixtures, "honest")
    proc = _run(
        tmp_path / "cand",
        two_fixtures[:1],
        "honest",
        "--compare-baseline",
        str(_run_dir(tmp_path / "base")),
        "--fail-on",
        "regression",
    )
    assert proc.returncode == 1
    assert "missing in the candidate: tiny-b:sim/honest (not run by the candidate)" in proc.stdout
    md = (_run_dir(tmp_path / "cand") / "report.md").read_text()
    assert "Missing in the candidate: tiny-b:sim/honest" in md and "FAILS" in md


def test_an_all_errored_candidate_fails_the_gate(tmp_path: Path, two_fixtures: list[str]) -> None:
    _run(tmp_path / "base", two_fixtures, "honest")
    proc = _run(
        tmp_path / "cand",
        two_fixtures,
        "model-error",
        "--compare-baseline",
        str(_run_dir(tmp_path / "base")),
        "--fail-on",
        "regression",
    )
    assert proc.returncode == 3  # nothing was scored: an infrastructure failure, never a pass
    assert "all 3 candidate items errored" in proc.stdout


def test_a_bad_baseline_is_refused_before_anything_runs(tmp_path: Path) -> None:
    not_a_run = tmp_path / "empty"
    not_a_run.mkdir()
    proc = harness(
        "run", "--agent", "sim", "--fixture", str(TINY), "--runs-dir", str(tmp_path / "runs"),
        "--compare-baseline", str(not_a_run), "--fail-on", "regression",
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error: ") and "report.json" in proc.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_comparison_that_fails_still_writes_the_report(tmp_path: Path) -> None:
    broken = tmp_path / "report.json"
    broken.write_text("{not json")
    report = build_report(
        run_id="r", results=[], interrupted=False, options=make_options(), baseline=broken
    )
    cmp = report.comparison
    assert cmp is not None and cmp.error and not cmp.gate.passed
    assert "comparison failed" in cmp.gate.reasons[0]
    assert "Comparison failed" in render_markdown(report, tmp_path)


def test_agent_that_exits_zero_without_a_model_reply_is_an_infrastructure_error(
    tmp_path: Path, prime_agent_key: str
) -> None:
    proc = harness(
        "run", "--fixture", str(TINY), "--model", "p/m", "--agent-bin", "/bin/true",
        "--runs-dir", str(tmp_path), "--json",
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    (item,) = RunReport.from_dict(json.loads(proc.stdout)).items
    assert item.status == "error"
    assert item.facts.error == "agent exited 0 without any model reply"


def test_a_timed_out_item_leads_with_the_time_out() -> None:
    item = make_item("a", 1, False, timed_out=True)
    assert item_cause(item) == "timed out after 60 s; failed: coverage"


def test_an_error_says_only_its_cause() -> None:
    """The criteria of an item that could not run are not the agent's doing: noise."""
    item = make_item("a", 1, False, status="error")
    assert item_cause(item) == "boom" and item.failed_criteria == ()


def _items(fixture: str, outcomes: list[bool], status: str | None = None) -> list[ItemResult]:
    return [make_item(fixture, t, ok, model="m", status=status) for t, ok in enumerate(outcomes, 1)]


def test_gate_reasons_name_every_missing_side() -> None:
    base = _items("a", [True] * 3) + _items("b", [True] * 3)
    cand = _items("a", [True] * 3) + _items("c", [True] * 3)
    result = compare(base, cand, 0.05, "base")
    assert [m.fixture for m in result.missing_in_candidate] == ["b"]
    assert [m.fixture for m in result.missing_in_baseline] == ["c"]
    assert not result.gate.passed and len(result.gate.reasons) == 2
    assert gate(dataclasses.replace(result, missing_in_candidate=(), missing_in_baseline=())).passed


def test_nothing_in_common_fails_the_gate() -> None:
    result = compare(_items("a", [True] * 3), _items("a", [False] * 3, status="error"), 0.05, "b")
    assert result.overall.verdict == "inconclusive" and result.overall.strata == 0
    assert "all 3 candidate items errored" in " ".join(result.gate.reasons)
    assert "no fixture x model scored by both runs" in result.gate.reasons


def test_a_criterion_the_baseline_never_recorded_is_undefined_not_a_drop() -> None:
    def without_receipts(item: ItemResult) -> ItemResult:
        checks = tuple(c for c in item.score.checks if c.name != "receipts")
        return dataclasses.replace(item, score=dataclasses.replace(item.score, checks=checks))

    base = [without_receipts(i) for i in _items("a", [True] * 3)]  # an older rubric
    result = compare(base, _items("a", [True] * 3), 0.05, "b")
    (f,) = result.fixtures
    assert f.criteria["receipts"].delta is None
    assert f.criteria["coverage"].delta == 0.0
    assert result.gate.passed


def test_a_smoke_run_against_a_full_baseline_with_compare_shared_only(
    tmp_path: Path, two_fixtures: list[str]
) -> None:
    """A candidate of one fixture against a baseline of two: without the flag the missing
    fixture fails the gate; with it only the shared cell is compared, the report records
    it and the verdict line and console say on how many cells, with the power warning."""
    _run(tmp_path / "base", two_fixtures, "honest")
    baseline = str(_run_dir(tmp_path / "base"))
    proc = _run(
        tmp_path / "cand", two_fixtures[:1], "honest",
        "--compare-baseline", baseline, "--fail-on", "regression", "--compare-shared-only",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "compared on 1 of 2 baseline cells (--compare-shared-only" in proc.stdout
    assert "little power" in proc.stdout and "missing in the candidate" not in proc.stdout
    run = _run_dir(tmp_path / "cand")
    report = json.loads((run / "report.json").read_text())
    cmp = report["comparison"]
    assert cmp["shared_only"] is True and cmp["baseline_cells"] == 2
    assert [m["fixture"] for m in cmp["missing_in_candidate"]] == ["tiny-b"]  # still listed
    md = (run / "report.md").read_text()
    assert "vs baseline on 1 of 2 baseline cells: " in md and "Compared on 1 of 2" in md
    html = (run / "report.html").read_text()
    assert 'id="shared-only"' in html and "on 1 of 2 baseline cells (shared only)" in html
    # `compare` takes the same flag; without it the same pair fails the gate.
    proc = harness("compare", baseline, str(run), "--fail-on", "regression")
    assert proc.returncode == 1 and "missing in the candidate: tiny-b" in proc.stderr
    proc = harness(
        "compare", baseline, str(run), "--fail-on", "regression", "--compare-shared-only"
    )
    assert proc.returncode == 0 and "Compared on 1 of 2 baseline cells" in proc.stdout


def test_shared_only_still_fails_a_cell_whose_items_all_errored() -> None:
    base = _items("a", [True] * 3) + _items("b", [True] * 3) + _items("c", [True] * 3)
    cand = _items("a", [True] * 3) + _items("b", [False] * 3, status="error")
    result = compare(base, cand, 0.05, "base", shared_only=True)
    assert result.shared_only and result.baseline_cells == 3
    assert result.gate.reasons == (
        "missing in the candidate: b:m (all 3 candidate items errored)",
    )  # c was not run: forgiven; b ran and lost everything: not
    assert (
        compare(base, cand, 0.05, "base")
        .gate.reasons[-1]
        .startswith("missing in the candidate: c:m (not run")
    )


def test_fail_on_has_one_vocabulary_in_run_and_compare() -> None:
    import click

    from harness.cli.main import cli

    def values(command: str) -> list[str]:
        cmd = cli.commands[command]
        (param,) = [p for p in cmd.params if p.name == "fail_on"]
        assert isinstance(param.type, click.Choice)
        return list(param.type.choices)

    assert values("run") == values("compare") == ["unresolved", "regression", "cost", "none"]


def test_fail_on_none_and_unresolved_mean_the_same_in_both_commands(
    tmp_path: Path, two_fixtures: list[str]
) -> None:
    _run(tmp_path / "base", two_fixtures[:1], "honest")
    baseline = str(_run_dir(tmp_path / "base"))
    proc = _run(tmp_path / "cand", two_fixtures[:1], "wrong-answer", "--fail-on", "none")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # report only
    candidate = str(_run_dir(tmp_path / "cand"))
    assert harness("compare", baseline, candidate).returncode == 0  # compare's default: none
    proc = harness("compare", baseline, candidate, "--fail-on", "unresolved")
    assert proc.returncode == 1 and "3 of the candidate's 3 items unresolved" in proc.stderr
    proc = _run(tmp_path / "err", two_fixtures[:1], "model-error", "--fail-on", "none")
    assert proc.returncode == 3  # nothing ran is no result, even when reporting only
