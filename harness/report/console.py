"""The result of ``run`` on stdout: per fixture x model, the comparison and the report path.

Item lines went to stderr as each item finished (:mod:`harness.report.progress`) and are
not repeated here.
"""

from __future__ import annotations

from pathlib import Path

from harness.model.report import RunReport
from harness.model.text import format_ci, format_ci_pp, format_pct, format_pp, plural
from scorers.criteria import criterion_names

#: Failure groups named on the console; report.md lists them all.
TRIAGE_SHOWN = 5


def summary_text(report: RunReport, run_dir: Path, exit_code: int) -> str:
    lines = []
    if report.options.origin:
        lines.append(
            f"re-ran {plural(len(report.options.only_keys), 'item')} that failed in "
            f"{report.options.origin}"
        )
    for s in report.summary:
        ci = f", 95% CI {format_ci(s.ci, 0)}" if s.ci else ""
        failing = [
            f"{c} {s.n - s.criteria[c].count}"
            for c in criterion_names()
            if s.n and s.criteria[c].count < s.n
        ]
        lines.append(
            f"{s.fixture} x {s.model}: {s.resolved}/{s.n} resolved ({format_pct(s.rate, 0)}{ci}), "
            f"{s.n - s.resolved} unresolved, {plural(s.errors, 'error')}"
            + (f"; failed criteria: {', '.join(failing)}" if failing else "")
        )
    if report.triage:
        shown = report.triage[:TRIAGE_SHOWN]
        more = len(report.triage) - len(shown)
        lines.append(
            "how items failed: "
            + "; ".join(g.label for g in shown)
            + (f"; +{more} more in report.md" if more > 0 else "")
        )
    cmp = report.comparison
    if cmp is not None:
        o = cmp.overall
        ci = f", 95% CI {format_ci_pp(o.ci)}" if o.ci else ""
        lines.append(f"vs baseline: {o.verdict} ({format_pp(o.delta)}{ci})")
        for side, missing in (
            ("candidate", cmp.missing_in_candidate),
            ("baseline", cmp.missing_in_baseline),
        ):
            lines.extend(f"missing in the {side}: {m.label()}" for m in missing)
        if not cmp.gate.passed:
            lines.append("gate fails: " + "; ".join(cmp.gate.reasons))
    lines.extend(f"note: {note}" for note in report.notes)
    if report.interrupted:
        lines.append(f"interrupted: resume with --resume {run_dir}")
    lines.append(f"report: {run_dir / 'report.json'} (exit {exit_code})")
    return "\n".join(lines)
