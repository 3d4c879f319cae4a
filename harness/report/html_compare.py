"""report.html's comparisons: a run against its baseline (rates, cost and their gates), and
a run's agents side by side (each against the reference agent; no gate reads those)."""

from __future__ import annotations

from collections.abc import Sequence

from harness.model.agents import AgentsComparison, AgentStanding, AgentVersus
from harness.model.comparison import (
    Comparison,
    CostComparison,
    CostRatio,
    FixtureComparison,
    fail_on_parts,
)
from harness.model.text import (
    baseline_label,
    cost_comparison_line,
    format_amount,
    format_ci,
    format_ci_pp,
    format_pct,
    format_pp,
    format_ratio,
    format_ratio_ci,
    plural,
    unit_label,
    versus_cost_line,
)
from harness.report import charts
from harness.report.html_parts import (
    esc,
    per_resolved_td,
    row_attrs,
    row_cells,
    row_heads,
    td,
)


def _cost_row(r: CostRatio, unit: str, with_agent: bool) -> str:
    return (
        f"<tr {row_attrs(r.fixture, r.agent, r.model, with_agent)}>"
        f"{row_cells(r.fixture, r.agent, r.model, with_agent)}"
        f"{td(format_amount(r.mean_base, unit), 'mean_base', r.mean_base, 'num')}"
        f"{td(format_amount(r.mean_cand, unit), 'mean_cand', r.mean_cand, 'num')}"
        f"{td(format_ratio(r.ratio), 'ratio', r.ratio, 'num')}"
        f"{td(format_ratio_ci(r.ci), 'ci')}"
        f"{td(r.verdict, 'verdict', r.verdict)}<td>{esc(r.reason or '')}</td></tr>"
    )


def _cost_comparison(cost: CostComparison, gated: bool) -> str:
    """The cost comparison: the overall ratio of mean cost per item with its verdict, the
    cost gate, the notes, a row per fixture x model."""
    o = cost.overall
    unit = unit_label(cost.unit)
    passed = cost.gate.passed
    gate = "passes" if passed else "FAILS: " + esc("; ".join(cost.gate.reasons))
    parts = [
        f"<h3>Cost per item ({unit}), candidate / baseline</h3>",
        f'<p id="cost-overall" data-verdict="{esc(o.verdict)}" data-value="{esc(o.ratio)}" '
        f'data-unit="{esc(cost.unit)}" data-complete="{str(cost.complete).lower()}">'
        f"Overall: <b>{esc(o.verdict)}</b>, {format_ratio(o.ratio)}, 95% CI "
        f"{format_ratio_ci(o.ci)}</p>",
        f'<p class="meta">{esc(cost_comparison_line(cost))}</p>',
        f'<p id="cost-gate" data-passed="{str(passed).lower()}" data-gated="{str(gated).lower()}" '
        f'class="{"gate-pass" if passed else "gate-fail"}">Cost gate (--fail-on cost): {gate}'
        f"{'' if gated else ' (this run does not gate on cost)'}</p>",
    ]
    with_agent = any(r.agent for r in cost.fixtures)
    rows = "".join(_cost_row(r, cost.unit, with_agent) for r in cost.fixtures)
    parts.append(
        f'<table id="cost-table"><tr>{row_heads(with_agent)}<th>baseline mean</th>'
        "<th>candidate mean</th><th>ratio</th><th>95% CI</th><th>verdict</th><th>why</th>"
        f"</tr>{rows}</table>"
    )
    return "\n".join(parts)


def _rate_verdict(cmp: Comparison) -> str:
    """The overall resolved-rate verdict: ``<b>regressed</b>, Δ -46.7 pp, 95% CI [...]``."""
    o = cmp.overall
    return f"<b>{esc(o.verdict)}</b>, Δ {format_pp(o.delta)}, 95% CI {format_ci_pp(o.ci)}"


def _missing(cmp: Comparison, candidate: str, baseline: str, attrs: str) -> list[str]:
    """A line per side naming the cells only the other side scored; ``attrs`` are the
    paragraph's attributes, ``{side}`` in them ``candidate`` or ``baseline``."""
    lines = []
    for side, who, missing in (
        ("candidate", candidate, cmp.missing_in_candidate),
        ("baseline", baseline, cmp.missing_in_baseline),
    ):
        if missing:
            names = ", ".join(m.label() for m in missing)
            lines.append(f"<p {attrs.format(side=side)}>Missing in {esc(who)}: {esc(names)}</p>")
    return lines


