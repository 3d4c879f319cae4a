"""``report``: render a past run."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option


@click.command("report")
@click.argument("run_dir", type=click.Path(exists=True, path_type=Path))
@option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "junit"]),
    default="md",
    help="Markdown summary, report.json as is, or JUnit XML (one case per fixture x model).",
)
@translate_errors
def report_cmd(run_dir: Path, fmt: str) -> None:
    """Render the report of RUN_DIR (a run directory or its report.json)."""
    from harness.report import read_report, render_junit, render_markdown

    report, where = read_report(run_dir)
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2))
    elif fmt == "junit":
        click.echo(render_junit(report), nl=False)
    else:
        click.echo(render_markdown(report, where), nl=False)
