"""The small pieces every part of report.html is built from: escaping, numbers, table cells
and the first cells of a fixture x model row (its agent too, where that is a dimension)."""

from __future__ import annotations

import html

from harness.model.summary import PerResolved
from harness.model.text import format_amount, format_per_resolved, format_per_resolved_ci


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def number(value: object, digits: int = 0) -> str:
    return "n/a" if not isinstance(value, int | float) else f"{value:,.{digits}f}"


def item_anchor(key: str) -> str:
    return "item-" + "".join(c if c.isalnum() else "-" for c in key)


def td(text: str, field: str, value: object = None, css: str = "", extra: str = "") -> str:
    raw = "" if value is None else f' data-value="{esc(value)}"'
    cls = f' class="{css}"' if css else ""
    return f'<td data-field="{field}"{raw}{cls}{extra}>{esc(text)}</td>'


def row_attrs(fixture: str, agent: str, model: str, with_agent: bool) -> str:
    """A fixture x model row's ``data-*`` attributes; ``data-agent`` where the agent is a
    dimension (a run of several agents)."""
    agent_attr = f' data-agent="{esc(agent)}"' if with_agent else ""
    return f'data-fixture="{esc(fixture)}"{agent_attr} data-model="{esc(model)}"'


def row_cells(fixture: str, agent: str, model: str, with_agent: bool) -> str:
    """A fixture x model row's first cells: fixture, agent (where it is a dimension), model."""
    agent_cell = f"<td>{esc(agent)}</td>" if with_agent else ""
    return f"<td>{esc(fixture)}</td>{agent_cell}<td>{esc(model)}</td>"


def row_heads(with_agent: bool) -> str:
    return "<th>fixture</th>" + ("<th>agent</th>" if with_agent else "") + "<th>model</th>"


def per_resolved_td(entry: PerResolved | None, unit: str, field: str, bound: str = "") -> str:
    """A cost per resolved item (in ``unit``) with its interval under it; the whole sentence
    is the cell's title, ``bound`` (``at least ``) before it when the usage is a lower
    bound. The summary table and the agents' standings show it alike."""
    full = format_per_resolved(entry, unit)
    if entry is None or entry.value is None:
        return td(full, field, None, "num", f' data-unit="{unit}"')
    interval = format_per_resolved_ci(entry, unit)
    ci = f"<small>{esc(interval)}</small>" if interval else ""
    return (
        f'<td data-field="{field}" data-value="{esc(entry.value)}" class="num" '
        f'data-unit="{unit}" title="{esc(bound + full)}">'
        f"{esc(bound + format_amount(entry.value, unit))}{ci}</td>"
    )
