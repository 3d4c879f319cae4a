"""``runs/index.html``: every run under a runs dir on one offline page, newest first, with
the resolved rate of each fixture x model (x agent) over time.

One chart per fixture; a line per model and agent, a point per run with its 95% interval
that links to the run's own report.html. So "did the swarm get better this week?" is a
glance, and the run that changed it is one click away. Like report.html the page is
self-contained (inline SVG and styles, no script, only relative links).
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Sequence
from dataclasses import dataclass, field

from harness.model.record import Interval
from harness.model.text import (
    condition_label,
    format_ci,
    format_pct,
    format_usd,
    format_when,
    plural,
)
from harness.report.svg import SERIES_COLOURS, TrendPoint, TrendSeries, trend_chart

INDEX_FILE = "index.html"
#: The charts show the newest runs only (a point per run stays readable at 760 px); the
#: table lists every run.
TREND_RUNS = 60
#: Series a fixture's chart shows (the most recently run agent x model pairs); the others
#: are in a second chart behind a control, so colours do not repeat and lines stay apart.
MAX_SERIES = 5

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 24px 48px;color:#222}
h1{font-size:20px;margin:16px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}.meta{color:#555}
.complete{color:#007a55}.interrupted{color:#8a6d00}.running{color:#0072b2}
.regressed{color:#d55e00;font-weight:600}.improved{color:#009e73;font-weight:600}
svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}
"""


@dataclass(frozen=True)
class IndexCell:
    """One fixture x agent x model of a run; ``agent`` "" stands for the run's agent (a
    row built without it)."""

    fixture: str
    model: str
    n: int
    resolved: int
    rate: float | None
    ci: Interval | None
    agent: str = ""


@dataclass(frozen=True)
class IndexRun:
    """One run as the index shows it; ``report_href`` is None when it has no report page."""

    run_id: str
    created_at: str
    agent: str
    status: str
    fixtures: tuple[str, ...]
    models: tuple[str, ...]
    trials: int | None
    scored: int
    resolved: int
    report_href: str | None
    verdict: str | None = None
    origin: str | None = None
    cells: tuple[IndexCell, ...] = field(default=())
    #: What the run's items cost together in USD (None: some item has no price, or none
    #: was priced), their tokens (None: not known, and the cost column is left out) and the
    #: items that used tokens without a price.
    cost_usd: float | None = None
    tokens: int | None = None
    unpriced: int = 0
    #: The baseline run it was compared with (None: none, or not recorded).
    baseline: str | None = None
    #: A selftest's outcome, (rows that hold, rows): its items are the harness's check of
    #: an agent against scripted behaviours, not a rate ((0, 0): its rows were not judged;
    #: None: not a selftest).
    selftest: tuple[int, int] | None = None


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _when(stamp: str) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return when.astimezone(dt.UTC) if when.tzinfo is not None else when


def _tick_labels(runs: Sequence[IndexRun]) -> dict[str, str]:
    """A short x tick per run: the time when every run is of one day (to the second when
    minutes repeat), else the date."""
    whens = {r.run_id: _when(r.created_at) for r in runs}
    known = [w for w in whens.values() if w is not None]
    if len({w.date() for w in known}) > 1:
        shape = "%b %d"
    elif len({w.strftime("%H:%M") for w in known}) < len(known):
        shape = "%H:%M:%S"
    else:
        shape = "%H:%M"
    return {k: (w.strftime(shape) if w is not None else "?") for k, w in whens.items()}


def _agent(cell: IndexCell, run: IndexRun) -> str:
    return cell.agent or run.agent


def _newest(runs: Sequence[IndexRun]) -> list[IndexRun]:
    """The runs the charts show, oldest first."""
    return sorted(runs, key=lambda r: (r.created_at, r.run_id))[-TREND_RUNS:]


def _several_agents(runs: Sequence[IndexRun]) -> bool:
    """Whether the charted cells had more than one agent (then a series per agent x model)."""
    return len({_agent(c, r) for r in runs for c in r.cells}) > 1


