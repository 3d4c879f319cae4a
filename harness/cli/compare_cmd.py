"""``compare``: candidate vs baseline with intervals and verdicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import (
    RunDirType,
    cost_threshold_option,
    fail_on_option,
    runs_dir_option,
    threshold_option,
)
from harness.errors import EXIT_RESOLVED, EXIT_UNRESOLVED


@click.command("compare")
@click.argument("baseline", type=RunDirType(exists=True, path_type=Path))
@click.argument("candidate", type=RunDirType(exists=True, path_type=Path))
@threshold_option
@cost_threshold_option
@option("--json", "as_json", is_flag=True, help="Print the comparison object as JSON.")
@fail_on_option("none", ("none", "regression", "cost"))
@runs_dir_option
@translate_errors
def compare_cmd(
    baseline: Path | str,
    candidate: Path | str,
    threshold: float,
    cost_threshold: float,
    as_json: bool,
    fail_on: str,
    runs_dir: Path,
) -> None:
    """Compare CANDIDATE against BASELINE (run dirs, report.json files, or 'latest')."""
    from harness.model.comparison import BaselineRun, fail_on_parts
    from harness.model.report import load_report
    from harness.report.markdown import comparison_markdown
    from harness.runs.catalog import resolve_run
    from harness.stats.compare import compare

    baseline, candidate = resolve_run(baseline, runs_dir), resolve_run(candidate, runs_dir)
    base, cand = load_report(baseline), load_report(candidate)
    run = BaselineRun(base.run_id, base.options.agent, base.options.models, base.created_at)
    result = compare(base.items, cand.items, threshold, str(baseline), run, cost_threshold)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    else:
        click.echo("\n".join(comparison_markdown(result)).strip())
    reasons = result.failing(fail_on_parts(fail_on))
    if reasons:
        click.echo("gate fails: " + "; ".join(reasons), err=True)
        sys.exit(EXIT_UNRESOLVED)
    sys.exit(EXIT_RESOLVED)
