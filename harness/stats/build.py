"""Assembling a run's report model: its items, their summaries, the overall rates and the
comparison with a baseline."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.model.comparison import (
    DEFAULT_COST_THRESHOLD,
    DEFAULT_THRESHOLD,
    Comparison,
)
from harness.model.item import ItemResult
from harness.model.report import RunOptions, RunReport, load_report
from harness.model.summary import ModelOverall, SequentialCell
from harness.stats.agents import agents_comparison
from harness.stats.compare import compare, failed_comparison, with_sequential
from harness.stats.provider import provider_health
from harness.stats.summaries import overall, summarize
from harness.stats.swarm_solo import swarm_only, swarm_vs_solo, with_solo
from harness.stats.triage import triage


def item_order(item: ItemResult) -> tuple[str, str, str, int]:
    """Fixture, agent, model, then trial as a number (1, 2, 10; the key as a string sorts
    10 first)."""
    return item.fixture, item.agent, item.model, item.trial


def build_report(
    *,
    run_id: str,
    results: Sequence[ItemResult],
    interrupted: bool,
    options: RunOptions,
    not_started: Sequence[str] = (),
    baseline: Path | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    cost_threshold: float = DEFAULT_COST_THRESHOLD,
    started_at: dt.datetime | None = None,
    sequential: Mapping[tuple[str, str, str], SequentialCell] | None = None,
    stopped: str | None = None,
    shared_only: bool = False,
) -> RunReport:
    """The report of a run's items (``stopped``: why the circuit breaker stopped it)."""
    now = dt.datetime.now(dt.UTC)
    items = tuple(sorted(results, key=item_order))
    rows, suites = swarm_vs_solo(items)
    # Solo twins are judged against their swarm (``swarm_vs_solo``), never as agents of
    # their own: the baseline comparison, its gate and the agents side by side are the
    # swarm's.
    swarm = swarm_only(items)
    summary = tuple(
        dataclasses.replace(s, swarm_vs_solo=rows.get((s.fixture, s.agent, s.model)))
        for s in summarize(items, sequential)
    )
    overall_rows = tuple(
        dataclasses.replace(o, swarm_vs_solo=suites.get((o.agent, o.model))) for o in overall(items)
    )
    return RunReport(
        run_id=run_id,
        interrupted=interrupted,
        items=items,
        summary=summary,
        overall=overall_rows,
        options=options,
        triage=triage(items),
        comparison=(
            None
            if baseline is None
            else safe_compare(
                baseline,
                items,
                threshold,
                cost_threshold,
                sequential,
                shared_only,
                overall_rows,
            )
        ),
        not_started=tuple(not_started),
        agents=agents_comparison(
            swarm, [a.agent for a in options.agents], None, threshold, cost_threshold
        ),
        provider=provider_health(items, stopped),
        created_at=now.isoformat(),
        started_at=started_at.isoformat() if started_at else "",
        duration_s=round((now - started_at).total_seconds(), 1) if started_at else None,
    )


def safe_compare(
    baseline: Path,
    items: Sequence[ItemResult],
    threshold: float,
    cost_threshold: float = DEFAULT_COST_THRESHOLD,
    sequential: Mapping[tuple[str, str, str], SequentialCell] | None = None,
    shared_only: bool = False,
    candidate_overall: Sequence[ModelOverall] = (),
) -> Comparison:
    """Compare against ``baseline`` (with ``sequential``: the gate reads the cells'
    anytime-valid verdicts; ``candidate_overall``: the run's own overall rows, whose swarm
    against its twin the comparison sets beside the baseline's); any failure becomes a comparison that fails the gate,
    so a broken baseline never costs the run its report."""
    try:
        report = load_report(baseline)
        result = compare(
            swarm_only(report.items),
            swarm_only(items),
            threshold,
            str(baseline),
            report.as_baseline(),
            cost_threshold,
            shared_only,
        )
        result = with_solo(result, report.overall, candidate_overall)
        return result if sequential is None else with_sequential(result, sequential)
    except Exception as exc:  # the report must be written whatever went wrong
        return failed_comparison(str(baseline), threshold, f"{type(exc).__name__}: {exc}")
