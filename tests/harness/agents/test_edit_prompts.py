"""Every agent's own prompt on an edit fixture: each child makes its ticket's change with
the agent's own edit tools before it answers; on a read fixture the prompt is unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.agents import parse_agent
from harness.fixtures import load_fixture
from harness.fixtures.task_text import edit_template

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.mark.parametrize(
    ("agent", "tools"),
    [
        ("claude-code", "your Read and Edit tools"),
        ("opencode", "your edit tool"),
        ("codex", "apply_patch"),
    ],
)
def test_an_edit_fixture_asks_each_child_for_its_change(agent: str, tools: str) -> None:
    adapter = parse_agent(agent, "")
    edit = adapter.task_text(load_fixture(FIXTURES / "edit-smoke"))
    read = adapter.task_text(load_fixture(FIXTURES / "smoke-orders"))
    assert "Read the ticket shards/<file> and make exactly the change" in edit
    assert f"editing the\n       files in place with {tools}" in edit
    assert "Do not make the changes or answer the questions yourself" in edit
    assert "3 tickets in the folder" in edit and "data shards" not in edit
    assert "Read the ticket" not in read and "Read the file shards/<file>" in read
    child_task = [line for line in edit.splitlines() if line.startswith(" " * 7)]
    assert child_task and max(map(len, child_task)) <= 100


def test_a_reworded_read_prompt_is_refused_rather_than_sent_as_is() -> None:
    with pytest.raises(ValueError, match="lacks the part an edit prompt replaces"):
        edit_template("1. Read every shard yourself.")
