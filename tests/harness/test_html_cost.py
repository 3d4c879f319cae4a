"""report.html on cost: the cost-against-rate scatter and its front, the per-item cost
distribution, the summary's cost columns, the cost comparison and its gate, the budget."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from model_builders import make_item, make_options

from harness.model.comparison import Comparison
from harness.model.item import ItemCost, ItemResult
from harness.model.report import Budget, RunReport
from harness.model.summary import MEASURES
from harness.report.charts import MEASURE_TITLES
from harness.report.html import render_html
from harness.stats.compare import compare
from harness.stats.summaries import overall, summarize

SVG = "{http://www.w3.org/2000/svg}"


def priced(item: ItemResult, usd: float | None, model_unpriced: bool = False) -> ItemResult:
    """``item`` with a cost: ``usd`` None is a model without a price."""
    cost = ItemCost(
        usd=usd,
        source="none" if usd is None else "price file",
        detail=() if usd is None else (f"{item.model}: $1/$2 per Mtok",),
        unpriced=(item.model,) if usd is None or model_unpriced else (),
        complete=True,
    )
    return dataclasses.replace(item, cost=cost)


def report(
    items: list[ItemResult], comparison: Comparison | None = None, **changes: object
) -> RunReport:
    base = RunReport(
        run_id="r1",
        interrupted=False,
        items=tuple(items),
        summary=tuple(summarize(items)),
        overall=tuple(overall(items)),
        options=make_options(models=tuple(sorted({i.model for i in items}))),
        comparison=comparison,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def page(rep: RunReport, tmp_path: Path) -> str:
    return render_html(rep, tmp_path, {})


def svg_of(html: str, chart_id: str) -> ET.Element:
    found = re.search(rf'<svg [^>]*id="{chart_id}".*?</svg>', html, re.S)
    assert found, f"no {chart_id}"
    return ET.fromstring(found.group(0))


def points(root: ET.Element) -> dict[str, dict[str, float]]:
    """The scatter's points by label: x, y and whether it is on the front."""
    out = {}
    for g in root.iter(SVG + "g"):
        if "mark" not in g.get("class", "").split():
            continue
        label = next(t for t in g.iter(SVG + "text")).text or ""
        out[label] = {
            "x": float(g.attrib["data-x"]),
            "y": float(g.attrib["data-value"]),
            "front": float(g.attrib["data-front"]),
        }
    return out


def cell(html: str, table: str, model: str, field: str) -> re.Match[str]:
    body = re.search(rf'<table id="{table}">.*?</table>', html, re.S)
    assert body
    row = re.search(
        rf'<tr data-fixture="[^"]*" data-model="{re.escape(model)}">.*?</tr>', body.group(0)
    )
    assert row, f"no row for {model}"
    found = re.search(
        rf'<td data-field="{field}"(?: data-value="(?P<value>[^"]*)")?[^>]*>(?P<text>[^<]*)(?P<rest>.*?)</td>',
        row.group(0),
    )
    assert found, f"no {field} in {row.group(0)}"
    return found


# Three models on two fixtures, two trials each (tokens 100 + trial):
#   cheap: $0.01 an item, resolves 2 of 4     -> $0.04 / 2 = $0.02 per resolved item, 50%
#   dear:  $0.05 an item, resolves 4 of 4     -> $0.20 / 4 = $0.05 per resolved item, 100%
#   worse: $0.06 an item, resolves 2 of 4     -> $0.24 / 2 = $0.12 per resolved item, 50%
# cheap and dear are on the front; worse is beaten by both.
PLAN = {
    "cheap": (0.01, (True, False)),
    "dear": (0.05, (True, True)),
    "worse": (0.06, (False, True)),
}


def suite(unpriced: tuple[str, ...] = ()) -> list[ItemResult]:
    items = []
    for model, (usd, outcomes) in PLAN.items():
        for fixture in ("f1", "f2"):
            for trial, resolved in enumerate(outcomes, start=1):
                item = make_item(fixture, trial, resolved, model=model)
                items.append(priced(item, None if model in unpriced else usd))
    return items


def test_every_measure_has_a_title() -> None:
    assert set(MEASURE_TITLES) == set(MEASURES)
    assert MEASURE_TITLES["cost_usd"] == "USD per item"


def test_the_cost_scatter_puts_each_model_and_marks_the_front(tmp_path: Path) -> None:
    html = page(report(suite()), tmp_path)
    root = svg_of(html, "chart-cost-vs-rate")
    found = points(root)
    assert found == {
        "cheap": {"x": pytest.approx(0.02), "y": 50.0, "front": 1.0},
        "dear": {"x": pytest.approx(0.05), "y": 100.0, "front": 1.0},
        "worse": {"x": pytest.approx(0.12), "y": 50.0, "front": 0.0},
    }
    (front,) = [e for e in root.iter() if e.get("class") == "front"]
    assert len(front.attrib["points"].split()) == 2
    assert re.search(
        r'id="cost-vs-rate" class="meta" data-unit="usd" data-front="cheap | dear"', html
    )
    axis = "".join(root.find(f"{SVG}g[@class='x-axis']").itertext())  # type: ignore[union-attr]
    assert "USD per resolved item" in axis
    # The tooltip says it as every report says it.
    assert "cheap: $0.0200 per resolved item" in html


