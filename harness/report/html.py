"""``report.html``: one self-contained page per run, its verdict first.

Offline and light by construction: the charts are inline SVG (:mod:`harness.report.charts`;
tooltips are SVG titles), styles are inline, a few lines of script only filter the items
table, and the only links are relative ones to the items' own files. So the page opens from
a CI artifact with no network and weighs kilobytes per item, not a chart library's
megabytes.

A run of several agents (``--agent`` repeated) names the agent in every fixture x model
row (an ``agent`` column and ``data-agent``), its charts name ``fixture · agent · model``,
and the agents stand side by side after the overall rates; a run of one agent has none of
that.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.model.comparison import (
    fail_on_parts,
)
from harness.model.item import ItemResult
from harness.model.provider_text import health_line, item_faults_line
from harness.model.report import RunReport
from harness.model.selftest import PLAY_PRICES
from harness.model.story import ItemStory
from harness.model.summary import FixtureSummary
from harness.model.text import (
    baseline_label,
    budget_line,
    condition_label,
    cost_text,
    efficiency_line,
    format_ci,
    format_ci_pp,
    format_duration,
    format_pct,
    format_pp,
    format_ratio,
    format_usd,
    format_when,
    item_cause,
    item_reasons,
    plural,
    sequential_line,
    several_agents,
    solo_lines,
    unit_label,
    unpriced_line,
    usage_line,
    verdict_line,
)
from harness.report import charts
from harness.report.html_compare import agents_html, comparison_html
from harness.report.html_edits import EDITS_CSS, edits_html
from harness.report.html_parts import (
    esc,
    item_anchor,
    number,
    per_resolved_td,
    row_attrs,
    row_cells,
    row_heads,
    td,
)
from harness.report.html_selftest import selftest_banner, selftest_header, selftest_rows
from scorers.criteria import criterion_names

HTML_FILE = "report.html"

_CSS = (
    """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:0 24px 48px;color:#222}
h1{font-size:20px;margin:16px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}
#summary td,#summary th{padding:3px 6px}#summary th{font-size:12px}td small{display:block;color:#555}
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
    + EDITS_CSS
)

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


def _budget(report: RunReport, run_dir: Path, tag: str, css: str) -> str:
    """The budget line (``id="budget"``): what the run spent of its limits, or that the
    budget ran out (why, and how to finish the items that did not start)."""
    b, line = report.budget, budget_line(report)
    if b is None or line is None:
        return ""
    attrs = (
        f'id="budget" class="{css}" data-exhausted="{str(b.exhausted).lower()}" '
        f'data-spent-usd="{esc(b.spent_usd)}" data-spent-tokens="{b.spent_tokens}"'
        + ("" if b.max_cost_usd is None else f' data-max-usd="{esc(b.max_cost_usd)}"')
        + ("" if b.max_tokens is None else f' data-max-tokens="{b.max_tokens}"')
    )
    return f"<{tag} {attrs}>{esc(line.replace('RUN', str(run_dir)))}</{tag}>"


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
            f' data-gate="{str(cmp.gate.passed).lower()}" data-verdict="{esc(cmp.overall.verdict)}"'
        )
    parts.append(f"><b>{esc(verdict_line(report).split('; ')[0])}</b>")
    if report.budget is not None and report.budget.exhausted:
        parts.append(_budget(report, run_dir, "div", "why budget"))  # why the run stopped
    if cmp is not None:
        o = cmp.overall
        cost = ""
        if cmp.cost is not None:
            c = cmp.cost.overall
            unit = unit_label(cmp.cost.unit)
            cost = f" Cost per item: <b>{esc(c.verdict)}</b>, {format_ratio(c.ratio)} ({unit})."
        shared = (
            f" on {len(cmp.fixtures)} of {cmp.baseline_cells or 0} baseline cells (shared only)"
            if cmp.shared_only
            else ""
        )
        parts.append(
            f'<div class="why">vs {esc(baseline_label(cmp))}{shared}: <b>{esc(o.verdict)}</b>, '
            f"Δ {format_pp(o.delta)}, 95% CI {format_ci_pp(o.ci)}.{cost} Gate: "
            + ("passes" if cmp.gate.passed else "FAILS — " + esc("; ".join(cmp.gate.reasons)))
            + "</div>"
        )
        cost_fails = _cost_gate_fails(report)
        if cost_fails:
            parts.append(f'<div class="why">Cost gate FAILS — {esc("; ".join(cost_fails))}</div>')
    for line in solo_lines(report):  # is the swarm worth it (run --solo)
        parts.append(f'<div class="why solo">{esc(line)}</div>')
    if report.triage:
        top = report.triage[0]
        parts.append(f'<div class="why">Most common failure: {esc(top.label)}</div>')
    parts.append("</div>")
    return "".join(parts)


