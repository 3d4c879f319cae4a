"""``report``: render a past run."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import RunDirType, runs_dir_option


@click.command("report", short_help="Render a run's report again (Markdown, HTML, JUnit, JSON).")
@click.argument("run_dir", type=RunDirType(exists=True, path_type=Path))
@option(
    "--format",
    "fmt",
    type=click.Choice(["md", "json", "junit", "html"]),
    default="md",
    help="Markdown summary, report.json as is, JUnit XML (one case per fixture x model), or "
    "the self-contained HTML page (written to a file, see --output).",
)
@option(
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write to this file instead of stdout ('-' for stdout). For html the default is "
    "report.html in the run directory, and the path written is printed.",
)
@runs_dir_option
@translate_errors
def report_cmd(run_dir: Path | str, fmt: str, output: Path | None, runs_dir: Path) -> None:
    """Render the report of RUN_DIR (a run directory, its report.json, or 'latest')."""
    from harness.model.report import load_report, report_path
    from harness.runs.catalog import resolve_run

    where = report_path(resolve_run(run_dir, runs_dir)).parent
    report = load_report(where)
    if fmt == "html":
        from harness.report.html import HTML_FILE, render_html
        from harness.report.write import item_stories

        target = output or where / HTML_FILE
        base = None if str(target) == "-" else target.parent
        page = render_html(report, where, item_stories(where, report), base)
        if str(target) == "-":
            click.echo(page, nl=False)
        else:
            target.write_text(page, encoding="utf-8")
            click.echo(str(target))
        return
    if fmt == "json":
        text = json.dumps(report.to_dict(), indent=2) + "\n"
    elif fmt == "junit":
        from harness.report.junit import render_junit

        text = render_junit(report)
    else:
        from harness.report.markdown import render_markdown

        text = render_markdown(report, where)
    if output is None or str(output) == "-":
        click.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