def test_an_unpriced_item_puts_the_scatter_in_tokens(tmp_path: Path) -> None:
    html = page(report(suite(unpriced=("worse",))), tmp_path)
    root = svg_of(html, "chart-cost-vs-rate")
    found = points(root)
    # tokens 101 and 102 per fixture: cheap resolves trial 1 of each fixture (2 of 4 items).
    assert found["cheap"]["x"] == pytest.approx(2 * (101 + 102) / 2)
    assert found["dear"]["x"] == pytest.approx(2 * (101 + 102) / 4)
    assert 'data-unit="tokens"' in html
    assert "4 scored item(s) have no price" in "".join(root.itertext())
    # worse's items have no price: its summary row says n/a and counts in tokens.
    assert cell(html, "summary", "worse", "cost_mean").group("text") == "n/a"
    per = cell(html, "summary", "worse", "cost_per_resolved")
    assert per.group("text") == "203 tokens"
    assert 'title="203 tokens per resolved item (95% CI' in per.group(0)
    assert 'data-unit="tokens"' in per.group(0)
    # The cost distribution leaves the unpriced items out; the priced ones still vary.
    assert 'id="chart-cost_usd"' in html


def test_a_run_without_prices_has_no_cost_distribution(tmp_path: Path) -> None:
    html = page(report(suite(unpriced=tuple(PLAN))), tmp_path)
    assert 'id="chart-cost_usd"' not in html
    assert 'id="chart-tokens_used"' in html
    assert 'id="total-cost" data-tokens="1218" data-unpriced="12"' in html
    assert "Cost: <b>n/a</b> in total (12 items without a price); 1,218 tokens." in html
    assert re.search(
        r'<p class="meta" id="unpriced">Note: no price known for cheap, dear, worse:', html
    )


def test_summary_cells_and_the_cost_distribution(tmp_path: Path) -> None:
    html = page(report(suite()), tmp_path)
    mean = cell(html, "summary", "dear", "cost_mean")
    assert mean.group("text") == "$0.0500" and float(mean.group("value")) == pytest.approx(0.05)
    per = cell(html, "summary", "cheap", "cost_per_resolved")
    assert per.group("text") == "$0.0200"
    assert re.fullmatch(
        r"<small>95% CI \$0\.\d{4} (or more|to \$0\.\d{4})</small>", per.group("rest")
    )
    assert float(per.group("value")) == pytest.approx(0.02)
    assert "<th>mean cost</th><th>cost / resolved item</th>" in html
    # Every item of a model costs the same, but the models differ: the chart is drawn.
    chart = svg_of(html, "chart-cost_usd")
    assert "USD per item" in "".join(chart.itertext())
    assert 'data-field="cost_usd" data-value="0.06"' in html  # the items table
    total = 4 * (0.01 + 0.05 + 0.06)
    assert re.search(
        r'id="total-cost" data-value="0\.48\d*" data-tokens="1218" data-unpriced="0"', html
    )
    assert f"Cost: <b>${total:.4f}</b> in total; 1,218 tokens." in html
    assert 'data-field="cost">cost: $0.0100 [cheap: $1/$2 per Mtok]</p>' in html  # drill-down


def test_a_model_that_resolved_nothing_has_no_point(tmp_path: Path) -> None:
    items = [priced(make_item("f1", t, False, model="none"), 0.01) for t in (1, 2)]
    items += [priced(make_item("f1", t, True, model="some"), 0.01 * t) for t in (1, 2)]
    html = page(report(items), tmp_path)
    assert set(points(svg_of(html, "chart-cost-vs-rate"))) == {"some"}
    assert "No point for none: no resolved item, so no cost per resolved item." in html


def test_no_tokens_and_no_prices_draw_no_scatter(tmp_path: Path) -> None:
    items = [make_item("f1", t, True, tokens=-t) for t in (1, 2)]  # tokens_used 0
    html = page(report(items), tmp_path)
    assert "chart-cost-vs-rate" not in html and "Cost against resolved rate" not in html


def comparison(fail_on: str) -> tuple[RunReport, Comparison]:
    """The candidate costs twice the baseline per item on both fixtures."""
    base, cand = [], []
    for fixture in ("f1", "f2"):
        for trial, usd in enumerate((0.10, 0.11, 0.09, 0.10), start=1):
            base.append(priced(make_item(fixture, trial, True), usd))
            cand.append(priced(make_item(fixture, trial, True), 2 * usd))
    cmp = compare(base, cand, 0.05, "runs/base")
    rep = report(cand, cmp)
    return dataclasses.replace(rep, options=make_options(fail_on=fail_on)), cmp


