"""``compare`` on a terminal: a comparison, or one run's agents side by side, as plain text
(aligned columns, wrapped sentences) that fits :data:`~harness.report.columns.WIDTH`
columns. report.md and ``compare --markdown`` say the same in Markdown."""

from __future__ import annotations

from harness.model.agents import AgentsComparison
from harness.model.comparison import Comparison, CostComparison
from harness.model.text import (
    agents_reference_line,
    baseline_label,
    comparison_sentences,
    cost_comparison_line,
    cost_gate_line,
    format_amount,
    format_ci,
    format_pct,
    format_ratio,
    format_ratio_ci,
    solo_shift_lines,
    standing_cost_cells,
    unit_label,
    versus_line,
)
from harness.report.columns import WIDTH, paragraph, table


def _pp(value: float | None) -> str:
    """A difference in points without its unit (the column header says pp)."""
    return "n/a" if value is None else f"{100 * value:+.1f}"


def _ci_pp(ci: tuple[float, float] | None) -> str:
    return "n/a" if ci is None else f"[{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"


def _sentences(lines: list[str], width: int) -> list[str]:
    return [wrapped for line in lines for wrapped in paragraph(line, width)]


def comparison_text(cmp: Comparison, width: int = WIDTH) -> str:
    """The comparison's verdicts and gate, then a row per fixture x model (x agent), then
    the cost comparison."""
    lines = paragraph(f"Comparison with {baseline_label(cmp)}", width)
    lines += paragraph(f"Baseline: {cmp.baseline}", width)
    lines += _sentences(comparison_sentences(cmp), width)
    lines += ["", *_fixture_table(cmp, width)]
    if cmp.cost is not None:
        lines += _cost_text(cmp.cost, width)
    if cmp.solo:
        lines += ["", "Swarm against its solo twin (informing: no gate reads it):"]
        lines += [f"  {line}" for line in solo_shift_lines(cmp)]
    return "\n".join(lines)


def _constant(values: list[str]) -> str | None:
    """The one value every row has (None: they differ, or there are no rows)."""
    return values[0] if values and len(set(values)) == 1 else None


def _conditions(
    cells: list[tuple[str, str]], by_agent: bool
) -> tuple[tuple[str, ...], list[tuple[str, ...]], list[str]]:
    """The condition columns of a table (agent where it is a dimension, model), each left
    out when every row has the same value and said once above the table instead."""
    said, heads, columns = [], [], []
    for n, name in enumerate(("agent", "model")):
        if name == "agent" and not by_agent:
            continue
        values = [c[n] for c in cells]
        same = _constant(values)
        if same is not None and len(values) > 1:
            said.append(f"{name}: {same}")
        else:
            heads.append(name)
            columns.append(values)
    rows: list[tuple[str, ...]] = (
        [tuple(r) for r in zip(*columns, strict=True)] if columns else [() for _ in cells]
    )
    return tuple(heads), rows, said


def _fixture_table(cmp: Comparison, width: int) -> list[str]:
    by_agent = any(f.agent for f in cmp.fixtures)
    power = any(f.trials_for_power for f in cmp.fixtures)
    heads, conditions, said = _conditions([(f.agent, f.model) for f in cmp.fixtures], by_agent)
    header = (
        "fixture", *heads, "baseline", "candidate", "Δ pp", "95% CI pp", "verdict",
        *(("80% power",) if power else ()),
    )  # fmt: skip
    rows = [
        (
            f.fixture,
            *condition,
            format_pct(f.baseline_rate),
            format_pct(f.candidate_rate),
            _pp(f.delta),
            _ci_pp(f.ci),
            f.verdict,
            *((str(f.trials_for_power or ""),) if power else ()),
        )
        for f, condition in zip(cmp.fixtures, conditions, strict=True)
    ]
    first = 1 + len(heads)
    right = {first, first + 1, first + 2, *((len(header) - 1,) if power else ())}
    lines = [*(paragraph(s, width)[0] for s in said)]
    lines += table(header, rows, right=right, width=width, wrap=range(first))
    if power:
        lines += paragraph(
            "80% power: trials per fixture in each run that would detect a drop of the "
            "threshold 80% of the time.",
            width,
        )
    return lines


def _cost_text(cost: CostComparison, width: int) -> list[str]:
    by_agent = any(r.agent for r in cost.fixtures)
    heads, conditions, said = _conditions([(r.agent, r.model) for r in cost.fixtures], by_agent)
    header = (
        "fixture", *heads, "baseline mean", "candidate mean", "ratio", "95% CI", "verdict",
    )  # fmt: skip
    rows = [
        (
            r.fixture,
            *condition,
            format_amount(r.mean_base, cost.unit),
            format_amount(r.mean_cand, cost.unit),
            format_ratio(r.ratio),
            format_ratio_ci(r.ci),
            r.verdict + (f" ({r.reason})" if r.reason else ""),
        )
        for r, condition in zip(cost.fixtures, conditions, strict=True)
    ]
    first = 1 + len(heads)
    wrap = (*range(first), len(header) - 1)  # the names, and a verdict's reason
    return [
        "",
        f"Cost per item ({unit_label(cost.unit)})",
        *_sentences([cost_comparison_line(cost), cost_gate_line(cost)], width),
        "",
        *(paragraph(s, width)[0] for s in said),
        *table(header, rows, right={first, first + 1, first + 2}, width=width, wrap=wrap),
    ]


def agents_text(agents: AgentsComparison, width: int = WIDTH) -> str:
    """The agents side by side: their rates, then their costs (two tables, so each fits),
    then each agent against the reference with its per-fixture rows."""
    lines = ["Agents side by side", *paragraph(agents_reference_line(agents), width), ""]
    heads, conditions, said = _conditions(
        [(s.agent, s.model) for s in agents.standings], by_agent=True
    )
    lines += [*(paragraph(s, width)[0] for s in said)]
    first = len(heads)
    rates = [
        (*condition, str(s.fixtures), str(s.n), str(s.errors), format_pct(s.rate), format_ci(s.ci))
        for s, condition in zip(agents.standings, conditions, strict=True)
    ]
    lines += table(
        (*heads, "fixtures", "n", "errors", "resolved", "95% CI"),
        rates,
        right={first, first + 1, first + 2, first + 3},
        width=width,
        wrap=range(first),
    )
    costs = [
        (*condition, *standing_cost_cells(s))
        for s, condition in zip(agents.standings, conditions, strict=True)
    ]
    lines.append("")
    lines += table(
        (*heads, "per item", "per resolved item", "tokens per resolved", "wall time"),
        costs,
        right={first, first + 3},
        width=width,
        wrap={*range(first), first + 1, first + 2},  # a figure and its interval wrap
    )
    for v in agents.versus:
        lines += ["", f"{v.agent} against {v.reference}", *paragraph(versus_line(v), width)]
        lines += _fixture_table(v.comparison, width)
    return "\n".join(lines)
