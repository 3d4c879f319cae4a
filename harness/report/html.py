"""``report.html``: one self-contained page per run (charts, comparison, item drill-downs).

Offline by construction: the plotly.js bundle that the ``plotly`` package ships is inlined
once, styles are inline, and the only links are relative ones to the item's own files, so
the page opens from a CI artifact with no network. plotly is imported only here, and only
when a page is rendered, so the CLI starts as fast as before.
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.model.comparison import Comparison
from harness.model.item import ItemResult
from harness.model.report import RunReport
from harness.model.story import ItemStory
from harness.model.text import format_ci, format_ci_pp, format_pct, format_pp, item_reasons
from harness.report import charts
from scorers.criteria import criterion_names

HTML_FILE = "report.html"

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 24px 48px;color:#222}
h1{font-size:22px;margin:20px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}
.resolved{color:#007a55}.unresolved{color:#b34700}.error{color:#8a1f8a}
.right{color:#007a55}.wrong{color:#b34700}.missing{color:#8a1f8a}
.chart{min-height:120px}.meta{color:#555}details.item{margin:4px 0;border:1px solid #e3e3e3;padding:4px 8px}
details.item summary{cursor:pointer}.files{columns:2;font-size:12px}code{font-size:12px}
.gate-pass{color:#007a55;font-weight:600}.gate-fail{color:#b34700;font-weight:600}
"""

