"""The pages as a reader meets them: code blocks that fit the site's width, one name for the
CLI per page, and option defaults the CLI really has."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from harness.cli.docs import CODE_WIDTH
from harness.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md")), *sorted(ROOT.glob("skills/*/SKILL.md"))]
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)
#: Fences of examples, command output and files to copy (diagrams, JSON and protocol
#: transcripts are quoted as they are).
EXAMPLE_FENCES = ("console", "sh", "text", "yaml")
#: A snippet the site inlines (pymdownx.snippets): ``--8<-- "recipes/github-actions.yml"``.
SNIPPET = re.compile(r'^--8<-- "([^"]+)"$', re.M)
#: A command of the CLI called by one of its two names.
COMMANDS = "|".join(sorted(cli.commands))
MODULE = re.compile(rf"python -m harness (?:{COMMANDS})\b")
SCRIPT = re.compile(rf"(?<!# )swarm-harness (?:{COMMANDS})\b")  # "# swarm-harness run": report.md
#: "`--threshold`, default 5 points", "`--retries N`, default 2", "`--timeout` (default 1800".
DEFAULT = re.compile(
    r"`(--[a-z-]+)(?: [A-Z]+)?`[^`.;]{0,25}?\bdefault:? ([0-9][0-9.]*)( ?%| points?)?"
)


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


def as_shown(page: Path) -> str:
    """The page with the snippets the site inlines."""
    text = page.read_text(encoding="utf-8")
    return SNIPPET.sub(lambda m: (DOCS / m.group(1)).read_text(encoding="utf-8"), text)


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_code_blocks_fit_the_site(page: Path) -> None:
    """An example line wider than a code block shows is cut off in a scrolling box."""
    wide = [
        line
        for fence in FENCE.finditer(as_shown(page))
        if fence.group(1) in EXAMPLE_FENCES
        for line in fence.group(2).splitlines()
        if len(line) > CODE_WIDTH
    ]
    assert wide == []


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_a_page_names_the_cli_one_way(page: Path) -> None:
    """`python -m harness` (a checkout) or `swarm-harness` (installed), not both."""
    text = as_shown(page)
    assert not (MODULE.search(text) and SCRIPT.search(text)), (
        MODULE.search(text),
        SCRIPT.search(text),
    )


def _default(name: str) -> object:
    """The option's default on `run`, else on the first command that has it."""
    commands = [cli.commands["run"], *cli.commands.values()]
    for command in commands:
        for param in command.params:
            if isinstance(param, click.Option) and name in param.opts:
                return param.default
    raise AssertionError(f"no command has {name}")


def test_option_defaults_the_docs_state_are_the_cli_s() -> None:
    said = []
    for page in PAGES:
        text = " ".join(page.read_text(encoding="utf-8").split())
        for m in DEFAULT.finditer(text):
            name, number, unit = m.group(1), float(m.group(2).rstrip(".")), m.group(3)
            value = number / 100 if unit else number
            said.append((page_id(page), name, value, _default(name)))
    assert len(said) >= 10  # the pattern still finds what the pages say
    wrong = [s for s in said if s[2] != pytest.approx(float(str(s[3])))]
    assert wrong == []
