"""The runs index (``index.html`` in a runs dir): written after every run and by
``runs list --html``, from the runs' own report.json files (nothing else is stored)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from harness.errors import HarnessError
from harness.files import write_text_atomic
from harness.report.html import HTML_FILE
from harness.report.index_page import INDEX_FILE, IndexCell, IndexRun, render_index
from harness.runs.catalog import REPORT_FILE, RunInfo, list_runs


def _entry(info: RunInfo, runs_dir: Path) -> tuple[IndexRun, bool]:
    """The index row of one run, and whether its report (if it has one) was readable."""
    from harness.model.report import load_report

    href = None
    if (info.path / HTML_FILE).is_file():
        href = Path(os.path.relpath(info.path / HTML_FILE, runs_dir)).as_posix()
    row = IndexRun(
        run_id=info.run_id,
        created_at=info.created_at,
        agent=info.agent,
        status=info.status,
        fixtures=info.fixtures,
        models=info.models,
        trials=info.trials,
        scored=info.scored,
        resolved=info.resolved,
        report_href=href,
        cost_usd=info.cost_usd,
        tokens=info.tokens,
        unpriced=info.unpriced,
        selftest=_selftest(info),
    )
    if info.status == "running" or not (info.path / REPORT_FILE).is_file():
        return row, True
    try:
        report = load_report(info.path)
    except HarnessError:
        return row, False
    cells = tuple(
        IndexCell(s.fixture, s.model, s.n, s.resolved, s.rate, s.ci, agent=s.agent)
        for s in report.summary
    )
    cmp = report.comparison
    verdict = cmp.overall.verdict if cmp is not None else None
    baseline = cmp.baseline_run.run_id if cmp is not None and cmp.baseline_run else None
    row = replace(
        row,
        cells=cells,
        verdict=verdict,
        origin=report.options.origin,
        baseline=baseline,
    )
    return row, True


def _selftest(info: RunInfo) -> tuple[int, int] | None:
    """A selftest's (rows that hold, rows); (0, 0) for one not judged; None: not one."""
    if not info.selftest:
        return None
    return info.selftest_rows or (0, 0)


def write_index(runs_dir: Path) -> Path:
    """Write (replace) ``index.html`` in ``runs_dir`` for the runs under it; its path."""
    rows = []
    unreadable = 0
    for info in list_runs(runs_dir):
        row, readable = _entry(info, runs_dir)
        rows.append(row)
        unreadable += not readable
    target = runs_dir / INDEX_FILE
    write_text_atomic(target, render_index(rows, str(runs_dir), unreadable))
    return target
