"""The report page's charts, drawn as inline SVG from the typed report model.

Each function takes records of :mod:`harness.model` and returns one ``<svg>`` element
(:mod:`harness.report.svg` draws them), or ``None`` when the chart would carry no
information (every value the same, nothing failed): the page then leaves it out rather
than show an empty or flat picture.

In a run of several agents (``with_agent``) every fixture x model row or point names its
agent too: ``fixture · agent · model``
(:func:`harness.model.text.condition_label`), so the charts name conditions as the tables do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from harness.model.comparison import Comparison, FixtureComparison, OverallComparison
from harness.model.item import ItemResult
from harness.model.story import TimelineEvent
from harness.model.summary import MEASURES, FixtureSummary, ModelOverall, PerResolved
from harness.model.text import (
    condition_label,
    format_amount,
    format_ci,
    format_pct,
    format_per_resolved,
    format_pp,
    format_usd,
)
from harness.report import svg
from harness.stats.summaries import per_resolved_costs
from scorers.criteria import criterion_names

#: The x axis title of each measure's per-item distribution (:data:`MEASURES`).
MEASURE_TITLES = {
    "tokens_used": "tokens per item",
    "cost_usd": "USD per item",
    "turns": "assistant turns",
    "wall_time_s": "wall time (s)",
    "tokens_per_shard": "tokens per shard",
    "children_share": "children's share of the tokens (0-1)",
    "spawn_overhead": "depth-1 spawns per shard (1: one child per shard)",
    "peak_parallel_children": "most children busy at once",
    "busy_over_wall": "children's busy time / the parent's wall time",
}

#: The scatter of cost against resolved rate.
COST_CHART_ID = "chart-cost-vs-rate"


def measure_text(measure: str, value: float) -> str:
    """One item's value of ``measure`` as a tooltip says it."""
    if measure == "cost_usd":
        return format_usd(value)
    if measure in ("tokens_used", "tokens_per_shard"):
        return f"{value:,.0f}"
    if measure == "children_share":
        return format_pct(value)
    return f"{value:g}"


def _label(fixture: str, agent: str, model: str, with_agent: bool = True) -> str:
    """``fixture · model``, or ``fixture · agent · model`` where the agent is a dimension."""
    return f"{fixture} · {condition_label(agent, model, with_agent)}"


def _colour(index: int) -> str:
    return svg.SERIES_COLOURS[index % len(svg.SERIES_COLOURS)]


def rates_chart(summary: Sequence[FixtureSummary], with_agent: bool = False) -> str:
    """Resolved rate per fixture x model (x agent) with its 95% interval, a colour per agent
    (per model in a run of one agent) so a reader's eye finds one across fixtures.

    No legend: every row's label names its fixture, agent and model, so a legend could only
    repeat the labels (and with more conditions than colours it named several per colour).
    """
    groups = sorted({s.agent if with_agent else s.model for s in summary})
    rows = [
        svg.IntervalRow(
            label=_label(s.fixture, s.agent, s.model, with_agent),
            value=100 * s.rate,
            low=100 * s.ci[0],
            high=100 * s.ci[1],
            colour=_colour(groups.index(s.agent if with_agent else s.model)),
            tooltip=f"{_label(s.fixture, s.agent, s.model, with_agent)}: {s.resolved}/{s.n} resolved "
            f"({100 * s.rate:.1f}%, 95% CI [{100 * s.ci[0]:.1f}, {100 * s.ci[1]:.1f}]), "
            f"{s.errors} errors",
        )
        for s in summary
        if s.rate is not None and s.ci is not None
    ]
    return svg.interval_chart(
        rows, x_min=0, x_max=100, x_label="resolved rate (%), 95% CI", chart_id="chart-rates"
    )


