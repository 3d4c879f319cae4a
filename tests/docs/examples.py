"""The documentation's runnable examples: every ```console block of the site.

A block is a session: ``$ command`` lines (a trailing ``\\`` continues one), each followed by
the lines the page says it prints. A shown line must match an output line (stdout and
stderr together), in the order shown; ``...`` inside a shown line matches any text, a line
of only ``...`` stands for lines left out. ``[exit N]`` after the shown lines says the
command exits N (default 0). Every block of a page runs in order in one directory, so a
page can run a baseline and then compare with it.

Shell examples that need a real model, a real agent's credentials or a Ray cluster are
written as ```sh blocks: shown, not run. :func:`unrun_sim_examples` finds any ```sh block
that could have been a console block (it runs the harness with the sim or the scripted
server only), so an example cannot dodge the tests by its fence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)
EXIT = re.compile(r"^\[exit (\d+)\]$")
#: What makes a shell example need something the tests do not have: a model, credentials,
#: a cluster, a network download, a user's own binary.
NEEDS_REAL = re.compile(
    r"--agent[ =](?:prime-agent|claude-code|opencode|codex)\b(?!(?s:.*)\$(?:CLAUDE_CODE|OPENCODE|CODEX)_BIN)"
    r"|--model[ =](?:anthropic|openai)/|ray start|--executor ray|/path/to/|<[a-z-]+>"
    r"|agents install|\bpip install\b|\buv (?:tool|sync|lock)\b|jq |PRIME_AGENT_BIN"
)
HARNESS = re.compile(r"(?:python -m harness|swarm-harness)\b")


@dataclass
class Command:
    line: int
    command: str
    shown: list[str] = field(default_factory=list)
    exit_code: int = 0


@dataclass
class Block:
    page: Path
    line: int
    commands: list[Command]

    @property
    def text(self) -> str:
        return "\n".join(c.command for c in self.commands)


def fenced(text: str) -> list[tuple[str, int, str]]:
    """Each fenced block of a page: its language, its first line's number, its body."""
    return [
        (m.group(1), text.count("\n", 0, m.start()) + 2, m.group(2)) for m in FENCE.finditer(text)
    ]


def parse_session(page: Path, line: int, body: str) -> Block:
    commands: list[Command] = []
    pending: list[str] = []
    for offset, raw in enumerate(body.splitlines()):
        if pending:
            pending.append(raw)
        elif raw.startswith("$ "):
            pending = [raw[2:]]
            commands.append(Command(line + offset, ""))
        else:
            if not commands:
                raise ValueError(f"{page}:{line + offset}: output before any $ command")
            exit_match = EXIT.match(raw.strip())
            if exit_match:
                commands[-1].exit_code = int(exit_match.group(1))
            elif raw.strip():
                commands[-1].shown.append(raw.rstrip())
            continue
        if not raw.endswith("\\"):
            commands[-1].command = "\n".join(pending)
            pending = []
    if pending:
        raise ValueError(f"{page}:{line}: a command ends in a continuation")
    return Block(page, line, commands)


def console_blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    return [parse_session(page, n, body) for lang, n, body in fenced(text) if lang == "console"]


def unrun_sim_examples(page: Path) -> list[str]:
    """``page:line`` of every shell block that runs the harness on nothing real: it should
    be a console block, run by the tests."""
    text = page.read_text(encoding="utf-8")
    found = []
    for lang, n, body in fenced(text):
        if lang in ("sh", "bash", "shell") and HARNESS.search(body) and not NEEDS_REAL.search(body):
            found.append(f"{page}:{n}")
    return found


def _pattern(shown: str) -> re.Pattern[str]:
    parts = [re.escape(p.strip()) for p in shown.strip().split("...")]
    return re.compile(".*?".join(parts))


def unmatched(shown: list[str], output: str) -> str | None:
    """The first shown line no output line matches (in order), else None."""
    lines = output.splitlines()
    at = 0
    for want in shown:
        if want.strip() == "...":
            continue
        pattern = _pattern(want)
        while at < len(lines) and not pattern.search(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None
