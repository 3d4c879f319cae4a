"""``docs [COMMAND...]``: which documentation pages tell about a command."""

from __future__ import annotations

from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.errors import UsageError

#: The documentation's folder in a checkout (an installed package has no copy of it).
DOCS_DIR = Path(__file__).resolve().parent.parent.parent / "docs"

#: Each command's pages beside its CLI reference entry: (title, path under docs/).
PAGES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("Home", "index.md"),
        ("First run with the simulated agent", "getting-started/first-run.md"),
    ),
    "run": (
        ("First run with the simulated agent", "getting-started/first-run.md"),
        ("First real agent", "getting-started/real-agent.md"),
        ("First comparison", "getting-started/first-comparison.md"),
        ("How an item runs", "concepts/isolation.md"),
        ("Gating an agent change in CI", "guides/ci.md"),
        ("Cost and budgets", "guides/cost-and-budgets.md"),
        ("Trials until the answer is known", "guides/trials-auto.md"),
        ("Is the swarm worth it (--solo)", "guides/solo.md"),
        ("Provider faults", "concepts/provider-faults.md"),
    ),
    "score": (("The rubric", "concepts/rubric.md"), ("Provenance", "concepts/provenance.md")),
    "fixtures": (
        ("Writing a fixture", "guides/writing-a-fixture.md"),
        ("Fixtures", "reference/fixtures.md"),
    ),
    "report": (
        ("Reading report.html", "getting-started/reading-the-report.md"),
        ("report.json", "reference/report-json.md"),
    ),
    "compare": (
        ("First comparison", "getting-started/first-comparison.md"),
        ("Statistics", "concepts/statistics.md"),
        ("Comparing agents", "guides/comparing-agents.md"),
        ("Is the swarm worth it (--solo)", "guides/solo.md"),
    ),
    "selftest": (("Selftest and the scripted server", "guides/selftest.md"),),
    "runs": (("Past runs, one item, trajectories", "guides/runs-and-items.md"),),
    "agents": (
        ("Agents", "reference/agents/index.md"),
        ("Adding an agent", "guides/adding-an-agent.md"),
    ),
    "show": (("Past runs, one item, trajectories", "guides/runs-and-items.md"),),
    "export": (
        (
            "Past runs, one item, trajectories",
            "guides/runs-and-items.md#trajectories-out-export-atif",
        ),
    ),
    "clean": (("How an item runs", "concepts/isolation.md"),),
    "docs": (("Home", "index.md"),),
}


def anchor(words: tuple[str, ...]) -> str:
    """The CLI reference's anchor of a command (``run``, ``fixtures-list``; the group:
    ``cli``): the generator writes it, ``docs`` points at it."""
    return "-".join(words) or "cli"


def pages_for(words: tuple[str, ...]) -> list[tuple[str, str]]:
    """The pages of a command: its own guides (a subcommand: its group's) and its entry in
    the CLI reference."""
    top = words[0] if words else ""
    if top not in PAGES:
        raise UsageError(f"docs: no command {' '.join(words)!r} (see python -m harness --help)")
    return [*PAGES[top], ("CLI reference", f"reference/cli.md#{anchor(words)}")]


@click.command("docs", short_help="Name the documentation pages for a command.")
@click.argument("command", nargs=-1)
@translate_errors
def docs_cmd(command: tuple[str, ...]) -> None:
    """Name the documentation pages for COMMAND (e.g. `docs run`, `docs fixtures new`),
    as paths in the checkout's docs/ (`mkdocs serve` serves them as a site)."""
    for title, page in pages_for(command):
        path, _, anchor = page.partition("#")
        where = DOCS_DIR / path if (DOCS_DIR / path).is_file() else Path("docs") / path
        click.echo(f"{title}: {where}{'#' + anchor if anchor else ''}")
