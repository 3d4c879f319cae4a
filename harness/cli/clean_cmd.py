"""``clean``: end the processes and remove the temp dirs a killed harness left behind."""

from __future__ import annotations

import click

from harness.cli.errors import translate_errors


@click.command(
    "clean", short_help="End what a dead harness left: agents, daemons, /tmp/swh-* dirs."
)
@translate_errors
def clean_cmd() -> None:
    """End what a harness that died (kill -9, crash) left: agents, daemons, /tmp/swh-* dirs.

    Only runs whose harness process is gone are touched; a live run's processes and dirs
    never are. Every run does this on its own at start; this command does it now.
    """
    from harness.item.leftovers import clean_leftovers

    done = clean_leftovers()
    for k in done.killed:
        click.echo(f"ended {k.pid} ({k.name}, {k.reason}) with {k.signal}")
    for path in done.removed_dirs:
        click.echo(f"removed {path}")
    if done.live_runs:
        click.echo(f"left alone (their harness is alive): {', '.join(done.live_runs)}")
    click.echo(done.summary())