#: Draws every chart once the page has loaded, and an item's timeline when it is opened;
#: ``data-charts-rendered`` on <body> says when the page is complete (the browser test
#: waits for it).
_JS = """
(function(){
  const specs = JSON.parse(document.getElementById('chart-data').textContent);
  const config = {responsive: true, displaylogo: false};
  const draw = (id, fig) => Plotly.newPlot(id, fig.data, fig.layout, config);
  const jobs = Object.entries(specs.charts).map(([id, fig]) => draw(id, fig));
  Promise.all(jobs).then(() => { document.body.dataset.chartsRendered = String(jobs.length); })
    .catch((err) => { console.error('chart failed: ' + err); });
  const openItem = (details) => {
    if (!details || details.dataset.drawn) return;
    const id = details.dataset.timeline, fig = specs.timelines[id];
    if (fig) { draw(id, fig); details.dataset.drawn = '1'; }
  };
  document.querySelectorAll('details.item').forEach((d) =>
    d.addEventListener('toggle', () => { if (d.open) openItem(d); }));
  const fromHash = () => {
    const target = location.hash && document.getElementById(location.hash.slice(1));
    if (target && target.tagName === 'DETAILS') { target.open = true; openItem(target); }
  };
  window.addEventListener('hashchange', fromHash);
  fromHash();
})();
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: object, digits: int = 0) -> str:
    return "n/a" if not isinstance(value, (int, float)) else f"{value:,.{digits}f}"


def _anchor(key: str) -> str:
    return "item-" + "".join(c if c.isalnum() else "-" for c in key)


def _cell(text: str, field: str, value: object = None, css: str = "") -> str:
    raw = "" if value is None else f' data-value="{_e(value)}"'
    cls = f' class="{css}"' if css else ""
    return f'<td data-field="{field}"{raw}{cls}>{_e(text)}</td>'


def _json_script(element_id: str, data: object) -> str:
    # "</" would end the <script> element early; JSON allows "<\/" for it.
    text = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{text}</script>'


def _header(report: RunReport) -> str:
    o = report.options
    facts = [
        ("run", report.run_id),
        ("created", report.created_at),
        ("agent", o.agent),
        ("models", ", ".join(o.models)),
        ("fixtures", ", ".join(sorted({i.fixture for i in report.items}))),
        ("trials", o.trials),
        ("seed", o.seed),
        ("harness", report.harness_version),
    ]
    lines = [f"<h1>swarm-harness run {_e(report.run_id)}</h1>", '<p class="meta">']
    lines.append(" · ".join(f"{k}: <b>{_e(v)}</b>" for k, v in facts if v not in (None, "")))
    lines.append("</p>")
    state = "INTERRUPTED — " if report.interrupted else ""
    resolved, unresolved, errors = (report.count(s) for s in ("resolved", "unresolved", "error"))
    lines.append(
        f'<p id="counts" data-items="{len(report.items)}" data-resolved="{resolved}" '
        f'data-unresolved="{unresolved}" data-errors="{errors}">{state}'
        f"{len(report.items)} items: {resolved} resolved, {unresolved} unresolved, "
        f"{errors} errors. Resolved overall: <b>{'yes' if report.resolved else 'no'}</b>.</p>"
    )
    for row in report.overall:
        lines.append(
            f'<p class="overall" data-model="{_e(row.model)}" data-value="{_e(row.rate)}">'
            f"{_e(row.model)}: <b>{format_pct(row.rate)}</b> resolved, 95% CI {format_ci(row.ci)} "
            f"(mean over {_e(row.strata)} fixtures, n={_e(row.n)})</p>"
        )
    return "\n".join(lines)


def _summary_table(report: RunReport) -> str:
    names = criterion_names()
    head = "".join(f"<th>{_e(c)}</th>" for c in names)
    rows = []
    for s in report.summary:
        cells = "".join(
            _cell(format_pct(s.criteria[c].rate), c, s.criteria[c].rate, "num") for c in names
        )
        tokens = s.measures["tokens_used"].mean
        rows.append(
            f'<tr data-fixture="{_e(s.fixture)}" data-model="{_e(s.model)}"><td>{_e(s.fixture)}</td>'
            f"<td>{_e(s.model)}</td>{_cell(str(s.n), 'n', s.n, 'num')}"
            f"{_cell(str(s.errors), 'errors', s.errors, 'num')}"
            f"{_cell(str(s.resolved), 'resolved', s.resolved, 'num')}"
            f"{_cell(format_pct(s.rate), 'rate', s.rate, 'num')}{_cell(format_ci(s.ci), 'ci')}"
            f"{cells}{_cell(_num(tokens), 'tokens_mean', tokens, 'num')}</tr>"
        )
    return (
        '<table id="summary"><tr><th>fixture</th><th>model</th><th>n</th><th>errors</th>'
        f"<th>resolved</th><th>rate</th><th>95% CI</th>{head}<th>mean tokens</th></tr>"
        + "".join(rows)
        + "</table>"
    )


def _comparison(cmp: Comparison) -> str:
    o = cmp.overall
    passed = cmp.gate.passed
    parts = [
        f'<h2>Comparison with baseline</h2><p class="meta">baseline: <code>{_e(cmp.baseline)}</code>; '
        f"threshold ±{100 * cmp.threshold:.1f} pp; wins/losses/ties "
        f"{cmp.wins}/{cmp.losses}/{cmp.ties}</p>",
        f'<p id="overall-delta" data-value="{_e(o.delta)}" data-verdict="{_e(o.verdict)}">'
        f"Overall: <b>{_e(o.verdict)}</b>, Δ {format_pp(o.delta)}, 95% CI {format_ci_pp(o.ci)}</p>",
        f'<p id="gate" data-passed="{str(passed).lower()}" class="{"gate-pass" if passed else "gate-fail"}">'
        f"Gate (--fail-on regression): {'passes' if passed else 'FAILS: ' + _e('; '.join(cmp.gate.reasons))}</p>",
    ]
    if cmp.error:
        parts.append(f'<p class="gate-fail">Comparison failed: {_e(cmp.error)}</p>')
    for side, missing in (
        ("candidate", cmp.missing_in_candidate),
        ("baseline", cmp.missing_in_baseline),
    ):
        if missing:
            names = ", ".join(m.label() for m in missing)
            parts.append(f'<p id="missing-in-{side}">Missing in the {side}: {_e(names)}</p>')
    parts.append('<div class="chart" id="chart-forest"></div>')
    rows = "".join(
        f'<tr data-fixture="{_e(f.fixture)}" data-model="{_e(f.model)}"><td>{_e(f.fixture)}</td>'
        f"<td>{_e(f.model)}</td>{_cell(format_pct(f.baseline_rate), 'baseline_rate', f.baseline_rate, 'num')}"
        f"{_cell(format_pct(f.candidate_rate), 'candidate_rate', f.candidate_rate, 'num')}"
        f"{_cell(format_pp(f.delta), 'delta', f.delta, 'num')}"
        f"{_cell(format_ci_pp(f.ci), 'ci')}"
        f"{_cell(f.verdict, 'verdict', f.verdict)}</tr>"
        for f in cmp.fixtures
    )
    parts.append(
        '<table id="comparison-table"><tr><th>fixture</th><th>model</th><th>baseline</th>'
        f"<th>candidate</th><th>Δ</th><th>95% CI</th><th>verdict</th></tr>{rows}</table>"
    )
    return "\n".join(parts)


def _rel(target: Path, base: Path) -> str:
    return Path(os.path.relpath(target, base)).as_posix()


def _item_table(items: Sequence[ItemResult]) -> str:
    rows = "".join(
        f'<tr data-key="{_e(i.key)}"><td><a href="#{_anchor(i.key)}">{_e(i.key)}</a></td>'
        f'<td class="{_e(i.status)}">{_e(i.status)}</td>'
        f"<td>{_e(', '.join(i.failed_criteria) or '-')}</td>"
        f"{_cell(_num(i.measure('tokens_used')), 'tokens_used', i.measure('tokens_used'), 'num')}"
        f"{_cell(_num(i.measure('turns')), 'turns', i.measure('turns'), 'num')}"
        f"{_cell(_num(i.facts.wall_time_s, 2), 'wall_time_s', i.facts.wall_time_s, 'num')}</tr>"
        for i in items
    )
    return (
        '<table id="items"><tr><th>item</th><th>status</th><th>failed criteria</th><th>tokens</th>'
        f"<th>turns</th><th>wall s</th></tr>{rows}</table>"
    )


def _drilldown(item: ItemResult, story: ItemStory | None, base: Path, item_dir: Path) -> str:
    anchor = _anchor(item.key)
    out = [
        f'<details class="item" id="{anchor}" data-timeline="tl-{anchor}" data-key="{_e(item.key)}">',
        f'<summary><b>{_e(item.key)}</b> — <span class="{_e(item.status)}">{_e(item.status)}</span></summary>',
    ]
    reasons = item_reasons(item)
    if reasons:
        out.append("<p>Why:</p><ul>" + "".join(f"<li>{_e(r)}</li>" for r in reasons) + "</ul>")
    if item.facts.agent_error:
        out.append(f"<p>Agent error: <code>{_e(item.facts.agent_error[:500])}</code></p>")
    if story is None or story.problem:
        problem = story.problem if story is not None else "not readable"
        out.append(f'<p class="meta">Item directory: {_e(problem)}</p>')
    if story is None:
        out.append("</details>")
        return "".join(out)
    answers = "".join(
        f'<tr class="{a.status}"><td>{_e(a.file)}</td><td>{_e(a.worker)}</td><td class="num">{_e(a.expected)}</td>'
        f'<td class="num">{_e(", ".join(a.got) or "—")}</td><td>{a.status}</td></tr>'
        for a in story.answers
    )
    out.append(
        '<p>Answers against expected:</p><table class="answers"><tr><th>shard</th><th>worker</th>'
        f"<th>expected</th><th>answered</th><th></th></tr>{answers}</table>"
    )
    children = "".join(
        f"<tr><td>{_e(c.name)}</td><td><code>{_e(c.child_id)}</code></td><td>{_e(c.spawned_at)}</td>"
        f"<td>{'deleted' if c.deleted else 'live'}</td><td>{_e(', '.join(c.receipts) or 'none')}</td></tr>"
        for c in story.children
    )
    out.append(
        "<p>Children (depth 1) and receipts:</p><table><tr><th>name</th><th>child id</th><th>spawned</th>"
        f"<th>state</th><th>receipts</th></tr>{children}</table>"
    )
    out.append(f'<div class="chart" id="tl-{anchor}"></div>')
    events = "".join(
        f'<tr><td class="num">{"" if e.offset_s is None else f"+{e.offset_s:.3f} s"}</td><td>{e.kind}</td>'
        f"<td>{_e(e.name)}</td><td>{_e(e.detail[:200])}</td></tr>"
        for e in story.timeline
    )
    out.append(
        "<details><summary>Timeline events</summary><table><tr><th>time</th><th>event</th><th>child</th>"
        f"<th>detail</th></tr>{events}</table></details>"
    )
    files = "".join(
        f'<li><a href="{_e(_rel(item_dir / f, base))}">{_e(f)}</a></li>' for f in story.files
    )
    out.append(f'<p>Files:</p><ul class="files">{files}</ul></details>')
    return "".join(out)


def render_html(
    report: RunReport,
    run_dir: Path,
    stories: Mapping[str, ItemStory],
    out_dir: Path | None = None,
) -> str:
    """The whole page; ``stories`` by item key (an item without one shows its result only).
    Links to item files are relative to ``out_dir`` (default ``run_dir``)."""
    from plotly.offline import get_plotlyjs  # lazily: only rendering a page needs plotly

    base = (out_dir or run_dir).resolve()
    run_dir = run_dir.resolve()
    specs: dict[str, Any] = {"charts": {}, "timelines": {}}
    body = [_header(report)]
    body.append("<h2>Resolved rate per fixture × model</h2>")
    body.append('<div class="chart" id="chart-rates"></div>')
    specs["charts"]["chart-rates"] = charts.rates_figure(report.summary)
    body.append(_summary_table(report))
    body.append("<h2>Criteria: how often each one fails</h2>")
    body.append('<div class="chart" id="chart-criteria"></div>')
    specs["charts"]["chart-criteria"] = charts.criteria_figure(report.summary)
    if report.comparison is not None:
        body.append(_comparison(report.comparison))
        specs["charts"]["chart-forest"] = charts.forest_figure(report.comparison)
    body.append("<h2>Tokens, turns and wall time</h2>")
    for measure, figure in charts.measure_figures(report.items).items():
        body.append(f'<div class="chart" id="chart-{measure}"></div>')
        specs["charts"][f"chart-{measure}"] = figure
    body.append("<h2>Items</h2>")
    body.append(_item_table(report.items))
    for item in report.items:
        story = stories.get(item.key)
        if story is not None and story.timeline:
            specs["timelines"][f"tl-{_anchor(item.key)}"] = charts.timeline_figure(story.timeline)
        body.append(_drilldown(item, story, base, run_dir / "items" / item.item_dir))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>swarm-harness {_e(report.run_id)}</title><style>{_CSS}</style>"
        f"<script>{get_plotlyjs()}</script></head><body>{''.join(body)}"
        f"{_json_script('chart-data', specs)}<script>{_JS}</script></body></html>\n"
    )
