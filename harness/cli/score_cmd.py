"""``score``: re-score a kept item directory, or an ATIF trajectory, offline."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import fixtures_dir_option, option


@click.command("score", short_help="Re-score one item directory (or an ATIF trajectory).")
@click.argument(
    "item_dir", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path)
)
@option(
    "--trajectory",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="Score this ATIF trajectory (ours from export, or another tool's) against --fixture "
    "instead of an item directory.",
)
@option(
    "--fixture",
    default=None,
    metavar="NAME|PATH",
    help="Score against this fixture instead of the manifest saved in the item (with "
    "--trajectory: the fixture the trajectory ran; default the one it names).",
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
    item_dir: Path | None,
    trajectory: Path | None,
    fixture: str | None,
    prices: Path | None,
    fixtures_dir: Path | None,
) -> None:
    """Re-score ITEM_DIR (a run's items/<key>/) and print the item JSON; or, with
    --trajectory FILE, print the verdict per criterion on that trajectory (pass, fail, or
    unscorable when it lacks what a criterion needs)."""
    from harness.errors import UsageError

    if (item_dir is None) == (trajectory is None):
        raise UsageError("score: give an item directory or --trajectory FILE (one of them)")
    if fixture is not None or trajectory is not None:
        from harness.fixtures.lookup import find_fixture, fixture_roots
    if trajectory is not None:
        from harness.export.rescore import score_trajectory

        roots = fixture_roots(fixtures_dir)
        verdict = score_trajectory(trajectory, fixture, roots)
        if "note" in verdict:  # said where a reader of the terminal sees it, too
            click.echo(f"note: {verdict['note']}", err=True)
        click.echo(json.dumps(verdict, indent=2))
        return
    from harness.item.scoring import rescore_item
    from harness.pricing import PriceTable

    assert item_dir is not None
    path = find_fixture(fixture, fixture_roots(fixtures_dir)) if fixture else None
    table = PriceTable.from_yaml(prices) if prices is not None else None
    click.echo(json.dumps(rescore_item(item_dir, path, table).to_dict(), indent=2))
