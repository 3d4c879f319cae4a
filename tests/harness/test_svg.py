"""The inline SVG charts: well-formed, one mark per datum carrying its value and tooltip,
nothing drawn outside the frame, user text escaped, empty input drawn as "no data", and the
same bytes for the same input. No browser: the markup is parsed as XML."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterator
from xml.etree import ElementTree as ET

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.report.svg import (
    AXIS_PX,
    BOX_PX,
    EMPTY_PX,
    EVENT_COLOURS,
    LABEL_PX,
    RIGHT_PX,
    ROW_PX,
    SERIES_COLOURS,
    TOP_PX,
    VERDICT_COLOURS,
    WIDTH,
    BarSeries,
    BoxGroup,
    IntervalRow,
    ScatterPoint,
    TimelineMark,
    TrendPoint,
    TrendSeries,
    bar_chart,
    box_chart,
    ellipsis,
    interval_chart,
    nice_ticks,
    scatter_chart,
    timeline_chart,
    trend_chart,
)

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert(1)</script> & "x"'
BLUE, ORANGE = SERIES_COLOURS[:2]

# ------------------------------------------------------------------ charts of a typical run


def interval(
    values: list[float] | None = None,
    label: str = "f1 · m1",
    *,
    x_min: float = -3.0,
    x_max: float = 103.0,
    band: tuple[float, float] | None = None,
    reference: float | None = None,
    legend: list[tuple[str, str]] | None = None,
) -> str:
    values = [80.0, 50.0, 100.0, 33.3] if values is None else values
    rows = [
        IntervalRow(f"{label} {i}", v, v - 20, v + 15, (BLUE, ORANGE)[i % 2], f"{label}: {v}")
        for i, v in enumerate(values)
    ]
    return interval_chart(
        rows,
        x_min=x_min,
        x_max=x_max,
        x_label=label,
        chart_id="c",
        band=band,
        reference=reference,
        legend=legend or [],
    )


def bars(values: list[float] | None = None, label: str = "tests_pass") -> str:
    values = [0.0, 50.0, 100.0, 12.5] if values is None else values
    series = [
        BarSeries(f"{label} a", values[:2], [f"{label} a{i}" for i in range(2)], BLUE),
        BarSeries(f"{label} b", values[2:], [f"{label} b{i}" for i in range(2)], ORANGE),
    ]
    return bar_chart([label, "spawned"], series, y_max=105, y_label=label, chart_id="c")


BOX_VALUES = [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 100.0], [40_000.0, 52_000.0]]


def boxes(label: str = "f1 · m1") -> str:
    groups = [
        BoxGroup(f"{label} {i}", values, [f"{label} #{k}" for k in range(len(values))])
        for i, values in enumerate(BOX_VALUES)
    ]
    return box_chart(groups, x_label=label, chart_id="c")


TIMES = [0.0, 1.5, 12.25, 40.0]


def timeline(label: str = "lead") -> str:
    kinds = list(EVENT_COLOURS)
    events = [
        TimelineMark(t, (label, "worker")[i % 2], EVENT_COLOURS[kinds[i]], f"{label} {t}")
        for i, t in enumerate(TIMES)
    ]
    legend = [(colour, f"{label} {kind}") for kind, colour in EVENT_COLOURS.items()]
    return timeline_chart([label, "worker"], events, x_label="s", chart_id="c", legend=legend)


SCATTER = [(0.12, 83.0), (0.03, 50.0), (0.2, 70.0)]


def scatter(label: str = "model", **bounds: float) -> str:
    points = [
        ScatterPoint(
            x, y, f"{label} {i}", BLUE, f"{label}: {x}, {y}", x * 0.8, x * 1.2, y - 5, y + 5
        )
        for i, (x, y) in enumerate(SCATTER)
    ]
    return scatter_chart(points, x_label=label, y_label="rate (%)", chart_id="c", **bounds)


RATES = [0.5, 0.6, 0.55, 0.8]


def trend(label: str = "model", rates: list[float] | None = None, href: str = "r.html") -> str:
    rates = RATES if rates is None else rates
    points = [
        TrendPoint(i, f"05-{10 + i}", v, v - 0.1, v + 0.1, f"{label} {v}", href)
        for i, v in enumerate(rates)
    ]
    return trend_chart([TrendSeries(label, BLUE, points)], y_label=label, chart_id="c")


#: Each chart with the kind of its data marks and the values they must carry, in order.
CHARTS = [
    pytest.param(interval, "point", [80.0, 50.0, 100.0, 33.3], id="interval"),
    pytest.param(bars, "bar", [0.0, 100.0, 50.0, 12.5], id="bar"),
    pytest.param(boxes, "point", [v for vs in BOX_VALUES for v in vs], id="box"),
    pytest.param(timeline, "event", TIMES, id="timeline"),
    pytest.param(scatter, "point", [y for _, y in SCATTER], id="scatter"),
    pytest.param(trend, "point", RATES, id="trend"),
]

# ----------------------------------------------------------------------------------- reading


def marks(root: ET.Element, kind: str) -> list[ET.Element]:
    return [e for e in root.iter() if {"mark", kind} <= set(e.get("class", "").split())]


def classed(root: ET.Element, name: str) -> list[ET.Element]:
    return [e for e in root.iter() if name in e.get("class", "").split()]


def texts(root: ET.Element, tag: str) -> list[str]:
    return ["".join(e.itertext()) for e in root.iter(SVG + tag)]


def path_points(d: str) -> Iterator[tuple[float, float]]:
    """The points a path of M, L, H, V and Z commands visits."""
    x = y = 0.0
    for command, args in re.findall(r"([MLHVZ])([^MLHVZ]*)", d):
        numbers = [float(n) for n in args.split()]
        if command in "ML":
            x, y = numbers
        elif command == "H":
            (x,) = numbers
        elif command == "V":
            (y,) = numbers
        yield x, y


#: The attributes that place a shape.
GEOMETRY = {"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "width", "height"}


def drawn_points(root: ET.Element) -> Iterator[tuple[float, float]]:
    """Every coordinate a shape or text is drawn at."""
    for e in root.iter():
        a = {k: float(v) for k, v in e.attrib.items() if k in GEOMETRY}
        tag = e.tag.removeprefix(SVG)
        if tag == "line":
            yield from ((a["x1"], a["y1"]), (a["x2"], a["y2"]))
        elif tag == "circle":
            yield a["cx"], a["cy"]
        elif tag == "rect":
            yield from ((a["x"], a["y"]), (a["x"] + a["width"], a["y"] + a["height"]))
        elif tag == "text":
            yield a["x"], a["y"]
        elif tag == "path":
            yield from path_points(e.attrib["d"])
        elif tag == "polyline":
            for pair in e.attrib["points"].split():
                px, py = pair.split(",")
                yield float(px), float(py)


def view_box(root: ET.Element) -> tuple[float, float]:
    _, _, width, height = (float(n) for n in root.attrib["viewBox"].split())
    return width, height


def child(e: ET.Element, tag: str) -> ET.Element:
    found = e.find(SVG + tag)
    assert found is not None
    return found


def centre(mark: ET.Element) -> tuple[float, float]:
    circle = child(mark, "circle")
    return float(circle.attrib["cx"]), float(circle.attrib["cy"])


# ------------------------------------------------------------------------------------ tests


@pytest.mark.parametrize(("build", "kind", "expected"), CHARTS)
def test_every_chart_is_one_well_formed_svg_element(
    build: Callable[[], str], kind: str, expected: list[float]
) -> None:
    markup = build()
    root = ET.fromstring(markup)  # raises unless well-formed
    assert markup.startswith('<svg xmlns="http://www.w3.org/2000/svg" id="c" class="chart"')
    assert root.tag == SVG + "svg" and root.attrib["role"] == "img" and root.attrib["aria-label"]
    assert view_box(root) == (WIDTH, float(root.attrib["height"]))
    assert root.attrib["width"] == str(WIDTH)


@pytest.mark.parametrize(("build", "kind", "expected"), CHARTS)
def test_one_mark_per_datum_carrying_its_value(
    build: Callable[[], str], kind: str, expected: list[float]
) -> None:
    found = marks(ET.fromstring(build()), kind)
    assert len(found) == len(expected)
    assert [float(m.attrib["data-value"]) for m in found] == pytest.approx(expected)


@pytest.mark.parametrize(("build", "kind", "expected"), CHARTS)
def test_every_mark_opens_with_its_tooltip(
    build: Callable[[], str], kind: str, expected: list[float]
) -> None:
    for mark in classed(ET.fromstring(build()), "mark"):
        title = mark[0]
        assert title.tag == SVG + "title" and title.text


@pytest.mark.parametrize(("build", "kind", "expected"), CHARTS)
def test_same_input_gives_the_same_bytes_and_round_coordinates(
    build: Callable[[], str], kind: str, expected: list[float]
) -> None:
    markup = build()
    assert markup == build()
    coordinates = re.findall(r' (?:c?[xy][12]?|width|height|d|points)="([^"]*)"', markup)
    numbers = [n for c in coordinates for n in re.findall(r"-?[\d.]+(?:e-?\d+)?", c)]
    assert numbers and all(re.fullmatch(r"-?\d+(\.\d)?", n) for n in numbers)


CLAMPED = [
    pytest.param(lambda: interval([250.0, -40.0, math.nan, math.inf]), id="interval"),
    pytest.param(lambda: bars([250.0, -5.0, 1e9, -math.inf]), id="bar"),
    pytest.param(lambda: scatter(x_min=0.05, x_max=0.1, y_min=60, y_max=80), id="scatter"),
    pytest.param(lambda: trend(rates=[1.5, -0.5, 0.2]), id="trend"),
    pytest.param(lambda: boxes(), id="box"),
    pytest.param(lambda: timeline(), id="timeline"),
]


@pytest.mark.parametrize("build", CLAMPED)
def test_values_beyond_the_axis_are_drawn_inside_the_view_box(build: Callable[[], str]) -> None:
    root = ET.fromstring(build())
    width, height = view_box(root)
    points = list(drawn_points(root))
    assert points
    assert all(0 <= x <= width and 0 <= y <= height for x, y in points)


#: Any float, NaN and infinities included.
FLOATS = st.floats()


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.text(max_size=40), FLOATS, FLOATS, FLOATS), max_size=4),
    x_min=FLOATS,
    x_max=FLOATS,
    groups=st.lists(st.lists(FLOATS, max_size=6), max_size=3),
)
def test_any_numbers_and_text_give_well_formed_charts_drawn_inside(
    rows: list[tuple[str, float, float, float]],
    x_min: float,
    x_max: float,
    groups: list[list[float]],
) -> None:
    intervals = [IntervalRow(t, v, lo, hi, BLUE, t) for t, v, lo, hi in rows]
    box_groups = [BoxGroup(f"g{i}", values, []) for i, values in enumerate(groups)]
    for markup in (
        interval_chart(intervals, x_min=x_min, x_max=x_max, x_label="x", chart_id="c"),
        box_chart(box_groups, x_label="x", chart_id="c"),
    ):
        root = ET.fromstring(markup)
        width, height = view_box(root)
        assert all(0 <= x <= width and 0 <= y <= height for x, y in drawn_points(root))


def test_an_interval_beyond_the_axis_is_clamped_to_the_frame() -> None:
    root = ET.fromstring(interval([250.0, -40.0]))
    high, low = marks(root, "point")
    assert centre(high)[0] == WIDTH - RIGHT_PX and centre(low)[0] == LABEL_PX
    assert high.attrib["data-value"] == "250"  # the value itself, not where it is drawn


HOSTILE_CHARTS = [
    pytest.param(lambda: interval(label=HOSTILE, legend=[(BLUE, HOSTILE)]), id="interval"),
    pytest.param(lambda: bars(label=HOSTILE), id="bar"),
    pytest.param(lambda: boxes(label=HOSTILE), id="box"),
    pytest.param(lambda: timeline(label=HOSTILE), id="timeline"),
    pytest.param(lambda: scatter(label=HOSTILE), id="scatter"),
    pytest.param(lambda: trend(label=HOSTILE, href=HOSTILE), id="trend"),
]


@pytest.mark.parametrize("build", HOSTILE_CHARTS)
def test_user_text_is_escaped(build: Callable[[], str]) -> None:
    markup = build()
    root = ET.fromstring(markup)
    assert "<script" not in markup and "&lt;script&gt;" in markup
    assert not [e for e in root.iter() if e.tag.endswith("script")]
    assert any(HOSTILE in t for t in texts(root, "title") + texts(root, "text"))


def test_characters_xml_forbids_are_replaced() -> None:
    root = ET.fromstring(interval(label="bell\x07 nul\x00 \ud800"))
    assert "bell\ufffd nul\ufffd \ufffd 0" in texts(root, "text")


EMPTY = [
    pytest.param(
        lambda: interval_chart([], x_min=0, x_max=1, x_label="x", chart_id="c"), id="interval"
    ),
    pytest.param(lambda: bar_chart([], [], y_max=1, y_label="y", chart_id="c"), id="bar"),
    pytest.param(
        lambda: bar_chart(["a"], [], y_max=1, y_label="y", chart_id="c"), id="bar-no-series"
    ),
    pytest.param(lambda: box_chart([], x_label="x", chart_id="c"), id="box"),
    pytest.param(
        lambda: box_chart([BoxGroup("g", [math.nan], [])], x_label="x", chart_id="c"),
        id="box-no-values",
    ),
    pytest.param(lambda: timeline_chart(["lead"], [], x_label="x", chart_id="c"), id="timeline"),
    pytest.param(lambda: scatter_chart([], x_label="x", y_label="y", chart_id="c"), id="scatter"),
    pytest.param(lambda: trend_chart([], y_label="y", chart_id="c"), id="trend"),
    pytest.param(
        lambda: trend_chart([TrendSeries("s", BLUE, [])], y_label="y", chart_id="c"),
        id="trend-no-points",
    ),
]


@pytest.mark.parametrize("build", EMPTY)
def test_empty_input_draws_a_short_no_data_chart(build: Callable[[], str]) -> None:
    root = ET.fromstring(build())
    assert texts(root, "text") == ["no data"]
    assert not classed(root, "mark") and float(root.attrib["height"]) == EMPTY_PX


def bar_tops(markup: str) -> list[float]:
    root = ET.fromstring(markup)
    return [float(child(m, "rect").attrib["y"]) for m in marks(root, "bar")]


def medians(markup: str) -> list[float]:
    return [float(child(m, "line").attrib["x1"]) for m in marks(ET.fromstring(markup), "box")]


def centres(markup: str, kind: str, axis: int) -> list[float]:
    return [centre(m)[axis] for m in marks(ET.fromstring(markup), kind)]


@pytest.mark.parametrize(
    ("positions", "direction"),
    [
        pytest.param(lambda: centres(interval([10, 20, 90]), "point", 0), 1, id="interval"),
        pytest.param(lambda: bar_tops(bars([10, 30, 20, 90])), -1, id="bar-higher"),
        pytest.param(lambda: medians(boxes()), 1, id="box"),
        pytest.param(lambda: centres(timeline(), "event", 0), 1, id="timeline"),
        pytest.param(lambda: centres(trend(rates=[0.1, 0.3, 0.9]), "point", 1), -1, id="trend-y"),
    ],
)
def test_a_larger_value_is_drawn_further_right_or_higher(
    positions: Callable[[], list[float]], direction: int
) -> None:
    drawn = positions()
    assert all(direction * (b - a) > 0 for a, b in itertools.pairwise(drawn))


def test_a_scatter_point_further_right_or_higher_has_a_larger_x_or_y() -> None:
    drawn = [centre(m) for m in marks(ET.fromstring(scatter()), "point")]
    for axis, direction in ((0, 1), (1, -1)):
        ordered = sorted(zip(SCATTER, drawn, strict=True), key=lambda pair: pair[0][axis])
        at = [direction * px[axis] for _, px in ordered]
        assert at == sorted(at) and len(set(at)) == len(at)


@pytest.mark.parametrize(
    ("lo", "hi", "expected"),
    [
        pytest.param(0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1], id="0..1"),
        pytest.param(0, 173, [0, 50, 100, 150, 200], id="0..173"),
        pytest.param(3, 7, [3, 4, 5, 6, 7], id="3..7"),
        pytest.param(-3, 103, [-20, 0, 20, 40, 60, 80, 100, 120], id="-3..103"),
        pytest.param(1, 0, [0, 0.2, 0.4, 0.6, 0.8, 1], id="reversed"),
        pytest.param(0, 0, [-1, -0.5, 0, 0.5, 1], id="zero-width-at-0"),
        pytest.param(5, 5, [4.4, 4.6, 4.8, 5, 5.2, 5.4, 5.6], id="zero-width"),
        pytest.param(0, math.inf, [0, 1], id="infinite"),
    ],
)
def test_nice_ticks(lo: float, hi: float, expected: list[float]) -> None:
    assert nice_ticks(lo, hi) == expected


@pytest.mark.parametrize(
    ("lo", "hi"), [(0, 1), (0, 0.3), (-7.3, 12.9), (0, 123_456), (1e-7, 3e-7), (17, 17)]
)
def test_nice_ticks_cover_the_range_in_round_steps(lo: float, hi: float) -> None:
    ticks = nice_ticks(lo, hi)
    assert ticks[0] <= lo and ticks[-1] >= hi and 4 <= len(ticks) <= 11
    steps = {round(b - a, 12) for a, b in itertools.pairwise(ticks)}
    assert len(steps) == 1
    (step,) = steps
    assert round(step / 10 ** math.floor(math.log10(step)), 9) in (1, 2, 5)
    assert all(len(repr(t)) <= 8 for t in ticks)  # 0.3, never 0.30000000000000004


@pytest.mark.parametrize(
    ("band", "reference"),
    [
        pytest.param(None, None, id="neither"),
        pytest.param((-5.0, 5.0), None, id="band"),
        pytest.param(None, 0.0, id="reference"),
        pytest.param((-500.0, 5.0), 0.0, id="both"),
    ],
)
def test_band_and_reference_are_drawn_only_when_asked(
    band: tuple[float, float] | None, reference: float | None
) -> None:
    root = ET.fromstring(interval(x_min=-103, x_max=103, band=band, reference=reference))
    assert len(classed(root, "band")) == (band is not None)
    assert len(classed(root, "reference")) == (reference is not None)
    for rect in classed(root, "band"):
        assert float(rect.attrib["x"]) >= LABEL_PX  # clamped to the frame
        assert float(rect.attrib["x"]) + float(rect.attrib["width"]) <= WIDTH - RIGHT_PX


def test_the_legend_shows_only_colours_in_use_and_only_with_several() -> None:
    legend = [(colour, verdict) for verdict, colour in VERDICT_COLOURS.items()]
    rows = [IntervalRow("a", 1, 0, 2, VERDICT_COLOURS["improved"], "t")]
    one = ET.fromstring(
        interval_chart(rows, x_min=0, x_max=3, x_label="x", chart_id="c", legend=legend)
    )
    assert not classed(one, "legend")
    rows.append(IntervalRow("b", 1, 0, 2, VERDICT_COLOURS["regressed"], "t"))
    two = ET.fromstring(
        interval_chart(rows, x_min=0, x_max=3, x_label="x", chart_id="c", legend=legend)
    )
    (shown,) = classed(two, "legend")
    assert texts(shown, "text") == ["regressed", "improved"]


def test_the_chart_grows_a_row_at_a_time() -> None:
    def height(n: int) -> float:
        return float(ET.fromstring(interval([50.0] * n)).attrib["height"])

    assert height(20) == TOP_PX + 20 * ROW_PX + AXIS_PX
    assert height(21) - height(20) == ROW_PX


def test_a_long_label_is_ellipsised_with_the_full_text_in_its_tooltip() -> None:
    label = "a-fixture-with-a-remarkably-long-name · some-model-2025-01-01"
    root = ET.fromstring(interval([50.0], label=label))
    (rows,) = classed(root, "rows")
    (row,) = rows
    assert "".join(row.itertext()).endswith("…") and row[0].text == f"{label} 0"


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("short", 10, "short"),
        ("exactly10!", 10, "exactly10!"),
        ("longer text", 6, "longe…"),
        ("x", 0, ""),
    ],
)
def test_ellipsis(text: str, limit: int, expected: str) -> None:
    assert ellipsis(text, limit) == expected


def test_a_box_has_quartiles_and_whiskers_within_one_and_a_half_iqr() -> None:
    box = marks(ET.fromstring(boxes()), "box")[0]
    stats = {k.removeprefix("data-"): float(v) for k, v in box.attrib.items() if k != "class"}
    # Linear interpolation on 1..9, 100: the outlier 100 lies past q3 + 1.5 IQR = 14.5.
    assert stats == {"value": 5.5, "q1": 3.25, "q3": 7.75, "low": 1, "high": 9}


def test_box_points_are_jittered_across_the_box_without_randomness() -> None:
    root = ET.fromstring(boxes())
    row_y = float(child(marks(root, "box")[0], "rect").attrib["y"]) + BOX_PX / 2
    ys = [centre(p)[1] for p in marks(root, "point")[: len(BOX_VALUES[0])]]
    assert all(abs(y - row_y) <= BOX_PX / 2 for y in ys) and len(set(ys)) > 5


def test_a_mark_with_an_href_is_a_link_and_a_diamond_is_a_path() -> None:
    rows = [
        IntervalRow("a", 1, 0, 2, BLUE, "t", href="items/a.html"),
        IntervalRow("overall", 1, 0, 2, BLUE, "t", marker="diamond"),
    ]
    root = ET.fromstring(interval_chart(rows, x_min=0, x_max=3, x_label="x", chart_id="c"))
    links = list(root.iter(SVG + "a"))
    assert [a.attrib["href"] for a in links] == ["items/a.html"]
    assert links[0][0].get("class") == "mark point"
    diamond = marks(root, "point")[1]
    assert diamond.find(SVG + "circle") is None and len(diamond.findall(SVG + "path")) == 2


def test_the_scatter_joins_the_cheaper_and_better_front() -> None:
    points = [(0.5, 40), (1, 50), (2, 80), (3, 60), (1, 45)]  # (3, 60) and (1, 45) are beaten
    chart = scatter_chart(
        [ScatterPoint(x, y, f"m{x}", BLUE, "t") for x, y in points],
        x_label="cost",
        y_label="rate",
        chart_id="c",
    )
    (front,) = classed(ET.fromstring(chart), "front")
    assert len(front.attrib["points"].split()) == 3


def test_scatter_labels_of_near_points_do_not_cover_each_other() -> None:
    """Two agents with near costs and the same rate: the second label moves down a line."""
    points = [(0.20, 100), (0.232, 100), (0.036, 100)]
    chart = scatter_chart(
        [ScatterPoint(x, y, f"agent-{x} · scripted/honest", BLUE, "t") for x, y in points],
        x_label="cost",
        y_label="rate",
        chart_id="c",
    )
    labels = [
        (float(t.attrib["x"]), float(t.attrib["y"]))
        for m in marks(ET.fromstring(chart), "point")
        for t in m.iter("{http://www.w3.org/2000/svg}text")
    ]
    assert len(labels) == 3
    (_, y_near1), (_, y_near2) = labels[0], labels[1]
    assert abs(y_near1 - y_near2) >= 14  # a line apart
    assert labels[2][1] == y_near1  # the far point keeps its place


def test_a_timeline_adds_rows_only_events_name() -> None:
    events = [TimelineMark(1, "worker", BLUE, "t"), TimelineMark(2, "lead", BLUE, "t")]
    root = ET.fromstring(timeline_chart(["lead"], events, x_label="s", chart_id="c"))
    (rows,) = classed(root, "rows")
    assert texts(rows, "text") == ["lead", "worker"]


def test_a_long_trend_thins_its_x_ticks() -> None:
    root = ET.fromstring(trend(rates=[0.5] * 40))
    (axis,) = classed(root, "x-axis")
    shown = texts(axis, "text")
    assert 4 <= len(shown) <= 9 and shown[0] == "05-10"


def test_data_values_carry_no_float_noise() -> None:
    root = ET.fromstring(bars([0.1 + 0.2, 1 / 3, 2.0, -0.0]))
    assert [m.attrib["data-value"] for m in marks(root, "bar")] == ["0.3", "2", "0.333333", "0"]
