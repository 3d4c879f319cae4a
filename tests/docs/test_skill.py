"""The skill for coding agents (skills/*/SKILL.md) is in the common skill format, short, runs
the harness only in examples the docs tests run, and the README says where each coding
agent reads it from."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.docs.examples import console_blocks, unrun_sim_examples

ROOT = Path(__file__).resolve().parents[2]
SKILLS = sorted((ROOT / "skills").glob("*/SKILL.md"))
#: The skill-name rule the coding agents share (lowercase words joined by single hyphens,
#: at most 64 characters, the folder's name).
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
#: The longest description the agents take; and a skill is read whole into a context, so
#: it stays short.
MAX_DESCRIPTION = 1024
MAX_LINES = 220


def front_matter(page: Path) -> dict[str, object]:
    text = page.read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert match, f"{page}: no YAML front matter"
    data = yaml.safe_load(match.group(1))
    assert isinstance(data, dict)
    return data


def test_there_is_a_skill() -> None:
    assert [p.parent.name for p in SKILLS] == ["swarm-harness"]


@pytest.mark.parametrize("page", SKILLS, ids=lambda p: p.parent.name)
def test_the_front_matter_names_the_skill_and_says_when_to_use_it(page: Path) -> None:
    data = front_matter(page)
    name, description = data.get("name"), data.get("description")
    assert isinstance(name, str) and NAME.match(name) and len(name) <= 64
    assert name == page.parent.name
    assert isinstance(description, str) and 0 < len(description) <= MAX_DESCRIPTION
    assert "Use " in description, "the description says when to use the skill"
    assert len(page.read_text(encoding="utf-8").splitlines()) <= MAX_LINES


@pytest.mark.parametrize("page", SKILLS, ids=lambda p: p.parent.name)
def test_every_command_of_the_skill_is_a_run_example(page: Path) -> None:
    """The skill's harness commands are console blocks (run by test_examples), none a
    shell block that only shows them; and the loop's steps are all there."""
    assert unrun_sim_examples(page) == []
    commands = "\n".join(b.text for b in console_blocks(page))
    for step in ("--compare-baseline", "--trials auto", "--fail-on regression", "show "):
        assert step in commands, step
    assert "fixtures new" in commands and "fixtures validate" in commands


def test_the_readme_says_where_each_coding_agent_reads_the_skill() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(skills/swarm-harness/SKILL.md)" in text
    for agent, folder in (
        ("Claude Code", ".claude/skills/swarm-harness/"),
        ("Codex", ".agents/skills/swarm-harness/"),
        ("Gemini CLI", ".gemini/skills/swarm-harness/"),
        ("opencode", ".opencode/skills/swarm-harness/"),
    ):
        assert re.search(rf"^\| {agent} \| `{re.escape(folder)}`", text, re.M), agent
