"""An edit item resolves or not, and everything built on items is unchanged for it (issue
39, point 7): statistics, comparison, cost, ``--trials auto`` and resume, each on
edit-smoke through the CLI with the sim; and ``show`` and ``export`` of an edit item. (Ray:
tests/harness/test_ray_executor.py, on its cluster.)"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest
from atif import Trajectory
from click.testing import CliRunner
from test_reliability import _wait_for_items, finish, start

from harness.cli.main import cli
from harness.errors import EXIT_RESOLVED, EXIT_UNRESOLVED
from harness.model.report import RunReport, load_report
from harness.stats.strata import stratified_rate

pytestmark = pytest.mark.e2e

SMOKE = "edit-smoke"
#: What the sim bills its requests at (sim_agent/records.py), as a price file: the harness's
#: price of an item must then be the sim's own bill.
PRICES = "sim/honest:\n  input: 1.0\n  output: 2.0\n"
SHARDS = ("shipping", "tax", "discount")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def run(runs: Path, agent: str, *args: str) -> tuple[int, Path, str]:
    """``run --agent <agent>`` on edit-smoke: its exit code, run dir and stdout."""
    before = {p for p in runs.iterdir()} if runs.is_dir() else set()
    code, out, err = invoke(
        "run", "--fixture", SMOKE, "--agent", agent, "--concurrency", "2",
        "--timeout", "60", "--runs-dir", str(runs), *args,
    )  # fmt: skip
    assert code in (EXIT_RESOLVED, EXIT_UNRESOLVED), err
    (run_dir,) = [p for p in runs.iterdir() if p.is_dir() and p not in before]
    return code, run_dir, out


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sim:honest, 3 trials of edit-smoke, priced at the sim's own rates (its run dir)."""
    root = tmp_path_factory.mktemp("edit-runs")
    (root / "prices.yaml").write_text(PRICES, encoding="utf-8")
    code, run_dir, _ = run(
        root / "runs", "sim:honest", "--trials", "3", "--prices", str(root / "prices.yaml")
    )
    assert code == EXIT_RESOLVED
    return run_dir


def _billed(item_dir: Path) -> tuple[int, int, float]:
    """Input tokens, output tokens and dollars of every model response the sim recorded in
    the bundle's transcripts (the parent's and each child's)."""
    files = [*item_dir.glob("sessions/*.jsonl"), *item_dir.glob("session-artifacts/*/*/*.jsonl")]
    assert len(files) == 1 + len(SHARDS), files
    tokens_in = tokens_out = 0
    dollars = 0.0
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            message = entry.get("message") or {}
            if entry.get("type") == "message" and message.get("role") == "assistant":
                tokens_in += message["usage"]["input"]
                tokens_out += message["usage"]["output"]
                dollars += message["usage"]["cost"]["total"]
    return tokens_in, tokens_out, dollars


def test_tokens_and_cost_per_item_are_what_the_sim_billed(baseline: Path) -> None:
    report = load_report(baseline)
    assert len(report.items) == 3
    for item in report.items:
        tokens_in, tokens_out, dollars = _billed(baseline / "items" / item.item_dir)
        usage = item.score.usage
        assert usage is not None and usage.complete
        assert (usage.total.input_tokens, usage.total.output_tokens) == (tokens_in, tokens_out)
        assert item.score.tokens_used == tokens_in + tokens_out
        assert usage.agent_reported_cost_usd == pytest.approx(dollars, rel=1e-9)
        assert item.cost is not None and item.cost.source == "price file"
        assert item.cost.usd == pytest.approx(dollars, rel=1e-9)
    (summary,) = report.summary
    assert summary.cost_per_resolved_usd is not None and summary.unpriced == 0


def test_resolved_rate_and_interval_as_for_read_items(tmp_path: Path) -> None:
    """flaky=0.5 mixes honest trials and wrong answers (seed 0: 4 of 6 resolve); the cell's
    rate and interval come from its counts alone, by the method every cell uses."""
    _, run_dir, out = run(tmp_path / "runs", "sim:flaky=0.5", "--trials", "6", "--seed", "0")
    report = load_report(run_dir)
    resolved = sum(i.resolved for i in report.items)
    assert 0 < resolved < 6 and len(report.items) == 6
    assert {i.failed_criteria for i in report.items if not i.resolved} == {("coverage",)}
    expected = stratified_rate([(resolved, 6)])
    (summary,) = report.summary
    assert (summary.n, summary.resolved, summary.errors) == (6, resolved, 0)
    assert summary.rate == pytest.approx(resolved / 6)
    assert summary.ci == pytest.approx(expected.ci)
    (overall,) = report.overall
    assert (overall.n, overall.resolved) == (6, resolved) and overall.ci == pytest.approx(
        expected.ci
    )
    stored = json.loads((run_dir / "report.json").read_text(encoding="utf-8"))["summary"][0]
    assert stored["ci"] == pytest.approx(list(expected.ci))
    assert stored["criteria"]["lanes"]["count"] == 6  # the edit criterion has its rate too
    low, high = (round(100 * x) for x in expected.ci)
    assert f"{resolved}/6 resolved ({round(100 * resolved / 6)}%, 95% CI [{low}, {high}])" in out


