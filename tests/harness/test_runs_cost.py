"""Each run's total cost: read from report.json's items by ``runs list`` (text and JSON)
and shown on the runs index page."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from harness.cli.main import cli
from harness.report.index_page import IndexRun, render_index
from harness.runs.catalog import list_runs, total_cost


def item(n: int, usd: float | None, tokens: int, *, cost: bool = True) -> dict[str, Any]:
    """A raw report item: ``cost`` False leaves the key out (a report from before prices)."""
    data: dict[str, Any] = {
        "key": f"tiny:m:{n}",
        "fixture": "tiny",
        "status": "resolved",
        "score": {"tokens_used": tokens},
    }
    if cost:
        data["cost"] = None if usd is None and tokens == 0 else {"usd": usd, "unpriced": []}
    return data


def write_run(root: Path, run_id: str, items: list[dict[str, Any]]) -> None:
    run_dir = root / run_id
    run_dir.mkdir(parents=True)
    report = {
        "run_id": run_id,
        "created_at": f"2026-01-01T00:00:0{run_id[-1]}+00:00",
        "interrupted": False,
        "options": {"agent": "sim", "models": ["m"], "trials": 1, "fixture_paths": ["/x/tiny"]},
        "items": items,
    }
    (run_dir / "report.json").write_text(json.dumps(report), encoding="utf-8")


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    write_run(tmp_path, "run-1", [item(1, 0.125, 1000), item(2, 0.25, 2000), item(3, None, 0)])
    write_run(tmp_path, "run-2", [item(1, 0.5, 1000), item(2, None, 3000)])  # one unpriced
    write_run(tmp_path, "run-3", [item(1, None, 400, cost=False)])  # before prices
    return tmp_path


def test_the_total_is_the_items_sum_unless_one_has_no_price(runs: Path) -> None:
    infos = {r.run_id: r for r in list_runs(runs)}
    assert (infos["run-1"].cost_usd, infos["run-1"].tokens, infos["run-1"].unpriced) == (
        0.375,
        3000,
        0,
    )
    assert (infos["run-2"].cost_usd, infos["run-2"].tokens, infos["run-2"].unpriced) == (
        None,
        4000,
        1,
    )
    assert (infos["run-3"].cost_usd, infos["run-3"].tokens, infos["run-3"].unpriced) == (
        None,
        400,
        1,
    )


def test_no_priced_item_is_no_total() -> None:
    assert total_cost([]) == (None, 0, 0)
    assert total_cost([item(1, None, 0)]) == (None, 0, 0)
    assert total_cost([item(1, 0.0, 10)]) == (0.0, 10, 0)


def test_runs_list_shows_the_cost(runs: Path) -> None:
    result = CliRunner().invoke(cli, ["runs", "list", "--wide", "--runs-dir", str(runs)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = lines[0].split()
    assert header[header.index("resolved") + 1 : header.index("resolved") + 3] == [
        "cost",
        "tokens",
    ]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert re.search(r" 3/3 100%  \$0\.3750 +3,000 +complete$", rows["run-1"])
    assert re.search(r" n/a \(1 unpriced\) +4,000 +complete$", rows["run-2"])
    assert re.search(r" n/a \(1 unpriced\) +400 +complete$", rows["run-3"])


def test_runs_list_json_keeps_the_cost(runs: Path) -> None:
    result = CliRunner().invoke(cli, ["runs", "list", "--json", "--runs-dir", str(runs)])
    assert result.exit_code == 0, result.output
    data = {r["run_id"]: r for r in json.loads(result.stdout)}
    assert data["run-1"]["cost_usd"] == 0.375 and data["run-1"]["tokens"] == 3000
    assert data["run-1"]["unpriced_items"] == 0
    assert data["run-2"]["cost_usd"] is None and data["run-2"]["unpriced_items"] == 1


def index_row(run_id: str, **cost: Any) -> IndexRun:
    return IndexRun(
        run_id=run_id,
        created_at="2026-01-01T00:00:00+00:00",
        agent="sim",
        status="complete",
        fixtures=("fx",),
        models=("m",),
        trials=1,
        scored=2,
        resolved=1,
        report_href=None,
        **cost,
    )


def test_the_index_shows_each_runs_cost() -> None:
    page = render_index(
        [
            index_row("a", cost_usd=1.5, tokens=12345),
            index_row("b", cost_usd=None, tokens=400, unpriced=2),
        ],
        "runs",
    )
    assert "<th>resolved</th><th>cost</th><th>tokens</th><th>status</th>" in page
    assert '<span class="num cost" data-value="1.5">$1.50</span>' in page
    assert '<span class="num tokens" data-value="12345">12,345</span>' in page
    assert '<span title="2 items without a price">n/a (2 unpriced)</span>' in page


def test_the_index_leaves_out_a_cost_it_does_not_know() -> None:
    page = render_index([index_row("a")], "runs")
    assert "<th>cost</th>" not in page and "num cost" not in page
