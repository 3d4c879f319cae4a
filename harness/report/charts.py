"""Plotly figure specs (plain dicts) for the HTML report.

The figures are built as plotly.js JSON directly, not through ``plotly.graph_objects``:
the page draws them with the plotly.js bundle that the plotly package ships, and building
dicts costs microseconds where the figure classes' validation costs about a second per
report, which every run would pay.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from harness.model.comparison import Comparison, FixtureComparison, OverallComparison
from harness.model.item import ItemResult
from harness.model.story import TimelineEvent
from harness.model.summary import MEASURES, FixtureSummary
from scorers.criteria import criterion_names

Figure = dict[str, Any]

#: Verdict colours: red for a regression, green for an improvement, blue for a proven
#: equivalence, grey while the data cannot tell (colour-blind-safe pairs from Okabe-Ito).
VERDICT_COLOURS = {
    "regressed": "#d55e00",
    "improved": "#009e73",
    "equivalent": "#0072b2",
    "inconclusive": "#7f7f7f",
}
#: One colour per event kind in an item's timeline.
EVENT_COLOURS = {
    "spawn": "#0072b2",
    "rename": "#cc79a7",
    "delete": "#d55e00",
    "reply": "#009e73",
    "notice": "#e69f00",
    "failure": "#000000",
}
MEASURE_TITLES = {
    "tokens_used": "tokens",
    "turns": "assistant turns",
    "wall_time_s": "wall time (s)",
}

#: Pixels per category row and for the axes and margins around them.
ROW_PX = 36
FRAME_PX = 110


def _layout(rows: int, **extra: Any) -> dict[str, Any]:
    return {
        "height": FRAME_PX + ROW_PX * max(rows, 1),
        "margin": {"l": 220, "r": 30, "t": 30, "b": 50},
        "font": {"family": "system-ui, sans-serif", "size": 12},
        "plot_bgcolor": "#ffffff",
        "paper_bgcolor": "#ffffff",
        "showlegend": True,
        "legend": {"orientation": "h", "y": -0.25 if rows < 4 else -0.1},
        **extra,
    }


def _label(fixture: str, model: str) -> str:
    return f"{fixture} · {model}"


def _interval_trace(
    name: str,
    xs: list[float],
    ys: list[str],
    cis: list[Sequence[float]],
    colour: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """Points with asymmetric horizontal error bars (in the same unit as ``xs``)."""
    bar_colour = {"color": colour} if colour else {}
    return {
        "type": "scatter",
        "mode": "markers",
        "name": name,
        "x": xs,
        "y": ys,
        "error_x": {
            "type": "data",
            "symmetric": False,
            "array": [hi - x for x, (_, hi) in zip(xs, cis, strict=True)],
            "arrayminus": [x - lo for x, (lo, _) in zip(xs, cis, strict=True)],
            "thickness": 2,
            "width": 6,
            **bar_colour,
        },
        **extra,
    }


def rates_figure(summary: Sequence[FixtureSummary]) -> Figure:
    """Resolved rate per fixture x model with its 95% interval, one trace per model."""
    data = []
    for model in sorted({s.model for s in summary}):
        rows = [s for s in summary if s.model == model and s.rate is not None and s.ci]
        data.append(
            _interval_trace(
                model,
                [100 * (s.rate or 0.0) for s in rows],
                [_label(s.fixture, model) for s in rows],
                [[100 * ci[0], 100 * ci[1]] for s in rows if (ci := s.ci)],
                text=[f"{s.resolved}/{s.n} resolved, {s.errors} errors" for s in rows],
                marker={"size": 11},
            )
        )
    layout = _layout(
        len(summary),
        xaxis={
            "title": {"text": "resolved rate (%), 95% CI"},
            "range": [-3, 103],
            "zeroline": False,
        },
        yaxis={"autorange": "reversed", "automargin": True},
    )
    return {"data": data, "layout": layout}


def criteria_figure(summary: Sequence[FixtureSummary]) -> Figure:
    """Share of scored items failing each criterion, one bar group per criterion."""
    data = []
    for s in summary:
        names = [c for c in criterion_names() if c in s.criteria]
        fails = [s.n - s.criteria[c].count for c in names]
        data.append(
            {
                "type": "bar",
                "name": _label(s.fixture, s.model),
                "x": names,
                "y": [100 * f / s.n if s.n else 0 for f in fails],
                "text": [f"{f}/{s.n}" for f in fails],
                "textposition": "outside",
            }
        )
    layout = _layout(
        6,
        barmode="group",
        yaxis={"title": {"text": "items failing (%)"}, "range": [0, 105]},
        margin={"l": 60, "r": 30, "t": 30, "b": 50},
    )
    return {"data": data, "layout": layout}


def forest_figure(cmp: Comparison) -> Figure:
    """Per-fixture and overall differences (pp) with intervals, coloured by verdict, over the
    threshold band."""
    rows: list[tuple[str, FixtureComparison | OverallComparison]] = [
        (_label(f.fixture, f.model), f) for f in cmp.fixtures if f.ci
    ]
    if cmp.overall.delta is not None and cmp.overall.ci:
        rows.append(("overall", cmp.overall))
    data = []
    for verdict, colour in VERDICT_COLOURS.items():
        chosen = [(label, r) for label, r in rows if r.verdict == verdict]
        if not chosen:
            continue
        data.append(
            _interval_trace(
                verdict,
                [100 * (r.delta or 0.0) for _, r in chosen],
                [label for label, _ in chosen],
                [[100 * ci[0], 100 * ci[1]] for _, r in chosen if (ci := r.ci)],
                marker={
                    "color": colour,
                    "size": [16 if label == "overall" else 11 for label, _ in chosen],
                    "symbol": [
                        "diamond" if label == "overall" else "circle" for label, _ in chosen
                    ],
                },
                colour=colour,
            )
        )
    threshold = 100 * cmp.threshold
    band = {
        "type": "rect",
        "xref": "x",
        "yref": "paper",
        "x0": -threshold,
        "x1": threshold,
        "y0": 0,
        "y1": 1,
        "fillcolor": "rgba(0, 114, 178, 0.12)",
        "line": {"width": 0},
        "layer": "below",
    }
    zero = {
        "type": "line",
        "xref": "x",
        "yref": "paper",
        "x0": 0,
        "x1": 0,
        "y0": 0,
        "y1": 1,
        "line": {"color": "#444", "width": 1, "dash": "dot"},
    }
    layout = _layout(
        len(rows),
        shapes=[band, zero],
        xaxis={
            "title": {
                "text": f"candidate − baseline (pp), 95% CI; band: ±{threshold:g} pp threshold"
            },
            "range": [-103, 103],
            "zeroline": False,
        },
        yaxis={
            "autorange": "reversed",
            "automargin": True,
            "categoryorder": "array",
            "categoryarray": [label for label, _ in rows],
        },
    )
    return {"data": data, "layout": layout}


def measure_figure(items: Sequence[ItemResult], measure: str) -> Figure:
    """The distribution of one efficiency measure per fixture x model (scored items only)."""
    groups: dict[str, list[float]] = {}
    keys: dict[str, list[str]] = {}
    for item in items:
        value = item.measure(measure)
        if item.status == "error" or value is None:
            continue
        label = _label(item.fixture, item.model)
        groups.setdefault(label, []).append(value)
        keys.setdefault(label, []).append(item.key)
    data = [
        {
            "type": "box",
            "name": label,
            "x": values,
            "text": keys[label],
            "boxpoints": "all",
            "jitter": 0.4,
            "pointpos": 0,
            "orientation": "h",
            "hoverinfo": "x+text",
        }
        for label, values in sorted(groups.items())
    ]
    layout = _layout(
        len(groups),
        showlegend=False,
        xaxis={"title": {"text": MEASURE_TITLES.get(measure, measure)}, "rangemode": "tozero"},
        yaxis={"automargin": True},
    )
    return {"data": data, "layout": layout}


def measure_figures(items: Sequence[ItemResult]) -> dict[str, Figure]:
    return {m: measure_figure(items, m) for m in MEASURES}


def timeline_figure(events: Sequence[TimelineEvent]) -> Figure:
    """An item's ledger and receipt events over time, one row per child name."""
    data = []
    names = list(dict.fromkeys(e.name or e.child_id for e in events))
    for kind, colour in EVENT_COLOURS.items():
        chosen = [e for e in events if e.kind == kind and e.offset_s is not None]
        if chosen:
            data.append(
                {
                    "type": "scatter",
                    "mode": "markers",
                    "name": kind,
                    "x": [e.offset_s for e in chosen],
                    "y": [e.name or e.child_id for e in chosen],
                    "text": [e.detail[:120] for e in chosen],
                    "marker": {"color": colour, "size": 10},
                }
            )
    layout = _layout(
        len(names),
        xaxis={"title": {"text": "seconds since the first event"}, "rangemode": "tozero"},
        yaxis={"autorange": "reversed", "automargin": True, "type": "category"},
    )
    return {"data": data, "layout": layout}