def criteria_chart(summary: Sequence[FixtureSummary], with_agent: bool = False) -> str | None:
    """Share of scored items failing each criterion, one bar per fixture x model (x agent);
    None when no criterion failed anywhere."""
    names = list(criterion_names())
    series = []
    for i, s in enumerate(summary):
        fails = [
            s.n - s.criteria[c].count if c in s.criteria and s.criteria[c].rate is not None else 0
            for c in names
        ]
        label = _label(s.fixture, s.agent, s.model, with_agent)
        series.append(
            svg.BarSeries(
                name=label,
                values=[100 * f / s.n if s.n else 0.0 for f in fails],
                tooltips=[
                    f"{label}: {f}/{s.n} fail {c}" for f, c in zip(fails, names, strict=True)
                ],
                colour=_colour(i),
                labels=[f"{f}/{s.n}" for f in fails],
            )
        )
    if not any(v > 0 for s in series for v in s.values):
        return None
    return svg.bar_chart(
        names, series, y_max=100, y_label="items failing (%)", chart_id="chart-criteria"
    )


def forest_chart(cmp: Comparison) -> str:
    """Per-fixture and overall differences (pp) with intervals, coloured by verdict, over
    the threshold band; a cell names its agent where the comparison has that dimension."""
    rows: list[tuple[str, FixtureComparison | OverallComparison]] = [
        (_label(f.fixture, f.agent, f.model), f) for f in cmp.fixtures if f.ci
    ]
    if cmp.overall.delta is not None and cmp.overall.ci:
        rows.append(("overall", cmp.overall))
    marks = [
        svg.IntervalRow(
            label=label,
            value=100 * (r.delta or 0.0),
            low=100 * ci[0],
            high=100 * ci[1],
            colour=svg.VERDICT_COLOURS[r.verdict],
            tooltip=f"{label}: {r.verdict}, Δ {format_pp(r.delta)}, "
            f"95% CI [{format_pp(ci[0])}, {format_pp(ci[1])}]",
            marker="diamond" if label == "overall" else "circle",
        )
        for label, r in rows
        if (ci := r.ci) is not None
    ]
    threshold = 100 * cmp.threshold
    return svg.interval_chart(
        marks,
        x_min=-100,
        x_max=100,
        x_label=f"candidate − baseline (pp), 95% CI; band: ±{threshold:g} pp threshold",
        chart_id="chart-forest",
        band=(-threshold, threshold),
        reference=0.0,
        legend=[(c, v) for v, c in svg.VERDICT_COLOURS.items()],
    )


def measure_chart(
    items: Sequence[ItemResult], measure: str, with_agent: bool = False
) -> str | None:
    """The distribution of one efficiency measure per fixture x model (x agent; scored
    items only); None when every item has the same value."""
    groups: dict[str, tuple[list[float], list[str]]] = {}
    for item in items:
        value = item.measure(measure)
        if item.status == "error" or value is None:
            continue
        label = _label(item.fixture, item.agent, item.model, with_agent)
        values, keys = groups.setdefault(label, ([], []))
        values.append(value)
        keys.append(f"{item.key}: {measure_text(measure, value)}")
    every = {v for values, _ in groups.values() for v in values}
    if len(every) < 2:
        return None
    boxes = [
        svg.BoxGroup(label, values, keys, _colour(i))
        for i, (label, (values, keys)) in enumerate(sorted(groups.items()))
    ]
    return svg.box_chart(
        boxes, x_label=MEASURE_TITLES.get(measure, measure), chart_id=f"chart-{measure}"
    )


def measure_charts(items: Sequence[ItemResult], with_agent: bool = False) -> dict[str, str]:
    """The measures whose chart carries information, by measure."""
    charts = {m: measure_chart(items, m, with_agent) for m in MEASURES}
    return {m: chart for m, chart in charts.items() if chart is not None}


@dataclass(frozen=True)
class ModelCost:
    """One agent x model's cost per resolved item over the run (its scored items of every
    fixture pooled) beside its overall resolved rate; ``label`` is how its point is named
    (the model, or ``agent · model`` in a run of several agents)."""

    label: str
    per_resolved: PerResolved
    overall: ModelOverall


@dataclass(frozen=True)
class CostView:
    """What the cost-against-rate chart shows: one unit for every point (``usd`` when every
    scored item has a price, else ``tokens``), the agent x models with a point, and why the
    others have none."""

    unit: Literal["usd", "tokens"]
    models: tuple[ModelCost, ...]
    left_out: tuple[str, ...]
    unpriced: int

    @property
    def axis_title(self) -> str:
        if self.unit == "usd":
            return "USD per resolved item (total cost / resolved items), 95% CI"
        return (
            "tokens per resolved item, 95% CI (in tokens: "
            f"{self.unpriced} scored item(s) have no price, so no USD)"
        )