def _agents_fact(report: RunReport) -> tuple[str, str]:
    """The header's ``agent``, or with several ``agents``: each label with its version."""
    o = report.options
    twins = " (each with its solo twin, +solo)" if o.solo else ""
    if len(o.agents) <= 1:
        return "agent", o.agent + (f" ({o.agent_version})" if o.agent_version else "") + twins
    named = (a.agent + (f" ({a.version})" if a.version else "") for a in o.agents)
    return "agents", ", ".join(named) + twins


def _header(report: RunReport, run_dir: Path) -> str:
    o = report.options
    several = several_agents(report)
    took = "" if report.duration_s is None else format_duration(report.duration_s)
    facts = [
        ("run", report.run_id),
        ("date", format_when(report.started_at or report.created_at)),
        ("took", took),
        _agents_fact(report),
        ("models", ", ".join(o.models)),
        ("fixtures", ", ".join(sorted({i.fixture for i in report.items}))),
        ("trials", o.trials),
        ("seed", o.seed),
        ("harness", report.harness_version),
    ]
    resolved, unresolved, errors = (report.count(s) for s in ("resolved", "unresolved", "error"))
    lines = [
        f"<h1>swarm-harness run {esc(report.run_id)}</h1>",
        '<p class="meta">'
        + " · ".join(f"{k}: <b>{esc(v)}</b>" for k, v in facts if v not in (None, ""))
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
        agent = f' data-agent="{esc(row.agent)}"' if several else ""
        lines.append(
            f'<p class="overall"{agent} data-model="{esc(row.model)}" data-value="{esc(row.rate)}">'
            f"{esc(condition_label(row.agent, row.model, several))}: "
            f"<b>{format_pct(row.rate)}</b> resolved, 95% CI {format_ci(row.ci)} "
            f"(mean over {plural(row.strata, 'fixture')}, n={row.n})</p>"
        )
    if report.provider is not None:
        health = report.provider
        lines.append(
            f'<p class="meta" id="provider" data-healthy="{str(health.healthy).lower()}" '
            f'data-failed-requests="{health.failed_requests}" data-items-lost="{health.items_lost}" '
            f'data-items-retried="{health.items_retried}">{esc(health_line(health))}</p>'
        )
    lines.extend(f'<p class="meta">Note: {esc(note)}</p>' for note in report.notes)
    unpriced = unpriced_line(report)
    if unpriced is not None:
        lines.append(f'<p class="meta" id="unpriced">Note: {esc(unpriced)}</p>')
    return "\n".join(lines)


def _total_cost(items: Sequence[ItemResult]) -> str:
    """What every item of the run cost together (errored ones too: they may have spent
    before failing), ``n/a`` when an item that used tokens has no price; and the tokens."""
    tokens = sum(i.score.tokens_used for i in items)
    missing = sum(1 for i in items if i.cost_usd is None and i.score.tokens_used > 0)
    priced = [i.cost_usd for i in items if i.cost_usd is not None]
    usd = math.fsum(priced) if priced and not missing else None
    why = f" ({plural(missing, 'item')} without a price)" if missing else ""
    value = "" if usd is None else f' data-value="{esc(usd)}"'
    return (
        f'<p id="total-cost"{value} data-tokens="{tokens}" data-unpriced="{missing}">'
        f"Cost: <b>{esc(format_usd(usd))}</b> in total{esc(why)}; {tokens:,} tokens.</p>"
    )


#: Items linked per failure group; the rest are counted.
TRIAGE_LINKS = 5


def _item_link(key: str) -> str:
    return f'<a href="#{item_anchor(key)}">{esc(key)}</a>'


def _triage(report: RunReport) -> str:
    if not report.triage:
        return ""
    rows = "".join(
        f'<tr data-criterion="{esc(g.criterion)}"><td>{esc(g.criterion)}</td><td>{esc(g.signature)}</td>'
        f"{td(str(len(g.keys)), 'count', len(g.keys), 'num')}"
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
    several = several_agents(report)
    names = criterion_names()
    head = "".join(f"<th>{esc(c)}</th>" for c in names)
    rows = []
    for s in report.summary:
        cells = "".join(
            td(format_pct(s.criteria[c].rate), c, s.criteria[c].rate, "num") for c in names
        )
        tokens = s.measures["tokens_used"].mean
        mean_cost = s.measures["cost_usd"].mean if not s.unpriced else None
        rows.append(
            f"<tr {row_attrs(s.fixture, s.agent, s.model, several)}>"
            f"{row_cells(s.fixture, s.agent, s.model, several)}{td(str(s.n), 'n', s.n, 'num')}"
            f"{td(str(s.errors), 'errors', s.errors, 'num')}"
            f"{td(str(s.resolved), 'resolved', s.resolved, 'num')}"
            f"{td(format_pct(s.rate), 'rate', s.rate, 'num')}{td(format_ci(s.ci), 'ci')}"
            f"{cells}{td(number(tokens), 'tokens_mean', tokens, 'num')}"
            f"{td(format_usd(mean_cost), 'cost_mean', mean_cost, 'num')}"
            f"{_per_resolved_cell(s)}</tr>"
        )
    return (
        f'<div class="wide"><table id="summary"><tr>{row_heads(several)}<th>n</th><th>errors</th>'
        f"<th>resolved</th><th>rate</th><th>95% CI</th>{head}<th>mean tokens</th>"
        "<th>mean cost</th><th>cost / resolved item</th></tr>" + "".join(rows) + "</table></div>"
    )


def _per_resolved_cell(s: FixtureSummary) -> str:
    """Cost per resolved item in USD, or in tokens when an item has no price; a lower bound
    says so."""
    unit, entry = "usd", s.cost_per_resolved_usd
    if entry is None:
        unit, entry = "tokens", s.tokens_per_resolved
    bound = "at least " if not s.usage_complete else ""
    return per_resolved_td(entry, unit, "cost_per_resolved", bound)


def _sequential_table(report: RunReport) -> str:
    """``--trials auto``: trials run per cell, why it stopped, how it ended ("" otherwise)."""
    rows = [s for s in report.summary if s.sequential is not None]
    if not rows:
        return ""
    several = several_agents(report)
    body = "".join(
        f"<tr {row_attrs(s.fixture, s.agent, s.model, several)}>"
        f"{row_cells(s.fixture, s.agent, s.model, several)}"
        f"{td(str(s.sequential.launched), 'trials', s.sequential.launched, 'num')}"
        f"{td(str(s.stop_reason), 'stop_reason', s.stop_reason)}"
        f"{td(str(s.sequential.fixed_trials or '—'), 'fixed_trials', s.sequential.fixed_trials, 'num')}"
        f"<td>{esc((sequential_line(s) or '').removeprefix('trials auto: '))}</td></tr>"
        for s in rows
        if s.sequential is not None
    )
    return (
        "<h2>Trials auto</h2>"
        f'<table id="sequential"><tr>{row_heads(several)}<th>trials run</th>'
        "<th>stop reason</th><th>fixed design, same power</th><th>how it ended</th></tr>"
        f"{body}</table>"
    )


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


def _item_row(i: ItemResult, with_agent: bool, money: bool = True) -> str:
    agent_attr = f' data-agent="{esc(i.agent)}"' if with_agent else ""
    agent_cell = f"<td>{esc(i.agent)}</td>" if with_agent else ""
    return (
        f'<tr data-key="{esc(i.key)}" data-status="{i.status}" '
        f'data-failed="{" ".join(i.failed_criteria)}"{agent_attr}>'
        f'<td><a href="#{item_anchor(i.key)}">{esc(i.key)}</a></td>{agent_cell}'
        f'<td class="{i.status}">{i.status}</td>'
        f"<td>{esc(item_cause(i) or '-')}</td>"
        f"{td(number(i.measure('tokens_used')), 'tokens_used', i.measure('tokens_used'), 'num')}"
        + (td(format_usd(i.cost_usd), "cost_usd", i.cost_usd, "num") if money else "")
        + f"{td(number(i.measure('turns')), 'turns', i.measure('turns'), 'num')}"
        f"{td(number(i.facts.wall_time_s, 2), 'wall_time_s', i.facts.wall_time_s, 'num')}</tr>"
    )


def _item_table(items: Sequence[ItemResult], with_agent: bool = False, money: bool = True) -> str:
    """A row per item; its agent in a column of its own and ``data-agent`` in a run of
    several agents (``with_agent``); no cost column for play prices (not ``money``)."""
    rows = "".join(_item_row(i, with_agent, money) for i in items)
    agent = "<th>agent</th>" if with_agent else ""
    cost = "<th>cost</th>" if money else ""
    return (
        f'<table id="items" data-shown="{len(items)}"><tr><th>item</th>{agent}<th>status</th>'
        f"<th>why</th><th>tokens</th>{cost}<th>turns</th><th>wall s</th></tr>{rows}</table>"
    )


def _trajectory_link(item_dir: Path, base: Path) -> str:
    """The item's ATIF trajectory, once ``export`` has written it (how to get it, before)."""
    path = item_dir.parent.parent / "trajectories" / item_dir.name / "trajectory.json"
    if not path.is_file():
        return (
            '<p class="meta" data-field="trajectory">Trajectory: not exported '
            "(<code>swarm-harness export RUN</code> writes it as ATIF)</p>"
        )
    return (
        '<p class="meta" data-field="trajectory">Trajectory (ATIF): '
        f'<a href="{esc(_rel(path, base))}">trajectory.json</a></p>'
    )


def _drilldown(
    item: ItemResult, story: ItemStory | None, base: Path, item_dir: Path, money: bool = True
) -> str:
    anchor = item_anchor(item.key)
    out = [
        f'<details class="item" id="{anchor}" data-key="{esc(item.key)}" '
        f'data-status="{item.status}" data-failed="{" ".join(item.failed_criteria)}">',
        f'<summary><b>{esc(item.key)}</b> — <span class="{item.status}">{item.status}</span></summary>',
    ]
    reasons = item_reasons(item)
    if reasons:
        out.append("<p>Why:</p><ul>" + "".join(f"<li>{esc(r)}</li>" for r in reasons) + "</ul>")
    if item.facts.agent_error:
        out.append(f"<p>Agent error: <code>{esc(item.facts.agent_error[:500])}</code></p>")
    out.append(_trajectory_link(item_dir, base))
    for field, line in (
        ("usage", usage_line(item.score)),
        ("cost", cost_text(item) if money else f"cost: {PLAY_PRICES}"),
        ("efficiency", efficiency_line(item.score)),
        ("provider", item_faults_line(item)),
    ):
        if line:
            out.append(f'<p class="meta" data-field="{field}">{esc(line)}</p>')
    faults = item.facts.provider_faults
    if faults is not None and faults.evidence:
        rows = "".join(
            f'<tr><td>{esc(f.session)}</td><td>{esc(f.kind)}</td><td class="num">'
            f"{'' if f.status is None else f.status}</td><td>{'retried' if f.retried else 'final'}</td>"
            f"<td>{esc(f.message[:200])}</td></tr>"
            for f in faults.evidence
        )
        out.append(
            '<details class="faults"><summary>Provider faults</summary><table><tr><th>session</th>'
            f"<th>kind</th><th>status</th><th></th><th>the provider said</th></tr>{rows}</table></details>"
        )
    if story is None or story.problem:
        problem = story.problem if story is not None else "not readable"
        out.append(f'<p class="meta">Item directory: {esc(problem)}</p>')
    if story is None:
        out.append("</details>")
        return "".join(out)
    answers = "".join(
        f'<tr class="{a.status}"><td>{esc(a.file)}</td><td>{esc(a.worker)}</td><td class="num">{esc(a.expected)}</td>'
        f'<td class="num">{esc(", ".join(a.got) or "—")}</td><td>{a.status}</td></tr>'
        for a in story.answers
    )
    out.append(
        '<p>Answers against expected:</p><table class="answers"><tr><th>shard</th><th>worker</th>'
        f"<th>expected</th><th>answered</th><th></th></tr>{answers}</table>"
    )
    if story.edits is not None:
        out.append(edits_html(story.edits))
    children = "".join(
        f"<tr><td>{esc(c.name)}</td><td><code>{esc(c.child_id)}</code></td><td>{esc(c.spawned_at)}</td>"
        f"<td>{'deleted' if c.deleted else 'live'}</td><td>{esc(', '.join(c.receipts) or 'none')}</td></tr>"
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
        f"<td>{esc(e.name)}</td><td>{esc(e.detail[:200])}</td></tr>"
        for e in story.timeline
    )
    out.append(
        "<details><summary>Timeline events</summary><table><tr><th>time</th><th>event</th><th>child</th>"
        f"<th>detail</th></tr>{events}</table></details>"
    )
    files = "".join(
        f'<li><a href="{esc(_rel(item_dir / f, base))}">{esc(f)}</a></li>' for f in story.files
    )
    out.append(f'<p>Files:</p><ul class="files">{files}</ul></details>')
    return "".join(out)


def _cost_against_rate(report: RunReport) -> str:
    """Cost per resolved item against resolved rate, a point per model (per agent x model
    in a run of several agents), with the cheaper-and-better front named; empty when none
    has a point. ``data-front`` lists the front's labels, separated by `` | ``."""
    several = several_agents(report)
    view = charts.cost_view(report.items, report.overall, several)
    chart = charts.cost_chart(view)
    if chart is None:
        return ""
    front = charts.front_models(view)
    what = "agent × model" if several else "model"
    parts = [
        "<h2>Cost against resolved rate</h2>",
        f'<p id="cost-vs-rate" class="meta" data-unit="{view.unit}" '
        f'data-front="{esc(" | ".join(front))}">A point per {what}: its total '
        f"{'cost' if view.unit == 'usd' else 'tokens'} over its resolved items (every fixture's "
        "scored items pooled) against its resolved rate (the mean over fixtures). Outlined and "
        f"joined: the cheaper-and-better front ({esc(', '.join(front))}), the {what}s no other "
        "beats on both.</p>",
        chart,
    ]
    if view.unit == "tokens" and view.unpriced:
        parts.append(
            f'<p class="meta">In tokens: {plural(view.unpriced, "scored item")} '
            "have no price, so no model's cost is in USD.</p>"
        )
    parts.extend(f'<p class="meta">No point for {esc(why)}.</p>' for why in view.left_out)
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
    several = several_agents(report)
    if report.options.selftest:  # its own verdict first; no rate, no money
        body = [selftest_banner(report), selftest_header(report), selftest_rows(report)]
        return _page(report, [*body, *_items(report, stories, base, run_dir, money=False)])
    body = [_banner(report, run_dir), _header(report, run_dir)]
    if report.agents is not None:
        body.append(agents_html(report.agents))
    body.append(_triage(report))
    body.append(f"<h2>Resolved rate per fixture × {'agent × ' if several else ''}model</h2>")
    body.append(charts.rates_chart(report.summary, several))
    body.append(_summary_table(report))
    body.append(_sequential_table(report))
    body.append(_cost_against_rate(report))
    criteria = charts.criteria_chart(report.summary, several)
    if criteria is not None:
        body.append("<h2>Criteria: how often each one fails</h2>")
        body.append(criteria)
    if report.comparison is not None:
        body.append(comparison_html(report.comparison, report.options.fail_on))
    measures = charts.measure_charts(report.items, several)
    if measures:
        body.append("<h2>Per item: cost, tokens, turns, wall time and efficiency</h2>")
        body.append(
            '<p class="meta">The spread over the scored items of each fixture × model (box: '
            "quartiles and median; a dot per item); a figure every item shares is left out.</p>"
        )
        for measure, chart in measures.items():  # each chart under its own title
            title = charts.MEASURE_TITLES.get(measure, measure)
            body.append(f'<h3 class="chart-title" data-measure="{measure}">{esc(title)}</h3>')
            body.append(chart)
    body.extend(_items(report, stories, base, run_dir))
    return _page(report, body)


def _items(
    report: RunReport,
    stories: Mapping[str, ItemStory],
    base: Path,
    run_dir: Path,
    money: bool = True,
) -> list[str]:
    """The items table, then each item's drill-down (``money``: their costs are money)."""
    several = several_agents(report)
    parts = ["<h2>Items</h2>", _filters(report.items), _item_table(report.items, several, money)]
    parts.extend(
        _drilldown(item, stories.get(item.key), base, run_dir / "items" / item.item_dir, money)
        for item in report.items
    )
    return parts


def _page(report: RunReport, body: Sequence[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>swarm-harness {esc(report.run_id)}</title><style>{_CSS}</style></head>"
        f"<body>{''.join(body)}<script>{_JS}</script></body></html>\n"
    )
