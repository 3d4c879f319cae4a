"""``report.html``: one self-contained page per run, its verdict first.

Offline and light by construction: the charts are inline SVG (:mod:`harness.report.charts`;
tooltips are SVG titles), styles are inline, a few lines of script only filter the items
table, and the only links are relative ones to the items' own files. So the page opens from
a CI artifact with no network and weighs kilobytes per item, not a chart library's
megabytes.
"""

from __future__ import annotations

import html
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.model.comparison import Comparison, CostComparison, CostRatio, fail_on_parts
from harness.model.item import ItemResult
from harness.model.report import RunReport
from harness.model.story import ItemStory
from harness.model.summary import FixtureSummary
from harness.model.text import (
    baseline_label,
    budget_line,
    cost_comparison_line,
    cost_text,
    efficiency_line,
    format_amount,
    format_ci,
    format_ci_pp,
    format_duration,
    format_pct,
    format_per_resolved,
    format_per_resolved_ci,
    format_pp,
    format_ratio,
    format_ratio_ci,
    format_usd,
    format_when,
    item_cause,
    item_reasons,
    plural,
    sequential_line,
    unit_label,
    unpriced_line,
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
#summary td,#summary th{padding:3px 6px}td small{display:block;color:#555}
.wide{overflow-x:auto}
.resolved{color:#007a55}.unresolved{color:#b34700}.error{color:#8a1f8a}
.right{color:#007a55}.wrong{color:#b34700}.missing{color:#8a1f8a}
.meta{color:#555}details.item{margin:4px 0;border:1px solid #e3e3e3;padding:4px 8px}
details.item summary{cursor:pointer}.files{columns:2;font-size:12px}code{font-size:12px}
svg.chart{display:block;margin:8px 0;max-width:100%;height:auto}
.banner{margin:16px 0 8px;padding:12px 16px;border-radius:6px;font-size:16px;color:#fff}
.banner>b{font-size:18px}.banner .why{font-size:14px;margin-top:4px}
.banner.pass{background:#007a55}.banner.fail{background:#b3261e}.banner.stopped{background:#8a6d00}
.banner .budget{font-size:16px;margin-bottom:6px}
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


def _cell(text: str, field: str, value: object = None, css: str = "", extra: str = "") -> str:
    raw = "" if value is None else f' data-value="{_e(value)}"'
    cls = f' class="{css}"' if css else ""
    return f'<td data-field="{field}"{raw}{cls}{extra}>{_e(text)}</td>'


def _budget(report: RunReport, run_dir: Path, tag: str, css: str) -> str:
    """The budget line (``id="budget"``): what the run spent of its limits, or that the
    budget ran out (why, and how to finish the items that did not start)."""
    b, line = report.budget, budget_line(report)
    if b is None or line is None:
        return ""
    attrs = (
        f'id="budget" class="{css}" data-exhausted="{str(b.exhausted).lower()}" '
        f'data-spent-usd="{_e(b.spent_usd)}" data-spent-tokens="{b.spent_tokens}"'
        + ("" if b.max_cost_usd is None else f' data-max-usd="{_e(b.max_cost_usd)}"')
        + ("" if b.max_tokens is None else f' data-max-tokens="{b.max_tokens}"')
    )
    return f"<{tag} {attrs}>{_e(line.replace('RUN', str(run_dir)))}</{tag}>"


def _cost_gate_fails(report: RunReport) -> tuple[str, ...]:
    """The cost gate's reasons when this run gates on cost (``--fail-on cost``) and it fails."""
    cmp = report.comparison
    if cmp is None or "cost" not in fail_on_parts(report.options.fail_on):
        return ()
    return cmp.failing(("cost",))


def _banner(report: RunReport, run_dir: Path) -> str:
    """The verdict, first: resolved or not (or that the budget ran out, and then why), the
    comparison's verdict and the gate's result with its reasons, coloured (green: all good;
    red: something failed; amber: stopped)."""
    cmp = report.comparison
    gate_failed = cmp is not None and (not cmp.gate.passed or bool(_cost_gate_fails(report)))
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
    if report.budget is not None and report.budget.exhausted:
        parts.append(_budget(report, run_dir, "div", "why budget"))  # why the run stopped
    if cmp is not None:
        o = cmp.overall
        cost = ""
        if cmp.cost is not None:
            c = cmp.cost.overall
            unit = unit_label(cmp.cost.unit)
            cost = f" Cost per item: <b>{_e(c.verdict)}</b>, {format_ratio(c.ratio)} ({unit})."
        parts.append(
            f'<div class="why">vs {_e(baseline_label(cmp))}: <b>{_e(o.verdict)}</b>, '
            f"Δ {format_pp(o.delta)}, 95% CI {format_ci_pp(o.ci)}.{cost} Gate: "
            + ("passes" if cmp.gate.passed else "FAILS — " + _e("; ".join(cmp.gate.reasons)))
            + "</div>"
        )
        cost_fails = _cost_gate_fails(report)
        if cost_fails:
            parts.append(f'<div class="why">Cost gate FAILS — {_e("; ".join(cost_fails))}</div>')
    if report.triage:
        top = report.triage[0]
        parts.append(f'<div class="why">Most common failure: {_e(top.label)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _header(report: RunReport, run_dir: Path) -> str:
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
    lines.append(_total_cost(report.items))
    if report.budget is not None and not report.budget.exhausted:
        lines.append(_budget(report, run_dir, "p", "meta budget"))
    for row in report.overall:
        lines.append(
            f'<p class="overall" data-model="{_e(row.model)}" data-value="{_e(row.rate)}">'
            f"{_e(row.model)}: <b>{format_pct(row.rate)}</b> resolved, 95% CI {format_ci(row.ci)} "
            f"(mean over {plural(row.strata, 'fixture')}, n={row.n})</p>"
        )
    lines.extend(f'<p class="meta">Note: {_e(note)}</p>' for note in report.notes)
    unpriced = unpriced_line(report)
    if unpriced is not None:
        lines.append(f'<p class="meta" id="unpriced">Note: {_e(unpriced)}</p>')
    return "\n".join(lines)


def _total_cost(items: Sequence[ItemResult]) -> str:
    """What every item of the run cost together (errored ones too: they may have spent
    before failing), ``n/a`` when an item that used tokens has no price; and the tokens."""
    tokens = sum(i.score.tokens_used for i in items)
    missing = sum(1 for i in items if i.cost_usd is None and i.score.tokens_used > 0)
    priced = [i.cost_usd for i in items if i.cost_usd is not None]
    usd = math.fsum(priced) if priced and not missing else None
    why = f" ({plural(missing, 'item')} without a price)" if missing else ""
    value = "" if usd is None else f' data-value="{_e(usd)}"'
    return (
        f'<p id="total-cost"{value} data-tokens="{tokens}" data-unpriced="{missing}">'
        f"Cost: <b>{_e(format_usd(usd))}</b> in total{_e(why)}; {tokens:,} tokens.</p>"
    )


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
        mean_cost = s.measures["cost_usd"].mean if not s.unpriced else None
        rows.append(
            f'<tr data-fixture="{_e(s.fixture)}" data-model="{_e(s.model)}"><td>{_e(s.fixture)}</td>'
            f"<td>{_e(s.model)}</td>{_cell(str(s.n), 'n', s.n, 'num')}"
            f"{_cell(str(s.errors), 'errors', s.errors, 'num')}"
            f"{_cell(str(s.resolved), 'resolved', s.resolved, 'num')}"
            f"{_cell(format_pct(s.rate), 'rate', s.rate, 'num')}{_cell(format_ci(s.ci), 'ci')}"
            f"{cells}{_cell(_num(tokens), 'tokens_mean', tokens, 'num')}"
            f"{_cell(format_usd(mean_cost), 'cost_mean', mean_cost, 'num')}"
            f"{_per_resolved_cell(s)}</tr>"
        )
    return (
        '<div class="wide"><table id="summary"><tr><th>fixture</th><th>model</th><th>n</th><th>errors</th>'
        f"<th>resolved</th><th>rate</th><th>95% CI</th>{head}<th>mean tokens</th>"
        "<th>mean cost</th><th>cost / resolved item</th></tr>" + "".join(rows) + "</table></div>"
    )


def _per_resolved_cell(s: FixtureSummary) -> str:
    """Cost per resolved item in USD, or in tokens when an item has no price, its interval
    under it; a lower bound says so. The whole sentence is the cell's title."""
    unit, entry = "usd", s.cost_per_resolved_usd
    if entry is None:
        unit, entry = "tokens", s.tokens_per_resolved
    bound = "at least " if not s.usage_complete else ""
    full = format_per_resolved(entry, unit)
    if entry is None or entry.value is None:
        return _cell(full, "cost_per_resolved", None, "num", f' data-unit="{unit}"')
    interval = format_per_resolved_ci(entry, unit)
    ci = f"<small>{_e(interval)}</small>" if interval else ""
    return (
        f'<td data-field="cost_per_resolved" data-value="{_e(entry.value)}" class="num" '
        f'data-unit="{unit}" title="{_e(bound + full)}">'
        f"{_e(bound + format_amount(entry.value, unit))}{ci}</td>"
    )


def _cost_row(r: CostRatio, unit: str) -> str:
    return (
        f'<tr data-fixture="{_e(r.fixture)}" data-model="{_e(r.model)}"><td>{_e(r.fixture)}</td>'
        f"<td>{_e(r.model)}</td>"
        f"{_cell(format_amount(r.mean_base, unit), 'mean_base', r.mean_base, 'num')}"
        f"{_cell(format_amount(r.mean_cand, unit), 'mean_cand', r.mean_cand, 'num')}"
        f"{_cell(format_ratio(r.ratio), 'ratio', r.ratio, 'num')}"
        f"{_cell(format_ratio_ci(r.ci), 'ci')}"
        f"{_cell(r.verdict, 'verdict', r.verdict)}<td>{_e(r.reason or '')}</td></tr>"
    )


def _cost_comparison(cost: CostComparison, gated: bool) -> str:
    """The cost comparison: the overall ratio of mean cost per item with its verdict, the
    cost gate, the notes, a row per fixture x model."""
    o = cost.overall
    unit = unit_label(cost.unit)
    passed = cost.gate.passed
    gate = "passes" if passed else "FAILS: " + _e("; ".join(cost.gate.reasons))
    parts = [
        f"<h3>Cost per item ({unit}), candidate / baseline</h3>",
        f'<p id="cost-overall" data-verdict="{_e(o.verdict)}" data-value="{_e(o.ratio)}" '
        f'data-unit="{_e(cost.unit)}" data-complete="{str(cost.complete).lower()}">'
        f"Overall: <b>{_e(o.verdict)}</b>, {format_ratio(o.ratio)}, 95% CI "
        f"{format_ratio_ci(o.ci)}</p>",
        f'<p class="meta">{_e(cost_comparison_line(cost))}</p>',
        f'<p id="cost-gate" data-passed="{str(passed).lower()}" data-gated="{str(gated).lower()}" '
        f'class="{"gate-pass" if passed else "gate-fail"}">Cost gate (--fail-on cost): {gate}'
        f"{'' if gated else ' (this run does not gate on cost)'}</p>",
    ]
    rows = "".join(_cost_row(r, cost.unit) for r in cost.fixtures)
    parts.append(
        '<table id="cost-table"><tr><th>fixture</th><th>model</th><th>baseline mean</th>'
        "<th>candidate mean</th><th>ratio</th><th>95% CI</th><th>verdict</th><th>why</th>"
        f"</tr>{rows}</table>"
    )
    return "\n".join(parts)


def _sequential_table(report: RunReport) -> str:
    """``--trials auto``: trials run per cell, why it stopped, how it ended ("" otherwise)."""
    rows = [s for s in report.summary if s.sequential is not None]
    if not rows:
        return ""
    body = "".join(
        f'<tr data-fixture="{_e(s.fixture)}" data-model="{_e(s.model)}"><td>{_e(s.fixture)}</td>'
        f"<td>{_e(s.model)}</td>"
        f"{_cell(str(s.sequential.launched), 'trials', s.sequential.launched, 'num')}"
        f"{_cell(str(s.stop_reason), 'stop_reason', s.stop_reason)}"
        f"{_cell(str(s.sequential.fixed_trials or '—'), 'fixed_trials', s.sequential.fixed_trials, 'num')}"
        f"<td>{_e((sequential_line(s) or '').removeprefix('trials auto: '))}</td></tr>"
        for s in rows
        if s.sequential is not None
    )
    return (
        "<h2>Trials auto</h2>"
        '<table id="sequential"><tr><th>fixture</th><th>model</th><th>trials run</th>'
        "<th>stop reason</th><th>fixed design, same power</th><th>how it ended</th></tr>"
        f"{body}</table>"
    )


def _comparison(cmp: Comparison, fail_on: str = "") -> str:
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
    seq = cmp.sequential
    if seq is not None:
        cells = f": {', '.join(seq.regressed_cells)}" if seq.regressed_cells else ""
        parts.insert(
            2,
            f'<p id="sequential-verdict" data-status="{_e(seq.status)}">Sequential verdict '
            f"(--trials auto, anytime-valid, alpha {seq.alpha:.3g} over "
            f"{plural(seq.cells, 'cell')}; what the gate reads): <b>{_e(seq.status)}</b>"
            f"{_e(cells)}. The fixed-sample verdict is for reference only after a stop that "
            "depended on the results.</p>",
        )
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
    gated = "cost" in fail_on_parts(fail_on)
    if cmp.cost is not None:
        parts.append(_cost_comparison(cmp.cost, gated))
    elif gated:
        why = "; ".join(cmp.failing(("cost",)))
        parts.append(
            '<p id="cost-gate" data-passed="false" data-gated="true" class="gate-fail">'
            f"Cost gate (--fail-on cost): FAILS: {_e(why)}</p>"
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
        f"{_cell(format_usd(i.cost_usd), 'cost_usd', i.cost_usd, 'num')}"
        f"{_cell(_num(i.measure('turns')), 'turns', i.measure('turns'), 'num')}"
        f"{_cell(_num(i.facts.wall_time_s, 2), 'wall_time_s', i.facts.wall_time_s, 'num')}</tr>"
        for i in items
    )
    return (
        f'<table id="items" data-shown="{len(items)}"><tr><th>item</th><th>status</th>'
        f"<th>why</th><th>tokens</th><th>cost</th><th>turns</th><th>wall s</th></tr>{rows}</table>"
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
        ("cost", cost_text(item)),
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


def _cost_against_rate(report: RunReport) -> str:
    """Cost per resolved item against resolved rate, a point per model, with the
    cheaper-and-better front named; empty when no model has a point."""
    view = charts.cost_view(report.items, report.overall)
    chart = charts.cost_chart(view)
    if chart is None:
        return ""
    front = charts.front_models(view)
    parts = [
        "<h2>Cost against resolved rate</h2>",
        f'<p id="cost-vs-rate" class="meta" data-unit="{view.unit}" '
        f'data-front="{_e(" ".join(front))}">A point per model: its total '
        f"{'cost' if view.unit == 'usd' else 'tokens'} over its resolved items (every fixture's "
        "scored items pooled) against its resolved rate (the mean over fixtures). Outlined and "
        f"joined: the cheaper-and-better front ({_e(', '.join(front))}), the models no other "
        "beats on both.</p>",
        chart,
    ]
    if view.unit == "tokens" and view.unpriced:
        parts.append(
            f'<p class="meta">In tokens: {plural(view.unpriced, "scored item")} '
            "have no price, so no model's cost is in USD.</p>"
        )
    parts.extend(f'<p class="meta">No point for {_e(why)}.</p>' for why in view.left_out)
    return "\n".join(parts)


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
    body = [_banner(report, run_dir), _header(report, run_dir), _triage(report)]
    body.append("<h2>Resolved rate per fixture × model</h2>")
    body.append(charts.rates_chart(report.summary))
    body.append(_summary_table(report))
    body.append(_sequential_table(report))
    body.append(_cost_against_rate(report))
    criteria = charts.criteria_chart(report.summary)
    if criteria is not None:
        body.append("<h2>Criteria: how often each one fails</h2>")
        body.append(criteria)
    if report.comparison is not None:
        body.append(_comparison(report.comparison, report.options.fail_on))
    measures = charts.measure_charts(report.items)
    if measures:
        body.append("<h2>Per item: cost, tokens, turns, wall time and efficiency</h2>")
        body.append(
            '<p class="meta">The spread over the scored items of each fixture × model (box: '
            "quartiles and median; a dot per item); a figure every item shares is left out.</p>"
        )
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