def cost_view(
    items: Sequence[ItemResult], overall: Sequence[ModelOverall], with_agent: bool = False
) -> CostView:
    """Each agent x model's total cost over its resolved items (scored items only, as the
    summaries count them; the figure of its standing in a run of several agents), in USD
    when every scored item of the run has a price, else in tokens for all; one that
    resolved nothing, or used no tokens, has no point.
    ``with_agent``: the points are named ``agent · model`` (a run of several agents)."""
    scored = [i for i in items if i.status != "error"]
    unpriced = sum(1 for i in scored if i.cost_usd is None)
    unit: Literal["usd", "tokens"] = "usd" if scored and not unpriced else "tokens"
    models, left_out = [], []
    for row in overall:
        label = condition_label(row.agent, row.model, with_agent)
        mine = [i for i in scored if i.model == row.model and i.agent == row.agent]
        usd, tokens = per_resolved_costs(mine)
        entry = usd if unit == "usd" else tokens
        if not mine or entry is None:
            left_out.append(f"{label}: no scored item")
        elif unit == "tokens" and entry.total == 0:
            left_out.append(f"{label}: no tokens recorded")
        elif entry.value is None:
            left_out.append(f"{label}: no resolved item, so no cost per resolved item")
        else:
            models.append(ModelCost(label, entry, row))
    return CostView(unit, tuple(models), tuple(left_out), unpriced)


def cost_points(view: CostView) -> list[svg.ScatterPoint]:
    """A point per agent x model: x its cost per resolved item (with its interval when
    bounded), y its overall resolved rate in % (with its interval)."""
    points = []
    for i, m in enumerate(view.models):
        value = m.per_resolved.value
        if value is None:
            continue
        low, high = m.per_resolved.ci if m.per_resolved.ci is not None else (None, None)
        o = m.overall
        y_low, y_high = (100 * o.ci[0], 100 * o.ci[1]) if o.ci else (None, None)
        points.append(
            svg.ScatterPoint(
                x=value,
                y=100 * o.rate,
                label=m.label,
                colour=_colour(i),
                tooltip=f"{m.label}: {format_per_resolved(m.per_resolved, view.unit)}, "
                f"{format_amount(m.per_resolved.total, view.unit)} for "
                f"{m.per_resolved.resolved}/{m.per_resolved.n} resolved items; resolved rate "
                f"{format_pct(o.rate)}, 95% CI {format_ci(o.ci)} "
                f"(mean over {o.strata} fixture(s))",
                x_low=low if high is not None else None,
                x_high=high,
                y_low=y_low,
                y_high=y_high,
            )
        )
    return points


def cost_chart(view: CostView) -> str | None:
    """Cost per resolved item against resolved rate, a point per agent x model, the
    cheaper-and-better front joined and outlined; None when none has a point."""
    points = cost_points(view)
    if not points:
        return None
    return svg.scatter_chart(
        points,
        x_label=view.axis_title,
        y_label="resolved rate (%), 95% CI",
        chart_id=COST_CHART_ID,
        y_min=0,
        y_max=100,
    )


def front_models(view: CostView) -> list[str]:
    """The points (their labels) on the cheaper-and-better front over every agent x model:
    no other is both cheaper per resolved item and at least as often resolved (or as cheap
    and more often resolved)."""
    return [p.label for p in svg.cheaper_and_better(cost_points(view))]


def timeline_chart(events: Sequence[TimelineEvent], chart_id: str) -> str:
    """An item's spawns, renames, deletes and receipts over time, one row per child."""
    marks = [
        svg.TimelineMark(
            x=e.offset_s,
            row=e.name or e.child_id,
            colour=svg.EVENT_COLOURS[e.kind],
            tooltip=f"+{e.offset_s:.3f} s {e.kind} {e.name or e.child_id}"
            + (f": {e.detail[:120]}" if e.detail else ""),
        )
        for e in events
        if e.offset_s is not None
    ]
    rows = list(dict.fromkeys(m.row for m in marks))
    return svg.timeline_chart(
        rows,
        marks,
        x_label="seconds since the first event",
        chart_id=chart_id,
        legend=[(c, k) for k, c in svg.EVENT_COLOURS.items()],
    )