def _fixture_table(
    fixtures: Sequence[FixtureComparison],
    attrs: str,
    baseline: str = "baseline",
    candidate: str = "candidate",
) -> str:
    """A row per compared fixture x model (x agent, where the comparison has that
    dimension): both rates, their difference with its interval, the verdict. ``baseline``
    and ``candidate`` head the rate columns."""
    with_agent = any(f.agent for f in fixtures)
    rows = "".join(
        f"<tr {row_attrs(f.fixture, f.agent, f.model, with_agent)}>"
        f"{row_cells(f.fixture, f.agent, f.model, with_agent)}"
        f"{td(format_pct(f.baseline_rate), 'baseline_rate', f.baseline_rate, 'num')}"
        f"{td(format_pct(f.candidate_rate), 'candidate_rate', f.candidate_rate, 'num')}"
        f"{td(format_pp(f.delta), 'delta', f.delta, 'num')}"
        f"{td(format_ci_pp(f.ci), 'ci')}"
        f"{td(f.verdict, 'verdict', f.verdict)}</tr>"
        for f in fixtures
    )
    return (
        f"<table {attrs}><tr>{row_heads(with_agent)}<th>{esc(baseline)}</th>"
        f"<th>{esc(candidate)}</th><th>Δ</th><th>95% CI</th><th>verdict</th></tr>{rows}</table>"
    )


def comparison_html(cmp: Comparison, fail_on: str = "") -> str:
    o = cmp.overall
    passed = cmp.gate.passed
    parts = [
        f"<h2>Comparison with {esc(baseline_label(cmp))}</h2>"
        f'<p class="meta">baseline: <code>{esc(cmp.baseline)}</code>; threshold '
        f"±{100 * cmp.threshold:.1f} pp; wins/losses/ties {cmp.wins}/{cmp.losses}/{cmp.ties}</p>",
        f'<p id="overall-delta" data-value="{esc(o.delta)}" data-verdict="{esc(o.verdict)}">'
        f"Overall: {_rate_verdict(cmp)}</p>",
        f'<p id="gate" data-passed="{str(passed).lower()}" class="{"gate-pass" if passed else "gate-fail"}">'
        f"Gate (--fail-on regression): {'passes' if passed else 'FAILS: ' + esc('; '.join(cmp.gate.reasons))}</p>",
    ]
    seq = cmp.sequential
    if seq is not None:
        cells = f": {', '.join(seq.regressed_cells)}" if seq.regressed_cells else ""
        parts.insert(
            2,
            f'<p id="sequential-verdict" data-status="{esc(seq.status)}">Sequential verdict '
            f"(--trials auto, anytime-valid, alpha {seq.alpha:.3g} over "
            f"{plural(seq.cells, 'cell')}; what the gate reads): <b>{esc(seq.status)}</b>"
            f"{esc(cells)}. The fixed-sample verdict is for reference only after a stop that "
            "depended on the results.</p>",
        )
    if cmp.error:
        parts.append(f'<p class="gate-fail">Comparison failed: {esc(cmp.error)}</p>')
    shared = cmp.shared_line()
    if shared is not None:
        parts.append(f'<p id="shared-only" class="meta">{esc(shared)}</p>')
    parts.extend(_missing(cmp, "the candidate", "the baseline", 'id="missing-in-{side}"'))
    if cmp.fixtures:
        parts.append(charts.forest_chart(cmp))
    parts.append(_fixture_table(cmp.fixtures, 'id="comparison-table"'))
    gated = "cost" in fail_on_parts(fail_on)
    if cmp.cost is not None:
        parts.append(_cost_comparison(cmp.cost, gated))
    elif gated:
        why = "; ".join(cmp.failing(("cost",)))
        parts.append(
            '<p id="cost-gate" data-passed="false" data-gated="true" class="gate-fail">'
            f"Cost gate (--fail-on cost): FAILS: {esc(why)}</p>"
        )
    return "\n".join(parts)


