"""``score``: re-score a kept item directory offline."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import fixtures_dir_option, option


@click.command("score")
@click.argument("item_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@option(
    "--fixture",
    default=None,
    metavar="NAME|PATH",
    help="Score against this fixture instead of the manifest saved in the item.",
)
@option(
    "--prices",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Price the item with this price file first (as run --prices), then the price library.",
)
@fixtures_dir_option
@translate_errors
def score_cmd(
    item_dir: Path, fixture: str | None, prices: Path | None, fixtures_dir: Path | None
) -> None:
    """Re-score ITEM_DIR (a run's items/<key>/) and print the item JSON."""
    from harness.fixtures.lookup import find_fixture, fixture_roots
    from harness.item.scoring import rescore_item
    from harness.pricing import PriceTable

    path = find_fixture(fixture, fixture_roots(fixtures_dir)) if fixture else None
    table = PriceTable.from_yaml(prices) if prices is not None else None
    click.echo(json.dumps(rescore_item(item_dir, path, table).to_dict(), indent=2))
