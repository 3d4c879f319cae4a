"""``compare``: candidate vs baseline with intervals and verdicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import RunDirType, runs_dir_option
from harness.errors import EXIT_RESOLVED, EXIT_UNRESOLVED


@click.command("compare")
@click.argument("baseline", type=RunDirType(exists=True, path_type=Path))
@click.argument("candidate", type=RunDirType(exists=True, path_type=Path))
@option("--threshold", default=0.05, type=float, help="Practical threshold (rate difference).")
@option("--json", "as_json", is_flag=True, help="Print the comparison object as JSON.")
@option(
    "--fail-on",
    type=click.Choice(["none", "regression"]),
    default="none",
    help="Exit 1 when the gate fails: a regressed overall verdict, or a fixture x model "
    "only one run scored.",
)
@runs_dir_option
@translate_errors
def compare_cmd(
    baseline: Path | str,
    candidate: Path | str,
    threshold: float,
    as_json: bool,
    fail_on: str,
    runs_dir: Path,
) -> None:
    """Compare CANDIDATE against BASELINE (run dirs, report.json files, or 'latest')."""
    from harness.compare import compare, gate_failed, load_report
    from harness.report import comparison_markdown
    from harness.runs import resolve_run

    baseline, candidate = resolve_run(baseline, runs_dir), resolve_run(candidate, runs_dir)

    base, cand = load_report(baseline), load_report(candidate)
    result = compare(base["items"], cand["items"], threshold, str(baseline))
    if as_json:
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo("\n".join(comparison_markdown(result)).strip())
    if fail_on == "regression" and gate_failed(result):
        click.echo("gate fails: " + "; ".join(result["gate"]["reasons"]), err=True)
        sys.exit(EXIT_UNRESOLVED)
    sys.exit(EXIT_RESOLVED)