def _standing_row(s: AgentStanding) -> str:
    """One agent x model's standing: counts, resolved rate with its interval, what an item
    and a resolved item cost (an item in USD where every item has a price, else in
    tokens), wall time."""
    unit, mean = (
        ("usd", s.mean_cost_usd) if s.mean_cost_usd is not None else ("tokens", s.mean_tokens)
    )
    wall = s.mean_wall_time_s
    cost_mean = td(format_amount(mean, unit), "cost_mean", mean, "num", f' data-unit="{unit}"')
    return (
        f'<tr data-agent="{esc(s.agent)}" data-model="{esc(s.model)}"><td>{esc(s.agent)}</td>'
        f"<td>{esc(s.model)}</td>{td(str(s.fixtures), 'fixtures', s.fixtures, 'num')}"
        f"{td(str(s.n), 'n', s.n, 'num')}{td(str(s.errors), 'errors', s.errors, 'num')}"
        f"{td(f'{s.resolved}/{s.n}', 'resolved', s.resolved, 'num')}"
        f"{td(format_pct(s.rate), 'rate', s.rate, 'num')}{td(format_ci(s.ci), 'ci')}"
        f"{cost_mean}{per_resolved_td(s.cost_per_resolved_usd, 'usd', 'cost_per_resolved_usd')}"
        f"{per_resolved_td(s.tokens_per_resolved, 'tokens', 'tokens_per_resolved')}"
        f"{td('n/a' if wall is None else f'{wall:.2f} s', 'wall_time_s', wall, 'num')}</tr>"
    )


def _versus(v: AgentVersus, index: int) -> str:
    """One agent against the reference: the overall resolved-rate verdict, the cost
    verdict, then a row per fixture x model. Informative only: no gate reads it."""
    cmp = v.comparison
    o = cmp.overall
    parts = [
        f'<div class="versus" id="versus-{index}" data-agent="{esc(v.agent)}" '
        f'data-reference="{esc(v.reference)}">',
        f"<h3>{esc(v.agent)} against {esc(v.reference)}</h3>",
        f'<p class="versus-rate" data-verdict="{esc(o.verdict)}" data-value="{esc(o.delta)}">'
        f"Resolved rate: {_rate_verdict(cmp)} ({format_pct(o.candidate_rate)} against "
        f"{format_pct(o.baseline_rate)}, mean over {plural(o.strata, 'fixture')})</p>",
    ]
    if cmp.error:
        parts.append(f'<p class="meta">Not compared: {esc(cmp.error)}</p>')
    if cmp.cost is not None:
        c = cmp.cost.overall
        parts.append(
            f'<p class="meta versus-cost" data-verdict="{esc(c.verdict)}" '
            f'data-value="{esc(c.ratio)}" data-unit="{esc(cmp.cost.unit)}">'
            f"{esc(versus_cost_line(v))}</p>"
        )
    parts.extend(_missing(cmp, v.agent, v.reference, 'class="meta" data-missing-in="{side}"'))
    if cmp.fixtures:
        parts.append(
            _fixture_table(
                cmp.fixtures,
                f'id="versus-table-{index}" class="versus-table"',
                v.reference,
                v.agent,
            )
        )
    parts.append("</div>")
    return "\n".join(parts)


def agents_html(agents: AgentsComparison) -> str:
    """The run's agents side by side: a row per agent x model, then every other agent
    against the reference agent."""
    rows = "".join(_standing_row(s) for s in agents.standings)
    priced = [s.mean_cost_usd is not None for s in agents.standings]
    mean_head = (
        "mean cost per item"
        if all(priced)
        else "mean tokens per item"
        if not any(priced)
        else "mean cost per item (tokens where unpriced)"
    )
    parts = [
        '<h2 id="agents">Agents side by side</h2>',
        '<p class="meta">Over the fixtures each ran: resolved rate as the mean over fixtures '
        "with its 95% interval, cost and tokens per scored item and per resolved item. Each "
        f"other agent is compared with the reference, <b>{esc(agents.reference)}</b>, as a "
        "candidate with its baseline, on the fixtures both ran. These comparisons inform; no "
        "gate reads them.</p>",
        f'<div class="wide"><table id="agents-standings" data-reference="{esc(agents.reference)}">'
        "<tr><th>agent</th><th>model</th><th>fixtures</th><th>n</th><th>errors</th>"
        f"<th>resolved</th><th>rate</th><th>95% CI</th><th>{mean_head}</th>"
        "<th>cost / resolved item</th><th>tokens / resolved item</th><th>mean wall time</th>"
        f"</tr>{rows}</table></div>",
    ]
    parts.extend(_versus(v, n) for n, v in enumerate(agents.versus))
    return "\n".join(parts)
