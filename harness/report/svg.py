"""Inline SVG charts for the HTML report: plain data in, one ``<svg>`` element out.

Hand-written so that a chart costs a few KB instead of the 4.6 MB plotly.js bundle, draws
offline and needs no JavaScript. Hover detail comes from ``<title>`` children (the
browser's native tooltips). Every data mark is a ``<g class="mark KIND" data-value="N">``
whose first child is its ``<title>``, so tests can count marks and read values back.

Every function is pure and deterministic (same input, same bytes); coordinates are rounded
to 0.1 px. SVG cannot measure text without a browser, so text widths are estimated from
their length (:data:`CHAR_PX`) and long labels are ellipsised, the full text kept in a
``<title>``.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

# ---------------------------------------------------------------------------------- sizes

#: Every chart's width: fits the report's content column unscaled, so 12 px text stays 12 px.
WIDTH = 760
#: One category row (interval, box, timeline charts): a 12 px label and an 11 px marker with
#: air between rows. These charts grow with their rows, so long suites stay readable.
ROW_PX = 28
#: Plot height of the charts without rows (bars, scatter, trend).
PLOT_PX = 240
#: Left margin of the row charts, for "fixture · model" labels (plotly's margin was 220).
LABEL_PX = 220
#: The widest the left margin grows for longer labels ("fixture · agent · model" in a run
#: of several agents, 52 characters: "json-events · prime-agent · scripted/wrong-answer" of
#: a selftest whole): the plot keeps 45% of the chart's width.
MAX_LABEL_PX = 380
#: Left margin of the charts with a vertical axis: tick labels and the rotated axis title.
Y_AXIS_PX = 64
#: Above the plot: room for the value labels over full-height bars.
TOP_PX = 16
#: Right of the plot: half of the last x tick label, which is centred on the frame's edge.
RIGHT_PX = 32
#: Below the plot: a line of tick labels, then the axis title.
AXIS_PX = 44
#: One line of legend.
LEGEND_PX = 20
#: The "no data" placeholder's height.
EMPTY_PX = 40
#: Average width of a 12 px system-ui character, to estimate text widths.
CHAR_PX = 7
#: Row labels longer than this are ellipsised to fit the left margin (at its narrowest).
LABEL_CHARS = (LABEL_PX - 12) // CHAR_PX
#: Legend entries, scatter labels and trend x ticks are ellipsised to these lengths.
LEGEND_CHARS = 32
POINT_LABEL_CHARS = 24
X_TICK_CHARS = 10
#: Minimum distance between trend x ticks: a 10-character date with a gap.
X_TICK_PX = 80
#: Marker radii: plotly's marker sizes 11 and 16, and smaller dots for box-plot points.
POINT_R = 5.5
DIAMOND_R = 8.0
DOT_R = 3.0
#: Half the length of an error bar's end caps (plotly's cap width was 6).
CAP_PX = 3
#: A box's thickness; its points are jittered across the same height, over the box.
BOX_PX = 14
#: Zero-valued bars keep a sliver so they can still be hovered.
MIN_BAR_PX = 1
#: Trend series are shifted apart by this much so intervals at one run do not hide each other.
DODGE_PX = 4
#: Insets the first and last trend points from the frame so their markers show whole.
EDGE_PX = 16
#: The report page's font, so the charts read as part of the page.
FONT = "system-ui, sans-serif"
FONT_PX = 12

# -------------------------------------------------------------------------------- palette

#: Axis text and lines are greyer than the data, gridlines lighter still, so marks stand out.
AXIS = "#555"
GRID = "#e5e5e5"
#: The dotted reference line (plotly's zero line in the forest plot).
REFERENCE = "#444"
#: The shaded threshold band: a light tint of the "equivalent" blue.
BAND = "#0072b2"
BAND_OPACITY = 0.12
#: Series colours in order: Okabe-Ito (colour-blind safe), low-contrast yellow last.
SERIES_COLOURS = (
    "#0072b2",  # blue
    "#e69f00",  # orange
    "#009e73",  # bluish green
    "#cc79a7",  # reddish purple
    "#56b4e9",  # sky blue
    "#d55e00",  # vermillion
    "#000000",  # black
    "#f0e442",  # yellow
)
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

# --------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class IntervalRow:
    """One category row: a marker at ``value``, an error bar from ``low`` to ``high``."""

    label: str
    value: float
    low: float
    high: float
    colour: str
    tooltip: str
    marker: Literal["circle", "diamond"] = "circle"
    href: str | None = None


@dataclass(frozen=True)
class BarSeries:
    """One bar per category (``values[i]`` belongs to category ``i``); ``labels`` are
    written over the bars (default: the values)."""

    name: str
    values: Sequence[float]
    tooltips: Sequence[str]
    colour: str
    labels: Sequence[str] = ()


@dataclass(frozen=True)
class BoxGroup:
    """One box plot row: the values and one tooltip per value."""

    label: str
    values: Sequence[float]
    tooltips: Sequence[str]
    colour: str = SERIES_COLOURS[0]


@dataclass(frozen=True)
class TimelineMark:
    """One event at ``x`` (seconds) in the row named ``row``."""

    x: float
    row: str
    colour: str
    tooltip: str


@dataclass(frozen=True)
class ScatterPoint:
    """A named point with optional error bars on either axis."""

    x: float
    y: float
    label: str
    colour: str
    tooltip: str
    x_low: float | None = None
    x_high: float | None = None
    y_low: float | None = None
    y_high: float | None = None


@dataclass(frozen=True)
class TrendPoint:
    """One run: ``x`` orders the runs (ordinal or timestamp), ``x_label`` is its tick
    (a short date), ``value`` a rate in [0, 1] with its interval."""

    x: float
    x_label: str
    value: float
    low: float
    high: float
    tooltip: str
    href: str | None = None


@dataclass(frozen=True)
class TrendSeries:
    """One line of a trend chart."""

    name: str
    colour: str
    points: Sequence[TrendPoint]


# -------------------------------------------------------------------------------- helpers

#: Characters XML 1.0 forbids (a page with them is not well-formed), and lone surrogates.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def esc(text: str) -> str:
    """``text`` safe in XML text and double-quoted attributes: ``& < > " '`` escaped,
    characters XML forbids replaced by U+FFFD."""
    return html.escape(_NOT_XML.sub("\ufffd", text), quote=True)


def ellipsis(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters, the last one "…" when cut."""
    if len(text) <= max_chars:
        return text
    return text[: max_chars - 1] + "…" if max_chars > 0 else ""


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round ticks (step 1, 2 or 5 x 10^k, about ``count`` steps) covering [lo, hi]: the
    first is <= lo, the last >= hi. A zero-width range is widened by 10% of its value (by
    1 at zero); a range whose ticks would not be finite floats gives [0, 1]."""
    lo, hi = min(lo, hi), max(lo, hi)
    if hi == lo:
        pad = abs(lo) / 10 or 1.0
        lo, hi = lo - pad, hi + pad
    raw = (hi - lo) / max(count, 1)
    if not 0 < raw < math.inf:
        return [0.0, 1.0]
    magnitude = 10.0 ** math.floor(math.log10(raw))
    # The 1-2-5 multiple nearest to raw on a log scale (d3's rule): 0..100 steps by 20.
    ratio = raw / magnitude
    step = magnitude * (
        10 if ratio >= 50**0.5 else 5 if ratio >= 10**0.5 else 2 if ratio >= 2**0.5 else 1
    )
    decimals = max(0, -math.floor(math.log10(step)))
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    # Rounding each tick to the step's decimals gives 0.3, never 0.30000000000000004.
    ticks = [round(i * step, decimals) + 0.0 for i in range(first, last + 1)]
    return ticks if math.isfinite(ticks[-1] - ticks[0]) else [0.0, 1.0]


def _num(value: float) -> str:
    """A data attribute's number: rounded to 6 decimals, whole numbers without ".0"."""
    if not math.isfinite(value):
        return str(value)
    rounded = round(value, 6) + 0.0  # + 0.0 turns -0.0 into 0.0
    return str(int(rounded)) if rounded.is_integer() and abs(rounded) < 1e15 else repr(rounded)


