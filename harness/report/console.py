"""The result of ``run`` on stdout: per fixture x model, the comparison and the report path.

Item lines went to stderr as each item finished (:mod:`harness.report.progress`) and are
not repeated here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.model.comparison import fail_on_parts, not_run
from harness.model.provider_text import health_line
from harness.model.report import REPORT_FILE, RunReport
from harness.model.text import (
    agents_lines,
    baseline_label,
    budget_line,
    condition_label,
    cost_comparison_line,
    cost_line,
    format_ci,
    format_ci_pp,
    format_pct,
    format_pp,
    plural,
    sequential_line,
    several_agents,
    solo_lines,
    unpriced_line,
)
from scorers.criteria import criterion_names

#: Failure groups named on the console; report.md lists them all.
TRIAGE_SHOWN = 5


def summary_text(
    report: RunReport, run_dir: Path, exit_code: int, pages: Sequence[Path] = ()
) -> str:
    """The result of ``run``: a line per cell, the run overall, the comparison, notes, and
    where the report is (report.json, then ``pages``: the other files written, e.g. the
    HTML page)."""
    lines = []
    budget = budget_line(report)
    if budget is not None and report.budget is not None and report.budget.exhausted:
        lines.append(budget.replace("RUN", str(run_dir)))  # said first: the run stopped
    if report.options.origin:
        lines.append(
            f"re-ran {plural(len(report.options.only_keys), 'item')} that failed in "
            f"{report.options.origin}"
        )
    several = several_agents(report)
    for s in report.summary:
        ci = f", 95% CI {format_ci(s.ci, 0)}" if s.ci else ""
        failing = [
            f"{c} {s.n - s.criteria[c].count}"
            for c in criterion_names()
            # A criterion no item recorded (a solo twin's swarm criteria) is not failed.
            if s.n and s.criteria[c].rate is not None and s.criteria[c].count < s.n
        ]
        lines.append(
            f"{s.fixture} x {condition_label(s.agent, s.model, several)}: {s.resolved}/{s.n} resolved ({format_pct(s.rate, 0)}{ci}), "
            f"{s.n - s.resolved} unresolved, {plural(s.errors, 'error')}"
            + (f"; failed criteria: {', '.join(failing)}" if failing else "")
        )
        lines.append(f"  {cost_line(s)}")
        auto = sequential_line(s)
        if auto is not None:
            lines.append(f"  {auto}")
    lines.append(overall_line(report))
    lines.extend(solo_lines(report))
    if report.provider is not None:
        lines.append(health_line(report.provider))
    if report.triage:
        shown = report.triage[:TRIAGE_SHOWN]
        more = len(report.triage) - len(shown)
        lines.append(
            "how items failed: "
            + "; ".join(g.label for g in shown)
            + (f"; +{more} more in report.md" if more > 0 else "")
        )
    if report.agents is not None:
        lines.extend(agents_lines(report.agents))
    cmp = report.comparison
    if cmp is not None:
        o = cmp.overall
        ci = f", 95% CI {format_ci_pp(o.ci)}" if o.ci else ""
        lines.append(f"baseline: {baseline_label(cmp)}")
        seq = cmp.sequential
        if seq is not None:
            lines.append(
                f"vs baseline (sequential, anytime-valid, what the gate reads): {seq.status}"
                + (f": {', '.join(seq.regressed_cells)}" if seq.regressed_cells else "")
            )
        lines.append(
            f"vs baseline{' (fixed-sample, for reference)' if seq is not None else ''}: "
            f"{o.verdict} ({format_pp(o.delta)}{ci})"
        )
        shared = cmp.shared_line()
        if shared is not None:
            lines.append(shared)
        for side, missing in (
            ("candidate", cmp.missing_in_candidate),
            ("baseline", cmp.missing_in_baseline),
        ):
            lines.extend(
                f"missing in the {side}: {m.label()}"
                for m in missing
                if not (cmp.shared_only and not_run(m))  # counted in the line above
            )
        if cmp.cost is not None:
            lines.append(f"vs baseline {cost_comparison_line(cmp.cost)}")
        # The gates --fail-on names; the rate gate's verdict is told even when none is.
        gates = tuple(g for g in fail_on_parts(report.options.fail_on) if g != "unresolved")
        reasons = cmp.failing(gates or ("regression",))
        if reasons:
            lines.append("gate fails: " + "; ".join(reasons))
    lines.extend(f"note: {note}" for note in report.notes)
    unpriced = unpriced_line(report)
    if unpriced is not None:
        lines.append(f"note: {unpriced}")
    if budget is not None and report.budget is not None and not report.budget.exhausted:
        lines.append(budget)
    if report.interrupted:
        waiting = f"{len(report.not_started)} not started; " if report.not_started else ""
        lines.append(f"interrupted: {waiting}resume with --resume {run_dir}")
    files = ", ".join(str(p) for p in (run_dir / REPORT_FILE, *pages))
    lines.append(f"report: {files} (exit {exit_code})")
    return "\n".join(lines)


def overall_line(report: RunReport) -> str:
    """Every cell together: items resolved of those scored (errors left out, as in each
    cell's rate), unresolved, errors, and items the run did not start."""
    scored = report.count("resolved") + report.count("unresolved")
    rate = report.count("resolved") / scored if scored else None
    cells = "fixture x agent x model" if several_agents(report) else "fixture x model"
    waiting = f", {len(report.not_started)} not started" if report.not_started else ""
    return (
        f"overall: {report.count('resolved')}/{scored} resolved ({format_pct(rate, 0)}) "
        f"across {plural(len(report.summary), f'{cells} cell')}, "
        f"{report.count('unresolved')} unresolved, {plural(report.count('error'), 'error')}"
        f"{waiting}"
    )