def test_compare_says_regressed_and_improved(baseline: Path) -> None:
    code, cand, out = run(
        baseline.parent, "sim:parent-does-it", "--trials", "2", "--compare-baseline", str(baseline)
    )
    assert code == EXIT_UNRESOLVED
    comparison = load_report(cand).comparison
    assert comparison is not None and comparison.overall.verdict == "regressed"
    assert "vs baseline: regressed" in out
    code, out, _ = invoke("compare", str(baseline), str(cand))
    assert code == 0 and "regressed" in out and "improved" not in out
    code, out, _ = invoke("compare", str(cand), str(baseline))
    assert code == 0 and "improved" in out and "regressed" not in out


def test_trials_auto_decides_against_a_baseline(baseline: Path) -> None:
    code, cand, _ = run(
        baseline.parent, "sim:parent-does-it", "--trials", "auto", "--max-trials", "8",
        "--compare-baseline", str(baseline),
    )  # fmt: skip
    assert code == EXIT_UNRESOLVED
    (summary,) = load_report(cand).summary
    cell = summary.sequential
    assert summary.stop_reason == "decided" and cell is not None, summary
    assert cell.status == "regressed" and cell.decided_at is not None and cell.decided_at < 8


def test_an_interrupted_edit_run_resumes_only_what_is_missing(tmp_path: Path) -> None:
    """Ctrl-C mid-run, then ``--resume``: the finished items are kept as they were, the rest
    run, and every item's bundle holds its edits.json."""
    # slow=3: the next item needs 3 s, far more than the test takes to send the signal once
    # the first is done, even on a loaded machine (at slow=1 a starved test saw all 3 done).
    first = start(tmp_path, "--fixture", SMOKE, "--agent", "sim:slow=3", "--trials", "3")
    _wait_for_items(tmp_path / "runs", 1)
    first.send_signal(signal.SIGINT)
    code, report, err = finish(first)
    assert code == 130 and report is not None and report.interrupted, err
    run_dir = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    kept = {i.key: i.item_dir for i in report.items if i.status != "error"}
    assert 1 <= len(kept) < 3
    stamps = {k: (run_dir / "items" / d / "edits.json").stat().st_mtime_ns for k, d in kept.items()}
    code, final, err = finish(start(tmp_path, "--resume", str(run_dir)))
    assert code == EXIT_RESOLVED and isinstance(final, RunReport), err
    assert sorted(i.trial for i in final.items) == [1, 2, 3]
    assert all(i.resolved for i in final.items)
    for key, item_dir in kept.items():
        assert (run_dir / "items" / item_dir / "edits.json").stat().st_mtime_ns == stamps[key]
    for item in final.items:
        edits = json.loads((run_dir / "items" / item.item_dir / "edits.json").read_text())
        assert [s["outcome"] for s in edits["checks"]["shards"]] == ["passed"] * len(SHARDS)
    assert f"resuming: {len(kept)}" in err


def test_show_prints_the_edits_and_export_writes_them_as_tool_calls(baseline: Path) -> None:
    key = f"{SMOKE}:sim/honest:1"
    code, out, _ = invoke("show", key, "--run", str(baseline))
    assert code == 0 and out.startswith(f"{key}: resolved")
    assert "edits: 3 of 3 shards' checks passed" in out
    for stem in SHARDS:
        assert f"shop/{stem}.py: changed, written by worker-{stem} (edit)" in out
    assert "shared CHANGELOG.md: changed, written by worker-" in out

    code, _, err = invoke("export", str(baseline), "--item", key)
    assert code == 0, err
    path = baseline / "trajectories" / f"{SMOKE}__sim_honest__1" / "trajectory.json"
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    Trajectory.model_validate(doc)
    # Each child's edit calls carry its diffs: its own module and its changelog line.
    edited: dict[str, set[str]] = {}
    for child in doc["subagent_trajectories"]:
        for step in child["steps"]:
            for result in step.get("observation", {}).get("results", ()):
                for diff in (result.get("extra", {}).get("details") or {}).get("diffs", ()):
                    edited.setdefault(child["trajectory_id"], set()).add(Path(diff["path"]).name)
    assert sorted(map(sorted, edited.values())) == [
        ["CHANGELOG.md", f"{s}.py"] for s in sorted(SHARDS)
    ]


def test_an_exported_edit_item_rescores_to_the_runs_verdict(baseline: Path) -> None:
    """The export carries the final tree and the writes: ``score --trajectory`` agrees with
    the run."""
    key = f"{SMOKE}:sim/honest:2"
    assert invoke("export", str(baseline), "--item", key)[0] == 0
    path = baseline / "trajectories" / f"{SMOKE}__sim_honest__2" / "trajectory.json"
    code, out, err = invoke("score", "--trajectory", str(path))
    assert code == 0, err
    verdict = json.loads(out)
    assert {c["verdict"] for c in verdict["criteria"].values()} == {"pass"}, verdict
