"""``report.html``: one self-contained page per run, its verdict first.

Offline and light by construction: the charts are inline SVG (:mod:`harness.report.charts`;
tooltips are SVG titles), styles are inline, a few lines of script only filter the items
table, and the only links are relative ones to the items' own files. So the page opens from
a CI artifact with no network and weighs kilobytes per item, not a chart library's
megabytes.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.model.comparison import Comparison
from harness.model.item import ItemResult
from harness.model.report import RunReport
from harness.model.story import ItemStory
from harness.model.text import (
    baseline_label,
    efficiency_line,
    format_ci,
    format_ci_pp,
    format_duration,
    format_pct,
    format_pp,
    format_when,
    item_cause,
    item_reasons,
    plural,
    usage_line,
    verdict_line,
)
from harness.report import charts
from scorers.criteria import criterion_names

HTML_FILE = "report.html"

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 24px 48px;color:#222}
h1{font-size:20px;margin:16px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}
.resolved{color:#007a55}.unresolved{color:#b34700}.error{color:#8a1f8a}
.right{color:#007a55}.wrong{color:#b34700}.missing{color:#8a1f8a}
.meta{color:#555}details.item{margin:4px 0;border:1px solid #e3e3e3;padding:4px 8px}
details.item summary{cursor:pointer}.files{columns:2;font-size:12px}code{font-size:12px}
svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}
.banner{margin:16px 0 8px;padding:12px 16px;border-radius:6px;font-size:16px;color:#fff}
.banner>b{font-size:18px}.banner .why{font-size:14px;margin-top:4px}
.banner.pass{background:#007a55}.banner.fail{background:#b3261e}.banner.stopped{background:#8a6d00}
.gate-pass{color:#007a55;font-weight:600}.gate-fail{color:#b3261e;font-weight:600}
.filters{margin:8px 0}.filters label{margin-right:16px}
"""

#: Filters the items table and the drill-downs by status and failed criterion. Nothing
#: else is scripted: the charts are drawn by the browser from the SVG itself.
_JS = """
(function(){
  const status = document.getElementById('filter-status');
  const criterion = document.getElementById('filter-criterion');
  const apply = () => {
    const s = status.value, c = criterion.value;
    let shown = 0;
    document.querySelectorAll('[data-status]').forEach((el) => {
      const ok = (!s || el.dataset.status === s) &&
        (!c || (' ' + el.dataset.failed + ' ').includes(' ' + c + ' '));
      el.hidden = !ok;
      if (ok && el.tagName === 'TR') shown += 1;
    });
    document.getElementById('items').dataset.shown = String(shown);
  };
  status.addEventListener('change', apply);
  criterion.addEventListener('change', apply);
  const open = () => {
    const target = location.hash && document.getElementById(location.hash.slice(1));
    if (target && target.tagName === 'DETAILS') target.open = true;
  };
  window.addEventListener('hashchange', open);
  open();
  apply();
})();
"""


