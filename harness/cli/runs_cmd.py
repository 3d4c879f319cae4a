"""``runs list`` and ``runs prune``: the past runs under a runs dir."""

from __future__ import annotations

import json
from pathlib import Path

import click

from harness.cli.errors import translate_errors
from harness.cli.options import option
from harness.cli.params import runs_dir_option
from harness.errors import UsageError
from harness.runs.catalog import RunInfo, list_runs


@click.group("runs")
def runs_group() -> None:
    """Browse past runs."""


@runs_group.command(
    "list", short_help="List the runs under --runs-dir: complete, interrupted or running."
)
@runs_dir_option
@option("--json", "as_json", is_flag=True, help="Print the runs as a JSON array.")
@option(
    "--html",
    "as_html",
    is_flag=True,
    help="Also (re)write the runs index, index.html in --runs-dir: the resolved rate per "
    "fixture x model over time, each point linked to its run's report (every run rewrites "
    "it too).",
)
@option(
    "--wide",
    is_flag=True,
    help="Every fixture and model of each run in full (by default a line fits 100 columns: "
    "the first fixture and model, and how many more).",
)
@translate_errors
def list_cmd(runs_dir: Path, as_json: bool, as_html: bool, wide: bool) -> None:
    """List the runs under --runs-dir, oldest first: status complete, interrupted or running.
    Selftests are listed apart, after the evaluations: the rows of each that hold, and
    whether it passed."""
    runs = list_runs(runs_dir)
    if as_html:
        from harness.runs.index import write_index

        if not runs_dir.is_dir():
            raise UsageError(f"--runs-dir {runs_dir}: no such directory")
        click.echo(f"index: {write_index(runs_dir)}", err=as_json)
    if as_json:
        click.echo(json.dumps([r.to_dict() for r in runs], indent=2))
        return
    if not runs:
        click.echo(f"no runs under {runs_dir}")
        return
    evals = [r for r in runs if not r.selftest]
    selftests = [r for r in runs if r.selftest]
    if evals:
        _echo_table([_eval_row(r) for r in evals], EVAL_HEADER, wide)
    if selftests:  # apart: theirs is no rate, and their prices are play prices
        if evals:
            click.echo("")
        click.echo("selftests: each passes when every row holds (its prices are play prices)")
        _echo_table([_selftest_row(r) for r in selftests], SELFTEST_HEADER, wide)


EVAL_HEADER = (
    "run", "date", "agent", "fixtures", "models", "trials", "resolved", "cost", "tokens",
    "status",
)  # fmt: skip
SELFTEST_HEADER = ("run", "date", "agent", "fixtures", "rows hold", "verdict", "tokens", "status")


def _eval_row(r: RunInfo) -> tuple[str, ...]:
    from harness.model.text import format_usd

    rate = "n/a" if r.resolved_rate is None else f"{100 * r.resolved_rate:.0f}%"
    return (
        r.run_id,
        r.created_at[:19].replace("T", " "),
        r.agent,
        ",".join(r.fixtures),
        ",".join(r.models),
        "" if r.trials is None else str(r.trials),
        f"{r.resolved}/{r.scored} {rate}",
        f"n/a ({r.unpriced} unpriced)" if r.unpriced else format_usd(r.cost_usd),
        f"{r.tokens:,}",
        r.status,
    )


def _selftest_row(r: RunInfo) -> tuple[str, ...]:
    """A selftest: its rows that hold and its verdict, never a rate or a cost."""
    passed = r.selftest_passed
    holding, rows = r.selftest_rows or (0, 0)
    return (
        r.run_id,
        r.created_at[:19].replace("T", " "),
        r.agent,
        ",".join(r.fixtures),
        "" if r.selftest_rows is None else f"{holding}/{rows}",
        "not judged" if passed is None else "ok" if passed else "FAIL",
        f"{r.tokens:,}",
        r.status,
    )


