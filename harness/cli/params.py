"""Option types and decorators shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.cli.options import option
from harness.runs import LATEST

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
    """``--runs-dir``: where run directories are, and where ``latest`` is looked up."""
    return option(
        "--runs-dir",
        default="runs",
        type=click.Path(file_okay=False, path_type=Path),
        help="Where run directories are; 'latest' means the newest finished run there.",
    )(func)