def trend_charts(runs: Sequence[IndexRun]) -> dict[str, str]:
    """An SVG trend chart per fixture (by name), a series per model (per agent x model when
    the cells had several agents: a run of several, or runs of different ones), oldest run
    first on the x axis (evenly spaced: runs come in bursts). At most :data:`MAX_SERIES`
    series a chart, the most recently run; the others follow in a chart of their own behind
    a control. Selftests are not charted: theirs is no rate."""
    runs = [r for r in runs if r.selftest is None]
    ordered = _newest(runs)
    position = {r.run_id: float(i) for i, r in enumerate(ordered)}
    ticks = _tick_labels(ordered)
    several = _several_agents(ordered)
    by_fixture: dict[str, dict[str, list[TrendPoint]]] = {}
    for run in ordered:
        for cell in run.cells:
            if cell.rate is None:
                continue
            agent = _agent(cell, run)
            name = condition_label(agent, cell.model, several)
            low, high = cell.ci if cell.ci is not None else (cell.rate, cell.rate)
            ci = f", 95% CI {format_ci(cell.ci, 0)}" if cell.ci is not None else ""
            by_fixture.setdefault(cell.fixture, {}).setdefault(name, []).append(
                TrendPoint(
                    x=position[run.run_id],
                    x_label=ticks[run.run_id],
                    value=cell.rate,
                    low=low,
                    high=high,
                    tooltip=f"{run.run_id} ({format_when(run.created_at)}, {agent}): "
                    f"{cell.fixture} x {cell.model} {cell.resolved}/{cell.n} resolved "
                    f"({format_pct(cell.rate, 0)}{ci})",
                    href=run.report_href,
                )
            )
    charts = {}
    for j, (fixture, lines) in enumerate(sorted(by_fixture.items())):
        # The most recently run first (ties by name), so the chart shows what is current.
        recent = sorted(lines.items(), key=lambda kv: (-max(p.x for p in kv[1]), kv[0]))
        shown, rest = sorted(recent[:MAX_SERIES]), sorted(recent[MAX_SERIES:])
        chart = trend_chart(_series(shown), y_label=f"{fixture}: resolved", chart_id=f"trend-{j}")
        if rest:
            more = trend_chart(
                _series(rest), y_label=f"{fixture}: resolved", chart_id=f"trend-{j}-more"
            )
            chart += (
                f'<details class="more-series"><summary>{len(rest)} more series'
                f" of {_e(fixture)} (run less recently)</summary>{more}</details>"
            )
        charts[fixture] = chart
    return charts


def _series(lines: Sequence[tuple[str, list[TrendPoint]]]) -> list[TrendSeries]:
    return [
        TrendSeries(name, SERIES_COLOURS[i % len(SERIES_COLOURS)], points)
        for i, (name, points) in enumerate(lines)
    ]


def _cost_cells(run: IndexRun) -> list[str]:
    """The run's total cost (``n/a`` with the unpriced items counted) and tokens."""
    if run.tokens is None:
        return ["", ""]
    if run.unpriced:
        title = f"{plural(run.unpriced, 'item')} without a price"
        cost = f'<span title="{_e(title)}">n/a ({run.unpriced} unpriced)</span>'
    else:
        cost = _e(format_usd(run.cost_usd))
    value = "" if run.cost_usd is None else f' data-value="{_e(run.cost_usd)}"'
    return [
        f'<span class="num cost"{value}>{cost}</span>',
        f'<span class="num tokens" data-value="{run.tokens}">{run.tokens:,}</span>',
    ]


def _run_row(run: IndexRun, with_origin: bool, with_cost: bool = False) -> str:
    name = (
        f'<a href="{_e(run.report_href)}">{_e(run.run_id)}</a>'
        if run.report_href
        else _e(run.run_id)
    )
    rate = (
        f"{run.resolved}/{run.scored} ({format_pct(run.resolved / run.scored, 0)})"
        if run.scored
        else "n/a"
    )
    verdict = f'<span class="{_e(run.verdict)}">{_e(run.verdict)}</span>' if run.verdict else ""
    cells = [
        name,
        _e(format_when(run.created_at)),
        _e(run.agent),
        _some(run.fixtures),
        _some(run.models),
        f'<span class="num">{"" if run.trials is None else run.trials}</span>',
        rate,
        *(_cost_cells(run) if with_cost else []),
        f'<span class="{_e(run.status)}">{_e(run.status)}</span>',
        verdict,
        _e(run.baseline or ""),
    ]
    if with_origin:
        cells.append(_e(run.origin or ""))
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


