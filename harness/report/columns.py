"""Plain-text tables and paragraphs for a terminal: columns aligned with spaces, numbers to
the right, and every line kept within a width (a cell too long for its column wraps inside
it, a paragraph wraps under a hanging indent), so nothing runs off a 100-column terminal."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Collection, Sequence

#: The terminal width the harness's tables and paragraphs are laid out for: a common
#: terminal, and wide enough for a run's table without wrapping its cells.
WIDTH = 100
#: Spaces between two columns.
GAP = "  "
#: The narrowest a wrapped column gets when its pieces must be cut to fit.
MIN_WRAPPED = 10
#: Where a cell may wrap: after a space, a slash, a hyphen or a colon (``anthropic/`` +
#: ``claude-sonnet-4-5``), so names wrap at their own joints.
_BREAK = re.compile(r"(?<=[ /:-])")


def paragraph(text: str, width: int = WIDTH, indent: str = "") -> list[str]:
    """``text`` wrapped to ``width``, lines after the first under ``indent`` plus two
    spaces; words longer than a line (a path) stay whole."""
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_long_words=False,
        break_on_hyphens=False,
    ) or [indent.rstrip()]


def _pieces(cell: str) -> list[str]:
    return [p for p in _BREAK.split(cell) if p]


def _wrap_cell(cell: str, width: int) -> list[str]:
    """``cell`` in lines of at most ``width``, broken at its joints (a piece longer than a
    line is cut at the line's end)."""
    lines = [""]
    pieces = [whole[n : n + width] for whole in _pieces(cell) for n in range(0, len(whole), width)]
    for piece in pieces:
        if lines[-1] and len((lines[-1] + piece).rstrip()) > width:
            lines[-1] = lines[-1].rstrip()
            lines.append(piece.lstrip())
        else:
            lines[-1] += piece
    return [line.rstrip() for line in lines]


def table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    right: Collection[int] = (),
    width: int = WIDTH,
    indent: str = "",
    wrap: Collection[int] | None = None,
) -> list[str]:
    """``header`` and ``rows`` as aligned lines; the columns in ``right`` (numbers) are
    right-aligned. When the table is wider than ``width``, the widest of the columns in
    ``wrap`` (default: every column not in ``right``) are narrowed, down to their longest
    unbreakable piece, and their cells wrap onto more lines."""
    count = len(header)
    every = [tuple(header), *(tuple(r) for r in rows)]
    widths = [max(len(r[i]) for r in every) for i in range(count)]
    wrappable = set(range(count)) - set(right) if wrap is None else set(wrap)
    pieces = [
        max(len(p.strip()) for r in every for p in _pieces(r[i]) or [""]) for i in range(count)
    ]
    # First down to the longest piece (names wrap at their joints), then, if that is not
    # enough, down to the header (a piece longer than that is cut where the line ends).
    for floors in (
        [max(pieces[i], len(header[i])) for i in range(count)],
        [max(len(header[i]), MIN_WRAPPED) for i in range(count)],
    ):
        excess = len(indent) + sum(widths) + len(GAP) * (count - 1) - width
        while excess > 0:
            shrinkable = [i for i in wrappable if widths[i] > floors[i]]
            if not shrinkable:
                break  # as narrow as these floors allow
            widest = max(shrinkable, key=lambda i: widths[i])
            others = [widths[i] for i in shrinkable if i != widest]
            # Down to the next widest (wide columns shrink together), at most the excess.
            step = min(excess, widths[widest] - max([floors[widest], *others]) or 1)
            widths[widest] -= step
            excess -= step
    wrapped = [[_wrap_cell(cell, widths[i]) for i, cell in enumerate(row)] for row in every]
    # A wrapped column is as wide as its longest line now, which may be less than allowed.
    widths = [max(len(line) for cells in wrapped for line in cells[i]) for i in range(count)]
    lines = []
    for cells in wrapped:
        for n in range(max(len(c) for c in cells)):
            parts = [
                (c[n] if n < len(c) else "").rjust(widths[i])
                if i in right
                else (c[n] if n < len(c) else "").ljust(widths[i])
                for i, c in enumerate(cells)
            ]
            lines.append((indent + GAP.join(parts)).rstrip())
    return lines