def _tick(value: float, suffix: str = "") -> str:
    """A tick label: like :func:`_num`, with thousands separators."""
    rounded = round(value, 6) + 0.0
    return (f"{int(rounded):,}" if rounded.is_integer() else f"{rounded:,}") + suffix


def _short(value: float) -> str:
    """A number for people: whole from 100 up (with separators), else 3 significant digits."""
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _px(value: float) -> str:
    """A coordinate, rounded to 0.1 px."""
    return f"{round(value, 1) + 0.0:g}"


def _at(texts: Sequence[str], index: int) -> str:
    """``texts[index]``, or "" past the end (a short tooltip list must not raise)."""
    return texts[index] if index < len(texts) else ""


@dataclass(frozen=True)
class _Scale:
    """Maps data [lo, hi] linearly onto pixels [start, end]; values beyond are clamped to
    the ends (so nothing is drawn outside the frame), NaN goes to ``lo``."""

    lo: float
    hi: float
    start: float
    end: float

    def __call__(self, value: float) -> float:
        if self.hi <= self.lo:
            return (self.start + self.end) / 2
        value = self.lo if math.isnan(value) else min(max(value, self.lo), self.hi)
        at = self.start + (value - self.lo) / (self.hi - self.lo) * (self.end - self.start)
        return at if math.isfinite(at) else self.start  # hi - lo overflowed (near 1e308)


