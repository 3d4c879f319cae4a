"""``runs list``: the past runs under a runs dir."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import runs_dir_option


@click.group("runs")
def runs_group() -> None:
    """Browse past runs."""


@runs_group.command("list")
@runs_dir_option
@option("--json", "as_json", is_flag=True, help="Print the runs as a JSON array.")
@translate_errors
def list_cmd(runs_dir: Path, as_json: bool) -> None:
    """List the runs under --runs-dir, oldest first: status complete, interrupted or running."""
    from harness.runs.catalog import list_runs

    runs = list_runs(runs_dir)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in runs], indent=2))
        return
    if not runs:
        click.echo(f"no runs under {runs_dir}")
        return
    header = ("run", "date", "agent", "fixtures", "models", "trials", "resolved", "status")
    rows = [header]
    for r in runs:
        rate = "n/a" if r.resolved_rate is None else f"{100 * r.resolved_rate:.0f}%"
        rows.append(
            (
                r.run_id,
                r.created_at[:19].replace("T", " "),
                r.agent,
                ",".join(r.fixtures),
                ",".join(r.models),
                "" if r.trials is None else str(r.trials),
                f"{r.resolved}/{r.scored} {rate}",
                r.status,
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        click.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())