#: Names a table cell lists before "+N more" (all of them on hover).
NAMES_SHOWN = 3


def _some(names: Sequence[str]) -> str:
    """The first :data:`NAMES_SHOWN` names and how many more, every name on hover."""
    if len(names) <= NAMES_SHOWN:
        return _e(", ".join(names))
    shown = ", ".join(names[:NAMES_SHOWN])
    more = len(names) - NAMES_SHOWN
    return f'<span title="{_e(", ".join(names))}">{_e(shown)} +{more} more</span>'


def _selftest_row(run: IndexRun) -> str:
    name = (
        f'<a href="{_e(run.report_href)}">{_e(run.run_id)}</a>'
        if run.report_href
        else _e(run.run_id)
    )
    holding, rows = run.selftest or (0, 0)
    ok = holding == rows and rows > 0 and run.status == "complete"
    word = "ok" if ok else "FAIL" if rows else "not judged"
    verdict = f'<span class="{"complete" if ok else "regressed"}">{word}</span>'
    cells = [
        name,
        _e(format_when(run.created_at)),
        _e(run.agent),
        _e(", ".join(run.fixtures)),
        f'<span class="num">{holding}/{rows}</span>' if rows else "",
        verdict,
        f'<span class="{_e(run.status)}">{_e(run.status)}</span>',
    ]
    return "<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def render_index(runs: Sequence[IndexRun], runs_dir: str, unreadable: int = 0) -> str:
    """The whole page for ``runs`` (any order): the runs table first (newest first), the
    selftests apart (a pass or fail of the harness, not a rate), then the trend charts;
    ``unreadable`` counts the run dirs whose report could not be read (listed without
    their rates)."""
    newest_first = sorted(runs, key=lambda r: (r.created_at, r.run_id), reverse=True)
    evals = [r for r in newest_first if r.selftest is None]
    selftests = [r for r in newest_first if r.selftest is not None]
    now = dt.datetime.now(dt.UTC).isoformat()
    meta = f"{plural(len(runs), 'run')} under <code>{_e(runs_dir)}</code>, written {_e(format_when(now))}"
    if unreadable:
        meta += f"; {plural(unreadable, 'report')} could not be read (listed without rates)"
    body = [f"<h1>swarm-harness runs</h1><p class=meta>{meta}</p>"]
    with_cost = any(r.tokens is not None for r in evals)
    header: tuple[str, ...] = (
        "run",
        "started",
        "agent",
        "fixtures",
        "models",
        "trials",
        "resolved",
        *(("cost", "tokens") if with_cost else ()),
        "status",
        "vs baseline",
        "baseline",
    )
    with_origin = any(r.origin for r in evals)
    if with_origin:
        header += ("re-run of",)
    body.append("<h2>Runs</h2><table id=runs><thead><tr>")
    body.append("".join(f"<th>{h}</th>" for h in header) + "</tr></thead><tbody>")
    body.extend(_run_row(r, with_origin, with_cost) for r in evals)
    body.append("</tbody></table>")
    if selftests:
        body.append(
            "<h2>Selftests</h2><p class=meta>Each checks the harness with a real agent against "
            "scripted behaviours: it passes when every row holds (its items are expected to "
            "fail where a script cheats, so theirs is no rate).</p>"
        )
        body.append(
            "<table id=selftests><thead><tr><th>run</th><th>started</th><th>agent</th>"
            "<th>fixtures</th><th>rows hold</th><th></th><th>status</th></tr></thead><tbody>"
        )
        body.extend(_selftest_row(r) for r in selftests)
        body.append("</tbody></table>")
    charts = trend_charts(evals)
    if charts:
        body.append("<h2>Resolved rate over time</h2>")
        shown = f"The newest {TREND_RUNS} runs" if len(evals) > TREND_RUNS else "A point per run"
        cell = "agent × model" if _several_agents(_newest(evals)) else "model"
        body.append(
            f"<p class=meta>{shown}, per fixture × {cell}, with its 95% interval; "
            f"at most {MAX_SERIES} series a chart, the most recently run (the others below "
            "it); click a point for its report.</p>"
        )
        body.extend(charts.values())
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>swarm-harness runs</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}</body></html>\n"
    )
