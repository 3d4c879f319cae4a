"""``run``: plan, execute and report a run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from harness.cli.errors import translate_errors
from harness.cli.options import fixtures_dir_option, option
from harness.cli.params import RunDirType
from harness.errors import UsageError

if TYPE_CHECKING:
    from harness.runner import RunOutcome


def _provider_caps(values: tuple[str, ...]) -> tuple[tuple[str, int], ...]:
    caps = []
    for value in values:
        provider, sep, number = value.partition("=")
        if not sep or not provider or not number.isdigit() or int(number) < 1:
            raise UsageError(f"--provider-cap: expected PROVIDER=N with N >= 1, got {value!r}")
        caps.append((provider, int(number)))
    return tuple(caps)


@click.command("run")
@option(
    "--fixture",
    "fixtures",
    multiple=True,
    metavar="NAME|PATH",
    help="Fixture name under fixtures/ or a fixture directory; repeat, or 'all'.",
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
    default="prime-agent",
    metavar="NAME[:OPTIONS]",
    help="Agent to run: prime-agent, or sim[:BEHAVIOUR] (the built-in simulated agent: "
    "honest, no-spawn, flaky=0.7, slow=2, ... comma-separated).",
)
@option(
    "--agent-bin",
    default=None,
    help="Path or name of the agent's binary (default: the agent's own, e.g. prime-agent).",
)
@option("--timeout", default=1800.0, type=float, help="Seconds before one agent run is stopped.")
@option(
    "--runs-dir",
    default="runs",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where run directories are written.",
)
@option(
    "--keep-workdir", is_flag=True, help="Keep each item's temporary workdir (path in item.json)."
)
@option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print exactly report.json on stdout; everything else on stderr.",
)
@option("--trials", default=1, type=int, help="Independent trials per fixture x model.")
@option(
    "--concurrency",
    default=1,
    type=int,
    help="Agents running at once (1 = serial); clean-up and scoring overlap the next agent.",
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
    "(the newest finished run under --runs-dir).",
)
@option(
    "--threshold",
    default=0.05,
    type=float,
    help="Practical threshold for verdicts, as a rate difference (0.05 = 5 points).",
)
@option(
    "--fail-on",
    type=click.Choice(["unresolved", "regression"]),
    default="unresolved",
    help="What makes the exit code 1: any unresolved item, or a failed comparison gate "
    "(a regressed overall verdict, or a fixture x model only one run scored).",
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
    "--resume",
    type=RunDirType(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="Complete a partial run: re-run only its missing or errored items ('latest': the "
    "newest run under --runs-dir).",
)
@click.pass_context
@translate_errors
def run_cmd(ctx: click.Context, **options: Any) -> None:
    """Run the agent on fixtures, score every item, write report.json and report.md."""
    # Imported here so that `--help` and the other commands start fast.
    from harness.agents import parse_agent
    from harness.executors import ExecutorSettings
    from harness.plan import RunConfig
    from harness.progress import Progress
    from harness.runner import execute_run, stored_options
    from harness.runs import resolve_run
    from harness.scaffold import fixtures_root

    resume: Path | None = None
    if options["resume"] is not None:
        resume = resolve_run(options["resume"], options["runs_dir"], with_report=False)
        _fill_from_stored(ctx, options, stored_options(resume))
    if options["baseline"] is not None:
        options["baseline"] = resolve_run(options["baseline"], options["runs_dir"])
    config = RunConfig(
        fixtures_root=fixtures_root(options["fixtures_dir"]),
        fixtures=tuple(options["fixtures"]),
        models=tuple(options["models"]),
        agent=parse_agent(options["agent"], options["agent_bin"], options["seed"]),
        trials=options["trials"],
        concurrency=options["concurrency"],
        provider_caps=_provider_caps(tuple(options["provider_caps"])),
        timeout_s=options["timeout"],
        runs_dir=options["runs_dir"],
        keep_workdir=options["keep_workdir"],
        baseline=options["baseline"],
        threshold=options["threshold"],
        fail_on=options["fail_on"],
        executor=ExecutorSettings(
            name=options["executor"],
            ray_address=options["ray_address"] or os.environ.get("RAY_ADDRESS") or "auto",
            ray_resource=options["ray_resource"],
        ),
    )
    if options["dry_run"]:
        from harness.dryrun import dry_run

        plan = dry_run(config, resume)
        click.echo("\n".join(plan.lines()))
        sys.exit(plan.exit_code)
    outcome = execute_run(config, Progress(timeout_s=config.timeout_s), resume=resume)
    if options["as_json"]:
        click.echo(json.dumps(outcome.report.to_dict(), indent=2))
        gate = (outcome.report.comparison or {}).get("gate") or {"passed": True}
        if not gate["passed"]:
            click.echo("gate fails: " + "; ".join(gate["reasons"]), err=True)
    else:
        click.echo(summary_text(outcome))
    sys.exit(outcome.exit_code)


#: run.json option key -> run parameter name, for options --resume takes from the stored run.
_STORED = {
    "trials": "trials",
    "seed": "seed",
    "concurrency": "concurrency",
    "keep_workdir": "keep_workdir",
    "threshold": "threshold",
    "fail_on": "fail_on",
    "timeout_s": "timeout",
    "agent_bin": "agent_bin",
}


def _fill_from_stored(ctx: click.Context, options: dict[str, Any], stored: dict[str, Any]) -> None:
    """With --resume, every option not given explicitly comes from the original run."""

    def unset(name: str) -> bool:
        return ctx.get_parameter_source(name) in (
            ParameterSource.DEFAULT,
            ParameterSource.DEFAULT_MAP,
        )

    if unset("fixtures"):
        options["fixtures"] = tuple(stored.get("fixture_paths") or stored.get("fixtures") or ())
    kind = str(stored.get("agent_kind") or "prime-agent")
    if unset("models") and kind != "sim":
        options["models"] = tuple(stored.get("models") or ())
    if unset("agent"):
        if kind == "sim":  # older runs recorded the behaviours only in the label
            options["agent"] = str(stored.get("agent") or "sim")
        else:
            extra = stored.get("agent_options")
            options["agent"] = f"{kind}:{extra}" if extra else kind
    if unset("provider_caps") and stored.get("provider_caps"):
        options["provider_caps"] = tuple(f"{k}={v}" for k, v in stored["provider_caps"].items())
    if unset("baseline") and stored.get("baseline"):
        options["baseline"] = Path(stored["baseline"])
    for key, name in _STORED.items():
        if unset(name) and stored.get(key) is not None:
            options[name] = stored[key]


def summary_text(outcome: RunOutcome) -> str:
    """The result on stdout: per fixture x model, the comparison and the report path. Item
    lines went to stderr as each item finished (harness.progress) and are not repeated."""
    from harness.compare import format_pp
    from scorers.criteria import criterion_fields

    report = outcome.report
    lines = []
    for s in report.summary:
        ci = s["ci"]
        rate = "n/a" if s["rate"] is None else f"{100 * s['rate']:.0f}%"
        ci_txt = "" if not ci else f", 95% CI [{100 * ci[0]:.0f}, {100 * ci[1]:.0f}]"
        unresolved = s["n"] - s["resolved"]
        failing = [
            f"{c} {s['n'] - s['criteria'][c]['count']}"
            for c in criterion_fields()
            if s["n"] and s["criteria"][c].get("count", s["n"]) < s["n"]
        ]
        lines.append(
            f"{s['fixture']} x {s['model']}: {s['resolved']}/{s['n']} resolved ({rate}{ci_txt}), "
            f"{unresolved} unresolved, {s['errors']} errors"
            + (f"; failed criteria: {', '.join(failing)}" if failing else "")
        )
    cmp = report.comparison
    if cmp:
        o = cmp["overall"]
        ci = o.get("ci")
        ci_txt = f", 95% CI [{format_pp(ci[0])}, {format_pp(ci[1])}]" if ci else ""
        lines.append(f"vs baseline: {o['verdict']} ({format_pp(o['delta'])}{ci_txt})")
        for side in ("candidate", "baseline"):
            for m in cmp.get(f"missing_in_{side}") or []:
                lines.append(f"missing in the {side}: {m['fixture']}:{m['model']} ({m['reason']})")
        gate = cmp.get("gate") or {}
        if not gate.get("passed"):
            lines.append("gate fails: " + "; ".join(gate.get("reasons") or []))
    if report.interrupted:
        lines.append(f"interrupted: resume with --resume {outcome.run_dir}")
    lines.append(f"report: {outcome.run_dir / 'report.json'} (exit {outcome.exit_code})")
    return "\n".join(lines)
