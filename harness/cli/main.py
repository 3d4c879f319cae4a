"""Assembles the click group; each command lives in its own module."""

from __future__ import annotations

import gc
import importlib
import sys
import warnings
from collections.abc import Iterator, Mapping, MutableMapping
from pathlib import Path
from typing import Any, NoReturn

import click

from harness import __version__
from harness.cli.config import load_default_map
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


#: Every command, by name: the module and attribute it lives in. A command's module is
#: imported when the command is looked up, so ``score`` loads its own module and not those
#: of ``run``, ``report``, ``export`` and the rest (which took half of its start-up).
COMMANDS: dict[str, str] = {
    "run": "harness.cli.run_cmd:run_cmd",
    "score": "harness.cli.score_cmd:score_cmd",
    "fixtures": "harness.cli.fixtures_cmd:fixtures_group",
    "report": "harness.cli.report_cmd:report_cmd",
    "compare": "harness.cli.compare_cmd:compare_cmd",
    "selftest": "harness.cli.selftest_cmd:selftest_cmd",
    "runs": "harness.cli.runs_cmd:runs_group",
    "show": "harness.cli.show_cmd:show_cmd",
    "export": "harness.cli.export_cmd:export_cmd",
    "agents": "harness.cli.agents_cmd:agents_group",
    "clean": "harness.cli.clean_cmd:clean_cmd",
    "docs": "harness.cli.docs_cmd:docs_cmd",
}


class LazyCommands(MutableMapping[str, click.Command]):
    """The top-level group's commands (click reads them through this mapping), each
    imported the first time it is looked up."""

    def __init__(self, targets: Mapping[str, str]) -> None:
        self._targets = dict(targets)
        self._loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        command = self._loaded.get(name)
        if command is None:
            module, _, attr = self._targets[name].partition(":")  # KeyError: no such command
            command = getattr(importlib.import_module(module), attr)
            if not isinstance(command, click.Command):
                raise TypeError(f"{self._targets[name]} is not a click command")
            self._loaded[name] = command
            self._assemble(name, command)
        return command

    def _assemble(self, name: str, command: click.Command) -> None:
        # Each command's --help ends with where its documentation is.
        if command.epilog is None:
            command.epilog = f"Docs: python -m harness docs {name}"
        if name == "runs" and isinstance(command, click.Group):
            # `runs clean` is the same command, where users browsing runs look for it.
            command.add_command(self["clean"])

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if self._targets.pop(name, None) is None:
            del self._loaded[name]
        else:
            self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._targets, *self._loaded]))

    def __len__(self) -> int:
        return len(self._targets.keys() | self._loaded.keys())


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
    commands=LazyCommands(COMMANDS),
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
