"""Cost end to end with the simulated agent: the cost verdict and its gate, prices from a
file, and the budget (exit 4, resume with a larger one)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from harness.agents import parse_agent
from harness.cli.main import cli
from harness.errors import EXIT_BUDGET, EXIT_RESOLVED, EXIT_UNRESOLVED, UsageError
from harness.model.report import load_report
from harness.model.text import format_per_resolved, format_per_resolved_ci
from harness.plan import RunConfig
from harness.pricing import PriceTable
from harness.run.execute import RunOutcome, execute_run

pytestmark = pytest.mark.e2e

FIXTURES = ("csv-metrics", "json-events")
PRICES = {
    "sim/honest": {"input": 1.0, "output": 2.0},
    "sim/over-budget": {"input": 1.0, "output": 2.0},
}


def run(tmp_path: Path, behaviour: str, trials: int = 3, seed: int = 0, **kw: object) -> RunOutcome:
    return execute_run(
        RunConfig(
            fixtures=FIXTURES,
            models=(),
            agents=(parse_agent(f"sim:{behaviour}", None, seed),),
            trials=trials,
            timeout_s=60.0,
            runs_dir=tmp_path / "runs",
            **kw,  # type: ignore[arg-type]
        )
    )


def test_over_budget_is_costlier_and_fails_the_cost_gate(tmp_path: Path) -> None:
    base = run(tmp_path, "honest")
    cand = run(tmp_path, "over-budget", baseline=base.run_dir, fail_on="cost")
    cost = cand.report.comparison.cost  # type: ignore[union-attr]
    assert cost is not None and cost.unit == "tokens"  # the sim's models have no price
    assert cost.overall.verdict == "costlier" and all(
        f.verdict == "costlier" for f in cost.fixtures
    )
    assert cost.overall.ratio is not None and cost.overall.ratio > 1.8
    assert not cost.gate.passed and cand.exit_code == EXIT_UNRESOLVED
    # The rate gate alone (over-budget also fails dedup) is not what failed it here:
    assert cand.report.comparison.failing(("cost",)) == cost.gate.reasons  # type: ignore[union-attr]


def test_the_same_agent_is_never_costlier(tmp_path: Path) -> None:
    base = run(tmp_path, "honest")
    again = run(tmp_path, "honest", baseline=base.run_dir, fail_on="cost")
    cost = again.report.comparison.cost  # type: ignore[union-attr]
    assert cost is not None and cost.overall.verdict == "same", cost.overall
    assert again.exit_code == EXIT_RESOLVED
    # A different seed draws other prompt sizes: still not costlier.
    other = run(tmp_path, "honest", baseline=base.run_dir, fail_on="cost", seed=7)
    prompts = {i.score.tokens_used for i in other.report.items}
    assert prompts != {i.score.tokens_used for i in base.report.items}
    assert other.report.comparison.cost.overall.verdict != "costlier"  # type: ignore[union-attr]


def test_prices_from_a_file_price_every_item_in_usd(tmp_path: Path) -> None:
    table = PriceTable.from_mapping(PRICES, "prices.yaml")
    base = run(tmp_path, "honest", trials=2, prices=table)
    for item in base.report.items:
        usage = item.score.usage
        assert usage is not None and item.cost is not None
        expected = (usage.total.input_tokens * 1.0 + usage.total.output_tokens * 2.0) / 1e6
        assert item.cost.usd == pytest.approx(expected, rel=1e-12)
        assert item.cost.source == "price file" and item.cost.unpriced == ()
        # The sim bills its own requests at the same rates: the agent's figure agrees.
        assert usage.agent_reported_cost_usd == pytest.approx(expected, rel=1e-9)
    summary = base.report.summary[0]
    assert summary.cost_per_resolved_usd is not None and summary.unpriced == 0
    cand = run(tmp_path, "over-budget", trials=2, prices=table, baseline=base.run_dir)
    assert cand.report.comparison.cost.unit == "usd"  # type: ignore[union-attr]


def test_a_token_budget_stops_the_run_and_a_resume_completes_it(tmp_path: Path) -> None:
    first = run(tmp_path, "honest", trials=4, max_tokens=40_000)
    report = first.report
    assert first.exit_code == EXIT_BUDGET and not report.interrupted
    budget = report.budget
    assert budget is not None and budget.exhausted and budget.max_tokens == 40_000
    assert report.not_started and len(report.items) + len(report.not_started) == 8
    assert budget.spent_tokens == sum(i.score.tokens_used for i in report.items)
    assert budget.spent_tokens >= 40_000
    data = json.loads((first.run_dir / "report.json").read_text())
    assert data["budget"]["exhausted"] is True
    assert (first.run_dir / "report.md").read_text().splitlines()[4].startswith("**BUDGET RAN OUT")
    done = execute_run(
        RunConfig(
            fixtures=FIXTURES,
            models=(),
            agents=(parse_agent("sim:honest"),),
            trials=4,
            timeout_s=60.0,
            runs_dir=tmp_path / "runs",
            max_tokens=10**9,
        ),
        resume=first.run_dir,
    )
    assert done.exit_code == EXIT_RESOLVED and len(done.report.items) == 8
    assert done.report.budget is not None and not done.report.budget.exhausted
    assert done.report.budget.spent_tokens == sum(i.score.tokens_used for i in done.report.items)


def test_a_usd_budget_for_a_model_without_a_price_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    with pytest.raises(UsageError, match="no price is known for sim/honest"):
        run(tmp_path, "honest", max_cost_usd=1.0)
    assert not (tmp_path / "runs").exists()
    ok = run(tmp_path, "honest", trials=1, max_cost_usd=1.0, max_tokens=10**9)
    assert ok.exit_code == EXIT_RESOLVED


def test_cost_per_resolved_item_reads_the_same_everywhere(tmp_path: Path) -> None:
    """``run --agent sim --trials 5``: every item resolves. Its cost per resolved item is
    never below an item's (Fieller's interval put it at 13,867-51,857 tokens against
    19,937-24,248 per item), bounded above, and the one figure with the one interval in
    stdout, report.json, report.md, report.html's table and its cost chart."""
    runs = tmp_path / "runs"
    result = CliRunner().invoke(
        cli,
        ["run", "--agent", "sim", "--trials", "5", "--fixture", "json-events",
         "--runs-dir", str(runs), "--concurrency", "3"],
    )  # fmt: skip
    assert result.exit_code == EXIT_RESOLVED, result.stderr
    (run_dir,) = (p for p in runs.iterdir() if p.is_dir())  # not the runs' index.html
    report = load_report(run_dir)
    (summary,) = report.summary
    per, item = summary.tokens_per_resolved, summary.measures["tokens_used"]
    assert summary.resolved == summary.n == 5 and summary.cost_per_resolved_usd is None
    assert per is not None and per.ci is not None and item.ci is not None
    low, high = per.ci
    assert high is not None and per.value == item.mean
    assert item.ci[0] <= low <= per.value < high
    text = format_per_resolved(per, "tokens")
    interval = format_per_resolved_ci(per, "tokens")
    assert interval is not None and interval in text
    assert text in result.stdout
    assert text in (run_dir / "report.md").read_text(encoding="utf-8")
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    cell = re.search(
        r'<td data-field="cost_per_resolved"[^>]*title="([^"]*)">[^<]*<small>([^<]*)', html
    )
    assert cell is not None and cell.groups() == (text, interval)
    # One fixture: the chart's point (the agent x model over its fixtures) is the same.
    assert re.search(rf"<title>sim/honest: {re.escape(text)}, ", html)
