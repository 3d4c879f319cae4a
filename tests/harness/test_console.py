"""What ``run`` prints on stdout: a line per cell, the run overall across its cells, and
where the report is (report.json and the HTML page beside it); an interrupted run says how
many items it did not start."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from model_builders import make_item, make_options

from harness.cli.main import cli
from harness.report.console import summary_text
from harness.stats.build import build_report

TINY = str(Path(__file__).resolve().parent.parent / "data" / "fixtures" / "tiny")


@pytest.mark.slow
def test_run_prints_the_overall_line_and_both_report_files(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    result = CliRunner().invoke(
        cli,
        ["run", "--fixture", TINY, "--agent", "sim", "--model", "sim/honest",
         "--model", "sim/no-spawn", "--runs-dir", str(runs)],
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert "overall: 1/2 resolved (50%) across 2 fixture x model cells, 1 unresolved, 0 errors" in (
        lines
    )
    (run,) = [p for p in runs.iterdir() if p.is_dir()]
    assert lines[-1] == f"report: {run / 'report.json'}, {run / 'report.html'} (exit 1)"
    assert (run / "report.html").is_file()


def test_an_interrupted_run_says_how_many_items_it_did_not_start() -> None:
    items = [make_item("fx", 1, True), make_item("fx", 2, False), make_item("gx", 1, True)]
    items.append(make_item("gx", 2, True, status="error"))
    report = build_report(
        run_id="r",
        results=items,
        interrupted=True,
        options=make_options(),
        not_started=("fx:p/m:3", "gx:p/m:3", "gx:p/m:4"),
    )
    text = summary_text(report, Path("runs/r"), 130).splitlines()
    assert (
        "overall: 2/3 resolved (67%) across 2 fixture x model cells, 1 unresolved, 1 error, "
        "3 not started"
    ) in text
    assert "interrupted: 3 not started; resume with --resume runs/r" in text
    assert text[-1] == "report: runs/r/report.json (exit 130)"  # no page given: none named