def _domain(
    values: Sequence[float], lo: float | None = None, hi: float | None = None
) -> tuple[float, float, list[tuple[float, str]]]:
    """An axis's lo, hi and labelled ticks: a bound not given (or not finite) runs from
    min(0, smallest value) to the round tick at or past the largest; only ticks inside
    [lo, hi] are kept."""
    finite = [v for v in values if math.isfinite(v)]
    start = min([0.0, *finite])
    end = max([start, *finite])
    auto = nice_ticks(start, end if end > start else start + 1.0)
    lo = lo if lo is not None and math.isfinite(lo) else auto[0]
    hi = hi if hi is not None and math.isfinite(hi) else auto[-1]
    if hi <= lo:
        hi = lo + 1.0
    slack = (hi - lo) * 1e-9
    return lo, hi, [(t, _tick(t)) for t in nice_ticks(lo, hi) if lo - slack <= t <= hi + slack]


# ------------------------------------------------------------------------------- markup


def _svg(chart_id: str, label: str, height: float, parts: Sequence[str]) -> str:
    """The root element around ``parts``, ``height`` px tall."""
    h = _px(height)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{esc(chart_id)}" class="chart" '
        f'role="img" aria-label="{esc(label)}" viewBox="0 0 {WIDTH} {h}" width="{WIDTH}" '
        f'height="{h}" font-family="{FONT}" font-size="{FONT_PX}">{"".join(parts)}</svg>'
    )


def _empty(chart_id: str, label: str) -> str:
    """A short chart saying "no data"."""
    text = (
        f'<text x="{WIDTH // 2}" y="{EMPTY_PX // 2}" dy=".35em" text-anchor="middle" '
        f'fill="{AXIS}">no data</text>'
    )
    return _svg(chart_id, f"{label}: no data", EMPTY_PX, [text])


def _text(x: float, y: float, text: str, anchor: str = "start", limit: int = 0) -> str:
    """Text centred vertically on ``y``; cut to ``limit`` characters with the full text in
    a ``<title>`` when longer."""
    shown = ellipsis(text, limit) if limit else text
    title = f"<title>{esc(text)}</title>" if shown != text else ""
    return (
        f'<text x="{_px(x)}" y="{_px(y)}" dy=".35em" text-anchor="{anchor}">'
        f"{title}{esc(shown)}</text>"
    )


def _line(x1: float, y1: float, x2: float, y2: float, colour: str, extra: str = "") -> str:
    return (
        f'<line x1="{_px(x1)}" y1="{_px(y1)}" x2="{_px(x2)}" y2="{_px(y2)}" '
        f'stroke="{colour}"{extra}/>'
    )


def _rect(x: float, y: float, width: float, height: float, colour: str, extra: str = "") -> str:
    return (
        f'<rect x="{_px(x)}" y="{_px(y)}" width="{_px(width)}" height="{_px(height)}" '
        f'fill="{colour}"{extra}/>'
    )


def _circle(x: float, y: float, r: float, colour: str, extra: str = "") -> str:
    return f'<circle cx="{_px(x)}" cy="{_px(y)}" r="{r:g}" fill="{colour}"{extra}/>'


def _diamond(x: float, y: float, colour: str) -> str:
    r = DIAMOND_R
    return (
        f'<path d="M{_px(x)} {_px(y - r)}L{_px(x + r)} {_px(y)}L{_px(x)} {_px(y + r)}'
        f'L{_px(x - r)} {_px(y)}Z" fill="{colour}"/>'
    )


