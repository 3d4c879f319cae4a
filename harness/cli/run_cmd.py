"""``run``: plan, execute and report a run."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from harness.agents import DEFAULT_AGENT, agents_help
from harness.cli.errors import translate_errors
from harness.cli.options import fixtures_dir_option, option
from harness.cli.params import (
    RunDirType,
    compare_shared_only_option,
    cost_threshold_option,
    fail_on_option,
    runs_dir_option,
    threshold_option,
)
from harness.errors import UsageError
from harness.plan import (
    DEFAULT_MAX_PROVIDER_ERRORS,
    DEFAULT_RETRIES,
    DEFAULT_RETRY_BACKOFF_S,
    MAX_CONCURRENCY,
    MAX_RETRIES,
    MAX_RETRY_WAIT_S,
)

if TYPE_CHECKING:
    from harness.model.report import RunOptions


AUTO = "auto"


class TrialsType(click.ParamType[Any, Any]):
    """``--trials``: a whole number >= 1, or ``auto``."""

    name = "trials"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        text = str(value).strip()
        if text == AUTO:
            return AUTO
        if text.isdigit() and int(text) >= 1:
            return int(text)
        self.fail(f"{value!r}: expected a whole number >= 1 or 'auto'", param, ctx)


def _provider_caps(values: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    caps = []
    for value in values:
        provider, sep, number = value.partition("=")
        if not sep or not provider or not number.isdigit() or int(number) < 1:
            raise UsageError(f"--provider-cap: expected PROVIDER=N with N >= 1, got {value!r}")
        caps.append((provider, int(number)))
    return tuple(caps)


@click.command("run", short_help="Run agents on fixtures, score every item, write the report.")
@option(
    "--fixture",
    "fixtures",
    multiple=True,
    metavar="NAME|PATH",
    help="Fixture name under fixtures/, a fixture directory, or a set of fixtures/sets.yaml "
    "(smoke, standard, all); repeat to add more.",
)
@option(
    "--model",
    "models",
    multiple=True,
    metavar="PROVIDER/MODEL",
    help="Model selector passed to the agent; repeat for several conditions. Not needed with --agent sim.",
)
@option(
    "--agent",
    "agents",
    multiple=True,
    default=(DEFAULT_AGENT,),
    metavar="NAME[:OPTIONS]",
    help=f"Agent to run: {agents_help()} (`agents list` says what each is and its "
    "OPTIONS, e.g. sim:no-spawn,flaky=0.7); repeat to compare agents on the same fixtures "
    "and models in one report (the first is the reference).",
)
@option(
    "--agent-bin",
    "agent_bins",
    multiple=True,
    metavar="[AGENT=]PATH",
    help="Path or name of the agent's binary (default: the agent's own, e.g. prime-agent); "
    "with several --agent, AGENT=PATH for each.",
)
@option("--timeout", default=1800.0, type=float, help="Seconds before one agent run is stopped.")
@runs_dir_option
@option(
    "--keep-workdir", is_flag=True, help="Keep each item's temporary workdir (path in item.json)."
)
@option(
    "--solo",
    is_flag=True,
    help="Run beside each item its solo twin (the same agent, model, fixture and trial, "
    "asked to work alone with no subagent) and report whether the swarm pays: its speedup, "
    "token and cost multipliers and resolved-rate gain, with paired intervals.",
)
@option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print exactly report.json on stdout; everything else on stderr.",
)
@option(
    "--trials",
    default="1",
    type=TrialsType(),
    metavar="N|auto",
    help="Independent trials per fixture x model, or 'auto': trials until each fixture x "
    "model is decided (anytime-valid; against --compare-baseline: regressed or not; "
    "without: the rate known to --precision), between --min-trials and --max-trials.",
)
@option(
    "--max-trials",
    default=20,
    type=click.IntRange(min=1),
    help="With --trials auto: at most this many trials per fixture x model.",
)
@option(
    "--min-trials",
    default=2,
    type=click.IntRange(min=1),
    help="With --trials auto: at least this many trials before a fixture x model may stop.",
)
@option(
    "--precision",
    default=0.10,
    type=float,
    help="With --trials auto and no baseline: stop once the resolved rate's anytime-valid "
    "95% interval is at most this wide on each side.",
)
@option(
    "--concurrency",
    default=1,
    type=int,
    help=f"Agents running at once (1 = serial, at most {MAX_CONCURRENCY}); clean-up and "
    "scoring overlap the next agent.",
)
@option(
    "--provider-cap",
    "provider_caps",
    multiple=True,
    metavar="PROVIDER=N",
    help="At most N items at once for models of PROVIDER (the prefix before '/').",
)
@option("--seed", default=0, type=int, help="Seed for the simulated agent's randomness (flaky=P).")
@option(
    "--compare-baseline",
    "baseline",
    type=RunDirType(exists=True, path_type=Path),
    default=None,
    help="A previous run dir or report.json to compare this run against, or 'latest' "
    "(the newest finished run under --runs-dir that is not a selftest). One with no "
    "fixture x agent x model in common with this run is refused (exit 2).",
)
@compare_shared_only_option
@threshold_option
@cost_threshold_option
@fail_on_option("unresolved")
@option(
    "--prices",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="YAML of model id -> input, output, cache_read, cache_write in USD per million "
    "tokens; tried before the bundled price library (genai-prices), for models it does not "
    "know or prices you pay otherwise.",
)
@option(
    "--max-cost",
    type=float,
    default=None,
    metavar="USD",
    help="Budget: once the finished items cost this much, start no new item (running ones "
    "finish); exit 4 if items were left. Refused for a model without a price unless "
    "--max-tokens is given too.",
)
@option(
    "--max-tokens",
    type=int,
    default=None,
    metavar="N",
    help="Budget in tokens (every billed token, priced or not), like --max-cost.",
)
@option(
    "--retries",
    type=click.IntRange(0, MAX_RETRIES),
    default=DEFAULT_RETRIES,
    show_default=True,
    help="Run an item again (in a fresh workdir) this many more times when it ended as a "
    "provider error: the provider failed and the agent could not get past it. Every "
    "attempt's tokens count against the budget; earlier attempts are kept under the item.",
)
@option(
    "--retry-backoff",
    type=click.FloatRange(0, MAX_RETRY_WAIT_S),
    default=DEFAULT_RETRY_BACKOFF_S,
    show_default=True,
    metavar="SECONDS",
    help="Wait before an item's first retry, doubling for each next one (at least the "
    "provider's retry-after, where the agent recorded one).",
)
@option(
    "--max-provider-errors",
    type=click.IntRange(0),
    default=DEFAULT_MAX_PROVIDER_ERRORS,
    show_default=True,
    metavar="K",
    help="Circuit breaker: after attempts of K items in a row end as provider errors (an "
    "item's first attempt counts, before its retries) or cannot start, start no new item and "
    "no pending retry, write the report and exit 3 (resumable); an unreachable endpoint or "
    "refused credentials stop it at once. 0: never stop.",
)
@option(
    "--agent-env",
    "agent_env",
    multiple=True,
    metavar="NAME=VALUE",
    help="One of the agent's own settings its vendor supports (e.g. Claude Code's "
    "CLAUDE_CODE_MAX_RETRIES, API_TIMEOUT_MS), set in the agent's environment and recorded "
    "in the run's options; repeatable. Only the settings an agent allows are taken "
    "(`agents list` names them).",
)
@option(
    "--dry-run",
    is_flag=True,
    help="Print the plan (items, agent binary and version, models, where results go), check "
    "the binary and credentials, and exit (0 ready, 3 not) without launching anything.",
)
@option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    help="Where items run: local (this machine) or ray (a Ray cluster; needs the "
    "swarm-harness[ray] extra). Scoring and reports always stay here.",
)
@option(
    "--ray-address",
    default=None,
    metavar="ADDRESS",
    help="With --executor ray: the cluster to join (default: $RAY_ADDRESS, else 'auto', "
    "the cluster a local 'ray start' runs).",
)
@option(
    "--ray-resource",
    default=None,
    metavar="NAME",
    help="With --executor ray: the custom resource a node must offer to run an item, one "
    "unit per item (default: the agent's name, e.g. sim or prime-agent).",
)
@fixtures_dir_option
@option(
    "--rerun-failed",
    type=RunDirType(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Re-run only the unresolved, errored and not-started items of this run (or "
    "'latest'), with its options, into a new run that names it as its origin.",
)
@option(
    "--resume",
    type=RunDirType(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Complete a partial run: re-run only its missing or errored items ('latest': the "
    "newest run under --runs-dir); with a larger --trials, add trials to it.",
)
@click.pass_context
@translate_errors
def run_cmd(ctx: click.Context, /, **options: Any) -> None:
    """Run the agent on fixtures, score every item, write report.json and report.md."""
    # Imported here so that `--help` and the other commands start fast.
    from harness.agents import agent_settings, parse_agents
    from harness.fixtures.lookup import fixture_roots
    from harness.plan import ExecutorSettings, RunConfig, SequentialSettings
    from harness.report.console import summary_text
    from harness.report.progress import Progress
    from harness.run.execute import execute_run, failed_keys, stored_options
    from harness.runs.catalog import resolve_run

    resume: Path | None = None
    rerun: tuple[str, tuple[str, ...]] | None = None
    if options["resume"] is not None and options["rerun_failed"] is not None:
        raise UsageError(
            "--resume and --rerun-failed: give one (a resume continues a run, a "
            "re-run starts a new one)"
        )
    if options["resume"] is not None:
        resume = resolve_run(options["resume"], options["runs_dir"], with_report=False)
        before = stored_options(resume)
        _fill_from_stored(ctx, options, before)
        if before.only_keys:  # resuming a re-run: the same items again
            rerun = (before.origin or "", before.only_keys)
    if options["rerun_failed"] is not None:
        origin = resolve_run(options["rerun_failed"], options["runs_dir"])
        _fill_from_stored(ctx, options, stored_options(origin))
        rerun = (origin.name, failed_keys(origin))
    if options["baseline"] is not None:
        options["baseline"] = resolve_run(
            options["baseline"], options["runs_dir"], for_comparison=True
        )
    prices = None
    if options["prices"] is not None:
        from harness.pricing import PriceTable

        prices = PriceTable.from_yaml(Path(options["prices"]))
    sequential = None
    if options["trials"] == AUTO:
        sequential = SequentialSettings(
            options["min_trials"], options["max_trials"], options["precision"]
        )
    config = RunConfig(
        fixtures_roots=fixture_roots(options["fixtures_dir"]),
        fixtures=tuple(options["fixtures"]),
        models=tuple(options["models"]),
        agents=parse_agents(options["agents"], options["agent_bins"], options["seed"]),
        trials=options["max_trials"] if sequential is not None else options["trials"],
        sequential=sequential,
        concurrency=options["concurrency"],
        provider_caps=_provider_caps(tuple(options["provider_caps"])),
        timeout_s=options["timeout"],
        runs_dir=options["runs_dir"],
        keep_workdir=options["keep_workdir"],
        baseline=options["baseline"],
        compare_shared_only=options["shared_only"],
        threshold=options["threshold"],
        fail_on=options["fail_on"],
        cost_threshold=options["cost_threshold"],
        prices=prices,
        max_cost_usd=options["max_cost"],
        max_tokens=options["max_tokens"],
        executor=ExecutorSettings(
            name=options["executor"],
            ray_address=options["ray_address"] or os.environ.get("RAY_ADDRESS") or "auto",
            ray_resource=options["ray_resource"],
        ),
        only_keys=rerun[1] if rerun else (),
        origin=rerun[0] if rerun else None,
        retries=options["retries"],
        retry_backoff_s=options["retry_backoff"],
        max_provider_errors=options["max_provider_errors"],
        solo=options["solo"],
    )
    config = dataclasses.replace(
        config, agent_env=agent_settings(config.agents, options["agent_env"])
    )
    if options["dry_run"]:
        from harness.run.preflight import dry_run

        plan = dry_run(config, resume)
        click.echo("\n".join(plan.lines()))
        sys.exit(plan.exit_code)
    outcome = execute_run(config, Progress(), resume=resume)
    report = outcome.report
    if report.provider is not None and report.provider.stopped is not None:
        from harness.run.breaker import stop_line

        click.echo(
            stop_line(report.provider.stopped, len(report.not_started), str(outcome.run_dir)),
            err=True,
        )
    if options["as_json"]:
        click.echo(json.dumps(report.to_dict(), indent=2))
        if report.comparison is not None:
            from harness.model.comparison import fail_on_parts

            reasons = report.comparison.failing(fail_on_parts(config.fail_on))
            if reasons:
                click.echo("gate fails: " + "; ".join(reasons), err=True)
    else:
        from harness.report.html import HTML_FILE

        page = outcome.run_dir / HTML_FILE
        pages = (page,) if page.is_file() else ()  # the page is a view: it may have failed
        click.echo(summary_text(report, outcome.run_dir, outcome.exit_code, pages))
    sys.exit(outcome.exit_code)


#: Options --resume takes from the stored run when not given: run.json key -> parameter.
_STORED = {
    "trials": "trials",
    "seed": "seed",
    "concurrency": "concurrency",
    "keep_workdir": "keep_workdir",
    "threshold": "threshold",
    "fail_on": "fail_on",
    "timeout_s": "timeout",
    "cost_threshold": "cost_threshold",
    "prices_file": "prices",
    "max_cost_usd": "max_cost",
    "max_tokens": "max_tokens",
    "retries": "retries",
    "retry_backoff_s": "retry_backoff",
    "max_provider_errors": "max_provider_errors",
    "solo": "solo",
}


def _given_models(stored: RunOptions) -> tuple[str, ...]:
    """The ``--model`` values that give a stored run its agents' models again: with one
    agent, its models; with several, every agent's models but the defaults a simulated one
    took for want of sim/ models (given again, they would go to every simulated agent)."""
    from harness.agents import parse_agent

    if len(stored.agents) <= 1:
        return stored.models
    given: dict[str, None] = {}
    for agent in stored.agents:
        if agent.models != parse_agent(agent.agent).default_models():
            given.update(dict.fromkeys(agent.models))
    return tuple(given)


def _fill_from_stored(ctx: click.Context, options: dict[str, Any], stored: RunOptions) -> None:
    """With --resume, every option not given explicitly comes from the original run."""

    def unset(name: str) -> bool:
        return ctx.get_parameter_source(name) in (
            ParameterSource.DEFAULT,
            ParameterSource.DEFAULT_MAP,
        )

    if unset("fixtures"):
        options["fixtures"] = stored.fixture_paths or stored.fixtures
    if unset("models"):
        options["models"] = _given_models(stored)
    if unset("agents"):
        options["agents"] = tuple(a.agent for a in stored.agents)
        if unset("agent_bins"):
            options["agent_bins"] = tuple(
                f"{a.agent}={a.binary}" for a in stored.agents if a.binary is not None
            )
    if unset("provider_caps") and stored.provider_caps:
        options["provider_caps"] = tuple(f"{k}={v}" for k, v in stored.provider_caps.items())
    if unset("baseline") and stored.baseline:
        options["baseline"] = Path(stored.baseline)
    for key, name in _STORED.items():
        value = getattr(stored, key)
        if unset(name) and value is not None:
            options[name] = value
    if unset("agent_env") and stored.agent_env:
        options["agent_env"] = tuple(
            dict.fromkeys(f"{n}={v}" for own in stored.agent_env.values() for n, v in own.items())
        )
    auto = stored.sequential
    if auto is not None and unset("trials"):  # an auto run goes on as one
        options["trials"] = AUTO
        for name in ("min_trials", "max_trials", "precision"):
            if unset(name):
                options[name] = getattr(auto, name)