def test_the_cost_comparison_says_its_verdict_and_gate(tmp_path: Path) -> None:
    rep, cmp = comparison("regression,cost")
    assert cmp.cost is not None and cmp.cost.overall.verdict == "costlier"
    html = page(rep, tmp_path)
    overall_cost = re.search(r'<p id="cost-overall"[^>]*>.*?</p>', html)
    assert overall_cost
    text = overall_cost.group(0)
    assert 'data-verdict="costlier"' in text and 'data-unit="usd"' in text
    assert "Overall: <b>costlier</b>, x2.00, 95% CI [x" in text
    assert "cost: costlier, x2.00 the baseline&#x27;s per item (USD), 95% CI [x" in html
    gate = re.search(r'<p id="cost-gate"[^>]*>.*?</p>', html)
    assert gate and 'data-passed="false"' in gate.group(0) and 'data-gated="true"' in gate.group(0)
    assert "FAILS: overall cost costlier: x2.00" in gate.group(0)
    for fixture in ("f1", "f2"):
        row = re.search(
            rf'<tr data-fixture="{fixture}" data-model="p/m">.*?</tr>',
            html.split('id="cost-table"')[1],
        )
        assert row and 'data-field="verdict" data-value="costlier"' in row.group(0)
        assert '<td data-field="ratio" data-value="2.0" class="num">x2.00</td>' in row.group(0)
    # Gating on cost, the banner fails and says why.
    banner = re.search(r'<div id="banner" class="banner (\w+)".*?</div></div>', html, re.S)
    assert banner and banner.group(1) == "fail"
    assert "Cost gate FAILS — overall cost costlier" in banner.group(0)
    assert "Cost per item: <b>costlier</b>, x2.00 (USD)." in banner.group(0)


def test_a_run_not_gating_on_cost_only_reports_it(tmp_path: Path) -> None:
    rep, _ = comparison("regression")
    html = page(rep, tmp_path)
    assert re.search(r'<p id="cost-gate" data-passed="false" data-gated="false"', html)
    assert "(this run does not gate on cost)" in html
    assert 'class="banner pass"' in html and "Cost gate FAILS" not in html


def budget(exhausted: bool) -> Budget:
    return Budget(
        max_cost_usd=0.40,
        max_tokens=None,
        spent_usd=0.42 if exhausted else 0.12,
        spent_tokens=1234,
        unpriced_items=0,
        exhausted=exhausted,
        reason="spent $0.4200 of $0.4000" if exhausted else None,
    )


def test_an_exhausted_budget_is_said_first(tmp_path: Path) -> None:
    rep = report(suite(), budget=budget(True), not_started=("f3:p/m:1", "f3:p/m:2"))
    html = page(rep, tmp_path)
    banner = re.search(r'<div id="banner"[^>]*>(.*?)</div>', html, re.S)
    assert banner
    said = [t for t in re.split(r"<[^>]+>", banner.group(1)) if t]
    assert said[0] == "BUDGET RAN OUT: 8 of 12 items resolved, 2 not started"
    assert said[1] == (
        f"BUDGET RAN OUT: spent $0.4200 of $0.4000; 2 items not started: `--resume {tmp_path} "
        "--max-cost USD` with a larger budget completes them"
    )
    assert re.search(
        r'<div id="budget" class="why budget" data-exhausted="true" data-spent-usd="0.42" '
        r'data-spent-tokens="1234" data-max-usd="0.4">',
        html,
    )
    assert html.count('id="budget"') == 1
    assert 'class="banner stopped"' in html


def test_a_budget_not_spent_is_in_the_header(tmp_path: Path) -> None:
    rep = report(suite(), budget=dataclasses.replace(budget(False), max_tokens=5000))
    html = page(rep, tmp_path)
    line = re.search(r'<p id="budget"[^>]*>(.*?)</p>', html)
    assert line and 'data-exhausted="false"' in line.group(0)
    assert line.group(1) == "budget: spent $0.1200 and 1,234 tokens of $0.4000 and 5,000 tokens"
    assert "BUDGET RAN OUT" not in html
    assert html.index('id="budget"') > html.index('id="counts"')


def test_no_budget_no_line(tmp_path: Path) -> None:
    assert 'id="budget"' not in page(report(suite()), tmp_path)


def test_gating_on_cost_without_a_cost_comparison_fails(tmp_path: Path) -> None:
    rep, cmp = comparison("cost")
    rep = dataclasses.replace(rep, comparison=dataclasses.replace(cmp, cost=None))
    html = page(rep, tmp_path)
    assert 'id="cost-overall"' not in html
    gate = re.search(r'<p id="cost-gate"[^>]*>(.*?)</p>', html)
    assert gate and 'data-passed="false"' in gate.group(0)
    assert (
        gate.group(1)
        == "Cost gate (--fail-on cost): FAILS: no cost comparison: the baseline has none"
    )
    assert 'class="banner fail"' in html