def _error_bar(a: float, b: float, at: float, colour: str, vertical: bool = False) -> str:
    """A 2 px error bar from ``a`` to ``b`` (pixels) with end caps, across ``at``."""
    if vertical:
        d = f"M{_px(at)} {_px(a)}V{_px(b)}" + "".join(
            f"M{_px(at - CAP_PX)} {_px(end)}H{_px(at + CAP_PX)}" for end in (a, b)
        )
    else:
        d = f"M{_px(a)} {_px(at)}H{_px(b)}" + "".join(
            f"M{_px(end)} {_px(at - CAP_PX)}V{_px(at + CAP_PX)}" for end in (a, b)
        )
    return f'<path d="{d}" stroke="{colour}" stroke-width="2" fill="none"/>'


def _mark(
    kind: str, value: float, tooltip: str, shapes: str, href: str | None = None, **data: float
) -> str:
    """One data mark: a group with its value (and ``data`` as ``data-*``), its tooltip and
    its shapes, wrapped in a link when ``href`` is given."""
    attrs = "".join(f' data-{name.replace("_", "-")}="{_num(v)}"' for name, v in data.items())
    group = (
        f'<g class="mark {kind}" data-value="{_num(value)}"{attrs}>'
        f"<title>{esc(tooltip)}</title>{shapes}</g>"
    )
    return f'<a href="{esc(href)}">{group}</a>' if href else group


def _ends(interval: IntervalRow | TrendPoint) -> dict[str, float]:
    """An interval's ends as ``data-low`` and ``data-high``."""
    return {"low": interval.low, "high": interval.high}


def _legend(
    entries: Sequence[tuple[str, str]], left: float, limit: int = LEGEND_CHARS
) -> tuple[str, float]:
    """(colour, text) entries in lines from ``left`` at the very top, wrapping at the right
    margin; returns the markup and its height (the plot starts below it). ``limit``: the
    characters an entry keeps (0: all of them)."""
    if not entries:
        return "", 0.0
    parts, x, line = [], left, 0
    for colour, text in entries:
        shown = min(len(text), limit) if limit else len(text)
        width = 2 * POINT_R + 6 + CHAR_PX * shown + 16
        if x > left and x + width > WIDTH - RIGHT_PX:
            x, line = left, line + 1
        y = (line + 0.5) * LEGEND_PX + 2
        parts.append(_circle(x + POINT_R, y, POINT_R, colour))
        parts.append(_text(x + 2 * POINT_R + 6, y, text, limit=limit))
        x += width
    return f'<g class="legend">{"".join(parts)}</g>', (line + 1) * LEGEND_PX


def _used(legend: Sequence[tuple[str, str]], colours: set[str]) -> list[tuple[str, str]]:
    """The legend entries whose colour some mark uses."""
    return [(colour, text) for colour, text in legend if colour in colours]


