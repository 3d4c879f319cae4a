"""report.html: written for every run, offline, every criterion and item present, relative
links that resolve; plus the real-browser checks (marker ``browser``)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from browser import Browser, chromium_binary
from sim_runs import sim_run

from harness.model.report import load_report
from harness.model.summary import MEASURES
from harness.report.html import render_html
from harness.report.write import item_stories
from scorers.criteria import criterion_names

REPO = Path(__file__).resolve().parent.parent.parent
#: Where the browser test leaves its screenshot for people to look at (gitignored).
SCREENSHOT_COPY = REPO / "test-output" / "report.png"

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A baseline (honest) and a candidate (flaky, compared against it)."""
    root = tmp_path_factory.mktemp("runs")
    baseline = sim_run(root, "honest", trials=3)
    candidate = sim_run(root, "flaky=0.5", trials=6, baseline=baseline, seed=7)
    return baseline, candidate


def test_every_run_writes_an_offline_page(runs: tuple[Path, Path]) -> None:
    _, candidate = runs
    page = (candidate / "report.html").read_text(encoding="utf-8")
    # Nothing is fetched: no external script, stylesheet, image or frame.
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", page)
    assert "<link" not in page and '<svg xmlns="http://www.w3.org/2000/svg"' in page
    for criterion in criterion_names():
        assert f'data-field="{criterion}"' in page
    report = json.loads((candidate / "report.json").read_text())
    for item in report["items"]:
        assert f'data-key="{item["key"]}"' in page


def test_item_file_links_are_relative_and_resolve(runs: tuple[Path, Path]) -> None:
    _, candidate = runs
    page = (candidate / "report.html").read_text(encoding="utf-8")
    links = re.findall(r'href="(items/[^"#]+)"', page)
    assert links and all((candidate / link).is_file() for link in links)


