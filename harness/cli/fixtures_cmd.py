"""``fixtures list`` and ``fixtures validate``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.errors import EXIT_USAGE
from harness.fixtures import FIXTURES_ROOT, list_fixtures, resolve_fixture, validate_fixture


@click.group("fixtures")
def fixtures_group() -> None:
    """List and validate fixtures."""


@fixtures_group.command("list")
@translate_errors
def list_cmd() -> None:
    """List the fixtures under fixtures/."""
    for s in list_fixtures(FIXTURES_ROOT):
        state = "ok" if s.valid else "INVALID"
        click.echo(f"{s.name:<24} {s.shard_count:>3} shards  {s.artifact:<20} {state}  {s.path}")


@fixtures_group.command("validate")
@click.argument("paths", nargs=-1)
@translate_errors
def validate_cmd(paths: tuple[str, ...]) -> None:
    """Validate fixture directories (default: every fixture); exit 2 on any problem."""
    targets = (
        [resolve_fixture(p) for p in paths]
        if paths
        else [s.path for s in list_fixtures(FIXTURES_ROOT)]
    )
    bad = 0
    for path in targets:
        problems = validate_fixture(Path(path))
        for p in problems:
            click.echo(f"{p.file}: {p.field}: {p.message}", err=True)
        bad += bool(problems)
        if not problems:
            click.echo(f"ok  {path}")
    if bad:
        sys.exit(EXIT_USAGE)
