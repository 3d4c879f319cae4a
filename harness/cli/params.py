"""Option types and the option stacks several commands share (each defined once)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.cli.options import option
from harness.model.comparison import DEFAULT_THRESHOLD
from harness.runs.catalog import LATEST

F = TypeVar("F", bound=Callable[..., Any])


class RunDirType(click.Path):
    """A run directory (or its report.json), or the word ``latest``, which the command
    resolves against ``--runs-dir``."""

    name = "run_dir"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value == LATEST:
            return LATEST
        return super().convert(value, param, ctx)


def runs_dir_option(func: F) -> F:
    """``--runs-dir``: where run directories are written, and where ``latest`` is found."""
    return option(
        "--runs-dir",
        default="runs",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where run directories are written, and where 'latest' (the newest finished "
        "run) is looked up.",
    )(func)


def threshold_option(func: F) -> F:
    """``--threshold``: the practical threshold of every rate verdict."""
    return option(
        "--threshold",
        default=DEFAULT_THRESHOLD,
        type=float,
        help="Practical threshold for verdicts, as a rate difference (0.05 = 5 points).",
    )(func)


#: What ``--fail-on`` can name, and what makes the exit code 1 for each.
FAIL_ON = {
    "unresolved": "any item unresolved",
    "regression": "the comparison gate fails (an overall regression, or a fixture x model "
    "only one run scored)",
    "none": "never (report only)",
}


def fail_on_option(default: str, choices: tuple[str, ...]) -> Callable[[F], F]:
    """``--fail-on``: what makes the exit code 1 (one vocabulary for every command)."""
    described = "; ".join(f"{c}: {FAIL_ON[c]}" for c in choices)
    return option(
        "--fail-on",
        type=click.Choice(choices),
        default=default,
        help=f"What makes the exit code 1 ({described}).",
    )