def _echo_table(rows: list[tuple[str, ...]], header: tuple[str, ...], wide: bool) -> None:
    """A table of runs; without ``wide``, one run a line within 100 columns."""
    table = [header, *rows]
    if not wide:  # the run id already says when
        table = [_narrow(row, header, first=index == 0) for index, row in enumerate(table)]
    gap = "  " if wide else " "
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    for row in table:
        click.echo(gap.join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


#: The widest a ``runs list`` cell of names (fixtures, models) gets without ``--wide``.
NAMES_CHARS = 18


def _names(cell: str) -> str:
    """``json-events +2``: the first of a comma-joined list and how many more, cut to
    :data:`NAMES_CHARS`."""
    names = [n for n in cell.split(",") if n]
    if not names:
        return ""
    more = f" +{len(names) - 1}" if len(names) > 1 else ""
    first = names[0]
    if len(first) + len(more) > NAMES_CHARS:
        first = first[: NAMES_CHARS - len(more) - 1] + "…"
    return first + more


def _tokens(cell: str) -> str:
    """``426k``, ``1.2M``: a token count in at most five characters."""
    if not cell.replace(",", "").isdigit():
        return cell
    count = int(cell.replace(",", ""))
    if count < 10_000:
        return cell
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1e6:.1f}M"


def _narrow(row: tuple[str, ...], header: tuple[str, ...], first: bool) -> tuple[str, ...]:
    """The row without its date and trials, names and tokens shortened, an unpriced cost
    said in a word."""
    cells = dict(zip(header, row, strict=True))
    if not first:
        for names in ("fixtures", "models"):
            if names in cells:
                cells[names] = _names(cells[names])
        cells["tokens"] = _tokens(cells["tokens"])
        if "cost" in cells and cells["cost"].startswith("n/a"):
            cells["cost"] = "unpriced"
    return tuple(cell for name, cell in cells.items() if name not in ("date", "trials"))


@runs_group.command("prune", short_help="Delete old run directories (a dry run unless --yes).")
@runs_dir_option
@option(
    "--keep",
    type=click.IntRange(min=0),
    default=None,
    help="Keep the newest N runs; the older ones may go.",
)
@option(
    "--older-than",
    default=None,
    metavar="AGE",
    help="Only runs started longer ago than AGE may go: a number and a unit s, m, h, d or w "
    "(30d, 12h, 2w).",
)
@option("--yes", is_flag=True, help="Delete them; without it, only say what would be deleted.")
@translate_errors
def prune_cmd(runs_dir: Path, keep: int | None, older_than: str | None, yes: bool) -> None:
    """Delete old run directories under --runs-dir (a dry run unless --yes).

    A run goes only when every rule given says so. Running runs, and the baseline or origin
    of a run that stays, are always kept. The runs index is rewritten after a deletion.
    """
    from harness.model.text import plural
    from harness.runs.index import write_index
    from harness.runs.prune import dir_size, parse_age, plan_prune, remove_runs

    plan = plan_prune(runs_dir, keep, parse_age(older_than) if older_than else None)
    sizes = {r.run_id: dir_size(r.path) for r in plan.remove}
    verb = "removing" if yes else "would remove"
    for r in plan.remove:
        click.echo(
            f"{verb} {r.run_id}  {r.created_at[:16].replace('T', ' ')}  {r.agent}  "
            f"{_mb(sizes[r.run_id])}"
        )
    for k in plan.kept:
        click.echo(f"keeping {k.run.run_id}: {k.why}")
    total = _mb(sum(sizes.values()))
    if not plan.remove:
        click.echo(f"nothing to remove under {runs_dir}")
        return
    if not yes:
        click.echo(
            f"{plural(len(plan.remove), 'run')}, {total} would be freed; add --yes to delete them"
        )
        return
    removed, failed = remove_runs(plan.remove)
    for k in failed:
        click.echo(f"kept {k.run.run_id}: {k.why}", err=True)
    freed = _mb(sum(sizes[r.run_id] for r in removed))
    click.echo(f"removed {plural(len(removed), 'run')}, {freed} freed")
    write_index(runs_dir)


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"
