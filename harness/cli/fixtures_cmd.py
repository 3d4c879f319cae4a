"""``fixtures list``, ``validate``, ``new`` and ``task``."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import fixtures_dir_option, option
from harness.errors import EXIT_USAGE
from harness.fixtures import TASK_NAME, load_fixture, validate_fixture
from harness.fixtures.lookup import all_fixtures, find_fixture, fixture_roots
from harness.fixtures.scaffold import fixture_warnings, new_fixture, regenerated_task
from harness.fixtures.sets import fixture_sets
from harness.item.verify import verify_checks


@click.group("fixtures")
def fixtures_group() -> None:
    """List, validate and create fixtures."""


@fixtures_group.command(
    "list", short_help="List the fixtures (shards, formats, sets), then the sets."
)
@fixtures_dir_option
@translate_errors
def list_cmd(fixtures_dir: Path | None) -> None:
    """List the fixtures of every folder names are looked up in: shards, data formats,
    answer kind, the sets (sets.yaml) each belongs to (with the first problem of an invalid
    one), then the sets."""
    roots = fixture_roots(fixtures_dir)
    click.echo("fixtures in " + ", then ".join(str(r) for r in roots) + ":", err=True)
    every = all_fixtures(roots)
    sets = fixture_sets(roots, [s.name for s in every])
    member = {
        s.name: [n for n, fs in sets.items() if fs.every or s.name in fs.fixtures] for s in every
    }
    for s in every:
        state = "ok" if s.valid else "INVALID"
        click.echo(
            f"{s.name:<20} {s.shard_count:>4} shards  {','.join(s.formats) or '-':<16} "
            f"{s.answer_kind or '-':<8} {','.join(member[s.name]) or '-':<22} {state}  {s.path}"
        )
        if s.problems:
            extra = f" (and {len(s.problems) - 1} more)" if len(s.problems) > 1 else ""
            click.echo(f"    {s.problems[0]}{extra}")
    for name, fs in sets.items():
        count = len(every) if fs.every else len(fs.fixtures)
        click.echo(f"set {name:<16} {count:>3} fixtures  {fs.description}")


@fixtures_group.command(
    "validate",
    short_help="Validate fixtures (edit ones: their checks too); exit 2 on a problem.",
)
@click.argument("paths", nargs=-1)
@fixtures_dir_option
@translate_errors
def validate_cmd(paths: tuple[str, ...], fixtures_dir: Path | None) -> None:
    """Validate fixture directories (default: every fixture); exit 2 on any problem.

    An edit fixture's hidden checks are also run, on the fixture as shipped (each shard's
    must fail) and on its honest solution (each must pass).

    Warnings (e.g. task.txt stating a shard count the manifest does not have) are printed
    but do not change the exit code.
    """
    roots = fixture_roots(fixtures_dir)
    targets = [find_fixture(p, roots) for p in paths] or [s.path for s in all_fixtures(roots)]
    bad = 0
    for path in targets:
        problems = validate_fixture(Path(path))
        if not problems:  # an edit fixture's checks must decide: run them (two processes)
            problems = verify_checks(load_fixture(Path(path)))
        for p in problems:
            click.echo(f"{p.file}: {p.field}: {p.message}", err=True)
        for w in fixture_warnings(Path(path)):
            click.echo(f"warning: {w}", err=True)
        bad += bool(problems)
        if not problems:
            click.echo(f"ok  {path}")
    if bad:
        sys.exit(EXIT_USAGE)


@fixtures_group.command("new", short_help="Scaffold a new fixture as a renamed copy of another.")
@click.argument("name")
@option(
    "--from",
    "source",
    default="json-events",
    metavar="NAME|PATH",
    help="Fixture to copy (its shards, answer key and prompt).",
)
@fixtures_dir_option
@click.pass_context
@translate_errors
def new_cmd(ctx: click.Context, /, name: str, source: str, fixtures_dir: Path | None) -> None:
    """Scaffold fixture NAME in the fixtures folder as a renamed copy of another fixture."""
    root = fixtures_dir or Path("fixtures")
    made = new_fixture(name, source, root)
    prog = ctx.find_root().info_name or "python -m harness"
    click.echo(f"created {made.path} from {made.source}")
    click.echo(
        "next: edit shards/ and fixture.json, then "
        f"`{prog} fixtures task {made.path} --write` and `{prog} fixtures validate {made.path}`"
    )


@fixtures_group.command("task", short_help="Render a fixture's task.txt from its fixture.json.")
@click.argument("fixture_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@option("--write", is_flag=True, help="Write task.txt instead of printing it.")
@translate_errors
def task_cmd(fixture_dir: Path, write: bool) -> None:
    """Render FIXTURE_DIR's task.txt from its fixture.json (print it, or --write it)."""
    text = regenerated_task(fixture_dir)
    if write:
        (fixture_dir / TASK_NAME).write_text(text, encoding="utf-8")
        click.echo(f"wrote {fixture_dir / TASK_NAME}")
    else:
        click.echo(text, nl=False)
