"""``selftest``: the real agent CLI driven by a scripted model, verdicts against expectations."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harness.agents import DEFAULT_AGENT, agents_help
from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import runs_dir_option
from harness.errors import UsageError


@click.command(
    "selftest", short_help="Check the verdicts on a real agent driven by a scripted model."
)
@option(
    "--agent",
    "agents",
    multiple=True,
    default=(DEFAULT_AGENT,),
    metavar="NAME",
    help=f"The real agent to check: {agents_help(only_selftest=True)} (`agents list` says "
    "what each is); repeat to check several in one run (the scripts they share).",
)
@option(
    "--agent-bin",
    "agent_bins",
    multiple=True,
    metavar="[AGENT=]PATH",
    help="Path or name of the agent's binary (default: the agent's own variable, as the "
    "README's agents table names it, e.g. $CODEX_BIN for codex, else the agent's own name "
    "on PATH); with several --agent, AGENT=PATH for each.",
)
@option(
    "--fixture",
    "fixtures",
    multiple=True,
    default=("json-events",),
    metavar="NAME|PATH",
    help="Fixture name under fixtures/, a fixture directory, or a set of fixtures/sets.yaml "
    "(smoke, standard, all); repeat to add more.",
)
@option(
    "--script",
    "scripts",
    multiple=True,
    metavar="NAME",
    help="Run only this scripted behaviour (e.g. honest); repeat for several. Default: every "
    "script the agents share.",
)
@option("--concurrency", default=3, type=int, help="Agents running at once.")
@runs_dir_option
@option("--timeout", default=300.0, type=float, help="Seconds before one agent run is stopped.")
@option(
    "--faults",
    default=None,
    metavar="PLAN",
    help="Make the scripted server fail requests as a provider would, e.g. "
    "'overloaded,scope=children,first=1' (rules separated by ';': a kind among "
    "rate_limited, overloaded, server_error, unavailable, stream_cut, stall, drop, refused; "
    "then scope=parent|children, first=N, phase=spawn|write, share=P, window=A-B, times=N, "
    "fail-fast, retry-after=S). Each row then also checks the faults the harness counted "
    "against those served.",
)
@option(
    "--retries",
    default=2,
    type=click.IntRange(0, 20),
    help="Run an item again when it ended as a provider error (as run --retries).",
)
@option(
    "--solo",
    is_flag=True,
    help="Also run each script's solo twin (as run --solo): the same agent and model asked "
    "to work alone, which the server plays as a solo parent whatever the script. Each twin's "
    "row (e.g. 'honest (solo)') holds when it is resolved, started no subagent, and its "
    "tokens and cost are what the server billed for the twin.",
)
@translate_errors
def selftest_cmd(
    agents: tuple[str, ...],
    agent_bins: tuple[str, ...],
    fixtures: tuple[str, ...],
    scripts: tuple[str, ...],
    concurrency: int,
    runs_dir: Path,
    timeout: float,
    faults: str | None,
    retries: int,
    solo: bool,
) -> None:
    """Run every scripted behaviour through the real agent and check the harness's verdicts.

    Starts a scripted model server on a free loopback port (OpenAI chat completions for
    prime-agent, Anthropic Messages for claude-code and opencode, OpenAI Responses for
    codex; no credentials, no model cost), runs each script as one model through the normal
    run path and prints a row per script: whether it holds (the expected verdict, tokens
    and cost equal to the server's bill), turns, requests, tokens, cost and the verdict,
    which says what differs where a row does not hold. Exits 0 iff every row holds.
    """
    from harness.agents import agent_binaries, parse_agent
    from harness.report.progress import Progress
    from harness.selftest import agent_binary, fixture_manifests, render_table, run_selftest
    from scripted_model import Oracle, ScriptedModelServer
    from scripted_model.faults import FaultSpecError, parse_faults

    try:
        plan = parse_faults(faults or "")
    except FaultSpecError as exc:
        raise UsageError(f"--faults: {exc}") from None
    given = agent_binaries(agents, agent_bins)
    adapters = tuple(parse_agent(a, agent_binary(a, given.get(a))) for a in agents)
    oracle = Oracle.from_manifests(fixture_manifests(fixtures))
    # One server plays every agent's API (a Messages request by its client's User-Agent).
    api = adapters[0].model_api if len(adapters) == 1 else None
    with ScriptedModelServer(oracle, model_api=api, faults=plan) as server:
        outcome = run_selftest(
            server,
            adapters,
            fixtures=fixtures,
            scripts=scripts,
            concurrency=concurrency,
            runs_dir=runs_dir,
            timeout_s=timeout,
            progress=Progress(),
            retries=retries,
            solo=solo,
        )
    click.echo(render_table(outcome))
    sys.exit(0 if outcome.ok else 1)
