"""``export``: a run's items as ATIF trajectories."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import RunDirType, runs_dir_option


@click.command("export", short_help="Write a run's items as ATIF trajectories.")
@click.argument("run_dir", type=RunDirType(exists=True, path_type=Path))
@option(
    "--format",
    "fmt",
    type=click.Choice(["atif"]),
    default="atif",
    help="The trajectory format: ATIF v1.8 (Agent Trajectory Interchange Format).",
)
@option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="DIR",
    help="Write DIR/<item dir>/trajectory.json [default: RUN_DIR/trajectories].",
)
@option(
    "--item",
    "items",
    multiple=True,
    metavar="KEY",
    help="Export only this item (repeatable), e.g. json-events:sim/honest:1.",
)
@runs_dir_option
@translate_errors
def export_cmd(
    run_dir: Path | str, fmt: str, out: Path | None, items: tuple[str, ...], runs_dir: Path
) -> None:
    """Write each item of RUN_DIR (a run directory, its report.json, or 'latest') as an ATIF
    trajectory: the parent's steps, every subagent embedded and linked from the call that
    spawned it, per-step tokens and cost, and the harness's verdicts in extra. The run's
    report.html is rendered again, linking each item to its trajectory."""
    from harness.errors import EXIT_INFRA
    from harness.export import export_run
    from harness.model.report import report_path
    from harness.runs.catalog import resolve_run

    where = report_path(resolve_run(run_dir, runs_dir)).parent
    done = export_run(where, out, items)
    for path in done.written:
        click.echo(str(path))
    for key, why in done.failed:
        click.echo(f"error: {key}: not exported: {why}", err=True)
    if out is None or out.resolve() == (where / "trajectories").resolve():
        _rerender_html(where)
    if done.failed:
        raise SystemExit(EXIT_INFRA)


def _rerender_html(where: Path) -> None:
    """report.html again, now with its links to the trajectories (if the run has one)."""
    from harness.model.report import load_report
    from harness.report.html import HTML_FILE
    from harness.report.write import write_html

    if (where / HTML_FILE).is_file():
        write_html(where, load_report(where))
