"""``compare``: candidate vs baseline with intervals and verdicts."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import (
    RunDirType,
    compare_shared_only_option,
    cost_threshold_option,
    fail_on_option,
    runs_dir_option,
    threshold_option,
)
from harness.errors import EXIT_RESOLVED, EXIT_UNRESOLVED, UsageError


@click.command("compare", short_help="Compare two runs, or the agents of one run, with verdicts.")
@click.argument("baseline", type=RunDirType(exists=True, path_type=Path))
@click.argument("candidate", type=RunDirType(exists=True, path_type=Path), required=False)
@compare_shared_only_option
@threshold_option
@cost_threshold_option
@option("--json", "as_json", is_flag=True, help="Print the comparison object as JSON.")
@option(
    "--markdown",
    "as_markdown",
    is_flag=True,
    help="Print Markdown tables (as report.md has them: for a pull-request comment or a CI "
    "job summary) instead of plain text for the terminal.",
)
@fail_on_option("none")
@option(
    "--reference",
    default=None,
    metavar="AGENT",
    help="With one run of several agents: the agent the others are compared with (default: "
    "its first --agent).",
)
@runs_dir_option
@translate_errors
def compare_cmd(
    baseline: Path | str,
    candidate: Path | str | None,
    shared_only: bool,
    threshold: float,
    cost_threshold: float,
    as_json: bool,
    as_markdown: bool,
    fail_on: str,
    reference: str | None,
    runs_dir: Path,
) -> None:
    """Compare CANDIDATE against BASELINE (run dirs, report.json files, or 'latest'); with
    one run of several agents (run --agent A --agent B), its agents side by side.

    Prints plain text laid out for a terminal; --markdown prints Markdown, --json the
    comparison object."""
    from harness.model.comparison import fail_on_parts
    from harness.model.report import load_report
    from harness.model.text import describe_run
    from harness.report.compare_text import comparison_text
    from harness.report.markdown import comparison_markdown
    from harness.runs.catalog import resolve_run
    from harness.stats.compare import cells_of, compare, shared_cells
    from harness.stats.swarm_solo import swarm_only, with_solo

    if candidate is None:
        _compare_agents(
            resolve_run(baseline, runs_dir),
            reference,
            threshold,
            cost_threshold,
            "json" if as_json else "markdown" if as_markdown else "text",
        )
        return
    if reference is not None:
        raise UsageError("--reference picks an agent of one run: give one run, not two")
    baseline = resolve_run(baseline, runs_dir, for_comparison=True)
    candidate = resolve_run(candidate, runs_dir, for_comparison=True)
    base, cand = load_report(baseline), load_report(candidate)
    run = base.as_baseline()
    if cand.items and not shared_cells(cells_of(base.items), cells_of(cand.items)):
        raise UsageError(
            f"{describe_run(run)} and {cand.run_id} ({cand.options.agent}, model "
            f"{', '.join(cand.options.models)}) share no fixture x agent x model: nothing to "
            "compare"
        )
    result = compare(
        swarm_only(base.items),
        swarm_only(cand.items),
        threshold,
        str(baseline),
        run,
        cost_threshold,
        shared_only,
    )
    result = with_solo(result, base.overall, cand.overall)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif as_markdown:
        click.echo("\n".join(comparison_markdown(result)).strip())
    else:
        click.echo(comparison_text(result))
    reasons = result.failing(fail_on_parts(fail_on))
    if "unresolved" in fail_on_parts(fail_on):
        unresolved = sum(1 for i in swarm_only(cand.items) if i.status == "unresolved")
        if unresolved:
            reasons += (f"{unresolved} of the candidate's {len(cand.items)} items unresolved",)
    if reasons:
        click.echo("gate fails: " + "; ".join(reasons), err=True)
        sys.exit(EXIT_UNRESOLVED)
    sys.exit(EXIT_RESOLVED)


def _compare_agents(
    run: Path, reference: str | None, threshold: float, cost_threshold: float, form: str
) -> None:
    """One run's agents side by side (the report's ``agents``, recomputed with these
    thresholds and reference)."""
    from harness.model.report import load_report
    from harness.report.compare_text import agents_text
    from harness.report.markdown import agents_markdown
    from harness.stats.agents import agents_comparison

    report = load_report(run)
    order = [a.agent for a in report.options.agents]
    result = agents_comparison(report.items, order, reference, threshold, cost_threshold)
    if result is None:
        raise UsageError(
            f"{run}: a run of one agent ({report.options.agent}): give a baseline and a "
            "candidate run, or a run of several agents (run --agent A --agent B)"
        )
    if form == "json":
        click.echo(json.dumps(result.to_dict(), indent=2))
    elif form == "markdown":
        click.echo("\n".join(agents_markdown(result)).strip())
    else:
        click.echo(agents_text(result))
    sys.exit(EXIT_RESOLVED)
