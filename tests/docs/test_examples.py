"""Every console example of the documentation runs, exits as shown and prints the lines the
page shows (``tests/docs/examples.py`` says how a block is read)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.examples import (
    Block,
    console_blocks,
    parse_session,
    unmatched,
    unrun_sim_examples,
)

ROOT = Path(__file__).resolve().parents[2]
#: The README, the site's pages, and the skills for coding agents (skills/*/SKILL.md), whose
#: every command must run as shown too.
SKILLS = sorted((ROOT / "skills").glob("*/SKILL.md"))
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *SKILLS]
REAL_BINS = ("CLAUDE_CODE_BIN", "OPENCODE_BIN", "CODEX_BIN", "GEMINI_BIN")


def _pages_with_examples() -> list[object]:
    params: list[object] = []
    for page in PAGES:
        blocks = console_blocks(page)
        if not blocks:
            continue
        text = "\n".join(b.text for b in blocks)
        needs = [name for name in REAL_BINS if f"${name}" in text or f"${{{name}}}" in text]
        marks = [pytest.mark.slow, pytest.mark.e2e]
        if needs:
            marks.append(pytest.mark.real_agent)
        params.append(
            pytest.param(page, blocks, needs, marks=marks, id=str(page.relative_to(ROOT)))
        )
    return params


def _environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SWARM_HARNESS_")}
    env["HOME"] = str(home)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = "100"
    env.pop("NO_COLOR", None)
    return env


def _run(block: Block, cwd: Path, env: dict[str, str]) -> None:
    for command in block.commands:
        done = subprocess.run(
            ["bash", "-c", command.command],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        output = done.stderr + done.stdout  # progress first, the result last, as on a terminal
        where = f"{block.page.relative_to(ROOT)}:{command.line}: $ {command.command}"
        assert done.returncode == command.exit_code, (
            f"{where}\nexited {done.returncode}, the page says {command.exit_code}\n{output}"
        )
        missing = unmatched(command.shown, output)
        assert missing is None, f"{where}\nthe page shows {missing!r}; it printed:\n{output}"


@pytest.mark.parametrize(("page", "blocks", "needs"), _pages_with_examples())
def test_console_examples_run_as_shown(
    page: Path, blocks: list[Block], needs: list[str], tmp_path: Path
) -> None:
    missing = [name for name in needs if not os.environ.get(name)]
    if missing:
        pytest.skip(f"{', '.join(missing)} not set: the page's examples run a real client")
    work = tmp_path / "work"
    work.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = _environment(home)
    for block in blocks:
        _run(block, work, env)


def test_the_site_has_runnable_examples() -> None:
    """The getting-started pages hold runnable examples (a rename cannot drop them all)."""
    started = [p for p in PAGES if "getting-started" in p.parts]
    assert started, "no getting-started pages"
    for page in started:
        assert console_blocks(page), f"{page}: no console example"


def test_every_example_the_tests_can_run_is_a_console_block() -> None:
    # The site's pages; the README's two commands are the main job and the test suite.
    found = [where for page in PAGES[1:] for where in unrun_sim_examples(page)]
    assert not found, (
        "shell examples that run the harness on nothing real must be ```console blocks, "
        "run by the tests: " + ", ".join(found)
    )


def test_shown_lines_match_in_order_with_ellipses() -> None:
    output = "run 20261205-1: 3 items\n[1/3] a: resolved in 1.2s\nsmoke-orders  3/3\n"
    assert unmatched(["run ...: 3 items", "smoke-orders  3/3"], output) is None
    assert unmatched(["...", "[1/3] a: resolved in ...s"], output) is None
    assert unmatched(["smoke-orders  3/3", "run ...: 3 items"], output) == "run ...: 3 items"
    assert unmatched(["smoke-orders  2/3"], output) == "smoke-orders  2/3"
    assert re.escape("[") and unmatched(["[2/3]"], output) == "[2/3]"


def test_a_session_reads_commands_continuations_output_and_exit_codes(tmp_path: Path) -> None:
    body = "$ python -m harness run \\\n    --fixture smoke\nreport: runs/...\n[exit 1]\n$ ls\n"
    block = parse_session(tmp_path / "page.md", 10, body)
    first, second = block.commands
    assert first.command == "python -m harness run \\\n    --fixture smoke"
    assert first.shown == ["report: runs/..."] and first.exit_code == 1
    assert (second.command, second.shown, second.exit_code, second.line) == ("ls", [], 0, 14)
    with pytest.raises(ValueError, match="output before any"):
        parse_session(tmp_path / "page.md", 1, "stray\n$ ls\n")


def test_a_sim_example_outside_a_console_block_is_found(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```sh\npython -m harness run --fixture smoke --agent sim\n```\n\n"
        "```sh\npython -m harness run --agent codex --model openai/x\n```\n",
        encoding="utf-8",
    )
    assert unrun_sim_examples(page) == [f"{page}:2"]
