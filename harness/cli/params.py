"""Option types and the option stacks several commands share (each defined once)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from harness.cli.options import option
from harness.model.comparison import DEFAULT_COST_THRESHOLD, DEFAULT_THRESHOLD, FAIL_ON
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


def cost_threshold_option(func: F) -> F:
    """``--cost-threshold``: the smallest cost change a cost verdict calls."""
    return option(
        "--cost-threshold",
        default=DEFAULT_COST_THRESHOLD,
        type=float,
        help="Practical threshold of the cost verdict, as a ratio (0.20: costlier means at "
        "least 20% dearer per item, cheaper at least 1/1.2).",
    )(func)


#: What ``--fail-on`` can name, and what makes the exit code 1 for each.
FAIL_ON_HELP = {
    "unresolved": "any item unresolved",
    "regression": "the comparison gate fails (an overall regression, or a fixture x model "
    "only one run scored)",
    "cost": "the candidate is costlier than the baseline (overall, beyond --cost-threshold)",
    "none": "no result (report only; a run that could not run still exits 3)",
}


def compare_shared_only_option(func: F) -> F:
    """``--compare-shared-only``: compare only the cells both runs ran."""
    return option(
        "--compare-shared-only",
        "shared_only",
        is_flag=True,
        help="Compare only the fixture x agent x model cells both runs ran (a smoke run "
        "against a full baseline): a cell only one of them ran is listed but fails no gate; "
        "one whose items all errored still does.",
    )(func)


def fail_on_option(default: str) -> Callable[[F], F]:
    """``--fail-on``: what makes the exit code 1, the same values with the same meaning for
    ``run`` and ``compare`` (only the default differs); several gates combine
    (``--fail-on regression --fail-on cost``) into one comma-joined value in
    :data:`harness.model.comparison.FAIL_ON` order (``regression,cost``)."""
    choices = FAIL_ON
    described = "; ".join(f"{c}: {FAIL_ON_HELP[c]}" for c in choices)

    def combine(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> str:
        parts = set(values)
        if "none" in parts and len(parts) > 1:
            raise click.BadParameter("'none' cannot be combined with a gate", ctx, param)
        return ",".join(c for c in FAIL_ON if c in parts) or default

    return option(
        "--fail-on",
        type=click.Choice(choices),
        multiple=True,
        callback=combine,
        help=f"What makes the exit code 1; repeat to combine ({described}).",
    )
