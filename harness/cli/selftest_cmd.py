"""``selftest``: the real agent CLI driven by a scripted model, verdicts against expectations."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option


@click.command("selftest")
@option(
    "--agent-bin",
    default="prime-agent",
    envvar=["SWARM_HARNESS_SELFTEST_AGENT_BIN", "PRIME_AGENT_BIN"],
    help="Path or name of the real agent binary (also read from $PRIME_AGENT_BIN).",
)
@option(
    "--fixture",
    "fixtures",
    multiple=True,
    default=("json-events",),
    metavar="NAME|PATH",
    help="Fixture name under fixtures/ or a fixture directory; repeat, or 'all'.",
)
@option("--concurrency", default=3, type=int, help="Agents running at once.")
@option(
    "--runs-dir",
    default="runs",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the selftest's run directory is written.",
)
@option("--timeout", default=300.0, type=float, help="Seconds before one agent run is stopped.")
@translate_errors
def selftest_cmd(
    agent_bin: str, fixtures: tuple[str, ...], concurrency: int, runs_dir: Path, timeout: float
) -> None:
    """Run every scripted behaviour through the real agent and check the harness's verdicts.

    Starts a scripted OpenAI-compatible model server on a free loopback port (no
    credentials, no model cost), runs each script as one model through the normal run
    path and prints: script, expected verdict, actual verdict, ok. Exits 0 iff every row
    holds.
    """
    from harness.progress import Progress
    from harness.selftest import SelftestCase, fixture_manifests, render_table, run_selftest
    from scripted_model import SCRIPTS, Oracle, ScriptedModelServer

    cases = [SelftestCase(s.name, s.expected_status, s.expected_failing) for s in SCRIPTS.values()]
    oracle = Oracle.from_manifests(fixture_manifests(fixtures))
    with ScriptedModelServer(oracle) as server:
        outcome = run_selftest(
            server,
            cases,
            agent_bin=agent_bin,
            fixtures=fixtures,
            concurrency=concurrency,
            runs_dir=runs_dir,
            timeout_s=timeout,
            progress=Progress(),
        )
    click.echo(render_table(outcome))
    sys.exit(0 if outcome.ok else 1)
