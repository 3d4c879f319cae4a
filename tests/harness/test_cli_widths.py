"""Every command's ``--help`` fits the terminal: no line past 100 columns, no description
cut short in a command list, no agent's description repeated in an option's help; and the
exit codes it lists are harness.errors' own."""

from __future__ import annotations

import io
import re
import sys

import pytest

from harness import errors
from harness.agents import REGISTRY
from harness.cli.docs import PROG, walk
from harness.cli.main import cli

WIDTH = 100


def help_text(words: tuple[str, ...], columns: int) -> str:
    """``--help`` as a terminal of ``columns`` columns shows it: click reads $COLUMNS (not
    through CliRunner, which forces 80 columns)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(columns))
        out = io.StringIO()
        patch.setattr(sys, "stdout", out)
        code = cli.main([*words, "--help"], prog_name=PROG, standalone_mode=False)
    assert code == 0, out.getvalue()
    return out.getvalue()


@pytest.mark.parametrize("words", list(walk()), ids=lambda w: " ".join(w) or "top")
def test_every_help_fits_100_columns(words: tuple[str, ...]) -> None:
    wide = [line for line in help_text(words, WIDTH).splitlines() if len(line) > WIDTH]
    assert wide == []


@pytest.mark.parametrize("columns", [80, WIDTH])
@pytest.mark.parametrize(
    "words", [w for w in walk() if not w or w[-1] in ("agents", "fixtures", "runs")], ids=str
)
def test_no_command_description_is_cut(words: tuple[str, ...], columns: int) -> None:
    """click cuts a command's first sentence with "..." where it does not fit the list."""
    text = help_text(words, columns)
    listed = text.partition("\nCommands:\n")[2].partition("\n\n")[0].splitlines()
    assert listed, text
    cut = [line for line in listed if line.endswith("...")]
    assert cut == []


def test_run_help_names_the_agents_without_describing_each() -> None:
    text = " ".join(help_text(("run",), WIDTH).split())
    for name, entry in REGISTRY.items():
        assert name in text
        assert " ".join(entry.summary.split()) not in text  # `agents list` says it
    assert "agents list" in text
    assert len(help_text(("run",), WIDTH).splitlines()) < 140


def test_help_lists_exactly_the_exit_codes_and_the_breaker_under_3() -> None:
    text = help_text((), WIDTH)
    block = text.partition("Exit codes:\n")[2].partition("\n\n")[0]
    listed = [int(m) for m in re.findall(r"^ +(\d+) ", block, re.M)]
    codes = sorted(v for k, v in vars(errors).items() if k.startswith("EXIT_") and type(v) is int)
    assert sorted(listed) == codes
    three = block.partition(f"  {errors.EXIT_INFRA} ")[2].partition(f"  {errors.EXIT_BUDGET} ")[0]
    assert "circuit breaker" in three and "--max-provider-errors" in three
