"""Assembles the click group; each command lives in its own module."""

from __future__ import annotations

import gc
import sys
import warnings
from pathlib import Path
from typing import Any, NoReturn

import click

from harness import __version__
from harness.cli.agents_cmd import agents_group
from harness.cli.clean_cmd import clean_cmd
from harness.cli.compare_cmd import compare_cmd
from harness.cli.config import load_default_map
from harness.cli.docs_cmd import docs_cmd
from harness.cli.export_cmd import export_cmd
from harness.cli.fixtures_cmd import fixtures_group
from harness.cli.report_cmd import report_cmd
from harness.cli.run_cmd import run_cmd
from harness.cli.runs_cmd import runs_group
from harness.cli.score_cmd import score_cmd
from harness.cli.selftest_cmd import selftest_cmd
from harness.cli.show_cmd import show_cmd
from harness.errors import EXIT_MEANINGS, HarnessError, exit_interrupted

#: The widest ``--help`` gets on a wide terminal (click's own cap is 80): options' help
#: wraps to fewer lines, and every line still fits a 100-column terminal.
HELP_MAX_WIDTH = 100


def exit_codes_help() -> str:
    """The exit codes as ``--help`` lists them, from :data:`harness.errors.EXIT_MEANINGS`
    (``\\b``: click keeps the block's lines as they are)."""
    lines = ["\b", "Exit codes:"]
    for code, meaning in EXIT_MEANINGS.items():
        lines += [f"  {code:<4} {meaning[0]}", *(f"       {more}" for more in meaning[1:])]
    return "\n".join(lines) + "\n"


class HarnessGroup(click.Group):
    """The top-level group: Ctrl-C anywhere in a command exits 130, like any interrupt.

    click's own handling would print "Aborted!" and exit 1. A run installs its own signal
    handlers once it starts launching; this covers the seconds before (imports, fixture
    loading) and every other command.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.ClickException as exc:  # the group's own options, an unknown command
            refuse(exc)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("\ninterrupted", err=True)
            exit_interrupted()
        except click.ClickException as exc:  # a command's options and arguments
            refuse(exc)


def refuse(exc: click.ClickException) -> NoReturn:
    """A usage error in one line, like every other refusal (``error: ...``), with where
    the help is, and click's exit code for it (2 for usage)."""
    message = " ".join(exc.format_message().split())
    ctx = exc.ctx if isinstance(exc, click.UsageError) else None
    hint = f" (see {ctx.command_path} --help)" if ctx is not None else ""
    click.echo(f"error: {message}{hint}", err=True)
    sys.exit(exc.exit_code)


@click.group(
    cls=HarnessGroup,
    help="Measure whether a multi-agent coding agent really orchestrates a swarm.\n\n"
    + exit_codes_help(),
    context_settings={
        "auto_envvar_prefix": "SWARM_HARNESS",
        "show_default": True,
        "max_content_width": HELP_MAX_WIDTH,
    },
)
@click.version_option(__version__, prog_name="swarm-harness")
@click.pass_context
def cli(ctx: click.Context) -> None:
    try:
        ctx.default_map = load_default_map()
    except HarnessError as exc:
        click.echo(f"error: {exc}", err=True)
        ctx.exit(exc.exit_code)


cli.add_command(run_cmd)
cli.add_command(score_cmd)
cli.add_command(fixtures_group)
cli.add_command(report_cmd)
cli.add_command(compare_cmd)
cli.add_command(selftest_cmd)
cli.add_command(runs_group)
# `runs clean` is the same command, where users browsing runs look for it.
runs_group.add_command(clean_cmd)
cli.add_command(show_cmd)
cli.add_command(export_cmd)
cli.add_command(agents_group)
cli.add_command(clean_cmd)
cli.add_command(docs_cmd)

# Each command's --help ends with where its documentation is.
for _name, _command in cli.commands.items():
    if _command.epilog is None:
        _command.epilog = f"Docs: python -m harness docs {_name}"


#: Allocations between young-generation collections for the CLI process (CPython's default
#: is 700). Scoring a full ledger builds a few hundred thousand small acyclic records, and
#: the default re-traverses them over and over (about a fifth of the scoring time on a
#: 100,000-record ledger). The collector stays on, so cycles are still freed. Set once, here
#: at the process entry, never by the library: a library must not change process-wide state
#: (two concurrent scorings would race on it).
CLI_GC_THRESHOLD = 100_000

#: The name pyproject.toml's [project.scripts] installs.
CONSOLE_SCRIPT = "swarm-harness"


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    """A warning from the harness (a report page not written, say) as one line a user
    reads, not a source location; Python's own warnings keep their usual form."""
    if category is UserWarning:
        click.echo(f"warning: {message}", err=True)
    else:
        _python_show_warning(message, category, filename, lineno, file, line)


_python_show_warning = warnings.showwarning


def main() -> None:
    warnings.showwarning = _show_warning
    gc.set_threshold(CLI_GC_THRESHOLD, *gc.get_threshold()[1:])
    # The console script shows its own name; `python -m harness` the module's.
    script = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    cli(prog_name=script if script == CONSOLE_SCRIPT else "python -m harness")
