"""report.html and JUnit of a run of several agents: the agent named in every fixture x
model row, the agents side by side with the model's figures, a cost point per agent x
model, a JUnit case per agent x model; a run of one agent shows none of it."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from model_builders import make_item, make_options
from sim_runs import TINY

from harness.agents import parse_agent
from harness.model.item import ItemCost, ItemResult
from harness.model.report import RunAgent, RunReport
from harness.model.text import format_per_resolved, format_per_resolved_ci, format_pp
from harness.plan import RunConfig
from harness.report.html import render_html
from harness.report.junit import render_junit
from harness.run.execute import execute_run
from harness.stats.build import build_report
from harness.stats.compare import compare

SVG = "{http://www.w3.org/2000/svg}"
REFERENCE, OTHER = "claude-code", "opencode"


def item(
    fixture: str,
    agent: str,
    trial: int,
    resolved: bool,
    usd: float | None,
    *,
    model: str = "p/m",
    error: bool = False,
) -> ItemResult:
    """An item of ``agent`` keyed as a run of several agents keys it, priced at ``usd``."""
    base = make_item(
        fixture, trial, resolved, model=model, agent=agent, status="error" if error else None
    )
    key = f"{fixture}:{agent}:{model}:{trial}"
    cost = None
    if usd is not None:
        cost = ItemCost(usd, "price file", (f"{model}: $1/$2 per Mtok",), (), True)
    return dataclasses.replace(base, key=key, item_dir=key.replace(":", "__"), cost=cost)


def run_of(items: list[ItemResult], agents: tuple[str, ...] = (REFERENCE, OTHER)) -> RunReport:
    models = tuple(sorted({i.model for i in items}))
    options = make_options(
        agent=", ".join(agents),
        models=models,
        agents=tuple(
            RunAgent(a, a, "", f"/bin/{a}", f"{a} 1.{n}", models) for n, a in enumerate(agents)
        ),
    )
    return build_report(run_id="r1", results=items, interrupted=False, options=options)


# Two fixtures, three trials. claude-code resolves everything at $0.10 an item; opencode
# costs $0.04 an item and resolves f1 2 of 3, f2 1 of 2 scored (its third item errored).
# Trial t adds $0.001 t, so the costs vary as real ones do.
OUTCOMES = {
    REFERENCE: {"f1": (True, True, True), "f2": (True, True, True)},
    OTHER: {"f1": (True, True, False), "f2": (True, False, None)},
}
USD = {REFERENCE: 0.10, OTHER: 0.04}


def two_agents() -> RunReport:
    items = [
        item(fixture, agent, trial, bool(ok), USD[agent] + 0.001 * trial, error=ok is None)
        for agent, fixtures in OUTCOMES.items()
        for fixture, outcomes in fixtures.items()
        for trial, ok in enumerate(outcomes, start=1)
    ]
    return run_of(items)


def page(report: RunReport, tmp_path: Path) -> str:
    return render_html(report, tmp_path, {})


def element(html: str, tag: str, attrs: str) -> ET.Element:
    """The first ``<tag ...attrs...>...</tag>`` of the page, parsed (the page's tables and
    blocks are well-formed XML)."""
    found = re.search(rf"<{tag} {attrs}[^>]*>.*?</{tag}>", html, re.S)
    assert found, f"no <{tag} {attrs}>"
    return ET.fromstring(found.group(0))


def rows(table: ET.Element) -> list[ET.Element]:
    return [r for r in table.iter("tr") if r.find("td") is not None]


def field(row: ET.Element, name: str) -> ET.Element:
    found = row.find(f"td[@data-field='{name}']")
    assert found is not None, f"no {name}"
    return found


def value(row: ET.Element, name: str) -> float:
    return float(field(row, name).attrib["data-value"])


def test_every_fixture_and_model_row_names_its_agent(tmp_path: Path) -> None:
    report = two_agents()
    html = page(report, tmp_path)
    summary = element(html, "table", 'id="summary"')
    heads = [th.text for th in summary.iter("th")]
    assert heads[:3] == ["fixture", "agent", "model"]
    shown = {
        (r.attrib["data-fixture"], r.attrib["data-agent"], r.attrib["data-model"]): r
        for r in rows(summary)
    }
    assert set(shown) == {(s.fixture, s.agent, s.model) for s in report.summary}
    for s in report.summary:
        row = shown[(s.fixture, s.agent, s.model)]
        assert [td.text for td in row.findall("td")[:3]] == [s.fixture, s.agent, s.model]
        assert value(row, "rate") == pytest.approx(s.rate)
        assert int(value(row, "errors")) == s.errors
    items = element(html, "table", 'id="items"')
    assert [th.text for th in items.iter("th")][:3] == ["item", "agent", "status"]
    for row in rows(items):
        agent = row.attrib["data-agent"]
        assert row.findall("td")[1].text == agent and f":{agent}:" in row.attrib["data-key"]
    # The header lists the agents with their versions; the overall rates name the agent.
    assert "agents: <b>claude-code (claude-code 1.0), opencode (opencode 1.1)</b>" in html
    for o in report.overall:
        assert re.search(
            rf'<p class="overall" data-agent="{o.agent}" data-model="p/m" '
            rf'data-value="{o.rate}">{o.agent} · p/m: <b>',
            html,
        )
    # Charts name every row fixture · agent · model.
    chart = element(html, "svg", '[^>]*id="chart-rates"')
    labels = {"".join(t.itertext()) for t in chart.iter(f"{SVG}text")}
    assert {f"{s.fixture} · {s.agent} · p/m" for s in report.summary} <= labels


def test_the_agents_side_by_side_show_the_models_figures(tmp_path: Path) -> None:
    report = two_agents()
    assert report.agents is not None
    html = page(report, tmp_path)
    # Right after the overall rates, before anything else.
    last_overall = max(m.start() for m in re.finditer('<p class="overall"', html))
    assert last_overall < html.index('id="agents"') < html.index("How items failed")
    table = element(html, "table", 'id="agents-standings"')
    shown = {(r.attrib["data-agent"], r.attrib["data-model"]): r for r in rows(table)}
    assert list(shown) == [(REFERENCE, "p/m"), (OTHER, "p/m")]
    for s in report.agents.standings:
        row = shown[(s.agent, s.model)]
        for name in ("fixtures", "n", "errors", "resolved"):
            assert int(value(row, name)) == getattr(s, name)
        assert value(row, "rate") == pytest.approx(s.rate)
        assert value(row, "cost_mean") == pytest.approx(s.mean_cost_usd)
        assert field(row, "cost_mean").attrib["data-unit"] == "usd"
        # A cost per resolved item shows its interval, as the summary table's and the
        # cost chart's do (one figure, one interval: the standing's).
        for name, unit in (("cost_per_resolved_usd", "usd"), ("tokens_per_resolved", "tokens")):
            entry = getattr(s, name)
            assert entry is not None and entry.value is not None and entry.ci is not None
            cell = field(row, name)
            assert value(row, name) == pytest.approx(entry.value)
            assert cell.attrib["title"] == format_per_resolved(entry, unit)
            small = cell.find("small")
            assert small is not None and small.text == format_per_resolved_ci(entry, unit)
        assert value(row, "wall_time_s") == pytest.approx(s.mean_wall_time_s)
    # The figures are the agents' own: opencode's errored item is counted, not scored.
    other = shown[(OTHER, "p/m")]
    assert field(other, "resolved").text == "3/5" and field(other, "errors").text == "1"
    assert value(other, "rate") == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert field(other, "cost_mean").text == "$0.0418"  # 0.04 + 0.001 (1 + 2 + 3 + 1 + 2) / 5
    assert value(other, "cost_per_resolved_usd") == pytest.approx((5 * 0.04 + 0.009) / 3)
    assert field(shown[(REFERENCE, "p/m")], "cost_per_resolved_usd").text == "$0.1020"
    # The cost chart's error bars are the standings' intervals.
    chart = element(html, "svg", '[^>]*id="chart-cost-vs-rate"')
    tooltips = {"".join(t.itertext()) for t in chart.iter(f"{SVG}title")}
    for s in report.agents.standings:
        assert s.cost_per_resolved_usd is not None
        shown_as = f"{s.agent} · {s.model}: {format_per_resolved(s.cost_per_resolved_usd, 'usd')}"
        assert any(t.startswith(shown_as + ",") for t in tooltips), (shown_as, tooltips)

    (versus,) = report.agents.versus
    cmp = versus.comparison
    block = element(html, "div", f'class="versus" id="versus-0" data-agent="{OTHER}"')
    assert block.attrib["data-reference"] == REFERENCE
    title = block.find("h3")
    assert title is not None and "".join(title.itertext()) == f"{OTHER} against {REFERENCE}"
    rate = block.find("p[@class='versus-rate']")
    assert rate is not None and rate.attrib["data-verdict"] == cmp.overall.verdict
    assert float(rate.attrib["data-value"]) == pytest.approx(cmp.overall.delta)
    assert cmp.overall.delta == pytest.approx((2 / 3 + 1 / 2) / 2 - 1)
    assert f"Δ {format_pp(cmp.overall.delta)}" in "".join(rate.itertext())
    assert cmp.cost is not None
    cost = block.find("p[@class='meta versus-cost']")
    assert cost is not None and cost.text is not None
    assert cost.text.startswith(f"cost: cheaper, x0.41 {REFERENCE}'s per item (USD), 95% CI [")
    assert cost.attrib["data-verdict"] == cmp.cost.overall.verdict == "cheaper"
    fixtures = block.find("table")
    assert fixtures is not None
    heads = [th.text for th in fixtures.iter("th")]
    assert heads[:4] == ["fixture", "model", REFERENCE, OTHER]  # no agent column: the heads say
    by_fixture = {r.attrib["data-fixture"]: r for r in rows(fixtures)}
    for f in cmp.fixtures:
        row = by_fixture[f.fixture]
        assert value(row, "delta") == pytest.approx(f.delta)
        assert field(row, "verdict").text == f.verdict
    # They inform: no gate is said to pass or fail on them.
    assert not re.search(r"gate (passes|FAILS)|Gate \(", ET.tostring(block, encoding="unicode"))


def test_the_cost_chart_has_a_point_per_agent_and_model(tmp_path: Path) -> None:
    # (agent, model): usd per item, outcomes of two trials on one fixture.
    #   claude-code · p/a  $0.01, 1 of 2 -> $0.02 per resolved,  50%  front
    #   claude-code · p/b  $0.05, 2 of 2 -> $0.05 per resolved, 100%  beaten by opencode · p/b
    #   opencode · p/a     $0.06, 1 of 2 -> $0.12 per resolved,  50%
    #   opencode · p/b     $0.03, 2 of 2 -> $0.03 per resolved, 100%  front
    plan = {
        (REFERENCE, "p/a"): (0.01, (True, False)),
        (REFERENCE, "p/b"): (0.05, (True, True)),
        (OTHER, "p/a"): (0.06, (False, True)),
        (OTHER, "p/b"): (0.03, (True, True)),
    }
    items = [
        item("f1", agent, trial, ok, usd, model=model)
        for (agent, model), (usd, outcomes) in plan.items()
        for trial, ok in enumerate(outcomes, start=1)
    ]
    html = page(run_of(items), tmp_path)
    chart = element(html, "svg", '[^>]*id="chart-cost-vs-rate"')
    points = {}
    for g in chart.iter(f"{SVG}g"):
        if "mark" in g.get("class", "").split():
            label = "".join(next(g.iter(f"{SVG}text")).itertext())
            points[label] = (float(g.attrib["data-x"]), float(g.attrib["data-value"]))
            points[label] += (float(g.attrib["data-front"]),)
    assert points == {
        f"{REFERENCE} · p/a": (pytest.approx(0.02), 50.0, 1.0),
        f"{REFERENCE} · p/b": (pytest.approx(0.05), 100.0, 0.0),
        f"{OTHER} · p/a": (pytest.approx(0.12), 50.0, 0.0),
        f"{OTHER} · p/b": (pytest.approx(0.03), 100.0, 1.0),
    }
    assert f'data-front="{REFERENCE} · p/a | {OTHER} · p/b">A point per agent × model' in html


def test_junit_has_a_case_per_agent_and_model() -> None:
    report = two_agents()
    suite = ET.fromstring(render_junit(report))
    cases = {(c.attrib["classname"], c.attrib["name"]): c for c in suite.iter("testcase")}
    assert set(cases) == {(f, f"{a} · p/m") for f in ("f1", "f2") for a in (REFERENCE, OTHER)}
    assert suite.attrib["tests"] == "4" and suite.attrib["failures"] == "2"
    # Each case holds its own agent's items only: opencode's unresolved ones fail it.
    unresolved = {"f1": f"f1:{OTHER}:p/m:3", "f2": f"f2:{OTHER}:p/m:2"}
    for fixture, key in unresolved.items():
        assert cases[(fixture, f"{REFERENCE} · p/m")].find("failure") is None
        failure = cases[(fixture, f"{OTHER} · p/m")].find("failure")
        assert failure is not None and failure.attrib["message"].startswith("1/3 unresolved")
        assert failure.text == f"{key}: coverage: failed"
    out = cases[("f2", f"{OTHER} · p/m")].find("system-out")
    assert out is not None and out.text is not None and out.text.startswith("resolved 1/2")


def test_a_run_of_one_agent_shows_no_agent(tmp_path: Path) -> None:
    items = [make_item(f, t, t != 2) for f in ("f1", "f2") for t in (1, 2)]
    report = build_report(run_id="r1", results=items, interrupted=False, options=make_options())
    assert report.agents is None
    html = page(report, tmp_path)
    assert "<th>agent</th>" not in html and "data-agent" not in html
    assert 'id="agents"' not in html and 'class="versus"' not in html
    assert "agent: <b>sim:honest</b>" in html and "agents:" not in html
    assert "<h2>Resolved rate per fixture × model</h2>" in html
    assert "f1 · p/m" in html and "sim:honest · p/m" not in html
    assert 'data-front="p/m">A point per model' in html
    names = {c.attrib["name"] for c in ET.fromstring(render_junit(report)).iter("testcase")}
    assert names == {"p/m"}


def test_a_comparison_by_agent_names_the_agent(tmp_path: Path) -> None:
    """Two runs of the same two agents: their cells pair by agent, and the comparison's
    tables and forest plot say which."""
    cells = [(f, a, t) for f in ("f1", "f2") for a in (REFERENCE, OTHER) for t in (1, 2)]
    base = [item(f, a, t, True, 0.10) for f, a, t in cells]
    cand = [item(f, a, t, a == REFERENCE or t == 1, 0.20) for f, a, t in cells]
    cmp = compare(base, cand, 0.05, "runs/base")
    assert {f.agent for f in cmp.fixtures} == {REFERENCE, OTHER}
    report = dataclasses.replace(run_of(cand), comparison=cmp)
    html = page(report, tmp_path)
    table = element(html, "table", 'id="comparison-table"')
    assert [th.text for th in table.iter("th")][:3] == ["fixture", "agent", "model"]
    shown = {(r.attrib["data-fixture"], r.attrib["data-agent"]): r for r in rows(table)}
    for f in cmp.fixtures:
        row = shown[(f.fixture, f.agent)]
        assert row.findall("td")[1].text == f.agent
        assert value(row, "delta") == pytest.approx(f.delta)
    assert cmp.cost is not None
    costs = element(html, "table", 'id="cost-table"')
    assert {(r.attrib["data-fixture"], r.attrib["data-agent"]) for r in rows(costs)} == {
        (r.fixture, r.agent) for r in cmp.cost.fixtures
    }
    forest = element(html, "svg", '[^>]*id="chart-forest"')
    labels = {"".join(t.itertext()) for t in forest.iter(f"{SVG}text")}
    assert f"f1 · {OTHER} · p/m" in labels


@pytest.mark.e2e
def test_a_sim_run_of_several_agents(tmp_path: Path) -> None:
    """A real run of two simulated agents: its page stands them side by side as its
    report.json does, and names the agent in every summary row."""
    config = RunConfig(
        fixtures=(TINY,),
        models=(),
        agents=(parse_agent("sim", seed=1), parse_agent("sim:no-spawn", seed=1)),
        trials=2,
        concurrency=2,
        runs_dir=tmp_path,
    )
    run = execute_run(config).run_dir
    data = json.loads((run / "report.json").read_text())
    html = (run / "report.html").read_text(encoding="utf-8")
    table = element(html, "table", 'id="agents-standings"')
    shown = {(r.attrib["data-agent"], r.attrib["data-model"]): r for r in rows(table)}
    assert len(shown) == len(data["agents"]["standings"]) == 2
    for s in data["agents"]["standings"]:
        row = shown[(s["agent"], s["model"])]
        assert value(row, "rate") == pytest.approx(s["rate"])
        assert int(value(row, "resolved")) == s["resolved"]
        assert value(row, "cost_mean") == pytest.approx(s["mean_tokens"])
    summary = element(html, "table", 'id="summary"')
    assert {(r.attrib["data-agent"], r.attrib["data-model"]) for r in rows(summary)} == {
        (s["agent"], s["model"]) for s in data["summary"]
    }
    (versus,) = data["agents"]["versus"]
    block = element(html, "div", 'class="versus"')
    assert block.attrib["data-agent"] == versus["agent"] == "sim:no-spawn"
    rate = block.find("p[@class='versus-rate']")
    assert rate is not None
    assert rate.attrib["data-verdict"] == versus["comparison"]["overall"]["verdict"]


def test_the_mean_column_says_tokens_when_it_shows_tokens(tmp_path: Path) -> None:
    def heads(report: RunReport) -> list[str]:
        table = element(page(report, tmp_path), "table", 'id="agents-standings"')
        return [th.text or "" for th in table.iter("th")]

    assert "mean cost per item" in heads(two_agents())  # every item priced: USD
    unpriced = [
        item(f, agent, t, True, None)
        for agent in (REFERENCE, OTHER)
        for f in ("f1",)
        for t in (1, 2)
    ]
    assert "mean tokens per item" in heads(run_of(unpriced))
    mixed = [item("f1", REFERENCE, t, True, 0.1) for t in (1, 2)] + [
        item("f1", OTHER, t, True, None) for t in (1, 2)
    ]
    assert "mean cost per item (tokens where unpriced)" in heads(run_of(mixed))


def test_each_per_item_chart_has_its_title(tmp_path: Path) -> None:
    html = page(two_agents(), tmp_path)
    titles = re.findall(r'<h3 class="chart-title" data-measure="([a-z_]+)">([^<]+)</h3>', html)
    charts = re.findall(r'<svg[^>]*id="chart-([a-z_]+)"', html)
    assert titles and [m for m, _ in titles] == [c for c in charts if c in dict(titles)]
    assert dict(titles)["cost_usd"] == "USD per item"


#: The selftest of four agents on six scripts: 24 cells, each a model of its agent.
WIDE_AGENTS = ("prime-agent", "claude-code", "opencode", "codex")
WIDE_MODELS = tuple(
    f"scripted/{s}"
    for s in ("honest", "no-spawn", "helper-names", "wrong-answer", "double-spawn", "silent-child")
)


def twenty_four_cells() -> RunReport:
    items = [
        item("json-events", agent, trial, (a + m + trial) % 3 != 0, 0.12 + 0.01 * m, model=model)
        for a, agent in enumerate(WIDE_AGENTS)
        for m, model in enumerate(WIDE_MODELS)
        for trial in (1, 2)
    ]
    return run_of(items, WIDE_AGENTS)


def test_the_rates_chart_has_no_legend_and_a_colour_per_agent(tmp_path: Path) -> None:
    """Every row's label names its cell: a legend could only repeat the labels (it cycled
    8 colours over 24 conditions)."""
    report = twenty_four_cells()
    chart = element(page(report, tmp_path), "svg", '[^>]*id="chart-rates"')
    assert not [g for g in chart.iter(f"{SVG}g") if g.get("class") == "legend"]
    labels = {"".join(t.itertext()) for t in chart.iter(f"{SVG}text")}
    rows = {s for s in labels if s.startswith("json-events · ")}
    assert rows == {f"json-events · {s.agent} · {s.model}" for s in report.summary}  # whole
    marks = [g for g in chart.iter(f"{SVG}g") if "mark" in (g.get("class") or "").split()]
    colours = {(c.get("fill")) for g in marks for c in g.iter(f"{SVG}circle")}
    assert len(marks) == len(report.summary) and len(colours) == len(WIDE_AGENTS)


@pytest.mark.browser
def test_a_report_of_24_cells_fits_a_1400_px_window(tmp_path: Path) -> None:
    """The per-fixture table's last column (cost per resolved item) shows without
    scrolling sideways."""
    from browser import Browser, chromium_binary

    binary = chromium_binary()
    if binary is None:
        pytest.skip("chromium not installed (apt-get install -y chromium; .ci/run installs it)")
    path = tmp_path / "report.html"
    path.write_text(page(twenty_four_cells(), tmp_path), encoding="utf-8")
    browser = Browser.start(binary)
    try:
        browser.open(path.as_uri(), "document.readyState === 'complete'", width=1400)
        tables = browser.evaluate(
            "Array.from(document.querySelectorAll('table')).map(t => ({id: t.id,"
            " right: t.getBoundingClientRect().right,"
            " edge: t.parentElement.getBoundingClientRect().right,"
            " hidden: t.parentElement.scrollWidth - t.parentElement.clientWidth}))"
        )
        last = browser.evaluate(
            "Array.from(document.querySelectorAll('#summary [data-field=cost_per_resolved]'))"
            ".map(td => td.getBoundingClientRect().right)"
        )
        page_hidden = browser.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
    finally:
        browser.close()
    assert browser.errors == [] and page_hidden == 0
    assert "summary" in {t["id"] for t in tables}
    for t in tables:
        assert t["right"] <= t["edge"] + 0.5 and t["hidden"] <= 0, t
    assert len(last) == 24 and max(last) <= 1400