def _x_axis(
    scale: _Scale, ticks: Sequence[tuple[float, str]], top: float, bottom: float, title: str
) -> str:
    """Vertical gridlines at ``ticks`` from ``top`` to ``bottom``, tick labels under the
    baseline, the title under them."""
    parts = []
    for value, text in ticks:
        x = scale(value)
        parts.append(_line(x, top, x, bottom, GRID))
        parts.append(_text(x, bottom + 12, text, "middle"))
    parts.append(_line(scale.start, bottom, scale.end, bottom, AXIS))
    if title:
        limit = int((scale.end - scale.start) // CHAR_PX)
        parts.append(_text((scale.start + scale.end) / 2, bottom + 32, title, "middle", limit))
    return f'<g class="x-axis" fill="{AXIS}">{"".join(parts)}</g>'


def _y_axis(scale: _Scale, ticks: Sequence[tuple[float, str]], title: str) -> str:
    """Horizontal gridlines at ``ticks`` across the plot, tick labels left of the axis, the
    title rotated along it."""
    parts = []
    for value, text in ticks:
        y = scale(value)
        parts.append(_line(Y_AXIS_PX, y, WIDTH - RIGHT_PX, y, GRID))
        parts.append(_text(Y_AXIS_PX - 6, y, text, "end"))
    parts.append(_line(Y_AXIS_PX, scale.start, Y_AXIS_PX, scale.end, AXIS))
    middle = _px((scale.start + scale.end) / 2)
    shown = ellipsis(title, int(abs(scale.end - scale.start) // CHAR_PX))
    parts.append(
        f'<text x="14" y="{middle}" transform="rotate(-90 14 {middle})" '
        f'text-anchor="middle">{esc(shown)}</text>'
    )
    return f'<g class="y-axis" fill="{AXIS}">{"".join(parts)}</g>'


def _row_y(top: float, index: int) -> float:
    return top + (index + 0.5) * ROW_PX


def _row_frame(
    labels: Sequence[str],
    legend: Sequence[tuple[str, str]],
    domain: tuple[float, float, list[tuple[float, str]]],
    x_label: str,
) -> tuple[list[str], _Scale, float, float]:
    """The frame of a row chart: the legend, then one labelled row per label over the x
    axis, the left margin as wide as the longest label needs (from :data:`LABEL_PX` to
    :data:`MAX_LABEL_PX`; longer ones are ellipsised). Returns its markup, the x scale and
    the plot's top and bottom."""
    lo, hi, ticks = domain
    longest = max((len(s) for s in labels), default=0)
    left = min(max(LABEL_PX, longest * CHAR_PX + 12), MAX_LABEL_PX)
    x = _Scale(lo, hi, left, WIDTH - RIGHT_PX)
    legend_svg, legend_px = _legend(legend, left)
    top = legend_px + TOP_PX
    bottom = top + ROW_PX * len(labels)
    chars = (left - 12) // CHAR_PX
    rows = "".join(_text(left - 8, _row_y(top, i), s, "end", chars) for i, s in enumerate(labels))
    axis = _x_axis(x, ticks, top, bottom, x_label)
    return [axis, legend_svg, f'<g class="rows">{rows}</g>'], x, top, bottom


# --------------------------------------------------------------------------------- charts


def interval_chart(
    rows: Sequence[IntervalRow],
    *,
    x_min: float,
    x_max: float,
    x_label: str,
    chart_id: str,
    band: tuple[float, float] | None = None,
    reference: float | None = None,
    legend: Sequence[tuple[str, str]] = (),
) -> str:
    """One row per category, top to bottom: a marker at its value with an error bar.

    ``band`` shades [a, b] behind the rows; ``reference`` draws a dotted vertical line. The
    legend ((colour, text) pairs; only colours in use) shows when rows use several colours.
    Values beyond [x_min, x_max] are clamped to the frame's edges.
    """
    label = f"{x_label}: {len(rows)} rows"
    if not rows:
        return _empty(chart_id, label)
    colours = {r.colour for r in rows}
    entries = _used(legend, colours) if len(colours) > 1 else []
    domain = _domain([], x_min, x_max)
    parts, x, top, bottom = _row_frame([r.label for r in rows], entries, domain, x_label)
    if band is not None:
        left, right = sorted((x(band[0]), x(band[1])))
        extra = f' class="band" fill-opacity="{BAND_OPACITY}"'
        parts.append(_rect(left, top, right - left, bottom - top, BAND, extra))
    if reference is not None:
        at = x(reference)
        parts.append(
            _line(at, top, at, bottom, REFERENCE, ' class="reference" stroke-dasharray="2 3"')
        )
    for i, row in enumerate(rows):
        y = _row_y(top, i)
        marker = (
            _diamond(x(row.value), y, row.colour)
            if row.marker == "diamond"
            else _circle(x(row.value), y, POINT_R, row.colour)
        )
        shapes = _error_bar(x(row.low), x(row.high), y, row.colour) + marker
        parts.append(_mark("point", row.value, row.tooltip, shapes, row.href, **_ends(row)))
    return _svg(chart_id, label, bottom + AXIS_PX, parts)


def bar_chart(
    categories: Sequence[str],
    series: Sequence[BarSeries],
    *,
    y_max: float,
    y_label: str,
    chart_id: str,
) -> str:
    """Grouped vertical bars: a group per category, in it a bar per series, each with its
    label (or value) above it. Values are clamped to [0, y_max]; a legend names the series
    when there are several."""
    label = f"{y_label}: {len(categories)} categories, {len(series)} series"
    if not categories or not series:
        return _empty(chart_id, label)
    entries = [(s.colour, s.name) for s in series] if len(series) > 1 else []
    legend_svg, legend_px = _legend(entries, Y_AXIS_PX)
    top = legend_px + TOP_PX
    bottom = top + PLOT_PX
    lo, hi, ticks = _domain([], 0.0, y_max)
    y = _Scale(lo, hi, bottom, top)
    parts = [_y_axis(y, ticks, y_label), legend_svg]
    group = (WIDTH - RIGHT_PX - Y_AXIS_PX) / len(categories)
    bar = group * 0.8 / len(series)  # the other 20% separates the groups
    for i, category in enumerate(categories):
        left = Y_AXIS_PX + i * group
        limit = max(1, int(group // CHAR_PX) - 1)
        parts.append(_text(left + group / 2, bottom + 12, category, "middle", limit))
        for j, s in enumerate(series):
            if i >= len(s.values):
                continue
            value = s.values[i]
            bx, by = left + group * 0.1 + j * bar, min(y(value), bottom - MIN_BAR_PX)
            rect = _rect(bx, by, bar, bottom - by, s.colour)
            text = (
                f'<text x="{_px(bx + bar / 2)}" y="{_px(by - 4)}" text-anchor="middle" '
                f'font-size="11">{esc(_at(s.labels, i) or _short(value))}</text>'
            )
            parts.append(_mark("bar", value, _at(s.tooltips, i), rect + text))
    return _svg(chart_id, label, bottom + AXIS_PX, parts)


def _quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted values, interpolating linearly (numpy's default)."""
    at = q * (len(ordered) - 1)
    below = math.floor(at)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (at - below)


def _box(group: BoxGroup, values: Sequence[float], x: _Scale, y: float) -> str:
    """The box mark of one group: quartile box, median line, Tukey whiskers."""
    ordered = sorted(values)
    q1, median, q3 = (_quantile(ordered, q) for q in (0.25, 0.5, 0.75))
    reach = 1.5 * (q3 - q1)
    low = min(v for v in ordered if v >= q1 - reach)
    high = max(v for v in ordered if v <= q3 + reach)
    half = BOX_PX / 2
    whiskers = (
        f'<path d="M{_px(x(low))} {_px(y)}H{_px(x(q1))}M{_px(x(q3))} {_px(y)}H{_px(x(high))}'
        + "".join(f"M{_px(x(end))} {_px(y - half / 2)}V{_px(y + half / 2)}" for end in (low, high))
        + f'" stroke="{group.colour}" fill="none"/>'
    )
    extra = f' fill-opacity="0.15" stroke="{group.colour}"'
    box = _rect(x(q1), y - half, x(q3) - x(q1), BOX_PX, group.colour, extra)
    middle = _line(x(median), y - half, x(median), y + half, group.colour, ' stroke-width="2"')
    tooltip = (
        f"{group.label}\nmedian {_short(median)}, quartiles {_short(q1)}–{_short(q3)}\n"
        f"whiskers {_short(low)}–{_short(high)} (within 1.5 IQR), n={len(values)}"
    )
    shapes = whiskers + box + middle
    return _mark("box", median, tooltip, shapes, q1=q1, q3=q3, low=low, high=high)


def _jitter(index: int) -> float:
    """A point's vertical offset within its box: the golden-ratio sequence spreads
    consecutive points evenly, with no randomness."""
    return ((index * 0.6180339887 + 0.5) % 1 - 0.5) * BOX_PX


def box_chart(groups: Sequence[BoxGroup], *, x_label: str, chart_id: str) -> str:
    """Horizontal box plots, a row per group: the quartile box, a median line, whiskers to
    the furthest values within 1.5 IQR of the box (Tukey's, as plotly drew them), and every
    value as a dot jittered by its index. The axis runs from min(0, smallest) to a round
    number at or past the largest. Non-finite values are skipped."""
    label = f"{x_label}: {len(groups)} groups"
    kept = [
        [(v, _at(g.tooltips, i)) for i, v in enumerate(g.values) if math.isfinite(v)]
        for g in groups
    ]
    values = [v for points in kept for v, _ in points]
    if not values:
        return _empty(chart_id, label)
    parts, x, top, bottom = _row_frame([g.label for g in groups], [], _domain(values), x_label)
    for i, (group, points) in enumerate(zip(groups, kept, strict=True)):
        y = _row_y(top, i)
        if points:
            parts.append(_box(group, [v for v, _ in points], x, y))
        for k, (value, tooltip) in enumerate(points):
            dot = _circle(x(value), y + _jitter(k), DOT_R, group.colour, ' fill-opacity="0.6"')
            parts.append(_mark("point", value, tooltip, dot))
    return _svg(chart_id, label, bottom + AXIS_PX, parts)


def timeline_chart(
    rows: Sequence[str],
    events: Sequence[TimelineMark],
    *,
    x_label: str,
    chart_id: str,
    legend: Sequence[tuple[str, str]] = (),
) -> str:
    """Events over time, a row per name (``rows`` in order, then rows only events name), a
    dot per event. The axis runs from min(0, earliest) to a round number at or past the
    latest; the legend lists the (colour, text) pairs whose colour is in use."""
    names = list(dict.fromkeys([*rows, *(e.row for e in events)]))
    label = f"{x_label}: {len(events)} events in {len(names)} rows"
    if not events:
        return _empty(chart_id, label)
    entries = _used(legend, {e.colour for e in events})
    domain = _domain([e.x for e in events])
    parts, x, top, bottom = _row_frame(names, entries, domain, x_label)
    parts.extend(
        _line(x.start, _row_y(top, i), x.end, _row_y(top, i), GRID) for i in range(len(names))
    )
    index = {name: i for i, name in enumerate(names)}
    for e in events:
        # A white outline keeps events at the same moment apart.
        dot = _circle(x(e.x), _row_y(top, index[e.row]), POINT_R, e.colour, ' stroke="#fff"')
        parts.append(_mark("event", e.x, e.tooltip, dot))
    return _svg(chart_id, label, bottom + AXIS_PX, parts)


def cheaper_and_better(points: Sequence[ScatterPoint]) -> list[ScatterPoint]:
    """The cheaper-and-better front, by x: the points no other point matches or beats on
    both lower x and higher y."""
    front: list[ScatterPoint] = []
    for p in sorted(points, key=lambda p: (p.x, -p.y)):
        if not front or p.y > front[-1].y:
            front.append(p)
    return front


def scatter_chart(
    points: Sequence[ScatterPoint],
    *,
    x_label: str,
    y_label: str,
    chart_id: str,
    x_min: float | None = None,
    x_max: float | None = None,
    y_min: float | None = None,
    y_max: float | None = None,
) -> str:
    """Labelled points with optional error bars both ways; a dashed line joins the
    cheaper-and-better front (see :func:`cheaper_and_better`), whose points are outlined. A
    bound not given comes from the data (from min(0, smallest) to a round number past the
    largest); values beyond are clamped. ``data-value`` is a point's y, ``data-x`` its x,
    ``data-front`` 1 on the front and 0 off it."""
    label = f"{y_label} against {x_label}: {len(points)} points"
    finite = [p for p in points if math.isfinite(p.x) and math.isfinite(p.y)]
    if not points:
        return _empty(chart_id, label)
    xs = [v for p in points for v in (p.x, p.x_low, p.x_high) if v is not None]
    ys = [v for p in points for v in (p.y, p.y_low, p.y_high) if v is not None]
    x_lo, x_hi, x_ticks = _domain(xs, x_min, x_max)
    y_lo, y_hi, y_ticks = _domain(ys, y_min, y_max)
    top, bottom = TOP_PX, TOP_PX + PLOT_PX
    x = _Scale(x_lo, x_hi, Y_AXIS_PX, WIDTH - RIGHT_PX)
    y = _Scale(y_lo, y_hi, bottom, top)
    parts = [
        _y_axis(y, y_ticks, y_label),
        _x_axis(x, x_ticks, top, bottom, x_label),
    ]
    front = cheaper_and_better(finite)
    if len(front) > 1:
        line = " ".join(f"{_px(x(p.x))},{_px(y(p.y))}" for p in front)
        parts.append(
            f'<polyline class="front" points="{line}" fill="none" stroke="{AXIS}" '
            'stroke-dasharray="4 3"/>'
        )
    placed: list[tuple[float, float, float]] = []
    for p in points:
        px, py = x(p.x), y(p.y)
        shapes = []
        if p.x_low is not None and p.x_high is not None:
            shapes.append(_error_bar(x(p.x_low), x(p.x_high), py, p.colour))
        if p.y_low is not None and p.y_high is not None:
            shapes.append(_error_bar(y(p.y_low), y(p.y_high), px, p.colour, vertical=True))
        on_front = any(p is f for f in front)
        outline = f' stroke="{REFERENCE}" stroke-width="1.5"' if on_front else ""
        shapes.append(_circle(px, py, POINT_R, p.colour, outline))
        # Labels sit up and to the right, or up and to the left near the right edge; one
        # that would cover a label already placed moves down a line at a time.
        width = CHAR_PX * min(len(p.label), POINT_LABEL_CHARS)
        left_side = px > x.start + 0.75 * (x.end - x.start)
        x0 = px - 8 - width if left_side else px + 8
        ly = _free_line(placed, x0, x0 + width, py - 12)
        placed.append((x0, x0 + width, ly))
        if left_side:
            shapes.append(_text(px - 8, ly, p.label, "end", POINT_LABEL_CHARS))
        else:
            shapes.append(_text(px + 8, ly, p.label, "start", POINT_LABEL_CHARS))
        parts.append(_mark("point", p.y, p.tooltip, "".join(shapes), x=p.x, front=float(on_front)))
    return _svg(chart_id, label, bottom + AXIS_PX, parts)


#: The height of one line of point labels.
LABEL_LINE_PX = 14


def _free_line(
    placed: Sequence[tuple[float, float, float]], x0: float, x1: float, y: float
) -> float:
    """The first ``y``, ``y + LABEL_LINE_PX``, ... where a label spanning ``x0``-``x1``
    overlaps none of the ``placed`` ones (``(x0, x1, y)`` each)."""
    while any(a < x1 and x0 < b and abs(y - ly) < LABEL_LINE_PX for a, b, ly in placed):
        y += LABEL_LINE_PX
    return y


def trend_chart(series: Sequence[TrendSeries], *, y_label: str, chart_id: str) -> str:
    """Rates in [0, 1] over runs, in %: a line per series through its points in ``x``
    order, each point with its interval and a link to its ``href``. The x ticks are the
    points' ``x_label``s, thinned to fit; a legend names the series."""
    label = f"{y_label}: {len(series)} series"
    points = [p for s in series for p in s.points]
    if not points:
        return _empty(chart_id, label)
    # Full names: the legend is where a series is told apart from the others.
    legend_svg, legend_px = _legend(
        [(s.colour, s.name) for s in series if s.points], Y_AXIS_PX, limit=0
    )
    top = legend_px + TOP_PX
    bottom = top + PLOT_PX
    tick_labels: dict[float, str] = {}
    for p in sorted(points, key=lambda p: p.x):
        if math.isfinite(p.x):
            tick_labels.setdefault(p.x, p.x_label)
    xs = list(tick_labels) or [0.0]
    x = _Scale(xs[0], xs[-1], Y_AXIS_PX + EDGE_PX, WIDTH - RIGHT_PX - EDGE_PX)
    y = _Scale(0.0, 100.0, bottom, top)
    step = math.ceil(len(xs) / max(1, int((x.end - x.start) // X_TICK_PX)))
    x_ticks = [(v, ellipsis(tick_labels.get(v, ""), X_TICK_CHARS)) for v in xs[::step]]
    parts = [
        _y_axis(y, [(t, _tick(t, "%")) for t in nice_ticks(0.0, 100.0)], y_label),
        _x_axis(x, x_ticks, top, bottom, ""),
        legend_svg,
    ]
    marks = []
    # Series are shifted apart, but never out of the frame: within the edge margin.
    spacing = DODGE_PX if len(series) < 2 else min(DODGE_PX, 2 * EDGE_PX / (len(series) - 1))
    for j, s in enumerate(series):
        dodge = (j - (len(series) - 1) / 2) * spacing
        ordered = sorted(s.points, key=lambda p: p.x)
        line = " ".join(f"{_px(x(p.x) + dodge)},{_px(y(100 * p.value))}" for p in ordered)
        parts.append(
            f'<polyline class="line" points="{line}" fill="none" stroke="{s.colour}" '
            'stroke-width="1.5"/>'
        )
        for p in ordered:
            px, py = x(p.x) + dodge, y(100 * p.value)
            shapes = _error_bar(y(100 * p.low), y(100 * p.high), px, s.colour, vertical=True)
            shapes += _circle(px, py, POINT_R, s.colour)
            marks.append(_mark("point", p.value, p.tooltip, shapes, p.href, **_ends(p)))
    return _svg(chart_id, label, bottom + AXIS_PX, parts + marks)
