"""Which scripted behaviours a selftest plays on which fixture kind, and what it expects."""

from __future__ import annotations

import pytest

from harness.agents import parse_agent
from harness.errors import UsageError
from harness.selftest import cases_for, scripts_for, shared_cases

EDIT_ONLY = ("edit-parent", "edit-wrong-lane")


def test_edit_only_scripts_are_not_played_on_a_read_fixture() -> None:
    codex = parse_agent("codex", "unused")
    read = [c.script for c in cases_for(codex, "read")]
    edit = [c.script for c in cases_for(codex, "edit")]
    assert not set(EDIT_ONLY) & set(read)
    assert edit == [*read, *EDIT_ONLY]
    assert {c.script: c.expected_failing for c in cases_for(codex, "edit")}["edit-parent"] == (
        "provenance",
    )


def test_a_run_with_both_kinds_plays_only_the_scripts_of_both() -> None:
    codex = parse_agent("codex", "unused")
    both, cases = shared_cases([codex], ["edit", "read"])
    assert not set(EDIT_ONLY) & set(both)
    only_edit, _ = shared_cases([codex], ["edit"])
    assert set(EDIT_ONLY) <= set(only_edit)
    assert cases[("codex", "read", "honest")].expected_status == "resolved"


def test_a_script_may_expect_other_failures_on_an_edit_fixture() -> None:
    codex = parse_agent("codex", "unused")
    (script,) = [s for s in scripts_for(codex).values() if s.name == "honest"]
    assert script.failing_on("edit") == script.failing_on("read") == ()
    changed = type(script)("x", "unresolved", ("coverage",), edit_failing=("lanes",))
    assert (changed.failing_on("read"), changed.failing_on("edit")) == (("coverage",), ("lanes",))


def test_agents_sharing_no_script_are_refused() -> None:
    with pytest.raises(UsageError, match="share no scripted behaviour"):
        shared_cases([parse_agent("codex", "unused")], ["edit", "read", "nothing"])
