"""The runs index page from typed rows: points, caps, ticks and escaping."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from harness.report.index_page import MAX_SERIES, TREND_RUNS, IndexCell, IndexRun, render_index
from harness.report.svg import RIGHT_PX, WIDTH, Y_AXIS_PX


def row(
    i: int, *, day_step: bool = True, agent: str = "sim", origin: str | None = None
) -> IndexRun:
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    when = start + (dt.timedelta(days=i) if day_step else dt.timedelta(seconds=10 * i))
    return IndexRun(
        run_id=f"run-{i:03d}",
        created_at=when.isoformat(),
        agent=agent,
        status="complete",
        fixtures=("fx",),
        models=("m/a",),
        trials=4,
        scored=4,
        resolved=i % 5,
        report_href=f"run-{i:03d}/report.html",
        origin=origin,
        cells=(IndexCell("fx", "m/a", 4, i % 5, (i % 5) / 4, (0.0, 1.0)),),
    )


def test_a_point_per_run_linking_to_its_report() -> None:
    page = render_index([row(i) for i in range(5)], "runs")
    assert page.count('class="mark point"') == 5
    for i in range(5):
        assert f'href="run-{i:03d}/report.html"' in page
    assert "re-run of" not in page  # no column nobody uses


def test_the_chart_keeps_the_newest_runs_and_the_table_all() -> None:
    runs = [row(i) for i in range(TREND_RUNS + 10)]
    page = render_index(runs, "runs")
    assert page.count('class="mark point"') == TREND_RUNS
    assert page.count("<tr><td>") == TREND_RUNS + 10
    assert f"The newest {TREND_RUNS} runs" in page
    newest = f"run-{TREND_RUNS + 9:03d}"
    assert page.count('href="run-000/report.html"') == 1  # in the table, not the chart
    assert page.count(f'href="{newest}/report.html"') == 2  # in both


def test_ticks_tell_runs_of_one_minute_apart() -> None:
    page = render_index([row(i, day_step=False) for i in range(3)], "runs")
    assert ">00:00:10<" in page and ">00:00:20<" in page
    page = render_index([row(i) for i in range(3)], "runs")
    assert ">Jan 02<" in page


def test_agents_split_the_series_and_origins_get_a_column() -> None:
    page = render_index([row(0), row(1, agent="claude-code", origin="run-000")], "runs")
    assert "sim · m/a" in page and "claude-code · m/a" in page
    assert "<th>re-run of</th>" in page and "<td>run-000</td>" in page
    assert "per fixture × agent × model" in page


def test_a_run_of_several_agents_has_a_series_per_agent() -> None:
    """Its cells name their agents: a line per agent x model, each point's tooltip naming
    its agent; the table names the run's agents together."""
    cells = tuple(
        IndexCell("fx", "m/a", 4, resolved, resolved / 4, (0.0, 1.0), agent=agent)
        for agent, resolved in (("claude-code", 3), ("opencode", 1))
    )
    runs = [dataclasses.replace(row(i, agent="claude-code, opencode"), cells=cells) for i in (0, 1)]
    page = render_index(runs, "runs")
    assert page.count('class="mark point"') == 4
    assert page.count('class="line"') == 2
    assert "claude-code · m/a" in page and "opencode · m/a" in page
    assert "claude-code, opencode · m/a" not in page
    assert "(2026-01-01 00:00 UTC, opencode): fx x m/a 1/4 resolved" in page
    assert page.count("<td>claude-code, opencode</td>") == 2


def test_one_agent_throughout_names_only_models() -> None:
    page = render_index([row(i) for i in range(2)], "runs")
    assert "sim · m/a" not in page and "per fixture × model," in page


def test_names_are_escaped() -> None:
    bad = IndexRun(
        run_id="<b>x</b>", created_at="?", agent="a&b", status="running", fixtures=(),
        models=(), trials=None, scored=0, resolved=0, report_href=None,
    )  # fmt: skip
    page = render_index([bad], "<dir>", unreadable=1)
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page and "a&amp;b" in page
    assert "&lt;dir&gt;" in page and "1 report could not be read" in page


def _svgs(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page, re.S)


def _points_inside_their_axes(svg: str) -> None:
    """Every point's centre lies in the plot: between the y axis and the right edge of the
    gridlines, between the top and the bottom of the y axis."""
    axis = re.search(rf'<line x1="{Y_AXIS_PX}" y1="([\d.]+)" x2="{Y_AXIS_PX}" y2="([\d.]+)"', svg)
    assert axis, "no y axis"
    low, high = sorted(float(v) for v in axis.groups())
    points = re.findall(
        r'<g class="mark point"[^>]*>(?:<title>[^<]*</title>)?.*?<circle cx="([\d.]+)" cy="([\d.]+)"',
        svg,
    )
    assert points
    for cx, cy in points:
        assert Y_AXIS_PX <= float(cx) <= WIDTH - RIGHT_PX, (cx, cy)
        assert low <= float(cy) <= high, (cx, cy)


def test_the_table_first_selftests_apart_a_handful_of_series_with_full_labels() -> None:
    """The issue's page: 23 series on one fixture drew repeating colours, cut labels and
    a point outside the axis, 11 charts before the table, selftests as low rates."""
    models = [f"scripted/behaviour-with-a-long-name-{k:02d}" for k in range(23)]
    runs = []
    for i in range(6):
        cells = tuple(
            IndexCell("fx", m, 4, (i + k) % 5, ((i + k) % 5) / 4, (0.0, 1.0))
            for k, m in enumerate(models)
            if (k + i) % 3  # not every model in every run
        )
        runs.append(dataclasses.replace(row(i), cells=cells, baseline="run-000" if i else None))
    selftest = dataclasses.replace(row(9), run_id="selftest-run", selftest=(5, 6))
    page = render_index([*runs, selftest], "runs")
    # The table first, then the selftests, then the charts.
    assert page.index("<h2>Runs") < page.index("<h2>Selftests") < page.index("<h2>Resolved")
    selftests = page[page.index("<table id=selftests>") :]
    assert "selftest-run" in selftests and ">5/6<" in selftests and ">FAIL<" in selftests
    table = page[page.index("<table id=runs>") : page.index("</table>")]
    assert "selftest-run" not in table and "<th>baseline</th>" in table
    assert "<td>run-000</td>" in table  # each later run names its baseline
    main, more = _svgs(page)[:2]
    assert main.count('class="line"') == MAX_SERIES
    assert more.count('class="line"') == 23 - MAX_SERIES
    assert f"{23 - MAX_SERIES} more series" in page
    assert "selftest-run" not in "".join(_svgs(page))  # a selftest has no rate to chart
    for svg in _svgs(page):
        legend = re.search(r'<g class="legend">(.*?)</g>', svg, re.S)
        assert legend and "…" not in legend.group(1)  # full names
        _points_inside_their_axes(svg)
    # The most recently run models are the ones shown first.
    newest = {m for k, m in enumerate(models) if (k + 5) % 3}
    shown = set(re.findall(r"scripted/behaviour-with-a-long-name-\d\d", main))
    assert shown <= newest