def test_render_to_another_directory_keeps_links_working(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    _, candidate = runs
    report = load_report(candidate)
    page = render_html(report, candidate, item_stories(candidate, report), tmp_path)
    links = re.findall(r'href="([^"#]+/result\.json)"', page)
    assert links and all((tmp_path / link).resolve().is_file() for link in links)


def test_a_twenty_item_page_is_light(tmp_path: Path) -> None:
    """Charts are inline SVG: a 20-item run's page stays far below 1.5 MB (plotly's bundle
    alone was 4.6 MB), and holds no chart for a measure every item shares."""
    run = sim_run(tmp_path, "flaky=0.5", trials=20, seed=3)
    page = (run / "report.html").read_text(encoding="utf-8")
    assert len(page.encode()) < 1_500_000
    report = json.loads((run / "report.json").read_text())
    turns = {i["score"]["turns"] for i in report["items"] if i["status"] != "error"}
    assert ('id="chart-turns"' in page) == (len(turns) > 1)


def _expected_charts(report: dict) -> set[str]:
    """The charts a page draws: rates and the forest plot always, the criteria chart when
    some criterion failed, a measure's chart when its values differ between items."""
    charts = {"chart-rates", "chart-forest"}
    if any(c["count"] < s["n"] for s in report["summary"] for c in s["criteria"].values()):
        charts.add("chart-criteria")
    scored = [i for i in report["items"] if i["status"] != "error"]
    for measure in MEASURES:
        if len({v for i in scored if (v := _measure(i, measure)) is not None}) > 1:
            charts.add(f"chart-{measure}")
    # A model with a resolved item that cost something has a point against its rate.
    if any(i["status"] == "resolved" and i["score"]["tokens_used"] > 0 for i in scored):
        charts.add("chart-cost-vs-rate")
    return charts


def _measure(item: dict, name: str) -> float | None:
    """A measure of a raw item: its cost's USD, or a field of its score, efficiency or
    facts."""
    if name == "cost_usd":
        return (item.get("cost") or {}).get("usd")
    parts = (item["score"], item["score"].get("efficiency") or {}, item["facts"])
    return next((p[name] for p in parts if p.get(name) is not None), None)


@pytest.mark.browser
def test_page_in_headless_chromium(runs: tuple[Path, Path], tmp_path: Path) -> None:
    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium not installed (apt-get install -y chromium; .ci/run installs it)")
    _, candidate = runs
    report = json.loads((candidate / "report.json").read_text())
    browser = Browser.start(binary)
    try:
        browser.open((candidate / "report.html").as_uri(), "document.readyState === 'complete'")
        charts = browser.evaluate(
            "Object.fromEntries(Array.from(document.querySelectorAll('svg.chart'))"
            ".filter(c => c.id.startsWith('chart-')).map(c => [c.id, "
            "c.querySelectorAll('.mark').length]))"
        )
        banner = browser.evaluate(
            "(() => { const b = document.getElementById('banner'); const r ="
            " b.getBoundingClientRect(); return {top: r.top, text: b.textContent,"
            " resolved: b.dataset.resolved, gate: b.dataset.gate, verdict: b.dataset.verdict,"
            " first: document.body.firstElementChild.id}; })()"
        )
        dom = browser.evaluate(
            "({rows: Array.from(document.querySelectorAll('#summary tr[data-fixture]')).map(r => ({"
            "fixture: r.dataset.fixture, model: r.dataset.model,"
            "rate: r.querySelector('[data-field=rate]').dataset.value,"
            "rate_text: r.querySelector('[data-field=rate]').textContent,"
            "n: r.querySelector('[data-field=n]').textContent})),"
            "counts: Object.assign({}, document.getElementById('counts').dataset),"
            "delta: document.getElementById('overall-delta').dataset.value,"
            "verdict: document.getElementById('overall-delta').dataset.verdict,"
            "gate: document.getElementById('gate').dataset.passed})"
        )
        shot = browser.screenshot(tmp_path / "report.png")
        browser.screenshot(tmp_path / "report-top.png", whole=False)
        # The items table filters by status and by failed criterion.
        browser.evaluate(
            "(() => { const s = document.getElementById('filter-status');"
            " s.value = 'unresolved'; s.dispatchEvent(new Event('change')); })()"
        )
        shown_unresolved = int(browser.evaluate("document.getElementById('items').dataset.shown"))
        browser.evaluate(
            "(() => { const s = document.getElementById('filter-status'); s.value = '';"
            " s.dispatchEvent(new Event('change')); const c ="
            " document.getElementById('filter-criterion'); c.value = 'coverage';"
            " c.dispatchEvent(new Event('change')); })()"
        )
        shown_coverage = int(browser.evaluate("document.getElementById('items').dataset.shown"))
        # Open an unresolved item's drill-down through its link: its timeline is drawn.
        bad = next(i for i in report["items"] if i["status"] != "resolved")
        anchor = browser.evaluate(
            f"document.querySelector('details[data-key=\"{bad['key']}\"]').id"
        )
        browser.evaluate(f"location.hash = '{anchor}'")
        browser.wait_for(f"document.getElementById('{anchor}').open")
        timeline_marks = browser.evaluate(
            f"document.getElementById('tl-{anchor}').querySelectorAll('.mark').length"
        )
    finally:
        browser.close()
    SCREENSHOT_COPY.parent.mkdir(exist_ok=True)
    shutil.copyfile(tmp_path / "report.png", SCREENSHOT_COPY)
    shutil.copyfile(tmp_path / "report-top.png", SCREENSHOT_COPY.with_name("report-top.png"))

    assert browser.errors == []
    assert set(charts) == _expected_charts(report)
    assert all(count > 0 for count in charts.values()), charts  # every chart drew its marks
    assert timeline_marks > 0
    assert shot[:8] == b"\x89PNG\r\n\x1a\n" and len(shot) > 20_000  # a drawn page, not blank

    # The verdict is the first thing on the page, and says what report.json says.
    cmp = report["comparison"]
    assert banner["first"] == "banner" and banner["top"] < 40
    assert banner["resolved"] == str(report["resolved"]).lower()
    assert banner["gate"] == str(cmp["gate"]["passed"]).lower()
    assert banner["verdict"] == cmp["overall"]["verdict"]
    assert cmp["baseline_run"]["run_id"] in banner["text"]

    statuses = [i["status"] for i in report["items"]]
    assert shown_unresolved == statuses.count("unresolved")
    failed_coverage = [
        i for i in report["items"]
        if i["status"] != "error" and any(
            c["name"] == "coverage" and not c["passed"] for c in i["score"]["checks"]
        )
    ]  # fmt: skip
    assert shown_coverage == len(failed_coverage)

    summary = {(s["fixture"], s["model"]): s for s in report["summary"]}
    assert len(dom["rows"]) == len(summary)
    for row in dom["rows"]:
        s = summary[(row["fixture"], row["model"])]
        assert float(row["rate"]) == pytest.approx(s["rate"], abs=1e-12)
        assert row["rate_text"] == f"{100 * s['rate']:.1f}%" and int(row["n"]) == s["n"]
    assert int(dom["counts"]["items"]) == len(statuses)
    assert int(dom["counts"]["resolved"]) == statuses.count("resolved")
    assert float(dom["delta"]) == pytest.approx(cmp["overall"]["delta"], abs=1e-12)
    assert dom["verdict"] == cmp["overall"]["verdict"]
    assert dom["gate"] == str(cmp["gate"]["passed"]).lower()
