"""Which scripts a selftest offers on which fixture kinds: an edit-only script plays only
when every fixture of the run is an edit fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.errors import UsageError
from harness.selftest import edit_fixtures_only, run_selftest, shared_cases

DATA = Path(__file__).resolve().parents[1] / "data" / "fixtures"
TINY, EDIT_TINY = str(DATA / "tiny"), str(DATA / "edit-tiny")
CLAUDE = parse_agent("claude-code", "unused")
EDIT_ONLY = {"edit-parent", "edit-wrong-lane"}


@pytest.mark.parametrize(
    ("fixtures", "offered"),
    [
        pytest.param((TINY,), False, id="read"),
        pytest.param((EDIT_TINY,), True, id="edit"),
        pytest.param((TINY, EDIT_TINY), False, id="both"),
    ],
)
def test_edit_scripts_are_offered_only_on_edit_fixtures(
    fixtures: tuple[str, ...], offered: bool
) -> None:
    scripts, cases = shared_cases([CLAUDE], edit_fixtures_only(fixtures))
    assert (set(scripts) >= EDIT_ONLY) is offered
    assert {"honest", "no-spawn", "double-spawn"} <= set(scripts)  # these play everywhere
    assert set(scripts) == {script for _, script in cases}


def test_asking_for_an_edit_script_on_a_read_fixture_says_why() -> None:
    with pytest.raises(UsageError, match="edit-parent: plays only on edit fixtures"):
        run_selftest(None, [CLAUDE], fixtures=(TINY,), scripts=("edit-parent",))  # type: ignore[arg-type]
