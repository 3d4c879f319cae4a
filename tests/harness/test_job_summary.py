"""The CI job summary and the action's outputs, from checked-in reports (no run): the verdict
line first, a row per fixture × agent × model, the comparison's columns and sentences only
with a baseline, and where the full report is."""

from __future__ import annotations

from pathlib import Path

from harness.ci.action import prepare, report_outputs, run_argv
from harness.model.report import load_report
from harness.report.job_summary import render_job_summary

REPORTS = Path(__file__).resolve().parents[1] / "data" / "reports"


def test_a_run_without_a_baseline_has_its_rows_and_no_comparison() -> None:
    report = load_report(REPORTS / "v9.json")
    text = render_job_summary(report, 1, "`report.html` in the artifact `a`")
    lines = text.splitlines()
    assert lines[0] == f"### swarm-harness run `{report.run_id}` (exit 1)"
    assert lines[2] == "**NOT RESOLVED: 2 unresolved of 6 items**"
    assert "| tiny | sim | sim/honest | 3/3 | 100.0% | [43.9, 100.0] |" in text
    assert "| tiny | sim:flaky=0.5 | sim/flaky=0.5 | 1/3 | 33.3% |" in text
    assert "vs baseline" not in text and "Gate" not in text
    assert lines[-2] == "The full report: `report.html` in the artifact `a`"
    outputs = report_outputs(report, Path("/r"), 1)
    assert (outputs["verdict"], outputs["gate"], outputs["resolved"]) == ("", "", "false")


def test_a_compared_run_has_the_verdicts_and_both_gates() -> None:
    report = load_report(REPORTS / "v8.json")
    text = render_job_summary(report, 1, "here")
    assert "vs baseline: inconclusive (+0.0 pp)" in text.splitlines()[2]
    assert "| 11,588 tokens per item, " in text and "| inconclusive | +0.0 pp |" in text
    assert "- Gate (`--fail-on regression`): FAILS: missing in the candidate: csv-prices" in text
    assert "- Gate (`--fail-on cost`): passes" in text
    outputs = report_outputs(report, Path("/runs/x"), 1)
    assert (outputs["verdict"], outputs["cost-verdict"], outputs["gate"]) == (
        "inconclusive",
        "inconclusive",
        "fails",
    )
    assert outputs["junit"] == "/runs/x/junit.xml" and outputs["resolved"] == "true"


def test_the_inputs_make_one_run_command(tmp_path: Path) -> None:
    env = {
        "RUNNER_TEMP": str(tmp_path),
        "INPUT_AGENT": "sim sim:no-spawn,flaky=0.5",
        "INPUT_AGENT_BIN": "sim=/bin/true",
        "INPUT_FIXTURES": "smoke\njson-events",
        "INPUT_FAIL_ON": "regression cost",
        "INPUT_TRIALS": "auto",
        "INPUT_MAX_COST": "40",
        "INPUT_ARGS": "--solo --concurrency 2",
    }
    paths = prepare(env)
    argv = run_argv(env, paths, "base/report.json")
    assert argv[3:] == [
        "run", "--json", "--runs-dir", str(tmp_path / "swarm-harness" / "runs"),
        "--fixture", "smoke", "--fixture", "json-events",
        "--agent", "sim", "--agent", "sim:no-spawn,flaky=0.5", "--agent-bin", "sim=/bin/true",
        "--fail-on", "regression", "--fail-on", "cost", "--trials", "auto", "--max-cost", "40",
        "--compare-baseline", "base/report.json", "--solo", "--concurrency", "2",
    ]  # fmt: skip
    assert paths.clients_key.endswith("-sim") and paths.baseline_prefix == ""