def _e(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _num(value: object, digits: int = 0) -> str:
    return "n/a" if not isinstance(value, int | float) else f"{value:,.{digits}f}"


def _anchor(key: str) -> str:
    return "item-" + "".join(c if c.isalnum() else "-" for c in key)


def _cell(text: str, field: str, value: object = None, css: str = "") -> str:
    raw = "" if value is None else f' data-value="{_e(value)}"'
    cls = f' class="{css}"' if css else ""
    return f'<td data-field="{field}"{raw}{cls}>{_e(text)}</td>'


def _banner(report: RunReport) -> str:
    """The verdict, first: resolved or not, the comparison's verdict and the gate's result
    with its reasons, coloured (green: all good; red: something failed; amber: stopped)."""
    cmp = report.comparison
    gate_failed = cmp is not None and not cmp.gate.passed
    if report.interrupted or report.not_started:
        tone = "stopped"
    elif report.resolved and not gate_failed:
        tone = "pass"
    else:
        tone = "fail"
    parts = [
        f'<div id="banner" class="banner {tone}" data-resolved="{str(report.resolved).lower()}"'
    ]
    if cmp is not None:
        parts.append(
            f' data-gate="{str(cmp.gate.passed).lower()}" data-verdict="{_e(cmp.overall.verdict)}"'
        )
    parts.append(f"><b>{_e(verdict_line(report).split('; ')[0])}</b>")
    if cmp is not None:
        o = cmp.overall
        parts.append(
            f'<div class="why">vs {_e(baseline_label(cmp))}: <b>{_e(o.verdict)}</b>, '
            f"Δ {format_pp(o.delta)}, 95% CI {format_ci_pp(o.ci)}. Gate: "
            + ("passes" if cmp.gate.passed else "FAILS — " + _e("; ".join(cmp.gate.reasons)))
            + "</div>"
        )
    if report.triage:
        top = report.triage[0]
        parts.append(f'<div class="why">Most common failure: {_e(top.label)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _header(report: RunReport) -> str:
    o = report.options
    took = "" if report.duration_s is None else format_duration(report.duration_s)
    facts = [
        ("run", report.run_id),
        ("date", format_when(report.started_at or report.created_at)),
        ("took", took),
        ("agent", o.agent + (f" ({o.agent_version})" if o.agent_version else "")),
        ("models", ", ".join(o.models)),
        ("fixtures", ", ".join(sorted({i.fixture for i in report.items}))),
        ("trials", o.trials),
        ("seed", o.seed),
        ("harness", report.harness_version),
    ]
    resolved, unresolved, errors = (report.count(s) for s in ("resolved", "unresolved", "error"))
    lines = [
        f"<h1>swarm-harness run {_e(report.run_id)}</h1>",
        '<p class="meta">'
        + " · ".join(f"{k}: <b>{_e(v)}</b>" for k, v in facts if v not in (None, ""))
        + "</p>",
        f'<p id="counts" data-items="{len(report.items)}" data-resolved="{resolved}" '
        f'data-unresolved="{unresolved}" data-errors="{errors}">'
        f"{plural(len(report.items), 'item')}: {resolved} resolved, {unresolved} unresolved, "
        f"{plural(errors, 'error')}.</p>",
    ]
    for row in report.overall:
        lines.append(
            f'<p class="overall" data-model="{_e(row.model)}" data-value="{_e(row.rate)}">'
            f"{_e(row.model)}: <b>{format_pct(row.rate)}</b> resolved, 95% CI {format_ci(row.ci)} "
            f"(mean over {plural(row.strata, 'fixture')}, n={row.n})</p>"
        )
    lines.extend(f'<p class="meta">Note: {_e(note)}</p>' for note in report.notes)
    return "\n".join(lines)


#: Items linked per failure group; the rest are counted.
TRIAGE_LINKS = 5


def _item_link(key: str) -> str:
    return f'<a href="#{_anchor(key)}">{_e(key)}</a>'


def _triage(report: RunReport) -> str:
    if not report.triage:
        return ""
    rows = "".join(
        f'<tr data-criterion="{_e(g.criterion)}"><td>{_e(g.criterion)}</td><td>{_e(g.signature)}</td>'
        f"{_cell(str(len(g.keys)), 'count', len(g.keys), 'num')}"
        f"<td>{', '.join(_item_link(k) for k in g.keys[:TRIAGE_LINKS])}"
        f"{' …' if len(g.keys) > TRIAGE_LINKS else ''}</td></tr>"
        for g in report.triage
    )
    return (
        "<h2>How items failed</h2>"
        '<table id="triage"><tr><th>criterion</th><th>what</th><th>items</th><th>which</th></tr>'
        f"{rows}</table>"
    )


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
        f"<h2>Comparison with {_e(baseline_label(cmp))}</h2>"
        f'<p class="meta">baseline: <code>{_e(cmp.baseline)}</code>; threshold '
        f"±{100 * cmp.threshold:.1f} pp; wins/losses/ties {cmp.wins}/{cmp.losses}/{cmp.ties}</p>",
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
    if cmp.fixtures:
        parts.append(charts.forest_chart(cmp))
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


def _filters(items: Sequence[ItemResult]) -> str:
    statuses = sorted({i.status for i in items})
    failed = [c for c in criterion_names() if any(c in i.failed_criteria for i in items)]
    status_opts = "".join(f'<option value="{s}">{s}</option>' for s in statuses)
    crit_opts = "".join(f'<option value="{c}">{c}</option>' for c in failed)
    return (
        '<div class="filters"><label>status <select id="filter-status"><option value="">any'
        f"</option>{status_opts}</select></label><label>failed criterion "
        f'<select id="filter-criterion"><option value="">any</option>{crit_opts}</select>'
        "</label></div>"
    )


def _item_table(items: Sequence[ItemResult]) -> str:
    rows = "".join(
        f'<tr data-key="{_e(i.key)}" data-status="{i.status}" data-failed="{" ".join(i.failed_criteria)}">'
        f'<td><a href="#{_anchor(i.key)}">{_e(i.key)}</a></td>'
        f'<td class="{i.status}">{i.status}</td>'
        f"<td>{_e(item_cause(i) or '-')}</td>"
        f"{_cell(_num(i.measure('tokens_used')), 'tokens_used', i.measure('tokens_used'), 'num')}"
        f"{_cell(_num(i.measure('turns')), 'turns', i.measure('turns'), 'num')}"
        f"{_cell(_num(i.facts.wall_time_s, 2), 'wall_time_s', i.facts.wall_time_s, 'num')}</tr>"
        for i in items
    )
    return (
        f'<table id="items" data-shown="{len(items)}"><tr><th>item</th><th>status</th>'
        f"<th>why</th><th>tokens</th><th>turns</th><th>wall s</th></tr>{rows}</table>"
    )


def _drilldown(item: ItemResult, story: ItemStory | None, base: Path, item_dir: Path) -> str:
    anchor = _anchor(item.key)
    out = [
        f'<details class="item" id="{anchor}" data-key="{_e(item.key)}" '
        f'data-status="{item.status}" data-failed="{" ".join(item.failed_criteria)}">',
        f'<summary><b>{_e(item.key)}</b> — <span class="{item.status}">{item.status}</span></summary>',
    ]
    reasons = item_reasons(item)
    if reasons:
        out.append("<p>Why:</p><ul>" + "".join(f"<li>{_e(r)}</li>" for r in reasons) + "</ul>")
    if item.facts.agent_error:
        out.append(f"<p>Agent error: <code>{_e(item.facts.agent_error[:500])}</code></p>")
    for field, line in (
        ("usage", usage_line(item.score)),
        ("efficiency", efficiency_line(item.score)),
    ):
        if line:
            out.append(f'<p class="meta" data-field="{field}">{_e(line)}</p>')
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
    if story.timeline:
        out.append(charts.timeline_chart(story.timeline, f"tl-{anchor}"))
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
    base = (out_dir or run_dir).resolve()
    run_dir = run_dir.resolve()
    body = [_banner(report), _header(report), _triage(report)]
    body.append("<h2>Resolved rate per fixture × model</h2>")
    body.append(charts.rates_chart(report.summary))
    body.append(_summary_table(report))
    criteria = charts.criteria_chart(report.summary)
    if criteria is not None:
        body.append("<h2>Criteria: how often each one fails</h2>")
        body.append(criteria)
    if report.comparison is not None:
        body.append(_comparison(report.comparison))
    measures = charts.measure_charts(report.items)
    if measures:
        body.append("<h2>Tokens, turns and wall time</h2>")
        body.extend(measures.values())
    body.append("<h2>Items</h2>")
    body.append(_filters(report.items))
    body.append(_item_table(report.items))
    for item in report.items:
        story = stories.get(item.key)
        body.append(_drilldown(item, story, base, run_dir / "items" / item.item_dir))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>swarm-harness {_e(report.run_id)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}<script>{_JS}</script></body></html>\n"
    )
