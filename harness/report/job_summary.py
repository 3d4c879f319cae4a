"""The CI job summary (GitHub's ``$GITHUB_STEP_SUMMARY``): the verdict line, one row per
fixture × agent × model with its comparison, the overall comparison and cost verdicts, the
budget, and where the full report is. Short on purpose: report.html holds the rest."""

from __future__ import annotations

from harness.model.comparison import FixtureComparison
from harness.model.report import RunReport
from harness.model.text import (
    budget_line,
    comparison_sentences,
    cost_comparison_line,
    cost_gate_line,
    cost_line,
    format_ci,
    format_pct,
    format_pp,
    verdict_line,
)

#: The heading of every summary the action writes (a job may hold several: one per use).
TITLE = "swarm-harness"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _compared(
    cells: dict[tuple[str, str, str], FixtureComparison], key: tuple[str, str, str]
) -> tuple[str, str]:
    """A row's verdict and Δ (a comparison of one agent on each side names no agent)."""
    fixture, _, model = key
    c = cells.get(key) or cells.get((fixture, "", model))
    return ("", "") if c is None else (c.verdict, format_pp(c.delta))


def render_job_summary(report: RunReport, exit_code: int, report_pointer: str) -> str:
    """The summary of one run: ``report_pointer`` says where report.html is (a link to the
    uploaded artifact, or the artifact's name)."""
    cmp = report.comparison
    lines = [
        f"### {TITLE} run `{report.run_id}` (exit {exit_code})",
        "",
        f"**{_cell(verdict_line(report))}**",
        "",
    ]
    head = "| fixture | agent | model | resolved | rate | 95% CI | cost per item |"
    rule = "|---|---|---|---|---|---|---|"
    if cmp is not None:
        head += " vs baseline | Δ |"
        rule += "---|---|"
    lines += [head, rule]
    cells = {(c.fixture, c.agent, c.model): c for c in cmp.fixtures} if cmp is not None else {}
    for s in report.summary:
        row = (
            f"| {_cell(s.fixture)} | {_cell(s.agent)} | {_cell(s.model)} "
            f"| {s.resolved}/{s.n - s.errors}{f' ({s.errors} errors)' if s.errors else ''} "
            f"| {format_pct(s.rate)} | {format_ci(s.ci)} | {_cell(cost_line(s))} |"
        )
        if cmp is not None:
            verdict, delta = _compared(cells, (s.fixture, s.agent, s.model))
            row += f" {verdict} | {delta} |"
        lines.append(row)
    notes: list[str] = []
    if cmp is not None:
        notes += comparison_sentences(cmp, lambda t: f"`{t}`")
        if cmp.cost is not None:
            notes += [cost_comparison_line(cmp.cost), cost_gate_line(cmp.cost, lambda t: f"`{t}`")]
    budget = budget_line(report)
    if budget is not None:
        notes.append(budget.replace("RUN", report.run_id))
    lines += ["", *(f"- {_cell(n)}" for n in notes), *([""] if notes else [])]
    lines += [f"The full report: {report_pointer}", "", ""]
    return "\n".join(lines)
