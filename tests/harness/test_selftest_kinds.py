"""Which scripts a selftest offers on which fixture kinds: an edit-only script plays only
when every fixture of the run is an edit fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.errors import UsageError
from harness.selftest import (
    cases_for,
    edit_fixtures_only,
    fixture_kinds,
    run_selftest,
    shared_cases,
)

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


def test_a_case_is_judged_as_its_items_fixture_kind_asks() -> None:
    """helper-names' subagents change the shards' files on an edit fixture: lanes fails
    there too, and only there."""
    assert fixture_kinds((TINY, EDIT_TINY)) == {"tiny": "read", "edit-tiny": "edit"}
    (case,) = [c for c in cases_for(CLAUDE, edit=True) if c.script == "helper-names"]
    assert case.on("read").expected_failing == ("delegation", "provenance")
    assert case.on("edit").expected_failing == ("delegation", "provenance", "lanes")
    (honest,) = [c for c in cases_for(CLAUDE, edit=True) if c.script == "honest"]
    assert honest.on("edit") == honest.on("read") == honest
