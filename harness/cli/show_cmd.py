"""``show``: one item's story."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import RunDirType, runs_dir_option


@click.command("show", short_help="Print one item's story: verdict, reasons, answers, timeline.")
@click.argument("target", metavar="ITEM_DIR|KEY")
@option(
    "--run",
    "run",
    type=RunDirType(exists=True, path_type=Path),
    default="latest",
    help="The run a KEY is looked up in (a run dir, or 'latest').",
)
@runs_dir_option
@translate_errors
def show_cmd(target: str, run: Path | str, runs_dir: Path) -> None:
    """Print one item's story: verdict, reasons, answers against expected, children and
    receipts, timeline, files. ITEM_DIR is a run's items/<item>/; KEY is fixture:model:trial."""
    from harness.report.show import story_text
    from harness.runs.catalog import find_story

    click.echo(story_text(find_story(target, run, runs_dir)))
