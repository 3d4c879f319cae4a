"""``agents list`` and ``agents install``: which agents the harness can run, which are
installed here, and getting the pinned client of one that can be installed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option


@click.group("agents")
def agents_group() -> None:
    """The agents the harness can evaluate."""


@agents_group.command(
    "list", short_help="What each agent is, its binary and version here, how to get it."
)
@option("--json", "as_json", is_flag=True, help="Print the agents as a JSON array.")
@translate_errors
def list_cmd(as_json: bool) -> None:
    """Every registered agent: what it is, its binary here (PATH, or its *_BIN variable)
    with the version it reports, the version the harness is tested with, how to get it, and
    the settings of its own that `run --agent-env` passes it. Asking a version runs the
    binary with a throw-away HOME."""
    from harness.agents import REGISTRY, adapter_class, parse_agent
    from harness.run.preflight import check_agent

    rows = []
    for name, entry in REGISTRY.items():
        cls = adapter_class(name)
        binary = os.environ.get(cls.binary_env) if cls.binary_env else None
        agent = parse_agent(name, binary or None)
        found = check_agent(agent)
        ready = agent.simulated or (found.check is not None and found.check.ok)
        # "2.1.332 (Claude Code)", "codex-cli 0.171.0": the first word that is a version.
        reported = next(
            (w for w in (found.version or "").split() if w[:1].isdigit() and "." in w), ""
        )
        rows.append(
            {
                "name": name,
                "summary": entry.summary,
                "binary": None if agent.simulated else found.command,
                "version": found.version,
                "pinned_version": cls.pinned_version,
                "tested_version": (
                    None
                    if cls.pinned_version is None or not ready
                    else reported == cls.pinned_version
                ),
                "ready": ready,
                "problem": None if ready or found.check is None else found.check.detail,
                "install_hint": cls.install_hint,
                "agent_env": dict(cls.agent_env_allowed),
            }
        )
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        click.echo(f"{row['name']}: {row['summary']}")
        if row["binary"] is None:
            click.echo("  built in: ready")
            continue
        pinned = f" (tested with {row['pinned_version']})" if row["pinned_version"] else ""
        if row["ready"]:
            mismatch = " — not the tested version" if row["tested_version"] is False else ""
            click.echo(f"  {row['binary']}: {row['version']}{pinned}{mismatch}")
        else:
            click.echo(f"  not ready: {row['problem']}{pinned}")
            click.echo(f"  to install: {row['install_hint']}")
        settings = row["agent_env"]
        for setting, what in settings.items() if isinstance(settings, dict) else ():
            click.echo(f"  --agent-env {setting}=...: {what}")


def _install_help() -> str:
    """``agents install``'s help, naming the agents it installs and their variables (from
    the registry, so a new installable agent is named without an edit here)."""
    from harness.agents import REGISTRY

    named = {name: e.install_var for name, e in REGISTRY.items() if e.install_var}
    return (
        f"Install the pinned client of agent NAME ({', '.join(named)}) and print its "
        "executable's path (give it as --agent-bin, or set its variable: "
        f"{', '.join(v for v in named.values() if v)}). Reuses an install of the pinned "
        "version; progress goes to stderr."
    )


@agents_group.command(
    "install",
    help=_install_help(),
    short_help="Install an agent's pinned client; print its executable's path.",
)
@click.argument("name")
@option(
    "--dir",
    "target",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Install into this directory (default: the agent's own place in the user's cache, "
    "e.g. ~/.cache/swarm-harness/claude-code-<version>).",
)
@translate_errors
def install_cmd(name: str, target: Path | None) -> None:
    from harness.agents import adapter_class

    cls = adapter_class(name, "agents install")
    path = cls.install(target, lambda line: click.echo(line, err=True))
    click.echo(str(path))
