"""Which scripted behaviours a selftest plays for Codex: the edit-only ones only when
every fixture is an edit fixture."""

from __future__ import annotations

from harness.agents import parse_agent
from harness.selftest import cases_for, shared_cases

EDIT_ONLY = ("edit-parent", "edit-wrong-lane")


def test_codex_edit_only_scripts_are_played_only_on_edit_fixtures() -> None:
    codex = parse_agent("codex", "unused")
    read = [c.script for c in cases_for(codex)]
    edit = [c.script for c in cases_for(codex, edit=True)]
    assert not set(EDIT_ONLY) & set(read)
    assert edit == [*read, *EDIT_ONLY]
    expected = {c.script: c.expected_failing for c in cases_for(codex, edit=True)}
    assert expected["edit-parent"] == ("provenance",)
    assert set(expected["edit-wrong-lane"]) == {"provenance", "lanes"}


def test_codex_and_its_second_protocol_share_every_edit_script() -> None:
    common, _ = shared_cases([parse_agent("codex", "a"), parse_agent("codex:v2", "b")], True)
    assert set(EDIT_ONLY) <= set(common)
