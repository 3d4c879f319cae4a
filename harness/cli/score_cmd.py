"""``score``: re-score a kept item directory offline."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option


@click.command("score")
@click.argument("item_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@option(
    "--fixture",
    default=None,
    metavar="NAME|PATH",
    help="Score against this fixture instead of the manifest saved in the item.",
)
@translate_errors
def score_cmd(item_dir: Path, fixture: str | None) -> None:
    """Re-score ITEM_DIR (a run's items/<key>/) and print the item JSON."""
    from harness.rescore import rescore_item

    result = rescore_item(item_dir, fixture)
    click.echo(json.dumps(result.to_dict(), indent=2))
